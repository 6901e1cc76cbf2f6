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
// Does not check:
//   - why an attempt failed before any provider call: nothing could time out;
//   - that UNKNOWN attempts are resolved in the end (I8).
#include "harness/check/invariant.hpp"

namespace onejob::check {
namespace {

bool definitive_failure(const std::string& outcome) {
  return outcome == "error" || outcome == "malformed" || outcome == "hallucinated_key" ||
         outcome == "wrong_operation";
}

}  // namespace

std::vector<Violation> check_timeout_is_unknown(const HistoryModel& model) {
  std::vector<Violation> out;
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
