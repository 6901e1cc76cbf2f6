#pragma once

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "system/ports/store.hpp"

namespace onejob {

// The memory store shared by nodes on several threads: one operation at a time. MemoryStore's
// operations never suspend, so each lock is taken and released on one thread, with nothing
// else run on that thread in between.
class LockedStore final : public Store {
 public:
  // REQUIRES: `target` outlives the store, and no operation of it suspends.
  explicit LockedStore(Store& target) : target_(target) {}

  Async<InsertJobResult> insert_job(NewJob job) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().insert_job(std::move(job));
  }
  Async<std::optional<Job>> find_job_by_key(std::string owner_id, std::string key) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().find_job_by_key(std::move(owner_id), std::move(key));
  }
  Async<std::optional<Job>> find_job(std::string owner_id, JobId id) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().find_job(std::move(owner_id), id);
  }
  Async<std::optional<Job>> load_job(JobId id) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().load_job(id);
  }
  Async<bool> fail_job(JobId id, std::string reason, Instant at) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().fail_job(id, std::move(reason), at);
  }
  Async<InsertAttemptResult> insert_attempt(NewAttempt attempt) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().insert_attempt(std::move(attempt));
  }
  Async<std::optional<Attempt>> find_attempt(AttemptId id) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().find_attempt(id);
  }
  Async<std::optional<ActionRecord>> find_action(std::string owner_id, std::string key) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().find_action(std::move(owner_id), std::move(key));
  }
  Async<std::vector<Attempt>> list_attempts(JobId job_id) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().list_attempts(job_id);
  }
  Async<std::vector<Attempt>> find_attempts_in_state(AttemptState state) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().find_attempts_in_state(state);
  }
  Async<std::vector<Job>> find_idle_jobs() override {
    std::lock_guard lock(mutex_);
    co_return co_await target().find_idle_jobs();
  }
  Async<std::vector<Attempt>> find_expired_leases(Instant now) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().find_expired_leases(now);
  }
  Async<SweepWork> find_sweep_work(Instant now) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().find_sweep_work(now);
  }
  Async<std::optional<Attempt>> claim_next_attempt(std::string worker, Instant now,
                                                   Instant lease_expires_at) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().claim_next_attempt(std::move(worker), now, lease_expires_at);
  }
  Async<UpdateAttemptResult> update_attempt(AttemptUpdate update) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().update_attempt(std::move(update));
  }
  Async<CompleteAttemptResult> complete_attempt(CompleteAttempt completion) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().complete_attempt(std::move(completion));
  }
  Async<void> record_certification(Certification certification) override {
    std::lock_guard lock(mutex_);
    co_await target().record_certification(std::move(certification));
  }
  Async<std::optional<Certification>> latest_certification(std::string provider) override {
    std::lock_guard lock(mutex_);
    co_return co_await target().latest_certification(std::move(provider));
  }

 private:
  Store& target() { return target_; }

  Store& target_;
  std::mutex mutex_;
};

}  // namespace onejob
