#include "system/service/settlement.hpp"

#include <algorithm>

#include "system/domain/check.hpp"
#include "system/domain/text.hpp"
#include "system/events/attempt_events.hpp"

namespace onejob {
namespace {

std::vector<AttemptState> without(std::vector<AttemptState> states, AttemptState removed) {
  std::erase(states, removed);
  return states;
}

// A write the store refused: the writer's lease was taken over (fenced) or the attempt had
// already moved on (state).
void emit_write_refused(EventSink& events, const Attempt& attempt, bool fenced, AttemptState wanted,
                        const Writer& writer) {
  events::emit(events, events::AttemptWriteRefused{.job_id = attempt.job_id,
                                                   .attempt_id = attempt.id,
                                                   .fenced = fenced,
                                                   .found = attempt.state,
                                                   .wanted = wanted,
                                                   .by = writer.name,
                                                   .token = writer.fence.value_or(0)});
}

}  // namespace

void emit_attempt_created(EventSink& events, const Attempt& attempt) {
  events::emit(events, events::AttemptCreated{.job_id = attempt.job_id,
                                              .attempt_id = attempt.id,
                                              .attempt_no = attempt.attempt_no,
                                              .provider = attempt.provider,
                                              .provider_key = attempt.provider_key,
                                              .origin = attempt.origin});
}

Async<UpdateAttemptResult> Settlement::transition(AttemptUpdate update, const Writer& writer) {
  update.fence = writer.fence;
  // A reason may quote a provider (its refusal, an output it broke the contract with): written
  // down as storable text, so that no answer of theirs can make the write fail on every try.
  update.reason = storable_text(update.reason);
  const AttemptState to = update.to;
  const std::string reason = update.reason;
  const AttemptId id = update.attempt_id;
  auto result = co_await context_.store.update_attempt(std::move(update));
  using Outcome = UpdateAttemptResult::Outcome;
  // The Store port's contract: an applied update returns the row in its new state and the state
  // it left; a refusal for fencing or state returns the row as the store found it.
  ONEJOB_ASSERT(result.outcome != Outcome::applied ||
                    (result.attempt && result.before && result.attempt->id == id &&
                     result.attempt->state == to),
                "an applied update returns the attempt in its new state");
  ONEJOB_ASSERT((result.outcome != Outcome::fenced && result.outcome != Outcome::state_mismatch) ||
                    (result.attempt && result.attempt->id == id),
                "a refused update returns the attempt as the store found it");
  if (result.outcome == Outcome::applied) {
    events::emit(context_.events, events::AttemptStateChanged{.job_id = result.attempt->job_id,
                                                              .attempt_id = result.attempt->id,
                                                              .from = *result.before,
                                                              .to = to,
                                                              .reason = reason,
                                                              .by = writer.name});
  } else if (result.attempt) {
    emit_write_refused(context_.events, *result.attempt, result.outcome == Outcome::fenced, to,
                       writer);
  }
  co_return result;
}

Async<void> Settlement::answered(const Attempt& attempt, const Job& job, const std::string& output,
                                 std::vector<AttemptState> from, const Writer& writer) {
  auto check = validate_output(job.operation, job.input_json, output);
  if (auto* violation = std::get_if<ContractViolation>(&check)) {
    events::emit(context_.events, events::OutputRejected{.job_id = job.id,
                                                         .attempt_id = attempt.id,
                                                         .provider = attempt.provider,
                                                         .reason = violation->reason,
                                                         .output = output});
    co_await failed(attempt, "output broke the contract: " + violation->reason, std::move(from),
                    writer);
    co_return;
  }
  CompleteAttempt completion{
      .attempt_id = attempt.id,
      .job_id = job.id,
      .expected_version = job.version,
      .from = std::move(from),
      .fence = writer.fence,
      .result = std::get<ContractOk>(check).canonical,
      .at = context_.clock.now(),
  };
  auto result = co_await context_.store.complete_attempt(std::move(completion));
  using Outcome = CompleteAttemptResult::Outcome;
  ONEJOB_ASSERT(result.outcome == Outcome::not_found || (result.attempt && result.job),
                "a completion the store judged returns the attempt and the job");
  ONEJOB_ASSERT(result.outcome != Outcome::won ||
                    (result.job->completed_by == attempt.id && result.job->version > job.version &&
                     result.attempt->state == AttemptState::succeeded),
                "a won compare-and-swap names the attempt, bumps the version and SUCCEEDS it");
  ONEJOB_ASSERT(result.outcome != Outcome::lost || result.attempt->state == AttemptState::discarded,
                "a lost compare-and-swap leaves the attempt DISCARDED");
  if (result.outcome == Outcome::fenced || result.outcome == Outcome::state_mismatch) {
    emit_write_refused(context_.events, *result.attempt, result.outcome == Outcome::fenced,
                       AttemptState::succeeded, writer);
    co_return;
  }
  if (result.outcome == Outcome::not_found) co_return;
  const bool won = result.outcome == Outcome::won;
  events::emit(context_.events, events::JobCas{.job_id = job.id,
                                               .attempt_id = attempt.id,
                                               .expected_version = job.version,
                                               .won = won,
                                               .winner = result.job->completed_by.value_or(0)});
  events::emit(context_.events,
               events::AttemptStateChanged{.job_id = job.id,
                                           .attempt_id = attempt.id,
                                           .from = *result.before,
                                           .to = result.attempt->state,
                                           .reason = result.attempt->outcome_reason,
                                           .by = writer.name});
  if (won) {
    events::emit(context_.events, events::JobCompleted{.job_id = job.id,
                                                       .attempt_id = attempt.id,
                                                       .version = result.job->version,
                                                       .result = result.job->result});
  } else {
    events::emit(context_.events,
                 events::ResultDiscarded{
                     .job_id = job.id,
                     .attempt_id = attempt.id,
                     .winner = result.job->completed_by.value_or(0),
                     // Defect discard-reports-winner: the job's bytes.
                     .result = context_.config.defects.has(Defect::discard_reports_winner)
                                   ? result.job->result
                                   : result.attempt->result});
  }
}

Async<void> Settlement::failed(const Attempt& attempt, const std::string& reason,
                               std::vector<AttemptState> from, const Writer& writer) {
  // An operator's cancel stands: a cancelled attempt's failure changes nothing.
  AttemptUpdate update{.attempt_id = attempt.id,
                       .from = without(std::move(from), AttemptState::cancelled),
                       .to = AttemptState::failed,
                       .fence = {},
                       .take_over_as = {},
                       .reason = reason,
                       .at = context_.clock.now()};
  auto result = co_await transition(std::move(update), writer);
  if (result.outcome == UpdateAttemptResult::Outcome::applied) {
    co_await fail_over(attempt.job_id, *result.attempt);
  } else if (result.outcome == UpdateAttemptResult::Outcome::state_mismatch &&
             result.attempt->state == AttemptState::failed &&
             result.attempt->outcome_reason == storable_text(reason) &&  // as transition() wrote it
             result.attempt->lease_token == writer.fence.value_or(-1)) {
    // Already FAILED, for this reason and under this writer's lease: a retry of this very write
    // whose first try committed before its reply was lost, with the failover after it cut short.
    // Resume it, unless it already ran. (Another writer's FAILED is that writer's to fail over.)
    co_await resume_fail_over(attempt.job_id, *result.attempt);
  }
}

Async<void> Settlement::resume_fail_over(JobId job_id, const Attempt& failed_attempt) {
  auto job = co_await context_.store.load_job(job_id);
  if (!job || job->completed_by || job->status != JobStatus::pending) co_return;
  const auto attempts = co_await context_.store.list_attempts(job_id);
  if (attempts.empty() || attempts.back().id != failed_attempt.id ||
      attempts.back().state != AttemptState::failed) {
    co_return;
  }
  co_await fail_over(job_id, attempts.back());
}

Async<UpdateAttemptResult> Settlement::unknown(const Attempt& attempt, const std::string& reason,
                                               const Writer& writer,
                                               std::optional<std::string> take_over_as) {
  AttemptUpdate update{.attempt_id = attempt.id,
                       .from = {AttemptState::running},
                       .to = AttemptState::unknown,
                       .fence = {},
                       .take_over_as = std::move(take_over_as),
                       .reason = reason,
                       .at = context_.clock.now()};
  co_return co_await transition(std::move(update), writer);
}

Async<bool> Settlement::is_certified(const std::string& provider) {
  if (context_.config.defects.has(Defect::skip_contract)) co_return true;  // the defect
  auto certification = co_await context_.store.latest_certification(provider);
  co_return certification && certification->passed;
}

Async<void> Settlement::fail_over(JobId job_id, const Attempt& failed_attempt) {
  auto job = co_await context_.store.load_job(job_id);
  if (!job || job->completed_by) co_return;
  const auto attempts = co_await context_.store.list_attempts(job_id);
  std::string reason;
  std::optional<std::string> next;
  // Defect failover-past-limit: one attempt more than the limit.
  const int limit = context_.config.policy.attempt_limit +
                    (context_.config.defects.has(Defect::failover_past_limit) ? 1 : 0);
  if (static_cast<int>(attempts.size()) >= limit) {
    reason =
        "attempt limit of " + std::to_string(context_.config.policy.attempt_limit) + " reached";
  } else {
    // The order is target_provider, then the failover list; continue after the provider that
    // just failed.
    std::vector<std::string> order{job->target_provider};
    order.insert(order.end(), job->failover.begin(), job->failover.end());
    auto position = std::ranges::find(order, failed_attempt.provider);
    for (auto it = position == order.end() ? order.begin() : position + 1; it != order.end();
         ++it) {
      if (co_await is_certified(*it)) {
        next = *it;
        break;
      }
      events::emit(
          context_.events,
          events::FailoverSkipped{
              .job_id = job_id, .provider = *it, .reason = "no passing contract certification"});
    }
    if (!next) reason = "no contract-certified provider left to fail over to";
  }
  if (next) {
    NewAttempt new_attempt{
        .job_id = job_id,
        .provider = *next,
        .origin = AttemptOrigin::failover,
        .created_at = context_.clock.now(),
    };
    auto inserted = co_await context_.store.insert_attempt(std::move(new_attempt));
    ONEJOB_ASSERT(inserted.outcome != InsertAttemptResult::Outcome::inserted ||
                      (inserted.attempt && inserted.attempt->job_id == job_id &&
                       inserted.attempt->state == AttemptState::starting),
                  "an inserted failover attempt is a STARTING attempt of this job");
    if (inserted.outcome == InsertAttemptResult::Outcome::inserted) {
      emit_attempt_created(context_.events, *inserted.attempt);
    }
    co_return;
  }
  if (co_await context_.store.fail_job(job_id, reason, context_.clock.now())) {
    events::emit(context_.events, events::JobFailed{.job_id = job_id, .reason = reason});
  }
}

}  // namespace onejob
