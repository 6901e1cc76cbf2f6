#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "system/domain/attempt.hpp"
#include "system/domain/job.hpp"
#include "system/ports/async.hpp"

namespace onejob {

// Durable state. Every implementation gives exactly the semantics of the SQL schema in
// system/adapters/pg_schema.cpp, constraint violations included. The database, not a
// read-then-write in the service, is what makes one (owner, key) one job, one live attempt per
// job, and one winner per job. Each operation is one transaction. Strings are UTF-8 without NUL
// bytes (PostgreSQL text cannot hold one); PgStore refuses a NUL rather than truncate.

// ---- jobs ------------------------------------------------------------------------------------

// The fields a create writes; the store assigns the id (from its sequence) and the version.
struct NewJob {
  std::string owner_id;
  std::string idempotency_key;
  std::string request_fingerprint;
  std::string operation;
  std::string target_provider;
  std::vector<std::string> failover;
  std::string input_json;
  std::string payload_json;
  Instant created_at{};
};

// Where the attempts' id sequence starts (jobs' and certifications' start at 1). Apart, so that in
// any deployment of fewer than a thousand jobs no attempt shares its id with a job: a response,
// a log line or a report that puts a job's id where an attempt's belongs (or the other way
// round) names no row of that kind, instead of one that happens to match.
inline constexpr AttemptId kFirstAttemptId = 1001;

// The rows a create commits, as the schema's defaults make them: the job (pending, version 1,
// no winner) and its attempts (STARTING, unclaimed). Every store builds them here, so they
// cannot disagree about a default.
Job created_job(NewJob job, JobId id);
Attempt starting_attempt(AttemptId id, JobId job_id, int attempt_no, std::string provider,
                         std::string provider_key, AttemptOrigin origin, Instant created_at);

struct InsertJobResult {
  enum class Outcome {
    inserted,          // the job and its first attempt are committed together
    unique_violation,  // (owner_id, idempotency_key) exists already; nothing was written
  };
  Outcome outcome;
  std::optional<Job> job;
  std::optional<Attempt> initial_attempt;  // STARTING, on target_provider, attempt_no 1
};

// ---- operator actions' idempotency keys -----------------------------------------------------

// The Idempotency-Key of an operator action (an explicit attempt, a cancel). The store records it
// in the same transaction as the action's effect, UNIQUE (owner_id, idempotency_key), so a
// replay finds the effect exactly when there was one. Keys live as long as the job's rows do.
struct ActionKey {
  std::string owner_id;
  std::string idempotency_key;
  std::string request_fingerprint;  // the endpoint and the canonical body
};

// What a key recorded: the request it came with, and the attempt the action created or
// cancelled.
struct ActionRecord {
  std::string request_fingerprint;
  AttemptId attempt_id = 0;
};

// ---- attempts --------------------------------------------------------------------------------

struct NewAttempt {
  JobId job_id = 0;
  std::string provider;
  AttemptOrigin origin = AttemptOrigin::initial;
  Instant created_at{};
  std::optional<ActionKey> key{};  // recorded with the insert (an operator's retry)
};

struct InsertAttemptResult {
  enum class Outcome {
    inserted,             // `attempt` is the new STARTING attempt, numbered max+1 in its job
    live_attempt_exists,  // the one-live-attempt-per-job index refused it; `blocking` names it
    job_completed,        // the job has a winner; nothing was written
    // A failover (origin failover) onto a job the store has failed; nothing was written. Only an
    // operator's retry reopens a failed job: a failover decided on a read from before the job
    // failed (the reconciler's sweep beside the worker's own failover) must not.
    job_failed,
    job_not_found,
    key_exists,  // the action key was already recorded; `recorded` says how; nothing written
  };
  Outcome outcome;
  std::optional<Attempt> attempt;
  std::optional<AttemptId> blocking;
  std::optional<ActionRecord> recorded{};
};

// A guarded state change. It applies only when the attempt is in one of `from` and, when
// `fence` is set, still carries that lease token: a worker whose lease was taken over writes
// nothing (fenced), whatever state it believes the attempt is in.
struct AttemptUpdate {
  AttemptId attempt_id = 0;
  std::vector<AttemptState> from;
  AttemptState to = AttemptState::failed;
  std::optional<std::int64_t> fence;
  // When set, the writer takes the attempt over: lease_owner becomes this and the token is
  // bumped, fencing out the previous holder (used when a lease expired).
  std::optional<std::string> take_over_as;
  std::string reason;
  Instant at{};
  std::optional<ActionKey> key{};  // recorded with the change when it applies (a cancel)
};

struct UpdateAttemptResult {
  // key_exists: the action key was already recorded (`recorded`); nothing was written.
  enum class Outcome { applied, fenced, state_mismatch, not_found, key_exists };
  Outcome outcome;
  std::optional<Attempt> attempt;      // after the write when applied; as found otherwise
  std::optional<AttemptState> before;  // the state the write found
  std::optional<ActionRecord> recorded{};
};

// An attempt's valid result, offered to the job's compare-and-swap:
//   UPDATE jobs SET result = $r, completed_by = $a, status = 'succeeded', version = version + 1
//   WHERE id = $j AND version = $v AND completed_by IS NULL
// One row: the attempt won and becomes SUCCEEDED. Zero rows: another attempt already won; this
// one becomes DISCARDED with its result kept on the attempt, never on the job. The attempt's
// guard (from + fence, as in AttemptUpdate) is checked first; if it fails nothing is written.
struct CompleteAttempt {
  AttemptId attempt_id = 0;
  JobId job_id = 0;
  std::int64_t expected_version = 1;
  std::vector<AttemptState> from;
  std::optional<std::int64_t> fence;
  std::string result;
  Instant at{};
};

struct CompleteAttemptResult {
  enum class Outcome { won, lost, fenced, state_mismatch, not_found };
  Outcome outcome;
  std::optional<Job> job;              // after the transaction
  std::optional<Attempt> attempt;      // after the transaction
  std::optional<AttemptState> before;  // the attempt's state the transaction found
};

// What one reconciler sweep works on, read at one instant in one round trip.
struct SweepWork {
  std::vector<Attempt> expired;  // RUNNING attempts whose lease expired at or before `now`, by id
  std::vector<Attempt> unknown;  // UNKNOWN attempts, by id
  // Of each idle job (pending, no winner, no live attempt), its latest attempt (the highest
  // attempt_no), by job id; a job with no attempt at all has no entry.
  std::vector<Attempt> idle;
  // Whether any attempt was live (STARTING, RUNNING or UNKNOWN) at the read. With none live and
  // no idle job there is nothing for a reconciler to act on until an attempt turns STARTING
  // again, a write that rings the WorkBell: it may wait for that ring instead of sweeping every
  // period. True unless the store says otherwise.
  bool any_live = true;
};

// ---- provider certifications ----------------------------------------------------------------

struct Certification {
  std::string provider;
  bool passed = false;
  std::vector<std::string> reasons;  // every failed check; empty when passed
  Instant at{};
};

// The store could not be reached or could not answer. Infrastructure failure is the one thing
// store operations throw (the outcomes a caller acts on are values); each service boundary
// catches it: the API answers 503 (400 for rejected), workers back off and retry what they hold,
// and the reconciler backs off and sweeps again.
class StoreError : public std::runtime_error {
 public:
  enum class Kind {
    unavailable,      // the statement never ran, or failed: nothing was written
    maybe_committed,  // the reply was lost: the write may or may not have committed
    conflict,         // aborted for concurrent transactions, too often to retry: nothing written
    rejected,         // a value the store cannot hold (a NUL byte): nothing was written
  };
  StoreError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

class Store {
 public:
  virtual ~Store() = default;

  // INSERT INTO jobs ...; INSERT INTO attempts ... (attempt 1) in one transaction, so an
  // accepted job always has work queued. A duplicate (owner_id, idempotency_key) is a
  // unique_violation and writes nothing (the id sequence still advances, as PostgreSQL's does).
  virtual Async<InsertJobResult> insert_job(NewJob job) = 0;

  // SELECT ... WHERE owner_id = $1 AND idempotency_key = $2; sees every committed row.
  virtual Async<std::optional<Job>> find_job_by_key(std::string owner_id,
                                                    std::string idempotency_key) = 0;

  // SELECT ... WHERE id = $1 AND owner_id = $2: another owner's job is indistinguishable from
  // an absent one.
  virtual Async<std::optional<Job>> find_job(std::string owner_id, JobId id) = 0;

  // The job whatever its owner: for workers and the reconciler, never for API reads.
  virtual Async<std::optional<Job>> load_job(JobId id) = 0;

  // Marks a pending job failed when nothing can still complete it: no winner and no live
  // attempt. Returns whether it changed the row. Does not bump the version.
  virtual Async<bool> fail_job(JobId id, std::string reason, Instant at) = 0;

  // Inserts a STARTING attempt numbered max(attempt_no) + 1. A pending-or-failed job becomes
  // pending again. Refused while the job has a live attempt or a winner; a refusal spends no
  // attempt id.
  virtual Async<InsertAttemptResult> insert_attempt(NewAttempt attempt) = 0;

  virtual Async<std::optional<Attempt>> find_attempt(AttemptId id) = 0;
  // SELECT ... FROM action_keys WHERE owner_id = $1 AND idempotency_key = $2.
  virtual Async<std::optional<ActionRecord>> find_action(std::string owner_id,
                                                         std::string idempotency_key) = 0;
  // Every attempt of the job, by attempt_no.
  virtual Async<std::vector<Attempt>> list_attempts(JobId job_id) = 0;
  // Attempts in `state`, by id.
  virtual Async<std::vector<Attempt>> find_attempts_in_state(AttemptState state) = 0;
  // Pending jobs with no winner and no live attempt, by id: work that nothing is doing (a
  // failover interrupted by a store fault, or an operator's cancel not yet followed up).
  virtual Async<std::vector<Job>> find_idle_jobs() = 0;

  // RUNNING attempts whose lease expired at or before `now`, by id.
  virtual Async<std::vector<Attempt>> find_expired_leases(Instant now) = 0;

  // find_expired_leases(now), find_attempts_in_state(UNKNOWN) and the idle jobs' latest
  // attempts, read together (one statement on PostgreSQL): the reconciler's sweep.
  virtual Async<SweepWork> find_sweep_work(Instant now) = 0;

  // Claims the oldest STARTING attempt: it becomes RUNNING, owned by `worker` until
  // `lease_expires_at`, with a bumped lease token (the fence for all its later writes).
  // Two workers never claim one attempt (FOR UPDATE SKIP LOCKED).
  virtual Async<std::optional<Attempt>> claim_next_attempt(std::string worker, Instant now,
                                                           Instant lease_expires_at) = 0;

  // Throws IllegalTransition when the guard holds but the transition is not in the table, and
  // std::logic_error for a target of SUCCEEDED or DISCARDED (only complete_attempt sets those).
  virtual Async<UpdateAttemptResult> update_attempt(AttemptUpdate update) = 0;

  virtual Async<CompleteAttemptResult> complete_attempt(CompleteAttempt completion) = 0;

  virtual Async<void> record_certification(Certification certification) = 0;
  virtual Async<std::optional<Certification>> latest_certification(std::string provider) = 0;
};

}  // namespace onejob
