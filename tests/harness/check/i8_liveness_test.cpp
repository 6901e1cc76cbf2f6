#include <tuple>

#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

std::uint64_t end_run(HistoryBuilder& h) { return h.add("world", events::RunEnded{}).last_seq(); }

// The settle horizon of policy() below: lease 2s + 3 x reconcile 1s + status 1s + 2 x deadline
// 1s + poll 0.1s + 2 x backoff cap 1s = 10.1s after the faults end (at 5s).
constexpr Duration kJudgedAt = std::chrono::milliseconds(15'100);

// The run's recorded policy and topology (faults over at 5s), with its nodes started.
void policy(HistoryBuilder& h, bool reconciler, std::int64_t redrive_limit = 8) {
  auto recorded = short_policy();
  recorded.reconciler = reconciler;
  recorded.redrive_limit = redrive_limit;
  h.add("world", recorded);
  h.add("worker-1", events::NodeStarted{});
  if (reconciler) h.add("reconciler", events::NodeStarted{});
}

// What the transport delivered to `node` for attempt 1's key.
std::uint64_t delivered(HistoryBuilder& h, const std::string& node, const std::string& outcome,
                        const std::string& call = "reply") {
  return h
      .add(node,
           events::ProviderDelivered{
               .call = call, .provider = "alpha", .provider_key = "1:1", .outcome = outcome})
      .last_seq();
}

// The provider's own record of executing attempt 1's key (never answering when `hangs`).
std::uint64_t alpha_executes(HistoryBuilder& h, bool hangs = false) {
  return h
      .add(
          "alpha",
          events::ProviderExecuted{
              .purpose = std::string(events::kPurposeAttempt),
              .provider_key = "1:1",
              .operation = "classify",
              .outcome = hangs ? "hang" : "ok",
              .output = "",
              .answers_at = hangs ? std::nullopt : std::optional(Instant(std::chrono::seconds(1)))})
      .last_seq();
}

std::uint64_t end_at(HistoryBuilder& h, Duration at, bool quiescent = false) {
  return h.at(at).add("world", events::RunEnded{.quiescent = quiescent}).last_seq();
}

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
  // The attempt's last commit: its claim (after the job's and the attempt's insertion).
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{3});
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

BOOST_AUTO_TEST_CASE(an_answer_delivered_to_a_node_that_stayed_up_and_never_recorded) {
  HistoryBuilder h;
  policy(h, /*reconciler=*/false);
  running_job(h, 1);
  alpha_executes(h);
  const auto delivery = delivered(h, "worker-1", "answered");
  h.add(kStore, fenced_write(1, 1, S::running, S::unknown));
  const auto end = end_at(h, kJudgedAt);
  const auto violations = check_liveness(h.model());
  require_one(violations, "I8.answer_dropped", end);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{delivery});
}

BOOST_AUTO_TEST_CASE(an_answer_to_a_node_that_crashed_is_not_dropped_by_it) {
  HistoryBuilder h;
  policy(h, /*reconciler=*/false);
  running_job(h, 1);
  alpha_executes(h);
  delivered(h, "worker-1", "answered");
  h.add("worker-1", events::NodeCrashed{});
  // Blocked, with no reconciler to ask the provider: out of the system's reach.
  h.add(kStore, taken_over(1, 1, 2, "worker-1"));
  end_at(h, kJudgedAt);
  require_none(check_liveness(h.model()));
}

BOOST_AUTO_TEST_CASE(a_maybe_delivered_or_running_status_is_not_an_answer) {
  HistoryBuilder h;
  policy(h, /*reconciler=*/true);
  running_job(h, 1);
  alpha_executes(h, /*hangs=*/true);
  delivered(h, "worker-1", "maybe_delivered");
  h.add(kStore, fenced_write(1, 1, S::running, S::unknown));
  delivered(h, "reconciler", "running", "status");
  end_at(h, kJudgedAt);
  require_none(check_liveness(h.model()));  // a provider that never answers: blocked is right
}

BOOST_AUTO_TEST_CASE(an_answer_the_provider_holds_and_the_reconciler_never_learned) {
  HistoryBuilder h;
  policy(h, /*reconciler=*/true);
  running_job(h, 1);
  const auto execution = alpha_executes(h);
  h.add(kStore, taken_over(1, 1));
  const auto end = end_at(h, kJudgedAt);
  const auto violations = check_liveness(h.model());
  require_one(violations, "I8.truth_not_learned", end);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{execution});
}

BOOST_AUTO_TEST_CASE(a_never_sent_attempt_left_unknown_with_a_reconciler_up) {
  HistoryBuilder h;
  policy(h, /*reconciler=*/true);
  running_job(h, 1);
  const auto takeover = h.add(kStore, taken_over(1, 1)).last_seq();
  const auto end = end_at(h, kJudgedAt);
  const auto violations = check_liveness(h.model());
  require_one(violations, "I8.never_sent", end);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{takeover});
}

BOOST_AUTO_TEST_CASE(a_never_sent_attempt_waits_for_an_operator_once_redriven_to_the_limit) {
  HistoryBuilder h;
  policy(h, /*reconciler=*/true, /*redrive_limit=*/1);
  running_job(h, 1);
  h.add(kStore, taken_over(1, 1));
  h.add(kStore, unfenced_write(1, 1, S::unknown, S::starting, "reconciler", 2, "reconciler"));
  h.add(kStore, claimed(1, 1, "worker-1", 3));
  h.add(kStore, taken_over(1, 1, 4));
  end_at(h, kJudgedAt);
  require_none(check_liveness(h.model()));
}

BOOST_AUTO_TEST_CASE(without_a_reconciler_a_never_sent_unknown_attempt_is_blocked) {
  HistoryBuilder h;
  policy(h, /*reconciler=*/false);
  running_job(h, 1);
  h.add(kStore, fenced_write(1, 1, S::running, S::unknown));
  end_at(h, kJudgedAt);
  require_none(check_liveness(h.model()));
}

// An operator cancels attempt 1 while alpha runs it; alpha's valid answer then reaches worker-1,
// which holds the lease and stays up. A cancelled attempt's late result still competes: with
// nothing else won, the job should have it.
BOOST_AUTO_TEST_CASE(a_cancelled_attempts_valid_answer_that_never_reached_the_job) {
  const auto run = [](bool won, const std::string& receiver) {
    HistoryBuilder h;
    policy(h, /*reconciler=*/false);
    running_job(h, 1);
    alpha_executes(h);
    operator_cancel(h, 1, 1, S::running);
    const auto delivery = delivered(h, receiver, "answered");
    if (won) win(h, {.from = S::cancelled});
    const auto end = end_at(h, kJudgedAt);
    return std::tuple{check_liveness(h.model()), delivery, end};
  };
  const auto [violations, delivery, end] = run(false, "worker-1");
  require_one(violations, "I8.cancelled_result_dropped", end);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{delivery});
  require_none(std::get<0>(run(true, "worker-1")));   // the late result won
  require_none(std::get<0>(run(false, "worker-2")));  // delivered to a node without the lease
}

// worker-1 is paused when alpha's answer reaches it. Taken over by the reconciler before
// worker-1 resumed, the lease was not worker-1's when it could write the answer (the store fences
// it), so the operator's cancel of the UNKNOWN attempt owes no late result; taken over only after
// the resume, worker-1 held it when it could act, and the result was owed.
BOOST_AUTO_TEST_CASE(an_answer_reaching_a_paused_worker_counts_from_its_resume) {
  for (const bool taken_while_paused : {true, false}) {
    BOOST_TEST_CONTEXT("taken over while paused: " << taken_while_paused) {
      HistoryBuilder h;
      policy(h, /*reconciler=*/true);
      running_job(h, 1);
      alpha_executes(h);
      h.add("worker-1", events::NodePaused{.until = Instant(std::chrono::seconds(7))});
      delivered(h, "worker-1", "answered");
      if (taken_while_paused) h.add(kStore, taken_over(1, 1));
      h.add("worker-1", events::NodeResumed{});
      if (!taken_while_paused) h.add(kStore, taken_over(1, 1));
      operator_cancel(h, 1, 1, S::unknown, 2, "reconciler");
      const auto end = end_at(h, kJudgedAt);
      const auto violations = check_liveness(h.model());
      if (taken_while_paused) {
        require_none(violations);
      } else {
        require_one(violations, "I8.cancelled_result_dropped", end);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(work_no_worker_claims_while_one_is_up) {
  HistoryBuilder h;
  policy(h, /*reconciler=*/true);
  const auto inserted = insert_job(h, {}).last_seq();
  const auto end = end_at(h, kJudgedAt);
  const auto violations = check_liveness(h.model());
  require_one(violations, "I8.unclaimed", end);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{inserted});
}

// A run whose duration ran out with work in flight is not read as broken: with the policy
// recorded, an attempt still STARTING or RUNNING and a stuck job are judged only once the system
// had the settle horizon after their last commit, or when the run ended quiescent.
BOOST_AUTO_TEST_CASE(running_and_stuck_wait_for_the_settle_horizon_or_a_quiescent_end) {
  for (const bool stuck : {false, true}) {
    for (const auto& [at, quiescent, judged] :
         {std::tuple{kJudgedAt - std::chrono::milliseconds(1), false, false},
          std::tuple{kJudgedAt - std::chrono::milliseconds(1), true, true},
          std::tuple{kJudgedAt, false, true}}) {
      BOOST_TEST_CONTEXT("stuck " << stuck << ", end at " << at.count() << " us, quiescent "
                                  << quiescent) {
        HistoryBuilder h;
        policy(h, /*reconciler=*/false);
        running_job(h, 1);
        if (stuck) h.add(kStore, fenced_write(1, 1, S::running, S::failed));
        const auto end = end_at(h, at, quiescent);
        const auto violations = check_liveness(h.model());
        if (judged) {
          require_one(violations, stuck ? "I8.stuck" : "I8.still_running", end);
        } else {
          require_none(violations);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(ground_truth_clauses_wait_for_the_settle_horizon_or_a_quiescent_end) {
  for (const bool quiescent : {false, true}) {
    HistoryBuilder h;
    policy(h, /*reconciler=*/false);
    running_job(h, 1);
    alpha_executes(h);
    delivered(h, "worker-1", "answered");
    h.add(kStore, fenced_write(1, 1, S::running, S::unknown));
    const auto end = end_at(h, kJudgedAt - std::chrono::milliseconds(1), quiescent);
    const auto violations = check_liveness(h.model());
    if (quiescent) {
      require_one(violations, "I8.answer_dropped", end);
    } else {
      require_none(violations);
    }
  }
}

BOOST_AUTO_TEST_CASE(without_a_reconciler_a_lease_whose_holder_crashed_waits_for_an_operator) {
  for (const bool crashed : {false, true}) {
    HistoryBuilder h;
    policy(h, /*reconciler=*/false);
    running_job(h, 1);
    if (crashed) h.add("worker-1", events::NodeCrashed{});
    const auto end = end_at(h, kJudgedAt);
    if (crashed) {
      require_none(check_liveness(h.model()));
    } else {
      require_one(check_liveness(h.model()), "I8.still_running", end);
    }
  }
}

BOOST_AUTO_TEST_CASE(without_a_reconciler_a_failover_whose_writer_crashed_waits_for_an_operator) {
  for (const bool crashed : {false, true}) {
    HistoryBuilder h;
    policy(h, /*reconciler=*/false);
    running_job(h, 1);
    h.add(kStore, fenced_write(1, 1, S::running, S::failed));
    if (crashed) h.add("worker-1", events::NodeCrashed{});
    const auto end = end_at(h, kJudgedAt);
    if (crashed) {
      require_none(check_liveness(h.model()));
    } else {
      require_one(check_liveness(h.model()), "I8.stuck", end);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
