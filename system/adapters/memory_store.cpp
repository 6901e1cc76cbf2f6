#include "system/adapters/memory_store.hpp"

namespace onejob {

Async<InsertJobResult> MemoryStore::insert_job(NewJob new_job) {
  // nextval() runs before the constraint check, so a rejected insert still consumes an id.
  const JobId id = next_job_id_++;
  auto owner_key = std::make_pair(new_job.owner_id, new_job.idempotency_key);
  if (jobs_by_owner_key_.contains(owner_key)) {
    co_return InsertJobResult{InsertJobResult::Outcome::unique_violation, std::nullopt};
  }
  Job job{
      .id = id,
      .owner_id = std::move(new_job.owner_id),
      .idempotency_key = std::move(new_job.idempotency_key),
      .request_fingerprint = std::move(new_job.request_fingerprint),
      .operation = std::move(new_job.operation),
      .target_provider = std::move(new_job.target_provider),
      .payload_json = std::move(new_job.payload_json),
      .status = JobStatus::pending,
      .version = 1,
      .created_at = new_job.created_at,
  };
  jobs_by_owner_key_.emplace(std::move(owner_key), id);
  auto [it, inserted] = jobs_.emplace(id, std::move(job));
  co_return InsertJobResult{InsertJobResult::Outcome::inserted, it->second};
}

Async<std::optional<Job>> MemoryStore::find_job_by_key(std::string owner_id,
                                                       std::string idempotency_key) {
  auto key_it = jobs_by_owner_key_.find({owner_id, idempotency_key});
  if (key_it == jobs_by_owner_key_.end()) co_return std::nullopt;
  co_return jobs_.at(key_it->second);
}

Async<std::optional<Job>> MemoryStore::find_job(std::string owner_id, JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.owner_id != owner_id) co_return std::nullopt;
  co_return it->second;
}

}  // namespace onejob
