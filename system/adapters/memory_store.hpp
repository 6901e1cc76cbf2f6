#pragma once

#include <utility>

#include <map>
#include <string>

#include "system/ports/store.hpp"

namespace onejob {

// The embedded store: the SQL schema's semantics in memory. Every operation is atomic (it
// completes without suspending), which matches one autocommit statement.
class MemoryStore final : public Store {
 public:
  Async<InsertJobResult> insert_job(NewJob job) override;
  Async<std::optional<Job>> find_job_by_key(std::string owner_id,
                                            std::string idempotency_key) override;
  Async<std::optional<Job>> find_job(std::string owner_id, JobId id) override;

  std::size_t job_count() const { return jobs_.size(); }

 private:
  JobId next_job_id_ = 1;
  std::map<JobId, Job> jobs_;
  // UNIQUE (owner_id, idempotency_key)
  std::map<std::pair<std::string, std::string>, JobId> jobs_by_owner_key_;
};

}  // namespace onejob
