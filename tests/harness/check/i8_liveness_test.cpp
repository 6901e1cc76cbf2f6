#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

std::uint64_t end_run(HistoryBuilder& h) { return h.add("world", events::RunEnded{}).last_seq(); }

BOOST_AUTO_TEST_SUITE(i8_liveness)

BOOST_AUTO_TEST_CASE(succeeded_failed_blocked_and_awaiting_operator_jobs_pass) {
  HistoryBuilder h;
  settled_jobs(h);
  end_run(h);
  require_none(check_liveness(h.model()));
}

BOOST_AUTO_TEST_CASE(a_history_without_run_end_is_not_judged) {
  HistoryBuilder h;
  running_job(h, 1);
  require_none(check_liveness(h.model()));
}

BOOST_AUTO_TEST_CASE(a_job_still_running_at_run_end_is_a_violation) {
  HistoryBuilder h;
  running_job(h, 1);
  const auto end = end_run(h);
  const auto violations = find_invariant("I8")->check(h.model());
  require_one(violations, "I8.still_running", end);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{1});
}

BOOST_AUTO_TEST_CASE(a_job_never_claimed_by_run_end_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  const auto end = end_run(h);
  require_one(check_liveness(h.model()), "I8.still_running", end);
}

BOOST_AUTO_TEST_CASE(a_stuck_job_is_a_violation) {
  HistoryBuilder h;
  // Its only attempt failed, yet neither did the job fail nor did anyone try again.
  running_job(h, 1);
  h.add(kStore, fenced_write(1, 1, S::running, S::failed));
  const auto end = end_run(h);
  require_one(check_liveness(h.model()), "I8.stuck", end);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
