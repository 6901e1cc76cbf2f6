// I11 on hand-made histories, beside new_rules_test.cpp's: a refusal whose grounds held when the
// node made it is no refused replay, shown passing where they held and failing where they did not.
#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

BOOST_AUTO_TEST_SUITE(i11_operator_actions)

// Two identical retries of job 1 naming alpha, under one key at one instant. Request 3 reaches
// api-1 first and is refused 422 provider_not_certified; request 2 records the key. When alpha's
// certification passed only between the two (the refusal read it before), the refusal told the
// truth when it was made; with alpha certified all along, the same 422 refused a replay.
BOOST_AUTO_TEST_CASE(a_twin_refused_while_its_provider_was_uncertified_passes) {
  for (const bool certified_all_along : {false, true}) {
    BOOST_TEST_CONTEXT("certified all along: " << certified_all_along) {
      HistoryBuilder h;
      insert_job(h, {});
      h.add(kStore, claimed(1, 1, "worker-1", 1))
          .add(kStore, fenced_write(1, 1, S::running, S::failed, "worker-1", 1));
      if (certified_all_along) certify(h, "alpha", true);
      for (const std::int64_t request : {2, 3}) {
        auto sent = retry_sent(request, 1, "op-1");
        sent.body = R"({"provider":"alpha"})";
        h.add("ops", sent);
      }
      const auto [recorder, twin] = retry_twins(422, "provider_not_certified");
      api_request(h, twin);
      if (!certified_all_along) certify(h, "alpha", true);
      api_request(h, recorder);
      insert_keyed_retry(h, "op-1");
      api_response(h, recorder);
      const auto answered = api_response(h, twin).last_seq();
      const auto violations = check_operator_actions(h.model());
      if (certified_all_along) {
        require_one(violations, "I11.replay_refused", answered);
      } else {
        require_no(violations, "I11.replay_refused");
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
