// I4 — a timeout yields UNKNOWN, never FAILED; a job is never failed because of a timeout.
//
// The providers' own record is the evidence: an attempt may only fail definitively once its
// provider really answered with a failure (an error, or an output that breaks the contract:
// malformed, an extra key, the wrong operation) by the instant the failure committed. Checks,
// against the store's commit log:
//   - every attempt the store moves to FAILED after a provider call was made for it has such an
//     answer from its provider by then (no answer yet is a timeout: UNKNOWN);
//   - no job fails while one of its attempts is UNKNOWN (job_failed_while_unknown), or STARTING or
//     RUNNING (job_failed_while_live): it may still answer;
//   - a job fails only while pending: never after an attempt won it (job_failed_after_win), and
//     not again unless a new attempt was inserted since its last failure (job_failed_again);
//   - a job fails only after its latest attempt FAILED: one whose latest attempt an operator
//     cancelled is parked with the operator, and nothing but the operator moves it on
//     (job_failed_while_parked).
//   - an attempt failed before any provider call (an unconfigured provider, a prompt over the
//     provider's limit) belongs to a job with no winner yet: an attempt of a job another attempt
//     already won is CANCELLED, not FAILED (failed_not_cancelled).
//   - a worker reads the job after it takes an attempt's lease and before it calls the provider:
//     no worker calls a provider for an attempt under a lease it took (a claim or takeover it
//     committed) after another attempt's win of the job had committed (called_won_job). A win
//     that committed after the lease was taken may or may not have been read: not judged.
//   - a call's end is recorded by its caller (unknown_not_recorded): once a worker's provider call
//     for an attempt RUNNING under its lease has ended for it (the first reply the transport
//     delivered to it by the call's deadline, else the deadline), that worker itself writes the
//     attempt (out of RUNNING: UNKNOWN for a timeout or a send that may have been delivered, the
//     answer's state otherwise; or from wherever an operator's cancel put it meanwhile), or the
//     store refuses its write, unless another writer had moved
//     the attempt out of RUNNING by then, the worker crashed or was paused after the call, or the
//     run ended within the settle horizon of the call's end and of the faults. A timeout left
//     RUNNING until the lease runs out shows clients a live attempt the system knows is unknown.
//   - prompts (i4_prompts.cpp): an attempt failed before any call had a reason to
//     (failed_without_reason), no prompt over the provider's limit is sent (prompt_over_limit),
//     and every call carries the prompt its provider's template renders (prompt_misrendered) at
//     temperature 0 (temperature_not_zero).
//   - an UNKNOWN attempt goes back to STARTING (a re-drive) only through a node that learned,
//     after the attempt became UNKNOWN, that its provider has no record of its key: a status
//     answer "not_found" the transport delivered to that node (redriven_without_not_found). A
//     status query that timed out or failed says nothing: sending again on it is a guess.
//   - the provider is asked for a key's status only about an attempt that became UNKNOWN: every
//     status answer the transport delivered is for the provider key of an attempt the log had
//     moved to UNKNOWN before that delivery (asked_before_unknown). An attempt that is RUNNING
//     under a live lease, or settled without ever being UNKNOWN, is not the reconciler's to ask
//     about; an attempt that left UNKNOWN while the query was under way is.
// Does not check:
//   - that UNKNOWN attempts are resolved in the end (I8).
#include <algorithm>
#include <optional>

#include "harness/check/i4_prompts.hpp"
#include "harness/check/invariant.hpp"
#include "harness/check/provider_outcomes.hpp"

namespace onejob::check {
namespace {

bool definitive_failure(const std::string& outcome) {
  const OutcomeGives gives = outcome_gives(outcome);
  return gives == OutcomeGives::refusal || gives == OutcomeGives::refused_answer;
}

void check_call_ends_recorded(const HistoryModel& model, std::vector<Violation>& out) {
  const auto end = model.end_at();
  if (model.history == nullptr || !model.policy || !end) return;
  const Duration horizon = settle_horizon(model.policy->what);
  const Instant faults_over = model.policy->what.faults_over;
  for (const auto& span : model.call_spans) {
    // Named references, not structured bindings: lambdas below capture them.
    const auto& node = span.node;
    const auto& call = span.call;
    const AttemptRecord* attempt = model.attempt(call.what.attempt_id);
    if (attempt == nullptr || attempt->state_before(call.seq) != AttemptState::running) continue;
    const Instant ended = span.ended;
    const std::string how = span.reply ? "a reply \"" + *span.reply + "\" reached it"
                                       : "its deadline passed with no reply";
    const bool recorded = std::ranges::any_of(attempt->steps,
                                              [&](const auto& step) {
                                                // Its own write from any state (an operator's
                                                // cancel may land while it retries), or another
                                                // writer's move out of RUNNING before the call
                                                // ended for it.
                                                return step.seq > call.seq &&
                                                       (step.what.by == node ||
                                                        (step.what.from == AttemptState::running &&
                                                         step.at <= ended));
                                              }) ||
                          std::ranges::any_of(model.refusals, [&](const auto& refused) {
                            return refused.seq > call.seq && refused.what.by == node &&
                                   refused.what.attempt_id == attempt->id();
                          });
    const bool excused = model.crashed_after(node, call.seq) ||
                         model.paused_after(node, call.seq) ||
                         (!model.quiescent_end && *end < std::max(ended, faults_over) + horizon);
    if (recorded || excused) continue;
    out.push_back(violation("I4.unknown_not_recorded",
                            node + "'s call for " + attempt_ref(attempt->id()) + " ended (" + how +
                                ") but " + node +
                                " never wrote the attempt out of RUNNING: a timeout, or a send "
                                "that may have been delivered, is recorded as UNKNOWN",
                            call.seq, {}));
  }
}

}  // namespace

void check_redrives(const HistoryModel& model, std::vector<Violation>& out) {
  for (const auto& [id, attempt] : model.attempts) {
    std::uint64_t unknown_since = 0;
    for (const auto& step : attempt.steps) {
      const auto& s = step.what;
      if (s.to == AttemptState::unknown) unknown_since = step.seq;
      if (s.from != AttemptState::unknown || s.to != AttemptState::starting) continue;
      const auto deliveries = model.deliveries.find(attempt.inserted.what.provider_key);
      const bool learned = deliveries != model.deliveries.end() &&
                           std::ranges::any_of(deliveries->second, [&](const Delivery& delivery) {
                             return delivery.node == s.by &&
                                    delivery.call == events::kDeliveredStatus &&
                                    delivery.outcome == "not_found" &&
                                    delivery.seq > unknown_since && delivery.seq < step.seq;
                           });
      if (learned) continue;
      out.push_back(violation(
          "I4.redriven_without_not_found",
          s.by + " moved UNKNOWN " + attempt_ref(id) + " of " + job_ref(attempt.job_id()) +
              " back to STARTING, but no status answer \"not_found\" for key " +
              attempt.inserted.what.provider_key + " reached it since the attempt became UNKNOWN",
          step.seq, {unknown_since}));
    }
  }
}

namespace {

void check_status_queries(const HistoryModel& model, std::vector<Violation>& out) {
  for (const auto& [key, deliveries] : model.deliveries) {
    for (const Delivery& delivery : deliveries) {
      if (delivery.call != events::kDeliveredStatus) continue;
      const auto owner = model.attempt_by_provider_key.find(key);
      const AttemptRecord* attempt =
          owner == model.attempt_by_provider_key.end() ? nullptr : model.attempt(owner->second);
      if (attempt == nullptr) {
        out.push_back(violation("I4.asked_before_unknown",
                                delivery.node + " was answered a status for key " + key +
                                    ", which no attempt the store inserted by then has",
                                delivery.seq, {}));
        continue;
      }
      const auto became_unknown = std::ranges::find_if(attempt->steps, [&](const auto& step) {
        return step.what.to == AttemptState::unknown && step.seq < delivery.seq;
      });
      if (became_unknown != attempt->steps.end()) continue;
      out.push_back(violation("I4.asked_before_unknown",
                              delivery.node + " was answered the status of " +
                                  attempt_ref(attempt->id()) + " of " + job_ref(attempt->job_id()) +
                                  " (key " + key + ", \"" + delivery.outcome +
                                  "\"), which was never UNKNOWN before (now " +
                                  std::string(to_string(attempt->state_before(delivery.seq))) +
                                  "): only an UNKNOWN attempt's status is asked",
                              delivery.seq, {attempt->inserted.seq}));
    }
  }
}

void check_won_job_calls(const HistoryModel& model, std::vector<Violation>& out) {
  for (const auto& span : model.call_spans) {
    const AttemptRecord* attempt = model.attempt(span.call.what.attempt_id);
    const JobRecord* job = attempt == nullptr ? nullptr : model.job(attempt->job_id());
    const auto* won = job == nullptr ? nullptr : job->won();
    if (won == nullptr || won->seq > span.call.seq) continue;
    // The lease the caller called under: the last it took before the call.
    const At<Transition>* lease = nullptr;
    for (const auto& step : attempt->steps) {
      if (step.seq > span.call.seq) break;
      if ((step.what.claim || step.what.takeover) && step.what.lease_owner == span.node) {
        lease = &step;
      }
    }
    if (lease == nullptr || lease->seq < won->seq) continue;
    out.push_back(violation("I4.called_won_job",
                            span.node + " called the provider for " + attempt_ref(attempt->id()) +
                                " of " + job_ref(attempt->job_id()) +
                                " under the lease it took after " +
                                attempt_ref(won->what.attempt_id) +
                                " had won the job: the attempt is cancelled, never sent",
                            span.call.seq, {won->seq, lease->seq}));
  }
}

}  // namespace

std::vector<Violation> check_timeout_is_unknown(const HistoryModel& model) {
  std::vector<Violation> out;
  check_call_ends_recorded(model, out);
  check_redrives(model, out);
  check_status_queries(model, out);
  check_prompts(model, out);
  check_won_job_calls(model, out);
  for (const auto& [id, attempt] : model.attempts) {
    const auto calls = model.calls.find(id);
    for (const auto& step : attempt.steps) {
      if (step.what.to != AttemptState::failed) continue;
      if (calls == model.calls.end() || calls->second.front() > step.seq) {
        const JobRecord* job = model.job(attempt.job_id());
        const auto* won = job == nullptr ? nullptr : job->won();
        if (won != nullptr && won->seq < step.seq) {
          out.push_back(violation("I4.failed_not_cancelled",
                                  "the store moved " + attempt_ref(id) + " of " +
                                      job_ref(attempt.job_id()) +
                                      " to FAILED before any provider call, after " +
                                      attempt_ref(won->what.attempt_id) +
                                      " had won the job: it is cancelled, not failed",
                                  step.seq, {won->seq}));
        }
        continue;
      }
      const Execution* execution = model.execution_of(id);
      const bool evidence =
          execution != nullptr && definitive_failure(execution->executed.what.outcome) &&
          execution->executed.what.answers_at && *execution->executed.what.answers_at <= step.at;
      if (evidence) continue;
      std::string provider_did = "its provider never executed it";
      if (execution != nullptr) {
        const auto& executed = execution->executed.what;
        provider_did = "its provider's execution was \"" + executed.outcome + "\"";
        if (!executed.answers_at) {
          provider_did += " and never answered";
        } else if (definitive_failure(executed.outcome)) {
          provider_did += ", answering only later";
        }
      }
      out.push_back(violation("I4.timeout_failed",
                              "the store moved " + attempt_ref(id) + " of " +
                                  job_ref(attempt.job_id()) + " " +
                                  std::string(to_string(step.what.from)) + " -> FAILED, but " +
                                  provider_did + ": a timeout is UNKNOWN, not a failure",
                              step.seq, {calls->second.front()}));
    }
  }
  for (const auto& [id, job] : model.jobs) {
    std::optional<std::uint64_t> previous_failure;
    for (const auto& failure : job.failures) {
      const AttemptRecord* latest = nullptr;  // the job's latest attempt inserted before it
      for (auto attempt_id : job.attempts) {
        const auto& attempt = model.attempts.at(attempt_id);
        if (attempt.inserted.seq > failure.seq) continue;
        if (latest == nullptr || attempt.inserted.seq >= latest->inserted.seq) latest = &attempt;
        const AttemptState state = attempt.state_before(failure.seq);
        if (state == AttemptState::unknown) {
          out.push_back(violation("I4.job_failed_while_unknown",
                                  "the store failed " + job_ref(id) + " while its " +
                                      attempt_ref(attempt_id) + " is UNKNOWN",
                                  failure.seq, {attempt.inserted.seq}));
        } else if (state == AttemptState::starting || state == AttemptState::running) {
          out.push_back(violation("I4.job_failed_while_live",
                                  "the store failed " + job_ref(id) + " while its " +
                                      attempt_ref(attempt_id) + " is " +
                                      std::string(to_string(state)) + ": it may still answer",
                                  failure.seq, {attempt.inserted.seq}));
        }
      }
      if (latest != nullptr && latest->state_before(failure.seq) == AttemptState::cancelled) {
        out.push_back(violation("I4.job_failed_while_parked",
                                "the store failed " + job_ref(id) + " while its latest " +
                                    attempt_ref(latest->id()) +
                                    " was CANCELLED: an operator took the job over, and only the "
                                    "operator moves it on",
                                failure.seq, {latest->inserted.seq}));
      }
      if (const auto* won = job.won(); won != nullptr && won->seq < failure.seq) {
        out.push_back(violation("I4.job_failed_after_win",
                                "the store failed " + job_ref(id) + " after " +
                                    attempt_ref(won->what.attempt_id) + " won it",
                                failure.seq, {won->seq}));
      } else if (previous_failure &&
                 (latest == nullptr || latest->inserted.seq < *previous_failure)) {
        out.push_back(violation("I4.job_failed_again",
                                "the store failed " + job_ref(id) +
                                    " again with no new attempt since it failed: only a new "
                                    "attempt makes a failed job pending",
                                failure.seq, {*previous_failure}));
      }
      previous_failure = failure.seq;
    }
  }
  return out;
}

}  // namespace onejob::check
