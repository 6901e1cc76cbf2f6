#include <map>
#include <set>

#include <boost/test/unit_test.hpp>
#include <rapidcheck/boost_test.h>

#include "system/events/api_events.hpp"

#include "harness/events/client_events.hpp"
#include "harness/scenario/runner.hpp"

#include "tests/support/scenarios.hpp"
#include "tests/support/typed_events.hpp"

namespace onejob::scenario {
namespace {

BOOST_AUTO_TEST_SUITE(properties)

// Any number of creates with one key and one payload, sent at any instants over a link of any
// latency, in any seeded interleaving: exactly one job, every response carries its id, and
// exactly one of them is the 201 that created it.
RC_BOOST_PROP(one_key_one_payload_is_one_job_in_any_interleaving, ()) {
  const auto requests = *rc::gen::inRange(1, 25);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  auto spec = test::double_click_spec(requests, seed);
  const auto latency_max_us = *rc::gen::inRange<std::int64_t>(0, 50'000);
  spec.network.client_lb.latency = {Duration(0), Duration(latency_max_us)};
  auto instants = *rc::gen::container<std::vector<std::int64_t>>(
      static_cast<std::size_t>(requests), rc::gen::inRange<std::int64_t>(0, 20'000));
  std::sort(instants.begin(), instants.end());
  for (int i = 0; i < requests; ++i) spec.timeline[i].at = Duration(instants[i]);

  const auto result = run_scenario(spec);
  RC_ASSERT(result.passed());
  std::set<std::int64_t> job_ids;
  std::map<std::int64_t, int> statuses;
  for (const auto& received : test::events_of<events::ClientReceived>(result.history)) {
    statuses[static_cast<int>(received.what.status)]++;
    job_ids.insert(received.what.job_id.value_or(-1));
  }
  RC_ASSERT(job_ids.size() == 1u);
  RC_ASSERT(*job_ids.begin() > 0);
  RC_ASSERT(statuses[201] == 1);
  RC_ASSERT(statuses[200] == requests - 1);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::scenario
