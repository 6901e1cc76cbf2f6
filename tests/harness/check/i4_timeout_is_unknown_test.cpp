#include <chrono>

#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"
#include "harness/check/provider_outcomes.hpp"
#include "harness/sim/sim_spec.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using namespace std::chrono_literals;
using S = AttemptState;

constexpr std::uint64_t kCall = 4;  // the provider call call_alpha() makes

// Job 1's attempt 1 is claimed by worker-1, which calls alpha at 1s (event kCall); alpha executes
// it with `outcome`, answering `output` at `answers_at` (never: nothing).
void call_alpha(HistoryBuilder& h, const std::string& outcome, std::optional<Instant> answers_at,
                const std::string& output = "") {
  insert_job(h, {});
  h.at(1s)
      .add(kStore, claimed(1, 1))
      .add("worker-1", provider_called(1, 1))
      .add("alpha", executed(1, 1, outcome, output, answers_at));
}

// worker-1 fails attempt 1 at `when`; returns the commit's seq.
std::uint64_t fail_attempt(HistoryBuilder& h, Duration when) {
  return h.at(when).add(kStore, fenced_write(1, 1, S::running, S::failed)).last_seq();
}

BOOST_AUTO_TEST_SUITE(i4_timeout_is_unknown)

BOOST_AUTO_TEST_CASE(failing_after_the_provider_answered_an_error_passes) {
  HistoryBuilder h;
  call_alpha(h, "error", Instant(2s));
  fail_attempt(h, 3s);
  require_none(check_timeout_is_unknown(h.model()));
}

BOOST_AUTO_TEST_CASE(failing_on_an_invalid_output_already_answered_passes) {
  HistoryBuilder h;
  call_alpha(h, "malformed", Instant(2s), "label: billing");
  fail_attempt(h, 2s);
  require_none(check_timeout_is_unknown(h.model()));
}

BOOST_AUTO_TEST_CASE(failing_before_any_provider_call_passes) {
  HistoryBuilder h;
  insert_job(h, {});
  // The prompt does not fit the provider: the attempt fails before anything is sent.
  h.at(1s).add(kStore, unfenced_write(1, 1, S::starting, S::failed, "worker-1", 0, ""));
  require_none(check_timeout_is_unknown(h.model()));
}

BOOST_AUTO_TEST_CASE(failing_when_the_provider_executed_ok_is_a_violation) {
  HistoryBuilder h;
  call_alpha(h, "ok", Instant(2s), kBilling);
  const auto failed = fail_attempt(h, 3s);
  const auto violations = find_invariant("I4")->check(h.model());
  require_one(violations, "I4.timeout_failed", failed);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{kCall});
}

BOOST_AUTO_TEST_CASE(failing_while_the_provider_hangs_is_a_violation) {
  HistoryBuilder h;
  call_alpha(h, "hang", std::nullopt);
  const auto failed = fail_attempt(h, 31s);
  require_one(check_timeout_is_unknown(h.model()), "I4.timeout_failed", failed);
}

BOOST_AUTO_TEST_CASE(failing_before_the_providers_error_answers_is_a_violation) {
  HistoryBuilder h;
  call_alpha(h, "error", Instant(5s));
  const auto failed = fail_attempt(h, 3s);
  require_one(check_timeout_is_unknown(h.model()), "I4.timeout_failed", failed);
}

BOOST_AUTO_TEST_CASE(failing_a_call_the_provider_never_executed_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  h.at(1s).add(kStore, claimed(1, 1)).add("worker-1", provider_called(1, 1));
  const auto failed = fail_attempt(h, 31s);
  require_one(check_timeout_is_unknown(h.model()), "I4.timeout_failed", failed);
}

BOOST_AUTO_TEST_CASE(a_job_failed_while_its_attempt_is_unknown_is_a_violation) {
  HistoryBuilder h;
  call_alpha(h, "hang", std::nullopt);
  h.at(31s).add(kStore, taken_over(1, 1));
  const auto failed = h.add(kStore, job_failed(1)).last_seq();
  const auto violations = check_timeout_is_unknown(h.model());
  require_one(violations, "I4.job_failed_while_unknown", failed);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{2});
}

BOOST_AUTO_TEST_CASE(a_second_failure_while_a_retried_attempt_is_unknown_is_a_violation) {
  HistoryBuilder h;
  // Attempt 1 fails on alpha's error and the job fails; an operator retries; attempt 2 times
  // out (UNKNOWN) and the job is failed again.
  call_alpha(h, "error", Instant(1s));
  h.at(2s).add(kStore, fenced_write(1, 1, S::running, S::failed)).add(kStore, job_failed(1));
  h.add(kStore, attempt_inserted(1, 2, 2, "alpha", AttemptOrigin::explicit_retry, "api-1"))
      .add(kStore, claimed(1, 2, "worker-1", 2))
      .at(40s)
      .add(kStore, taken_over(1, 2, 3));
  const auto again = h.add(kStore, job_failed(1)).last_seq();
  require_one(check_timeout_is_unknown(h.model()), "I4.job_failed_while_unknown", again);
}

// A job fails only while it is pending and nothing of it may still run: attempt 1 is left in
// `state` (RUNNING: claimed; FAILED: the provider refused) when the store fails the job.
BOOST_AUTO_TEST_CASE(a_job_fails_only_while_pending_with_nothing_live) {
  const auto fail_with = [](std::optional<S> then) {
    HistoryBuilder h;
    insert_job(h, {});
    h.at(1s).add(kStore, claimed(1, 1));
    if (then) h.add(kStore, fenced_write(1, 1, S::running, *then));
    const auto failed = h.add(kStore, job_failed(1)).last_seq();
    return std::pair{check_timeout_is_unknown(h.model()), failed};
  };
  require_none(fail_with(S::failed).first);
  const auto [running, at] = fail_with(std::nullopt);
  require_one(running, "I4.job_failed_while_live", at);
  // STARTING: inserted and never claimed.
  HistoryBuilder starting;
  insert_job(starting, {});
  const auto failed = starting.add(kStore, job_failed(1)).last_seq();
  require_one(check_timeout_is_unknown(starting.model()), "I4.job_failed_while_live", failed);
}

BOOST_AUTO_TEST_CASE(a_job_won_or_already_failed_is_not_failed_again) {
  // Won, then failed.
  HistoryBuilder won;
  insert_job(won, {});
  won.at(1s).add(kStore, claimed(1, 1)).add(kStore, fenced_write(1, 1, S::running, S::succeeded));
  won.add(kStore, cas_won(1, 1, R"({"label":"billing"})"));
  const auto after_win = won.add(kStore, job_failed(1)).last_seq();
  require_one(check_timeout_is_unknown(won.model()), "I4.job_failed_after_win", after_win);
  // Failed twice with no attempt between; then a retried attempt that fails makes a third
  // failure legitimate.
  HistoryBuilder twice;
  insert_job(twice, {});
  twice.at(1s).add(kStore, claimed(1, 1)).add(kStore, fenced_write(1, 1, S::running, S::failed));
  twice.add(kStore, job_failed(1));
  const auto again = twice.add(kStore, job_failed(1)).last_seq();
  require_one(check_timeout_is_unknown(twice.model()), "I4.job_failed_again", again);
  twice.add(kStore, attempt_inserted(1, 2, 2, "alpha", AttemptOrigin::explicit_retry, "api-1"))
      .add(kStore, claimed(1, 2, "worker-1", 2))
      .add(kStore, fenced_write(1, 2, S::running, S::failed, "worker-1", 2))
      .add(kStore, job_failed(1));
  require_one(check_timeout_is_unknown(twice.model()), "I4.job_failed_again", again);
}

// Job 1's attempt 1 failed and so did the job; an operator's retry (attempt 2) is then cancelled
// when `cancelled`, else fails: the job is failed once more. A cancel parks the job with the
// operator, so only the second story may fail it.
BOOST_AUTO_TEST_CASE(a_job_whose_latest_attempt_was_cancelled_is_not_failed) {
  for (const bool cancelled : {false, true}) {
    HistoryBuilder h;
    insert_job(h, {});
    h.at(1s).add(kStore, claimed(1, 1)).add(kStore, fenced_write(1, 1, S::running, S::failed));
    h.add(kStore, job_failed(1))
        .add(kStore, attempt_inserted(1, 2, 2, "beta", AttemptOrigin::explicit_retry, "api-1"))
        .add(kStore, claimed(1, 2, "worker-1", 2));
    if (cancelled) {
      h.add(kStore, fenced_write(1, 2, S::running, S::cancelled, "api-1"));
    } else {
      h.add(kStore, fenced_write(1, 2, S::running, S::failed, "worker-1", 2));
    }
    const auto failed = h.add(kStore, job_failed(1)).last_seq();
    BOOST_TEST_CONTEXT("cancelled " << cancelled) {
      if (cancelled) {
        require_one(check_timeout_is_unknown(h.model()), "I4.job_failed_while_parked", failed);
      } else {
        require_none(check_timeout_is_unknown(h.model()));
      }
    }
  }
}

// Attempt 1 of job 1 (claimed by worker-1, called) is cancelled by an operator, attempt 2 is
// inserted for a retry on beta; then attempt 1's late answer wins the job (returned: the CAS's
// seq) after worker-2 claims attempt 2 when `claimed_before_win`, before it otherwise.
std::uint64_t retry_races_a_late_win(HistoryBuilder& h, bool claimed_before_win) {
  call_alpha(h, "ok", Instant(2s), R"({"label":"billing"})");
  h.add(kStore, fenced_write(1, 1, S::running, S::cancelled, "api-1"))
      .add(kStore, attempt_inserted(1, 2, 2, "beta", AttemptOrigin::explicit_retry, "api-1"));
  if (claimed_before_win) h.add(kStore, claimed(1, 2, "worker-2", 2));
  const auto win = h.at(2s).add(kStore, cas_won(1, 1, R"({"label":"billing"})")).last_seq();
  if (!claimed_before_win) h.add(kStore, claimed(1, 2, "worker-2", 2));
  return win;
}

BOOST_AUTO_TEST_CASE(a_call_under_a_lease_taken_before_the_win_passes) {
  // The worker may have read the job before the win: its call is not judged.
  HistoryBuilder h;
  retry_races_a_late_win(h, /*claimed_before_win=*/true);
  h.add("worker-2", provider_called(1, 2, 2, "beta"));
  require_none(check_timeout_is_unknown(h.model()));
}

BOOST_AUTO_TEST_CASE(a_call_under_a_lease_taken_after_the_win_is_a_violation) {
  HistoryBuilder h;
  const auto win = retry_races_a_late_win(h, /*claimed_before_win=*/false);
  const auto claim = h.last_seq();
  const auto call = h.add("worker-2", provider_called(1, 2, 2, "beta")).last_seq();
  const auto violations = check_timeout_is_unknown(h.model());
  require_one(violations, "I4.called_won_job", call);
  BOOST_TEST(violations[0].evidence == (std::vector<std::uint64_t>{win, claim}));
}

BOOST_AUTO_TEST_CASE(a_job_failed_once_its_unknown_attempt_resolved_failed_passes) {
  HistoryBuilder h;
  // alpha's error answers late, after the attempt went UNKNOWN; the reconciler learns it.
  call_alpha(h, "error", Instant(40s));
  h.at(31s).add(kStore, taken_over(1, 1));
  h.at(45s)
      .add(kStore, unfenced_write(1, 1, S::unknown, S::failed, "reconciler", 2, "reconciler"))
      .add(kStore, job_failed(1, "reconciler"));
  require_none(check_timeout_is_unknown(h.model()));
}

// worker-1's lease on job 1's attempt 1 is taken over (UNKNOWN); the reconciler asks alpha for
// the key's status and gets `status` (nothing when the query timed out), then re-drives it.
std::vector<Violation> redriven_after(std::optional<std::string> status,
                                      std::string status_to = "reconciler") {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1)).add(kStore, taken_over(1, 1, 2));
  if (status) {
    h.add(status_to, events::ProviderDelivered{.call = std::string(events::kDeliveredStatus),
                                               .provider = "alpha",
                                               .provider_key = provider_key(1, 1),
                                               .outcome = *status});
  }
  h.add(kStore, unfenced_write(1, 1, S::unknown, S::starting, "reconciler", 2, "reconciler"));
  return check_timeout_is_unknown(h.model());
}

BOOST_AUTO_TEST_CASE(a_redrive_after_the_provider_said_not_found_passes) {
  require_none(redriven_after("not_found"));
}

BOOST_AUTO_TEST_CASE(a_redrive_on_a_timed_out_or_other_status_is_a_violation) {
  for (const auto& status : {std::optional<std::string>{}, std::optional<std::string>("running"),
                             std::optional<std::string>("unreachable")}) {
    const auto violations = redriven_after(status);
    BOOST_TEST_REQUIRE(violations.size() == 1u, describe(violations));
    BOOST_TEST(violations[0].clause == "I4.redriven_without_not_found");
  }
  // The answer reached another node, not the one that re-drove the attempt.
  const auto elsewhere = redriven_after("not_found", "reconciler-2");
  BOOST_TEST_REQUIRE(elsewhere.size() == 1u, describe(elsewhere));
  BOOST_TEST(elsewhere[0].clause == "I4.redriven_without_not_found");
}

// Job 1's attempt 1, claimed by worker-1, goes `to` (UNKNOWN: its lease taken over; RUNNING:
// stays; SUCCEEDED/FAILED: straight from RUNNING); then alpha's status answer for its key reaches
// the reconciler.
std::vector<Violation> status_asked_after(S to) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1));
  if (to == S::unknown) {
    h.add(kStore, taken_over(1, 1, 2));
  } else if (to != S::running) {
    h.add(kStore, fenced_write(1, 1, S::running, to));
  }
  h.add("reconciler", events::ProviderDelivered{.call = std::string(events::kDeliveredStatus),
                                                .provider = "alpha",
                                                .provider_key = provider_key(1, 1),
                                                .outcome = "completed"});
  return check_timeout_is_unknown(h.model());
}

BOOST_AUTO_TEST_CASE(a_status_asked_about_an_unknown_attempt_passes) {
  require_none(status_asked_after(S::unknown));
}

BOOST_AUTO_TEST_CASE(a_status_asked_about_an_attempt_never_unknown_is_a_violation) {
  for (const S to : {S::running, S::succeeded, S::failed}) {
    const auto violations = status_asked_after(to);
    BOOST_TEST_REQUIRE(violations.size() == 1u, describe(violations));
    BOOST_TEST(violations[0].clause == "I4.asked_before_unknown");
  }
  // A status for a key no attempt has (the job's own key, say).
  HistoryBuilder h;
  insert_job(h, {});
  h.add("reconciler", events::ProviderDelivered{.call = std::string(events::kDeliveredStatus),
                                                .provider = "alpha",
                                                .provider_key = "no-such-key",
                                                .outcome = "not_found"});
  const auto stray = check_timeout_is_unknown(h.model());
  BOOST_TEST_REQUIRE(stray.size() == 1u, describe(stray));
  BOOST_TEST(stray[0].clause == "I4.asked_before_unknown");
}

// The rules' own table says what each outcome word a provider can record gives: a word the
// simulated providers learn is classed there too, or I4, I6, I8 and I14 would misjudge it.
BOOST_AUTO_TEST_CASE(every_provider_outcome_word_is_classed_by_the_rules) {
  for (const auto& [outcome, name] : sim::kProviderOutcomes) {
    BOOST_TEST((outcome_gives(name) != OutcomeGives::unknown), name);
  }
  BOOST_TEST((outcome_gives("garbled_refusal") == OutcomeGives::refusal));
  BOOST_TEST((outcome_gives("garbled_answer") == OutcomeGives::refused_answer));
  BOOST_TEST((outcome_gives("plausible") == OutcomeGives::accepted_answer));
  BOOST_TEST((outcome_gives("no such word") == OutcomeGives::unknown));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
