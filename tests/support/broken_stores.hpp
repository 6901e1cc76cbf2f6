#pragma once

#include <string>

#include "system/adapters/memory_store.hpp"

#include "harness/sim/store_wrapper.hpp"

namespace onejob::test {

struct OwnsMemoryStore {
  MemoryStore memory;
};

// A store that forgot UNIQUE (owner_id, idempotency_key): a duplicate insert succeeds as a
// second job under the same pair. The system run on it must be caught by I1.
class StoreWithoutUniqueKey final : private OwnsMemoryStore, public sim::StoreWrapper {
 public:
  StoreWithoutUniqueKey() : sim::StoreWrapper(memory) {}

  Async<InsertJobResult> insert_job(NewJob job) override {
    const std::string key = job.idempotency_key;
    for (int copy = 0;; ++copy) {
      // Store each duplicate under a private variant of the key, then report the real one.
      NewJob row = job;
      if (copy > 0) row.idempotency_key = key + "\x1f" + std::to_string(copy);
      auto result = co_await memory.insert_job(std::move(row));
      if (result.outcome == InsertJobResult::Outcome::inserted) {
        result.job->idempotency_key = key;
        co_return result;
      }
    }
  }
};

}  // namespace onejob::test
