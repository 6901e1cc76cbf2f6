// I4 — a timeout yields UNKNOWN, never FAILED; a job is never failed because of a timeout.
//
// The providers' own record is the evidence: an attempt may only fail definitively once its
// provider really answered with a failure (an error, or an output that breaks the contract:
// malformed, an extra key, the wrong operation) by the instant the failure committed. Checks,
// against the store's commit log:
//   - every attempt the store moves to FAILED after a provider call was made for it has such an
//     answer from its provider by then (no answer yet is a timeout: UNKNOWN);
//   - no job fails while one of its attempts is UNKNOWN.
//   - an attempt failed before any provider call (an unconfigured provider, a prompt over the
//     provider's limit) belongs to a job with no winner yet: an attempt of a job another attempt
//     already won is CANCELLED, not FAILED (failed_not_cancelled).
//   - a call's end is recorded by its caller (unknown_not_recorded): once a worker's provider call
//     for an attempt RUNNING under its lease has ended for it (the first reply the transport
//     delivered to it by the call's deadline, else the deadline), that worker itself writes the
//     attempt (out of RUNNING: UNKNOWN for a timeout or a send that may have been delivered, the
//     answer's state otherwise; or from wherever an operator's cancel put it meanwhile), or the
//     store refuses its write, unless another writer had moved
//     the attempt out of RUNNING by then, the worker crashed or was paused after the call, or the
//     run ended within the settle horizon of the call's end and of the faults. A timeout left
//     RUNNING until the lease runs out shows clients a live attempt the system knows is unknown.
// Does not check:
//   - why an attempt failed before any provider call: nothing could time out;
//   - that UNKNOWN attempts are resolved in the end (I8).
#include <algorithm>

#include "harness/check/invariant.hpp"

namespace onejob::check {
namespace {

bool definitive_failure(const std::string& outcome) {
  return outcome == "error" || outcome == "malformed" || outcome == "hallucinated_key" ||
         outcome == "wrong_operation";
}

void check_call_ends_recorded(const HistoryModel& model, std::vector<Violation>& out) {
  const auto end = model.end_at();
  if (model.history == nullptr || !model.policy || !end) return;
  const Duration horizon = settle_horizon(model.policy->what);
  const Instant faults_over = model.policy->what.faults_over;
  std::map<std::string, std::vector<std::uint64_t>> pauses;  // by node
  std::vector<std::pair<std::string, At<events::ProviderCalled>>> calls;
  for (const auto& recorded : *model.history) {
    if (auto call = events::from_event<events::ProviderCalled>(recorded.event)) {
      calls.emplace_back(recorded.node.str(),
                         At<events::ProviderCalled>{*call, recorded.seq, recorded.at});
    } else if (events::from_event<events::NodePaused>(recorded.event)) {
      pauses[recorded.node.str()].push_back(recorded.seq);
    }
  }
  for (const auto& [node, call] : calls) {
    const AttemptRecord* attempt = model.attempt(call.what.attempt_id);
    if (attempt == nullptr || attempt->state_before(call.seq) != AttemptState::running) continue;
    // When the call ended for its caller, and how.
    Instant ended = call.what.deadline;
    std::string how = "its deadline passed with no reply";
    if (auto found = model.deliveries.find(call.what.provider_key);
        found != model.deliveries.end()) {
      for (const Delivery& delivery : found->second) {
        const auto& delivered = delivery.delivered;
        if (delivery.node == node && delivered.seq > call.seq &&
            delivered.what.call == events::kDeliveredReply && delivered.at <= ended) {
          ended = delivered.at;
          how = "a reply \"" + delivered.what.outcome + "\" reached it";
          break;
        }
      }
    }
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
    const auto& paused = pauses[node];
    const bool excused =
        model.crashed_after(node, call.seq) ||
        std::ranges::any_of(paused, [&](std::uint64_t seq) { return seq > call.seq; }) ||
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

std::vector<Violation> check_timeout_is_unknown(const HistoryModel& model) {
  std::vector<Violation> out;
  check_call_ends_recorded(model, out);
  for (const auto& [id, attempt] : model.attempts) {
    const auto calls = model.calls.find(id);
    for (const auto& step : attempt.steps) {
      if (step.what.to != AttemptState::failed) continue;
      if (calls == model.calls.end() || calls->second.front().seq > step.seq) {
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
                              step.seq, {calls->second.front().seq}));
    }
  }
  for (const auto& [id, job] : model.jobs) {
    for (const auto& failure : job.failures) {
      for (auto attempt_id : job.attempts) {
        const auto& attempt = model.attempts.at(attempt_id);
        if (attempt.inserted.seq > failure.seq) continue;
        if (attempt.state_before(failure.seq) != AttemptState::unknown) continue;
        out.push_back(violation("I4.job_failed_while_unknown",
                                "the store failed " + job_ref(id) + " while its " +
                                    attempt_ref(attempt_id) + " is UNKNOWN",
                                failure.seq, {attempt.inserted.seq}));
      }
    }
  }
  return out;
}

}  // namespace onejob::check
