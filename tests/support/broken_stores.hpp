#pragma once

#include <utility>

#include <map>
#include <string>

#include "system/adapters/memory_store.hpp"
#include "system/ports/store_wrapper.hpp"

namespace onejob::test {

struct OwnsMemoryStore {
  MemoryStore memory;
};

// A store that forgot UNIQUE (owner_id, idempotency_key): a duplicate insert succeeds as a
// second job under the same pair. The system run on it must be caught by I1.
class StoreWithoutUniqueKey final : private OwnsMemoryStore, public StoreWrapper {
 public:
  StoreWithoutUniqueKey() : StoreWrapper(memory) {}

  Async<InsertJobResult> insert_job(onejob::NewJob job) override {
    const std::string key = job.idempotency_key;
    for (int copy = 0;; ++copy) {
      // Store each duplicate under a private variant of the key, then report the real one.
      onejob::NewJob row = job;
      if (copy > 0) row.idempotency_key = key + "\x1f" + std::to_string(copy);
      auto result = co_await memory.insert_job(std::move(row));
      if (result.outcome == InsertJobResult::Outcome::inserted) {
        result.job->idempotency_key = key;
        co_return result;
      }
    }
  }
};

// A store whose updates ignore the lease token: a worker whose lease was taken over still
// writes. The system run on it must be caught by I10.
class StoreIgnoringFences final : private OwnsMemoryStore, public StoreWrapper {
 public:
  StoreIgnoringFences() : StoreWrapper(memory) {}

  Async<UpdateAttemptResult> update_attempt(AttemptUpdate update) override {
    update.fence.reset();
    return memory.update_attempt(std::move(update));
  }
  Async<CompleteAttemptResult> complete_attempt(CompleteAttempt completion) override {
    completion.fence.reset();
    return memory.complete_attempt(std::move(completion));
  }
};

// A store that merges a losing result into what readers see: the job's result as read is the
// latest discarded one. The system run on it must be caught by I5's rule on reads.
class StoreShowingLostResults final : private OwnsMemoryStore, public StoreWrapper {
 public:
  StoreShowingLostResults() : StoreWrapper(memory) {}

  Async<CompleteAttemptResult> complete_attempt(CompleteAttempt completion) override {
    const JobId job = completion.job_id;
    auto result = co_await memory.complete_attempt(std::move(completion));
    if (result.outcome == CompleteAttemptResult::Outcome::lost) {
      lost_[job] = result.attempt->result;
    }
    co_return result;
  }
  Async<std::optional<Job>> find_job(std::string owner_id, JobId id) override {
    auto job = co_await memory.find_job(std::move(owner_id), id);
    if (job && lost_.contains(id)) job->result = lost_.at(id);
    co_return job;
  }

 private:
  std::map<JobId, std::string> lost_;
};

// A store whose reads hide a completion: a won job reads as pending with no winner. The system
// run on it must be caught by I5's rule on reads.
class StoreHidingCompletions final : private OwnsMemoryStore, public StoreWrapper {
 public:
  StoreHidingCompletions() : StoreWrapper(memory) {}

  Async<std::optional<Job>> find_job(std::string owner_id, JobId id) override {
    auto job = co_await memory.find_job(std::move(owner_id), id);
    if (job && job->completed_by) {
      job->status = JobStatus::pending;
      job->completed_by.reset();
    }
    co_return job;
  }
};

// A store whose next write that may leave work (insert_job, insert_attempt, update_attempt) runs
// and then loses its reply (maybe_committed) when `lose_next_reply` is set, or, while `down` is
// set, fails without running: what a node's connection to PostgreSQL can do.
class LosingStore final : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  bool lose_next_reply = false;
  bool down = false;

  Async<InsertJobResult> insert_job(onejob::NewJob job) override {
    return lose(StoreWrapper::insert_job(std::move(job)));
  }
  Async<InsertAttemptResult> insert_attempt(NewAttempt attempt) override {
    return lose(StoreWrapper::insert_attempt(std::move(attempt)));
  }
  Async<UpdateAttemptResult> update_attempt(AttemptUpdate update) override {
    return lose(StoreWrapper::update_attempt(std::move(update)));
  }

 private:
  template <typename T>
  Async<T> lose(Async<T> write) {
    if (down) throw StoreError(StoreError::Kind::unavailable, "store unavailable");
    auto result = co_await std::move(write);
    if (std::exchange(lose_next_reply, false)) {
      throw StoreError(StoreError::Kind::maybe_committed, "reply lost");
    }
    co_return result;
  }
};

}  // namespace onejob::test
