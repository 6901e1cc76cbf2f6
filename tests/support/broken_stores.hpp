#pragma once

#include <map>
#include <optional>
#include <string>

#include "system/ports/store.hpp"

namespace onejob::test {

// A store that forgot UNIQUE (owner_id, idempotency_key): every insert succeeds. The system run
// on it must be caught by I1.
class StoreWithoutUniqueKey final : public Store {
 public:
  Async<InsertJobResult> insert_job(NewJob job) override {
    Job row{.id = next_id_++,
            .owner_id = job.owner_id,
            .idempotency_key = job.idempotency_key,
            .request_fingerprint = job.request_fingerprint,
            .operation = job.operation,
            .target_provider = job.target_provider,
            .payload_json = job.payload_json,
            .status = JobStatus::pending,
            .version = 1,
            .created_at = job.created_at};
    jobs_[row.id] = row;
    co_return InsertJobResult{InsertJobResult::Outcome::inserted, row};
  }
  Async<std::optional<Job>> find_job_by_key(std::string owner_id, std::string key) override {
    for (const auto& [id, job] : jobs_) {
      if (job.owner_id == owner_id && job.idempotency_key == key) co_return job;
    }
    co_return std::nullopt;
  }
  Async<std::optional<Job>> find_job(std::string owner_id, JobId id) override {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.owner_id != owner_id) co_return std::nullopt;
    co_return it->second;
  }

 private:
  JobId next_id_ = 1;
  std::map<JobId, Job> jobs_;
};

}  // namespace onejob::test
