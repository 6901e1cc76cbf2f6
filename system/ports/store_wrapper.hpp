#pragma once

#include <utility>

#include "system/ports/store.hpp"

namespace onejob {

// Forwards every Store operation to another store (leveldb's EnvWrapper): a fault-injecting or
// deliberately broken store derives from it and overrides only what it breaks.
class StoreWrapper : public Store {
 public:
  // REQUIRES: `target` outlives the wrapper.
  explicit StoreWrapper(Store& target) : target_(target) {}
  // Not copyable: `StoreWrapper(other_wrapper)` must wrap `other_wrapper`, not copy its target
  // (a copy would forward past whatever `other_wrapper` adds).
  StoreWrapper(const StoreWrapper&) = delete;
  StoreWrapper& operator=(const StoreWrapper&) = delete;

  Async<InsertJobResult> insert_job(NewJob job) override {
    return target_.insert_job(std::move(job));
  }
  Async<std::optional<Job>> find_job_by_key(std::string owner_id, std::string key) override {
    return target_.find_job_by_key(std::move(owner_id), std::move(key));
  }
  Async<std::optional<Job>> find_job(std::string owner_id, JobId id) override {
    return target_.find_job(std::move(owner_id), id);
  }
  Async<std::optional<Job>> load_job(JobId id) override { return target_.load_job(id); }
  Async<bool> fail_job(JobId id, std::string reason, Instant at) override {
    return target_.fail_job(id, std::move(reason), at);
  }
  Async<InsertAttemptResult> insert_attempt(NewAttempt attempt) override {
    return target_.insert_attempt(std::move(attempt));
  }
  Async<std::optional<Attempt>> find_attempt(AttemptId id) override {
    return target_.find_attempt(id);
  }
  Async<std::optional<ActionRecord>> find_action(std::string owner_id, std::string key) override {
    return target_.find_action(std::move(owner_id), std::move(key));
  }
  Async<std::vector<Attempt>> list_attempts(JobId job_id) override {
    return target_.list_attempts(job_id);
  }
  Async<std::vector<Attempt>> find_attempts_in_state(AttemptState state) override {
    return target_.find_attempts_in_state(state);
  }
  Async<std::vector<Job>> find_idle_jobs() override { return target_.find_idle_jobs(); }
  Async<std::vector<Attempt>> find_expired_leases(Instant now) override {
    return target_.find_expired_leases(now);
  }
  Async<SweepWork> find_sweep_work(Instant now) override { return target_.find_sweep_work(now); }
  Async<std::optional<Attempt>> claim_next_attempt(std::string worker, Instant now,
                                                   Instant lease_expires_at) override {
    return target_.claim_next_attempt(std::move(worker), now, lease_expires_at);
  }
  Async<UpdateAttemptResult> update_attempt(AttemptUpdate update) override {
    return target_.update_attempt(std::move(update));
  }
  Async<CompleteAttemptResult> complete_attempt(CompleteAttempt completion) override {
    return target_.complete_attempt(std::move(completion));
  }
  Async<void> record_certification(Certification certification) override {
    return target_.record_certification(std::move(certification));
  }
  Async<std::optional<Certification>> latest_certification(std::string provider) override {
    return target_.latest_certification(std::move(provider));
  }

 protected:
  Store& target() { return target_; }

 private:
  Store& target_;
};

}  // namespace onejob
