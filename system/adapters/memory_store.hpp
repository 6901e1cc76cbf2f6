#pragma once

#include <utility>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "system/adapters/sequence_table.hpp"
#include "system/ports/store.hpp"
#include "system/service/defects.hpp"

namespace onejob {

// The embedded store: the SQL schema's semantics in memory, constraint violations included.
// Every operation completes without suspending, so each is atomic, as one transaction is.
// The store-level named defects (check-then-insert, retry-while-unknown, blind-overwrite,
// late-merge, unfenced-worker, cancel-does-not-unblock) change it when set; see defects.hpp.
class MemoryStore final : public Store {
 public:
  // `check_indexes`: after each write, check the indexes of the job it touched against the rows
  // (ONEJOB_ASSERT; the simulation turns it on). It costs a walk over that job's attempts.
  explicit MemoryStore(Defects defects = {}, bool check_indexes = false)
      : defects_(defects), check_indexes_(check_indexes) {}

  Async<InsertJobResult> insert_job(NewJob job) override;
  Async<std::optional<Job>> find_job_by_key(std::string owner_id,
                                            std::string idempotency_key) override;
  Async<std::optional<Job>> find_job(std::string owner_id, JobId id) override;
  Async<std::optional<Job>> load_job(JobId id) override;
  Async<bool> fail_job(JobId id, std::string reason, Instant at) override;

  Async<InsertAttemptResult> insert_attempt(NewAttempt attempt) override;
  Async<std::optional<Attempt>> find_attempt(AttemptId id) override;
  Async<std::optional<ActionRecord>> find_action(std::string owner_id,
                                                 std::string idempotency_key) override;
  Async<std::vector<Attempt>> list_attempts(JobId job_id) override;
  Async<std::vector<Attempt>> find_attempts_in_state(AttemptState state) override;
  Async<std::vector<Job>> find_idle_jobs() override;
  Async<std::vector<Attempt>> find_expired_leases(Instant now) override;
  Async<SweepWork> find_sweep_work(Instant now) override;
  Async<std::optional<Attempt>> claim_next_attempt(std::string worker, Instant now,
                                                   Instant lease_expires_at) override;
  Async<UpdateAttemptResult> update_attempt(AttemptUpdate update) override;
  Async<CompleteAttemptResult> complete_attempt(CompleteAttempt completion) override;

  Async<void> record_certification(Certification certification) override;
  Async<std::optional<Certification>> latest_certification(std::string provider) override;

  // Every index agrees with the rows, and the rows with the schema's constraints (unique keys,
  // one live attempt per job, attempt numbers 1..n, a winner that SUCCEEDED). Throws
  // AssertionFailure naming the first disagreement.
  void check_all_indexes() const;

  std::size_t job_count() const { return jobs_.size(); }
  std::size_t attempt_count() const { return attempts_.size(); }

 private:
  // The bodies of the operations, callable from one another inside one "transaction".
  Attempt insert_attempt_row(const Job& job, const std::string& provider, AttemptOrigin origin,
                             Instant at);
  void set_state(Attempt& attempt, AttemptState to, const std::string& reason, Instant at);
  // The sweep's reads, made in place: the queries above return them, and find_sweep_work makes
  // them one read without copying a row it does not return.
  std::vector<Attempt> attempts_in_state(AttemptState state) const;
  std::vector<Attempt> expired_leases(Instant now);
  // The idle jobs (pending, no winner, no live attempt), by id; a candidate that is not idle any
  // more is dropped from idle_candidates_.
  std::vector<JobId> idle_job_ids();

  bool fenced_out(std::optional<std::int64_t> fence, const Attempt& attempt) const;
  // After a write to `job_id`: its indexes agree with its rows (when check_indexes_ is on).
  void written(JobId job_id) const {
    if (check_indexes_) check_job_indexes(job_id);
  }
  void check_job_indexes(JobId job_id) const;
  // Whether the named defects let the live-attempt index disagree with the attempts' states.
  bool live_index_defective() const;

  // Tests plant index corruption through this, to show the checks catch it.
  friend struct MemoryStoreTestAccess;

  Defects defects_;
  bool check_indexes_ = false;
  JobId next_job_id_ = 1;
  AttemptId next_attempt_id_ = kFirstAttemptId;
  SequenceTable<JobId, Job> jobs_;
  // UNIQUE (owner_id, idempotency_key)
  std::map<std::pair<std::string, std::string>, JobId> jobs_by_owner_key_;
  SequenceTable<AttemptId, Attempt> attempts_;
  // UNIQUE (job_id, attempt_no): each job's attempts in attempt_no order
  SequenceTable<JobId, std::vector<AttemptId>> attempts_by_job_;
  // CREATE UNIQUE INDEX ... ON attempts (job_id) WHERE state IN ('STARTING','RUNNING','UNKNOWN')
  std::map<JobId, AttemptId> live_attempt_by_job_;
  // CREATE INDEX ... ON attempts (state, id)
  std::map<AttemptState, std::set<AttemptId>> attempts_by_state_;
  // Jobs that may be idle (pending, no winner, no live attempt), by id: find_idle_jobs' index.
  std::set<JobId> idle_candidates_;
  std::vector<Certification> certifications_;
  // action_keys: UNIQUE (owner_id, idempotency_key)
  std::map<std::pair<std::string, std::string>, ActionRecord> actions_;
};

}  // namespace onejob
