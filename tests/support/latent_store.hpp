#pragma once

#include "system/ports/store_wrapper.hpp"

#include "harness/sim/sim_loop.hpp"

namespace onejob::test {

// Every job insert and lookup waits `latency` of simulated time first, as a round trip to a
// database would, so concurrent requests really interleave between their statements.
class LatentStore final : public StoreWrapper {
 public:
  LatentStore(Store& target, sim::SimLoop& loop, Duration latency)
      : StoreWrapper(target), loop_(loop), latency_(latency) {}

  Async<InsertJobResult> insert_job(onejob::NewJob job) override {
    co_await loop_.sleep_for(latency_);
    co_return co_await target().insert_job(std::move(job));
  }
  Async<std::optional<Job>> find_job_by_key(std::string owner_id, std::string key) override {
    co_await loop_.sleep_for(latency_);
    co_return co_await target().find_job_by_key(std::move(owner_id), std::move(key));
  }

 private:
  sim::SimLoop& loop_;
  Duration latency_;
};

}  // namespace onejob::test
