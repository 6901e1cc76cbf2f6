#include "harness/sim/commit_log.hpp"

#include <exception>
#include <type_traits>

#include "system/domain/check.hpp"

#include "harness/events/commit_events.hpp"

namespace onejob::sim {
namespace {

constexpr const char* kStore = "store";

}  // namespace

void CommitLog::append(Event event) {
  trace_.record(kStore, std::move(event));
  ++entries_;
}

void CommitLogStore::attempt_inserted(const Attempt& attempt, const std::optional<ActionKey>& key) {
  events::CommitAttemptInserted inserted;
  static_cast<events::AttemptCreated&>(inserted) = {.job_id = attempt.job_id,
                                                    .attempt_id = attempt.id,
                                                    .attempt_no = attempt.attempt_no,
                                                    .provider = attempt.provider,
                                                    .provider_key = attempt.provider_key,
                                                    .origin = attempt.origin};
  inserted.by = node_;
  if (key) {
    inserted.action_owner = key->owner_id;
    inserted.action_key = key->idempotency_key;
  }
  log_.append(events::to_event(inserted));
}

void CommitLogStore::transition(const Attempt& row, AttemptState before,
                                std::optional<std::int64_t> fence, bool claim, bool takeover,
                                const std::optional<ActionKey>& key) {
  log_.append(events::to_event(events::CommitAttemptTransition{
      .job_id = row.job_id,
      .attempt_id = row.id,
      .from = before,
      .to = row.state,
      .by = node_,
      .fence = fence,
      .token = row.lease_token,
      .lease_owner = row.lease_owner,
      .lease_expires_at = claim ? std::optional(row.lease_expires_at) : std::nullopt,
      .claim = claim,
      .takeover = takeover,
      .action_owner = key ? std::optional(key->owner_id) : std::nullopt,
      .action_key = key ? std::optional(key->idempotency_key) : std::nullopt,
      .reason = row.outcome_reason.empty() ? std::nullopt : std::optional(row.outcome_reason),
  }));
}

void CommitLogStore::refused(const char* operation, std::string_view refusal,
                             std::optional<JobId> job, std::optional<AttemptId> attempt,
                             std::optional<AttemptState> wanted, const AttemptWrite& write) {
  std::optional<std::string> from;
  if (write.from) {
    from.emplace();
    for (const AttemptState state : *write.from) {
      if (!from->empty()) from->push_back(',');
      from->append(to_string(state));
    }
  }
  log_.append(events::to_event(events::StoreRefused{.operation = operation,
                                                    .refusal = std::string(refusal),
                                                    .job_id = job,
                                                    .attempt_id = attempt,
                                                    .wanted = wanted,
                                                    .by = node_,
                                                    .fence = write.fence,
                                                    .from = std::move(from)}));
}

template <typename T>
Async<T> CommitLogStore::logging_unstorable(const char* operation, Async<T> write) {
  std::exception_ptr unstorable;
  try {
    if constexpr (std::is_void_v<T>) {
      co_await std::move(write);
      co_return;
    } else {
      co_return co_await std::move(write);
    }
  } catch (const StoreError& error) {
    if (error.kind() != StoreError::Kind::rejected) throw;
    unstorable = std::current_exception();
  }
  refused(operation, events::kRefusedUnstorable, std::nullopt, std::nullopt);
  std::rethrow_exception(unstorable);
}

Async<InsertJobResult> CommitLogStore::insert_job(NewJob job) {
  const std::string owner = job.owner_id;
  const std::string key = job.idempotency_key;
  auto result = co_await logging_unstorable("insert_job", target().insert_job(std::move(job)));
  if (result.outcome == InsertJobResult::Outcome::inserted) {
    // The Store port's contract; a store that breaks it is reported, not dereferenced.
    ONEJOB_ASSERT(result.job && result.initial_attempt,
                  "an inserted job comes back with its row and its first attempt");
    const Job& row = *result.job;
    log_.append(events::to_event(events::CommitJobInserted{
        .job_id = row.id,
        .owner = row.owner_id,
        .key = row.idempotency_key,
        .operation = row.operation,
        .provider = row.target_provider,
        .payload = row.payload_json,
        .by = node_,
    }));
    attempt_inserted(*result.initial_attempt);
  } else {
    refused("insert_job", events::kRefusedDuplicateKey, std::nullopt, std::nullopt);
  }
  co_return result;
}

Async<bool> CommitLogStore::fail_job(JobId id, std::string reason, Instant at) {
  const bool failed = co_await logging_unstorable("fail_job", target().fail_job(id, reason, at));
  if (failed) {
    log_.append(events::to_event(
        events::CommitJobFailed{.job_id = id, .by = node_, .reason = std::move(reason)}));
  }
  co_return failed;
}

Async<InsertAttemptResult> CommitLogStore::insert_attempt(NewAttempt attempt) {
  const JobId job = attempt.job_id;
  const auto key = attempt.key;
  auto result =
      co_await logging_unstorable("insert_attempt", target().insert_attempt(std::move(attempt)));
  using Outcome = InsertAttemptResult::Outcome;
  if (result.outcome == Outcome::inserted) {
    ONEJOB_ASSERT(result.attempt.has_value(), "an inserted attempt comes back with its row");
    attempt_inserted(*result.attempt, key);
  } else if (result.outcome == Outcome::live_attempt_exists) {
    refused("insert_attempt", events::kRefusedLiveAttempt, job, result.blocking);
  } else if (result.outcome == Outcome::job_completed) {
    refused("insert_attempt", events::kRefusedJobCompleted, job, std::nullopt);
  } else if (result.outcome == Outcome::job_failed) {
    refused("insert_attempt", events::kRefusedJobFailed, job, std::nullopt);
  }
  co_return result;
}

Async<std::optional<Attempt>> CommitLogStore::claim_next_attempt(std::string worker, Instant now,
                                                                 Instant lease_expires_at) {
  auto claimed = co_await logging_unstorable(
      "claim_next_attempt", target().claim_next_attempt(std::move(worker), now, lease_expires_at));
  if (claimed) {
    transition(*claimed, AttemptState::starting, std::nullopt, /*claim=*/true, false);
  }
  co_return claimed;
}

Async<UpdateAttemptResult> CommitLogStore::update_attempt(AttemptUpdate update) {
  const auto fence = update.fence;
  const AttemptWrite write{update.fence, update.from};
  const AttemptState wanted = update.to;
  const bool takeover = update.take_over_as.has_value();
  const auto key = update.key;
  auto result =
      co_await logging_unstorable("update_attempt", target().update_attempt(std::move(update)));
  using Outcome = UpdateAttemptResult::Outcome;
  if (result.outcome == Outcome::applied) {
    ONEJOB_ASSERT(result.attempt && result.before,
                  "an applied update comes back with its row and the state it left");
    transition(*result.attempt, *result.before, fence, false, takeover, key);
  } else if (result.attempt) {
    refused("update_attempt",
            result.outcome == Outcome::fenced ? events::kRefusedFenced : events::kRefusedState,
            result.attempt->job_id, result.attempt->id, wanted, write);
  }
  co_return result;
}

Async<CompleteAttemptResult> CommitLogStore::complete_attempt(CompleteAttempt completion) {
  const auto fence = completion.fence;
  const AttemptWrite write{completion.fence, completion.from};
  const auto expected_version = completion.expected_version;
  auto result = co_await logging_unstorable("complete_attempt",
                                            target().complete_attempt(std::move(completion)));
  using Outcome = CompleteAttemptResult::Outcome;
  if (result.outcome == Outcome::won || result.outcome == Outcome::lost) {
    ONEJOB_ASSERT(result.attempt && result.job && result.before,
                  "a judged completion comes back with the attempt, the job and the state it left");
    const Attempt& row = *result.attempt;
    const Job& job = *result.job;
    log_.append(events::to_event(events::CommitCas{
        .job_id = job.id,
        .attempt_id = row.id,
        .expected_version = expected_version,
        .won = result.outcome == Outcome::won,
        .version = job.version,
        .winner = job.completed_by.value_or(0),
        .job_result = job.result,
        .result = row.result,
        .by = node_,
    }));
    transition(row, *result.before, fence, false, false);
  } else if (result.attempt) {
    refused("complete_attempt",
            result.outcome == Outcome::fenced ? events::kRefusedFenced : events::kRefusedState,
            result.attempt->job_id, result.attempt->id, AttemptState::succeeded, write);
  }
  co_return result;
}

Async<void> CommitLogStore::record_certification(Certification certification) {
  const std::string provider = certification.provider;
  const bool passed = certification.passed;
  co_await logging_unstorable("record_certification",
                              target().record_certification(std::move(certification)));
  log_.append(events::to_event(
      events::CommitCertification{.provider = provider, .passed = passed, .by = node_}));
}

}  // namespace onejob::sim
