#include "harness/check/i4_timeout_is_unknown.hpp"

#include <chrono>

#include <boost/test/unit_test.hpp>

#include "tests/support/histories_attempts.hpp"

namespace onejob::check {
namespace {

using namespace std::chrono_literals;
using test::attempts::attempt_created;
using test::attempts::attempt_state;
using test::attempts::job_failed;
using test::attempts::output_rejected;
using test::attempts::provider_call;
using test::attempts::provider_reply;
using test::attempts::reconciler_status;
using test::attempts::store_fault;
using test::attempts::TimedHistoryBuilder;

bool mentions(const Violation& violation, std::string_view text) {
  return violation.message.find(text) != std::string::npos;
}

// Attempt `attempt_id` of job `job_id` is claimed at `at` and calls its provider with a deadline
// 10s later.
void start_call(TimedHistoryBuilder& h, std::int64_t job_id, std::int64_t attempt_id,
                Duration at = 0s) {
  h.add(at, "api-1", attempt_created(job_id, attempt_id))
      .add(at, "worker-1", attempt_state(job_id, attempt_id, "STARTING", "RUNNING"))
      .add(at, "worker-1", provider_call(job_id, attempt_id, at + 10s));
}

BOOST_AUTO_TEST_SUITE(i4_timeout_is_unknown)

BOOST_AUTO_TEST_CASE(timeouts_that_end_unknown_and_failures_with_evidence_pass) {
  TimedHistoryBuilder h;
  // Job 1: no answer by the deadline, UNKNOWN; the late refusal is evidence enough to fail.
  start_call(h, 1, 1);
  h.add(10s, "worker-1", attempt_state(1, 1, "RUNNING", "UNKNOWN", "no answer within the deadline"))
      .add(15s, "worker-1", provider_reply(1, 1, "rejected", true))
      .add(15s, "worker-1", attempt_state(1, 1, "UNKNOWN", "FAILED", "provider refused"));
  // Job 2: refused in time; the job fails once nothing is left to try.
  start_call(h, 2, 2, 20s);
  h.add(21s, "worker-1", provider_reply(2, 2, "rejected", false))
      .add(21s, "worker-1", attempt_state(2, 2, "RUNNING", "FAILED", "provider refused"))
      .add(21s, "worker-1", job_failed(2, "no contract-certified provider left to fail over to"));
  // Job 3: the worker was lost; the provider says the call failed.
  start_call(h, 3, 3, 30s);
  h.add(60s, "reconciler", attempt_state(3, 3, "RUNNING", "UNKNOWN", "lease expired: worker-1"))
      .add(61s, "reconciler", reconciler_status(3, 3, "failed"))
      .add(61s, "reconciler", attempt_state(3, 3, "UNKNOWN", "FAILED", "provider reports failure"));
  // Job 4: answered right at the deadline, with output that broke the contract.
  start_call(h, 4, 4, 70s);
  h.add(80s, "worker-1", provider_reply(4, 4, "answered", false))
      .add(80s, "worker-1", output_rejected(4, 4))
      .add(80s, "worker-1", attempt_state(4, 4, "RUNNING", "FAILED", "output broke the contract"));
  // Job 5: timed out, then an operator cancels it.
  start_call(h, 5, 5, 90s);
  h.add(102s, "api-1", attempt_state(5, 5, "RUNNING", "CANCELLED", "operator", "api"));
  BOOST_TEST(check_timeout_is_unknown(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(failing_an_attempt_whose_call_timed_out_is_a_violation) {
  TimedHistoryBuilder h;
  start_call(h, 1, 1);
  h.add(10s, "worker-1", attempt_state(1, 1, "RUNNING", "FAILED", "provider refused"));
  const auto violations = check_timeout_is_unknown(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I4");
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[0], "had no answer in time"));
}

BOOST_AUTO_TEST_CASE(a_reply_after_the_deadline_is_late_whatever_its_flag_says) {
  TimedHistoryBuilder h;
  start_call(h, 1, 1);
  h.add(11s, "worker-1", provider_reply(1, 1, "answered", false))
      .add(11s, "worker-1", output_rejected(1, 1))
      .add(11s, "worker-1", attempt_state(1, 1, "RUNNING", "FAILED", "output broke the contract"));
  const auto violations = check_timeout_is_unknown(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 6u);
}

BOOST_AUTO_TEST_CASE(a_maybe_delivered_reply_is_no_answer) {
  TimedHistoryBuilder h;
  start_call(h, 1, 1);
  h.add(1s, "worker-1", provider_reply(1, 1, "maybe_delivered", false))
      .add(1s, "worker-1", attempt_state(1, 1, "RUNNING", "FAILED", "transport failed"));
  const auto violations = check_timeout_is_unknown(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 5u);
  BOOST_TEST(mentions(violations[0], "no answer in time"));
}

BOOST_AUTO_TEST_CASE(failing_for_an_expired_lease_is_a_violation) {
  TimedHistoryBuilder h;
  h.add(0s, "api-1", attempt_created(1, 1))
      .add(0s, "worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add(30s, "reconciler",
           attempt_state(1, 1, "RUNNING", "FAILED", "lease expired: worker-1 presumed lost"));
  const auto violations = check_timeout_is_unknown(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 3u);
  BOOST_TEST(mentions(violations[0], "because \"lease expired"));
}

BOOST_AUTO_TEST_CASE(failing_an_unknown_attempt_without_evidence_is_a_violation) {
  TimedHistoryBuilder h;
  start_call(h, 1, 1);
  h.add(10s, "worker-1", attempt_state(1, 1, "RUNNING", "UNKNOWN", "no answer"))
      // Neither an unreachable provider nor a late answer says the call failed.
      .add(20s, "reconciler", reconciler_status(1, 1, "unreachable"))
      .add(25s, "worker-1", provider_reply(1, 1, "answered", true))
      .add(30s, "reconciler", attempt_state(1, 1, "UNKNOWN", "FAILED", "gave up"));
  const auto violations = check_timeout_is_unknown(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I4");
  BOOST_TEST(violations[0].event_seq.value_or(0) == 7u);
  BOOST_TEST(mentions(violations[0], "UNKNOWN -> FAILED"));
}

BOOST_AUTO_TEST_CASE(failing_a_job_while_an_attempt_is_unknown_is_a_violation) {
  TimedHistoryBuilder h;
  start_call(h, 1, 1);
  h.add(10s, "worker-1", attempt_state(1, 1, "RUNNING", "UNKNOWN", "no answer"))
      .add(11s, "worker-1", job_failed(1, "attempt limit of 1 reached"));
  const auto violations = check_timeout_is_unknown(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 5u);
  BOOST_TEST(mentions(violations[0], "while attempt 1 is UNKNOWN"));
}

BOOST_AUTO_TEST_CASE(a_step_reported_after_a_later_one_does_not_reopen_the_attempt) {
  TimedHistoryBuilder h;
  start_call(h, 1, 1);
  h.add(10s, "worker-1", provider_reply(1, 1, "rejected", true))
      // The late refusal's write was answered first; the deadline's RUNNING -> UNKNOWN after.
      .add(10s, "worker-1", attempt_state(1, 1, "UNKNOWN", "FAILED", "provider refused"))
      .add(10s, "worker-1", attempt_state(1, 1, "RUNNING", "UNKNOWN", "no answer"))
      .add(10s, "worker-1", job_failed(1, "no contract-certified provider left to fail over to"));
  BOOST_TEST(check_timeout_is_unknown(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_lost_update_may_have_resolved_an_unknown_attempt) {
  TimedHistoryBuilder h;
  start_call(h, 1, 1);
  h.add(10s, "worker-1", attempt_state(1, 1, "RUNNING", "UNKNOWN", "no answer"))
      .add(11s, "net.node_store", store_fault("update_attempt", "maybe_committed"))
      .add(12s, "worker-1", job_failed(1, "attempt limit of 1 reached"));
  BOOST_TEST(check_timeout_is_unknown(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_crash_while_waiting_for_the_store_may_have_resolved_an_unknown_attempt) {
  TimedHistoryBuilder h;
  start_call(h, 1, 1);
  h.add(10s, "worker-1", attempt_state(1, 1, "RUNNING", "UNKNOWN", "no answer"))
      .add(11s, "reconciler", Event("node.crash"))
      .add(12s, "worker-1", job_failed(1, "attempt limit of 1 reached"));
  BOOST_TEST(check_timeout_is_unknown(h.history()).empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
