#include "system/ports/store.hpp"

#include <utility>

namespace onejob {

Job created_job(NewJob job, JobId id) {
  return Job{
      .id = id,
      .owner_id = std::move(job.owner_id),
      .idempotency_key = std::move(job.idempotency_key),
      .request_fingerprint = std::move(job.request_fingerprint),
      .operation = std::move(job.operation),
      .target_provider = std::move(job.target_provider),
      .failover = std::move(job.failover),
      .input_json = std::move(job.input_json),
      .payload_json = std::move(job.payload_json),
      .status = JobStatus::pending,
      .version = 1,
      .completed_by = std::nullopt,
      .result = {},
      .failure_reason = {},
      .created_at = job.created_at,
  };
}

Attempt starting_attempt(AttemptId id, JobId job_id, int attempt_no, std::string provider,
                         std::string provider_key, AttemptOrigin origin, Instant created_at) {
  return Attempt{
      .id = id,
      .job_id = job_id,
      .attempt_no = attempt_no,
      .provider = std::move(provider),
      .provider_key = std::move(provider_key),
      .origin = origin,
      .state = AttemptState::starting,
      .lease_owner = {},
      .lease_token = 0,
      .lease_expires_at = {},
      .created_at = created_at,
      .finished_at = std::nullopt,
      .outcome_reason = {},
      .result = {},
  };
}

}  // namespace onejob
