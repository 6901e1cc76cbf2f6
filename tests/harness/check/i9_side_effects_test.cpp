#include "harness/check/i9_side_effects.hpp"

#include <boost/test/unit_test.hpp>

#include "tests/support/histories_late.hpp"

namespace onejob::check {
namespace {

using namespace test::late;

const std::string kBody = create_body("classify", "alpha", R"({"text":"please refund me"})");

// Job 1: attempt 1 on alpha ran, executed, and timed out into UNKNOWN.
TimedHistoryBuilder timed_out_attempt() {
  TimedHistoryBuilder h;
  h.add("store", store_job_inserted(1, "alice", "k", 1))
      .add("api-1", job_created(1, "alice", "k", kBody))
      .add("api-1", attempt_created(1, 1, 1, "alpha", "initial"))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-1", provider_call(1, 1, 1, "alpha"))
      .add("alpha", provider_execute("1:1"))
      .add("worker-1", attempt_state(1, 1, "RUNNING", "UNKNOWN"));
  return h;
}

BOOST_AUTO_TEST_SUITE(i9_side_effects)

BOOST_AUTO_TEST_CASE(a_second_execution_after_an_explicit_cancel_passes) {
  auto h = timed_out_attempt();
  h.add("alpha", provider_execute("cert:alpha:1"))
      .add("alpha", provider_execute("cert:alpha:1"))  // certification is no job's side effect
      .add("api-1", attempt_state(1, 1, "UNKNOWN", "CANCELLED", "api"))
      .add("api-1", attempt_created(1, 2, 2, "beta", "explicit"))
      .add("worker-1", attempt_state(1, 2, "STARTING", "RUNNING"))
      .add("beta", provider_execute("1:2"))
      .add("worker-1", attempt_state(1, 2, "RUNNING", "FAILED"))
      .add("worker-1", attempt_created(1, 3, 3, "alpha", "failover"))
      .add("alpha", provider_execute("1:3"));
  BOOST_TEST(check_side_effects(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(the_same_key_executed_twice_is_a_violation) {
  auto h = timed_out_attempt();
  h.add("alpha", provider_execute("1:1"));
  const auto offending = h.last_seq();
  const auto violations = check_side_effects(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I9");
  BOOST_TEST(violations[0].event_seq.value_or(0) == offending);
  BOOST_TEST(violations[0].message.find(
                 "executed key \"1:1\" again (first by alpha at event #6)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_new_attempt_executing_while_an_earlier_one_is_unknown_is_a_violation) {
  auto h = timed_out_attempt();
  h.add("api-1", attempt_created(1, 2, 2, "alpha", "explicit"))
      .add("worker-1", attempt_state(1, 2, "STARTING", "RUNNING"))
      .add("alpha", provider_execute("1:2"));
  const auto offending = h.last_seq();
  const auto violations = check_side_effects(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I9");
  BOOST_TEST(violations[0].event_seq.value_or(0) == offending);
  BOOST_TEST(violations[0].message.find("executed attempt 2 of job 1 (key \"1:2\") while attempt 1 "
                                        "of job 1 was still UNKNOWN") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_new_attempt_executing_while_an_earlier_one_runs_is_a_violation) {
  // Attempt 2 was never reported created; provider.call numbers it.
  TimedHistoryBuilder h;
  h.add("store", store_job_inserted(1, "alice", "k", 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-2", provider_call(1, 2, 2, "alpha"))
      .add("alpha", provider_execute("1:2"));
  const auto violations = check_side_effects(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(violations[0].message.find("while attempt 1 of job 1 was still RUNNING") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_earlier_attempt_in_doubt_is_not_judged) {
  // Attempt 1's failure may have committed without its event; the store let attempt 2 start.
  TimedHistoryBuilder h;
  h.add("store", store_job_inserted(1, "alice", "k", 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-1", worker_store_error("worker-1", 1, "maybe_committed", "update_attempt"))
      .add("api-1", attempt_created(1, 2, 2, "alpha", "explicit"))
      .add("alpha", provider_execute("1:2"));
  BOOST_TEST(check_side_effects(h.history()).empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
