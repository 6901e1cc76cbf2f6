#include "system/adapters/memory_store.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>

#include "system/domain/check.hpp"
#include "system/domain/text.hpp"

namespace onejob {
namespace {

bool contains(const std::vector<AttemptState>& states, AttemptState state) {
  return std::ranges::find(states, state) != states.end();
}

// PostgreSQL text holds UTF-8 without NUL bytes, and PgStore refuses any other value (rejected:
// nothing sent, or a data exception; nothing written). So does this store, before it touches a
// row or a sequence.
void require_storable(std::string_view operation, std::initializer_list<std::string_view> values) {
  for (const std::string_view value : values) {
    if (!storable(value)) {
      throw StoreError(StoreError::Kind::rejected,
                       "memory store: " + std::string(operation) +
                           ": a text value holds a NUL byte or invalid UTF-8, which PostgreSQL"
                           " text cannot hold; nothing was written");
    }
  }
}

void require_storable(std::string_view operation, const std::vector<std::string>& values) {
  for (const auto& value : values) require_storable(operation, {value});
}

}  // namespace

// A fenced write carries a lease token the attempt no longer has (defect unfenced-worker: the
// token is not compared).
bool MemoryStore::fenced_out(std::optional<std::int64_t> fence, const Attempt& attempt) const {
  return fence && *fence != attempt.lease_token && !defects_.has(Defect::unfenced_worker);
}

// ---- jobs ------------------------------------------------------------------------------------

Async<InsertJobResult> MemoryStore::insert_job(NewJob new_job) {
  require_storable(
      "insert_job",
      {new_job.owner_id, new_job.idempotency_key, new_job.request_fingerprint, new_job.operation,
       new_job.target_provider, new_job.input_json, new_job.payload_json});
  require_storable("insert_job", new_job.failover);
  // nextval() runs before the constraint check, so a rejected insert still consumes an id.
  const JobId id = next_job_id_++;
  auto owner_key = std::make_pair(new_job.owner_id, new_job.idempotency_key);
  // Defect check-then-insert: the schema lacks the unique constraint (the service looks first).
  if (jobs_by_owner_key_.contains(owner_key) && !defects_.has(Defect::check_then_insert)) {
    co_return InsertJobResult{InsertJobResult::Outcome::unique_violation, std::nullopt,
                              std::nullopt};
  }
  Job job = created_job(std::move(new_job), id);
  jobs_by_owner_key_.emplace(std::move(owner_key), id);
  const Job& stored = jobs_.emplace(id, std::move(job)).first->second;
  Attempt first =
      insert_attempt_row(stored, stored.target_provider, AttemptOrigin::initial, stored.created_at);
  written(id);
  co_return InsertJobResult{InsertJobResult::Outcome::inserted, stored, std::move(first)};
}

Async<std::optional<Job>> MemoryStore::find_job_by_key(std::string owner_id,
                                                       std::string idempotency_key) {
  require_storable("find_job_by_key", {owner_id, idempotency_key});
  auto key_it = jobs_by_owner_key_.find({owner_id, idempotency_key});
  if (key_it == jobs_by_owner_key_.end()) co_return std::nullopt;
  co_return jobs_.at(key_it->second);
}

Async<std::optional<Job>> MemoryStore::find_job(std::string owner_id, JobId id) {
  require_storable("find_job", {owner_id});
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.owner_id != owner_id) co_return std::nullopt;
  co_return it->second;
}

Async<std::optional<Job>> MemoryStore::load_job(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) co_return std::nullopt;
  co_return it->second;
}

Async<bool> MemoryStore::fail_job(JobId id, std::string reason, Instant) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) co_return false;
  // As in PgStore: the job's row is locked first, then the reason sent with the conditional write.
  require_storable("fail_job", {reason});
  if (it->second.status != JobStatus::pending || it->second.completed_by ||
      live_attempt_by_job_.contains(id)) {
    co_return false;
  }
  it->second.status = JobStatus::failed;
  it->second.failure_reason = std::move(reason);
  written(id);
  co_return true;
}

// ---- attempts --------------------------------------------------------------------------------

Attempt MemoryStore::insert_attempt_row(const Job& job, const std::string& provider,
                                        AttemptOrigin origin, Instant at) {
  auto& of_job = attempts_by_job_[job.id];
  const int attempt_no = static_cast<int>(of_job.size()) + 1;
  Attempt attempt = starting_attempt(next_attempt_id_++, job.id, attempt_no, provider,
                                     derive_provider_key(job.id, attempt_no), origin, at);
  of_job.push_back(attempt.id);
  live_attempt_by_job_.emplace(job.id, attempt.id);
  attempts_by_state_[attempt.state].insert(attempt.id);
  return attempts_.emplace(attempt.id, attempt).first->second;
}

Async<InsertAttemptResult> MemoryStore::insert_attempt(NewAttempt new_attempt) {
  using Outcome = InsertAttemptResult::Outcome;
  if (new_attempt.key) {
    require_storable("insert_attempt", {new_attempt.key->owner_id, new_attempt.key->idempotency_key,
                                        new_attempt.key->request_fingerprint});
    const auto found = actions_.find({new_attempt.key->owner_id, new_attempt.key->idempotency_key});
    if (found != actions_.end()) {
      co_return InsertAttemptResult{Outcome::key_exists, {}, {}, found->second};
    }
  }
  auto job = jobs_.find(new_attempt.job_id);
  if (job == jobs_.end()) co_return InsertAttemptResult{Outcome::job_not_found, {}, {}};
  if (job->second.completed_by) co_return InsertAttemptResult{Outcome::job_completed, {}, {}};
  if (new_attempt.origin == AttemptOrigin::failover && job->second.status == JobStatus::failed) {
    co_return InsertAttemptResult{Outcome::job_failed, {}, {}};
  }
  auto live = live_attempt_by_job_.find(job->first);
  // Defect retry-while-unknown: the index leaves UNKNOWN out.
  if (live != live_attempt_by_job_.end() && defects_.has(Defect::retry_while_unknown) &&
      attempts_.at(live->second).state == AttemptState::unknown) {
    live_attempt_by_job_.erase(live);
    live = live_attempt_by_job_.end();
  }
  if (live != live_attempt_by_job_.end()) {
    // As in PgStore, which looks for the live attempt before it inserts: no id is spent.
    co_return InsertAttemptResult{Outcome::live_attempt_exists, {}, live->second};
  }
  require_storable("insert_attempt", {new_attempt.provider});
  job->second.status = JobStatus::pending;
  Attempt attempt = insert_attempt_row(job->second, new_attempt.provider, new_attempt.origin,
                                       new_attempt.created_at);
  if (new_attempt.key) {
    actions_.emplace(std::make_pair(new_attempt.key->owner_id, new_attempt.key->idempotency_key),
                     ActionRecord{new_attempt.key->request_fingerprint, attempt.id});
  }
  written(attempt.job_id);
  co_return InsertAttemptResult{Outcome::inserted, std::move(attempt), {}};
}

Async<std::optional<Attempt>> MemoryStore::find_attempt(AttemptId id) {
  auto it = attempts_.find(id);
  if (it == attempts_.end()) co_return std::nullopt;
  co_return it->second;
}

Async<std::optional<ActionRecord>> MemoryStore::find_action(std::string owner_id,
                                                            std::string idempotency_key) {
  require_storable("find_action", {owner_id, idempotency_key});
  auto it = actions_.find({owner_id, idempotency_key});
  if (it == actions_.end()) co_return std::nullopt;
  co_return it->second;
}

Async<std::vector<Attempt>> MemoryStore::list_attempts(JobId job_id) {
  std::vector<Attempt> found;
  // find, not []: a read leaves the indexes as they were.
  if (auto of_job = attempts_by_job_.find(job_id); of_job != attempts_by_job_.end()) {
    for (AttemptId id : of_job->second) found.push_back(attempts_.at(id));
  }
  co_return found;
}

std::vector<Attempt> MemoryStore::attempts_in_state(AttemptState state) const {
  std::vector<Attempt> found;
  if (auto in_state = attempts_by_state_.find(state); in_state != attempts_by_state_.end()) {
    for (AttemptId id : in_state->second) found.push_back(attempts_.at(id));
  }
  return found;
}

Async<std::vector<Attempt>> MemoryStore::find_attempts_in_state(AttemptState state) {
  co_return attempts_in_state(state);
}

std::vector<JobId> MemoryStore::idle_job_ids() {
  // Every idle job is a candidate: a job is created with a live attempt, and only freeing its
  // live slot (set_state) can leave it pending with none. A candidate that is not idle any
  // more (a winner, a new attempt, failed) is dropped here, so the scan stays as small as the
  // jobs that were recently idle rather than every job there is.
  std::vector<JobId> found;
  for (auto it = idle_candidates_.begin(); it != idle_candidates_.end();) {
    const Job& job = jobs_.at(*it);
    if (job.status == JobStatus::pending && !job.completed_by &&
        !live_attempt_by_job_.contains(job.id)) {
      found.push_back(job.id);
      ++it;
    } else {
      it = idle_candidates_.erase(it);
    }
  }
  return found;
}

Async<std::vector<Job>> MemoryStore::find_idle_jobs() {
  std::vector<Job> found;
  for (JobId id : idle_job_ids()) found.push_back(jobs_.at(id));
  co_return found;
}

std::vector<Attempt> MemoryStore::expired_leases(Instant now) {
  std::vector<Attempt> found;
  for (AttemptId id : attempts_by_state_[AttemptState::running]) {
    const Attempt& attempt = attempts_.at(id);
    if (attempt.lease_expires_at <= now) found.push_back(attempt);
  }
  return found;
}

Async<std::vector<Attempt>> MemoryStore::find_expired_leases(Instant now) {
  co_return expired_leases(now);
}

Async<SweepWork> MemoryStore::find_sweep_work(Instant now) {
  SweepWork work;
  work.expired = expired_leases(now);
  work.unknown = attempts_in_state(AttemptState::unknown);
  for (JobId id : idle_job_ids()) {
    // Its latest attempt: attempts_by_job_ keeps them in attempt_no order.
    auto of_job = attempts_by_job_.find(id);
    if (of_job != attempts_by_job_.end() && !of_job->second.empty()) {
      work.idle.push_back(attempts_.at(of_job->second.back()));
    }
  }
  work.any_live = std::ranges::any_of(
      std::array{AttemptState::starting, AttemptState::running, AttemptState::unknown},
      [this](AttemptState state) {
        auto in_state = attempts_by_state_.find(state);
        return in_state != attempts_by_state_.end() && !in_state->second.empty();
      });
  co_return work;
}

Async<std::optional<Attempt>> MemoryStore::claim_next_attempt(std::string worker, Instant now,
                                                              Instant lease_expires_at) {
  require_storable("claim_next_attempt", {worker});
  auto& starting = attempts_by_state_[AttemptState::starting];
  if (starting.empty()) co_return std::nullopt;
  Attempt& attempt = attempts_.at(*starting.begin());
  set_state(attempt, AttemptState::running, {}, now);
  attempt.lease_owner = std::move(worker);
  attempt.lease_token += 1;
  attempt.lease_expires_at = lease_expires_at;
  written(attempt.job_id);
  co_return attempt;
}

void MemoryStore::set_state(Attempt& attempt, AttemptState to, const std::string& reason,
                            Instant at) {
  require_legal_transition(attempt.state, to);
  attempts_by_state_[attempt.state].erase(attempt.id);
  attempts_by_state_[to].insert(attempt.id);
  // Defect cancel-does-not-unblock: a cancelled UNKNOWN attempt keeps its slot in the index.
  const bool keeps_slot = defects_.has(Defect::cancel_does_not_unblock) &&
                          attempt.state == AttemptState::unknown && to == AttemptState::cancelled;
  if (is_live(attempt.state) && !is_live(to) && !keeps_slot) {
    auto live = live_attempt_by_job_.find(attempt.job_id);
    if (live != live_attempt_by_job_.end() && live->second == attempt.id) {
      live_attempt_by_job_.erase(live);
      // Freeing the live slot is the only way a job becomes idle (see find_idle_jobs).
      idle_candidates_.insert(attempt.job_id);
    }
  }
  attempt.state = to;
  if (!reason.empty()) attempt.outcome_reason = reason;
  if (!is_live(to)) attempt.finished_at = at;
}

Async<UpdateAttemptResult> MemoryStore::update_attempt(AttemptUpdate update) {
  using Outcome = UpdateAttemptResult::Outcome;
  if (update.to == AttemptState::succeeded || update.to == AttemptState::discarded) {
    throw std::logic_error(
        "an attempt reaches SUCCEEDED or DISCARDED only through "
        "complete_attempt (the job's compare-and-swap)");
  }
  if (update.key) {
    require_storable("update_attempt", {update.key->owner_id, update.key->idempotency_key,
                                        update.key->request_fingerprint});
    const auto found = actions_.find({update.key->owner_id, update.key->idempotency_key});
    if (found != actions_.end()) {
      co_return UpdateAttemptResult{Outcome::key_exists, {}, {}, found->second};
    }
  }
  auto it = attempts_.find(update.attempt_id);
  if (it == attempts_.end()) co_return UpdateAttemptResult{Outcome::not_found, {}, {}};
  Attempt& attempt = it->second;
  if (fenced_out(update.fence, attempt)) {
    co_return UpdateAttemptResult{Outcome::fenced, attempt, attempt.state};
  }
  if (!contains(update.from, attempt.state)) {
    // Defect record-refused-action: the refused action's key is recorded all the same.
    if (update.key && defects_.has(Defect::record_refused_action)) {
      actions_.emplace(std::make_pair(update.key->owner_id, update.key->idempotency_key),
                       ActionRecord{update.key->request_fingerprint, attempt.id});
    }
    co_return UpdateAttemptResult{Outcome::state_mismatch, attempt, attempt.state};
  }
  // As in PgStore, the new row's values are sent only once the checks above have passed.
  require_storable("update_attempt", {update.reason, update.take_over_as.value_or("")});
  const AttemptState before = attempt.state;
  set_state(attempt, update.to, update.reason, update.at);
  if (update.take_over_as) {
    attempt.lease_owner = *update.take_over_as;
    attempt.lease_token += 1;
  }
  if (update.key) {
    actions_.emplace(std::make_pair(update.key->owner_id, update.key->idempotency_key),
                     ActionRecord{update.key->request_fingerprint, attempt.id});
  }
  ONEJOB_ASSERT(attempt.state == update.to,
                "an applied update leaves the attempt in its new state");
  written(attempt.job_id);
  co_return UpdateAttemptResult{Outcome::applied, attempt, before};
}

Async<CompleteAttemptResult> MemoryStore::complete_attempt(CompleteAttempt completion) {
  using Outcome = CompleteAttemptResult::Outcome;
  require_storable("complete_attempt", {completion.result});
  auto it = attempts_.find(completion.attempt_id);
  if (it == attempts_.end() || it->second.job_id != completion.job_id) {
    co_return CompleteAttemptResult{Outcome::not_found, {}, {}, {}};
  }
  Attempt& attempt = it->second;
  Job& job = jobs_.at(attempt.job_id);
  if (fenced_out(completion.fence, attempt)) {
    co_return CompleteAttemptResult{Outcome::fenced, job, attempt, attempt.state};
  }
  if (!contains(completion.from, attempt.state)) {
    co_return CompleteAttemptResult{Outcome::state_mismatch, job, attempt, attempt.state};
  }
  const AttemptState before = attempt.state;
  // SUCCEEDED and DISCARDED are legal from the same states: check before writing anything, so an
  // illegal call leaves the job untouched, as a rolled-back transaction would.
  require_legal_transition(attempt.state, AttemptState::succeeded);
  // UPDATE jobs ... WHERE id = $j AND version = $v AND completed_by IS NULL
  // (defect blind-overwrite: WHERE id = $j alone)
  const bool won = defects_.has(Defect::blind_overwrite) ||
                   (job.version == completion.expected_version && !job.completed_by);
  const std::int64_t version_before = job.version;
  if (won) {
    job.result = completion.result;
    job.completed_by = attempt.id;
    job.status = JobStatus::succeeded;
    job.failure_reason.clear();
    job.version += 1;
    set_state(attempt, AttemptState::succeeded, "won", completion.at);
  } else {
    const std::string winner = job.completed_by ? std::to_string(*job.completed_by) : "none";
    set_state(attempt, AttemptState::discarded, "lost to attempt " + winner, completion.at);
    // Defect late-merge: the loser's result still reaches the job.
    if (defects_.has(Defect::late_merge)) job.result = completion.result;
  }
  attempt.result = std::move(completion.result);
  // Only the winning write bumps the version, by exactly one.
  ONEJOB_ASSERT(job.version == version_before + (won ? 1 : 0),
                "the compare-and-swap bumps the version once, and only when it wins");
  ONEJOB_ASSERT(!won || job.completed_by == attempt.id, "the winner is the job's completed_by");
  written(job.id);
  co_return CompleteAttemptResult{won ? Outcome::won : Outcome::lost, job, attempt, before};
}

// ---- the indexes' own checks ------------------------------------------------------------------

bool MemoryStore::live_index_defective() const {
  return defects_.has(Defect::retry_while_unknown) || defects_.has(Defect::cancel_does_not_unblock);
}

void MemoryStore::check_job_indexes(JobId job_id) const {
  const auto where = [job_id](const char* what) {
    return "MemoryStore, job " + std::to_string(job_id) + ": " + what;
  };
  const auto job = jobs_.find(job_id);
  ONEJOB_ASSERT(job != jobs_.end(), where("a write touched a job with no row"));
  ONEJOB_ASSERT(job_id > 0 && job_id < next_job_id_, where("an id the sequence never gave"));
  const auto key = jobs_by_owner_key_.find({job->second.owner_id, job->second.idempotency_key});
  ONEJOB_ASSERT(key != jobs_by_owner_key_.end(), where("its (owner, key) is not in the key index"));
  // With defect check-then-insert the constraint is gone: a second job may share the key.
  ONEJOB_ASSERT(key->second == job_id || defects_.has(Defect::check_then_insert),
                where("the key index names another job for its (owner, key)"));

  const auto of_job = attempts_by_job_.find(job_id);
  ONEJOB_ASSERT(of_job != attempts_by_job_.end() && !of_job->second.empty(),
                where("a job without attempts (every job is created with one)"));
  std::optional<AttemptId> live;
  int live_count = 0;
  for (std::size_t i = 0; i < of_job->second.size(); ++i) {
    const AttemptId id = of_job->second[i];
    const auto attempt = attempts_.find(id);
    ONEJOB_ASSERT(attempt != attempts_.end(), where("the job's attempt list names a missing row"));
    ONEJOB_ASSERT(attempt->second.job_id == job_id, where("an attempt listed under another job"));
    ONEJOB_ASSERT(attempt->second.attempt_no == static_cast<int>(i) + 1,
                  where("attempt numbers are not 1..n in list order"));
    const auto in_state = attempts_by_state_.find(attempt->second.state);
    ONEJOB_ASSERT(in_state != attempts_by_state_.end() && in_state->second.contains(id),
                  where("an attempt missing from the state index under its state"));
    for (const auto& [state, ids] : attempts_by_state_) {
      ONEJOB_ASSERT(state == attempt->second.state || !ids.contains(id),
                    where("an attempt in the state index under a state it is not in"));
    }
    if (is_live(attempt->second.state)) {
      live = id;
      ++live_count;
    }
  }
  const auto indexed = live_attempt_by_job_.find(job_id);
  if (!live_index_defective()) {
    ONEJOB_ASSERT(live_count <= 1, where("more than one live attempt"));
    ONEJOB_ASSERT(live_count == 0
                      ? indexed == live_attempt_by_job_.end()
                      : indexed != live_attempt_by_job_.end() && indexed->second == *live,
                  where("the live-attempt index disagrees with the attempts' states"));
  }
  if (job->second.completed_by) {
    const auto winner = attempts_.find(*job->second.completed_by);
    ONEJOB_ASSERT(winner != attempts_.end() && winner->second.job_id == job_id &&
                      winner->second.state == AttemptState::succeeded,
                  where("completed_by names no SUCCEEDED attempt of this job"));
    ONEJOB_ASSERT(job->second.status == JobStatus::succeeded, where("a winner, yet not succeeded"));
  }
  if (job->second.status == JobStatus::pending && !job->second.completed_by &&
      indexed == live_attempt_by_job_.end() && !live_index_defective()) {
    ONEJOB_ASSERT(idle_candidates_.contains(job_id),
                  where("idle (pending, no winner, nothing live) but not an idle candidate"));
  }
}

void MemoryStore::check_all_indexes() const {
  for (const auto& [id, job] : jobs_) check_job_indexes(id);
  std::size_t by_state = 0;
  for (const auto& [state, ids] : attempts_by_state_) {
    by_state += ids.size();
    for (AttemptId id : ids) {
      const auto attempt = attempts_.find(id);
      ONEJOB_ASSERT(attempt != attempts_.end() && attempt->second.state == state,
                    "MemoryStore: the state index holds attempt " + std::to_string(id) +
                        " under a state it is not in");
    }
  }
  ONEJOB_ASSERT(by_state == attempts_.size(),
                "MemoryStore: the state index holds " + std::to_string(by_state) +
                    " attempts, the table " + std::to_string(attempts_.size()));
  std::size_t listed = 0;
  for (const auto& [job_id, ids] : attempts_by_job_) {
    ONEJOB_ASSERT(jobs_.contains(job_id),
                  "MemoryStore: attempts listed under a missing job " + std::to_string(job_id));
    listed += ids.size();
  }
  ONEJOB_ASSERT(listed == attempts_.size(), "MemoryStore: attempts not listed under their job");
  if (!live_index_defective()) {
    for (const auto& [job_id, id] : live_attempt_by_job_) {
      const auto attempt = attempts_.find(id);
      ONEJOB_ASSERT(attempt != attempts_.end() && attempt->second.job_id == job_id &&
                        is_live(attempt->second.state),
                    "MemoryStore: the live-attempt index names attempt " + std::to_string(id) +
                        " of job " + std::to_string(job_id) + ", which is not live there");
    }
  }
}

// ---- certifications -------------------------------------------------------------------------

Async<void> MemoryStore::record_certification(Certification certification) {
  require_storable("record_certification", {certification.provider});
  require_storable("record_certification", certification.reasons);
  certifications_.push_back(std::move(certification));
  co_return;
}

Async<std::optional<Certification>> MemoryStore::latest_certification(std::string provider) {
  require_storable("latest_certification", {provider});
  for (auto it = certifications_.rbegin(); it != certifications_.rend(); ++it) {
    if (it->provider == provider) co_return *it;
  }
  co_return std::nullopt;
}

}  // namespace onejob
