#include "harness/check/i3_one_live_attempt.hpp"

#include <boost/test/unit_test.hpp>

#include "tests/support/histories.hpp"
#include "tests/support/histories_attempts.hpp"

namespace onejob::check {
namespace {

using test::HistoryBuilder;
using test::attempts::attempt_created;
using test::attempts::attempt_state;
using test::attempts::cancel_request;
using test::attempts::cancel_response;
using test::attempts::provider_reply;
using test::attempts::reconciler_status;
using test::attempts::store_fault;
using test::attempts::worker_store_error;
using test::attempts::write_refused;

bool mentions(const Violation& violation, std::string_view text) {
  return violation.message.find(text) != std::string::npos;
}

BOOST_AUTO_TEST_SUITE(i3_one_live_attempt)

BOOST_AUTO_TEST_CASE(failover_and_a_cancelled_attempt_racing_a_retry_pass) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-1", attempt_state(1, 1, "RUNNING", "FAILED"))
      .add("worker-1", attempt_created(1, 2, 2))
      .add("worker-1", attempt_state(1, 2, "STARTING", "RUNNING"))
      .add("worker-1", attempt_state(1, 2, "RUNNING", "SUCCEEDED"))
      // A cancelled attempt no longer blocks a retry, though its late result still competes.
      .add("api-1", attempt_created(2, 3))
      .add("worker-1", attempt_state(2, 3, "STARTING", "RUNNING"))
      .add("worker-1", attempt_state(2, 3, "RUNNING", "UNKNOWN"))
      .add("api-1", attempt_state(2, 3, "UNKNOWN", "CANCELLED", "operator", "api"))
      .add("api-1", attempt_created(2, 4, 2))
      .add("worker-1", attempt_state(2, 4, "STARTING", "RUNNING"))
      .add("worker-1", attempt_state(2, 3, "CANCELLED", "SUCCEEDED"))
      .add("worker-1", attempt_state(2, 4, "RUNNING", "DISCARDED"));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_second_attempt_created_while_the_first_runs_is_a_violation) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("api-1", attempt_created(1, 2, 2))
      .add("worker-2", attempt_state(1, 2, "STARTING", "RUNNING"));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I3");
  BOOST_TEST(violations[0].event_seq.value_or(0) == 3u);
  BOOST_TEST(mentions(violations[0], "while attempt 1 is RUNNING"));
  BOOST_TEST(mentions(violations[0], "two live attempts"));
}

BOOST_AUTO_TEST_CASE(an_unknown_attempt_is_live) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-1", attempt_state(1, 1, "RUNNING", "UNKNOWN"))
      .add("api-1", attempt_created(1, 2, 2));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[0], "while attempt 1 is UNKNOWN"));
}

BOOST_AUTO_TEST_CASE(stepping_back_into_a_live_state_beside_another_live_attempt_is_a_violation) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("api-1", attempt_state(1, 1, "STARTING", "CANCELLED"))
      .add("api-1", attempt_created(1, 2, 2))
      .add("worker-1", attempt_state(1, 1, "CANCELLED", "RUNNING"));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 2u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[0], "attempt 1 of job 1 became RUNNING while attempt 2"));
  BOOST_TEST(violations[1].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[1], "no attempt ever moves back"));
}

BOOST_AUTO_TEST_CASE(steps_reported_out_of_order_pass) {
  HistoryBuilder h;
  // The worker's claim reaches the history before the API's report of the creation.
  h.add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("api-1", attempt_created(1, 1))
      // A late refusal's write is answered before the deadline's own RUNNING -> UNKNOWN.
      .add("worker-1", attempt_state(1, 1, "UNKNOWN", "FAILED"))
      .add("worker-1", attempt_state(1, 1, "RUNNING", "UNKNOWN"))
      .add("worker-1", attempt_created(1, 2, 2));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_cancel_on_its_way_may_already_have_ended_the_attempt) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("api-2", cancel_request("r2", 1))
      // Another operator's retry commits after the cancel, but is reported before it.
      .add("api-1", attempt_created(1, 2, 2))
      .add("api-2", attempt_state(1, 1, "RUNNING", "CANCELLED", "cancelled by alice", "api"))
      .add("api-2", cancel_response("r2", 200, 1, 1));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(an_answer_on_its_way_may_already_have_ended_the_attempt) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-1", provider_reply(1, 1, "rejected", false))
      .add("api-1", attempt_created(1, 2, 2))
      .add("worker-1", attempt_state(1, 1, "RUNNING", "FAILED", "provider refused"));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(another_writers_refusal_does_not_settle_a_cancel) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("api-2", cancel_request("r2", 1))
      // The worker's deadline write finds the cancel already applied.
      .add("worker-1", write_refused(1, 1, "CANCELLED", "UNKNOWN"))
      .add("api-1", attempt_created(1, 2, 2))
      .add("api-2", attempt_state(1, 1, "RUNNING", "CANCELLED", "cancelled by alice", "api"))
      .add("api-2", cancel_response("r2", 200, 1, 1));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_refused_settling_write_ended_nothing) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-1", provider_reply(1, 1, "rejected", false))
      .add("worker-1", write_refused(1, 1, "RUNNING", "FAILED"))
      .add("api-1", attempt_created(1, 2, 2));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 5u);
}

BOOST_AUTO_TEST_CASE(a_refused_move_to_unknown_settles_no_exit) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-1", provider_reply(1, 1, "answered", true))
      // The worker's deadline write finds the reconciler took over first; the write of its late
      // answer is still on its way.
      .add("worker-1", write_refused(1, 1, "UNKNOWN", "UNKNOWN"))
      .add("api-1", attempt_created(1, 2, 2))
      .add("reconciler", attempt_state(1, 1, "RUNNING", "UNKNOWN", "lease expired", "reconciler"))
      .add("worker-1", attempt_state(1, 1, "UNKNOWN", "SUCCEEDED", "won"));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_reconciler_status_on_its_way_may_already_have_ended_the_attempt) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-1", attempt_state(1, 1, "RUNNING", "UNKNOWN", "no answer"))
      .add("reconciler", reconciler_status(1, 1, "failed"))
      .add("api-1", attempt_created(1, 2, 2))
      .add("reconciler", attempt_state(1, 1, "UNKNOWN", "FAILED", "provider reports failure"));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_lost_write_that_left_no_trace_before_may_have_ended_the_attempt) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      // Failing a prompt the provider cannot take sends nothing first; its reply was lost.
      .add("net.node_store", store_fault("update_attempt", "maybe_committed"))
      .add("worker-1", worker_store_error(1, "maybe_committed"))
      .add("api-1", attempt_created(1, 2, 2));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_cancel_that_was_answered_without_a_step_ended_nothing) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("api-2", cancel_request("r2", 1))
      .add("api-2", cancel_response("r2", 409, 1, 1))
      .add("api-1", attempt_created(1, 2, 2));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 5u);
  BOOST_TEST(mentions(violations[0], "while attempt 1 is RUNNING"));
}

BOOST_AUTO_TEST_CASE(a_cancel_whose_api_node_crashed_may_have_ended_the_attempt) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("api-2", cancel_request("r2", 1))
      .add("api-2", Event("node.crash"))
      // Committed before the cancel, reported after the crash: it proves nothing about now.
      .add("worker-1", attempt_state(1, 1, "RUNNING", "UNKNOWN", "no answer"))
      .add("api-1", attempt_created(1, 2, 2));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_cancel_answered_with_a_store_error_may_have_ended_the_attempt) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("api-2", cancel_request("r2", 1))
      .add("net.node_store", store_fault("update_attempt", "maybe_committed"))
      .add("api-2", Event("api.response")
                        .with("request_id", "r2")
                        .with("route", "cancel_attempt")
                        .with("status", 503)
                        .with("error", "store_unavailable"))
      .add("worker-1", attempt_state(1, 1, "RUNNING", "UNKNOWN", "no answer"))
      .add("api-1", attempt_created(1, 2, 2));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(two_steps_from_one_state_are_a_fork) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-1", attempt_state(1, 1, "RUNNING", "SUCCEEDED"))
      .add("reconciler", attempt_state(1, 1, "RUNNING", "UNKNOWN"));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I3");
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[0], "but it was already UNKNOWN"));
}

BOOST_AUTO_TEST_CASE(a_from_state_the_history_contradicts_is_a_violation) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "RUNNING", "SUCCEEDED"));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I3");
  BOOST_TEST(violations[0].event_seq.value_or(0) == 2u);
  BOOST_TEST(mentions(violations[0],
                      "the history has it STARTING at event #1 and never reaching "
                      "RUNNING"));
}

BOOST_AUTO_TEST_CASE(a_lost_write_explains_a_skipped_transition_forward_only) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      // The RUNNING -> UNKNOWN write committed, but its reply (and so its event) was lost.
      .add("net.node_store", store_fault("update_attempt", "maybe_committed"))
      .add("reconciler", attempt_state(1, 1, "UNKNOWN", "FAILED"))
      .add("api-1", attempt_created(2, 2))
      .add("worker-1", attempt_state(2, 2, "STARTING", "RUNNING"))
      .add("net.node_store", store_fault("update_attempt", "maybe_committed"))
      // No write takes an attempt back to STARTING.
      .add("worker-1", attempt_state(2, 2, "STARTING", "RUNNING"));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 8u);
  BOOST_TEST(mentions(violations[0], "contradicts itself"));
}

BOOST_AUTO_TEST_CASE(a_node_crashing_while_it_waits_for_a_reply_may_hide_a_write) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("reconciler", Event("node.crash"))
      .add("reconciler", attempt_state(1, 1, "UNKNOWN", "SUCCEEDED", "won", "reconciler"));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_request_that_never_ran_explains_nothing) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("net.node_store", store_fault("update_attempt", "unavailable"))
      .add("reconciler", attempt_state(1, 1, "UNKNOWN", "FAILED"));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
}

BOOST_AUTO_TEST_CASE(a_settling_write_whose_reply_was_lost_may_have_ended_the_attempt) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-1", provider_reply(1, 1, "rejected", false))
      .add("net.node_store", store_fault("update_attempt", "maybe_committed"))
      .add("worker-1", worker_store_error(1, "maybe_committed"))
      .add("api-1", attempt_created(1, 2, 2));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_settling_write_the_store_never_ran_ended_nothing) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-1", provider_reply(1, 1, "rejected", false))
      .add("net.node_store", store_fault("update_attempt", "unavailable"))
      .add("worker-1", worker_store_error(1, "unavailable"))
      .add("api-1", attempt_created(1, 2, 2));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 6u);
  BOOST_TEST(mentions(violations[0], "while attempt 1 is RUNNING"));
}

BOOST_AUTO_TEST_CASE(a_lost_write_of_another_attempt_casts_no_doubt) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("net.node_store", store_fault("update_attempt", "maybe_committed"))
      .add("worker-1", worker_store_error(7, "maybe_committed"))
      .add("api-1", attempt_created(1, 2, 2));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 5u);
}

BOOST_AUTO_TEST_CASE(a_lost_claim_leaves_the_attempt_live) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("net.node_store", store_fault("claim_next_attempt", "maybe_committed"))
      .add("api-1", attempt_created(1, 2, 2));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 3u);
  BOOST_TEST(mentions(violations[0], "while attempt 1 is STARTING"));
}

BOOST_AUTO_TEST_CASE(a_lost_claim_explains_only_a_claim) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("net.node_store", store_fault("claim_next_attempt", "maybe_committed"))
      .add("reconciler", attempt_state(1, 1, "UNKNOWN", "FAILED", "provider reports failure"));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 3u);
  BOOST_TEST(mentions(violations[0], "never reaching UNKNOWN"));
}

BOOST_AUTO_TEST_CASE(a_lost_claim_explains_a_running_attempt_the_history_never_saw_claimed) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("net.node_store", store_fault("claim_next_attempt", "maybe_committed"))
      .add("reconciler", attempt_state(1, 1, "RUNNING", "UNKNOWN", "lease expired", "reconciler"));
  BOOST_TEST(check_one_live_attempt(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(an_attempt_whose_creation_went_unreported_is_adopted_live) {
  HistoryBuilder h;
  h.add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("api-1", attempt_created(1, 2, 2));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 2u);
  BOOST_TEST(mentions(violations[0], "while attempt 1 is RUNNING"));
}

BOOST_AUTO_TEST_CASE(an_attempt_first_seen_leaving_a_live_state_was_live_until_then) {
  HistoryBuilder h;
  h.add("api-1", attempt_created(1, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("net.node_store", store_fault("insert_attempt", "maybe_committed"))
      .add("worker-2", attempt_state(1, 2, "RUNNING", "FAILED", "provider refused"));
  const auto violations = check_one_live_attempt(h.history());
  BOOST_REQUIRE(!violations.empty());
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(
      mentions(violations[0], "attempt 2 of job 1 became RUNNING while attempt 1 is RUNNING"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
