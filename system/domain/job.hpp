#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "system/domain/time.hpp"

namespace onejob {

// Ids come from a database sequence (bigserial): positive, increasing, never reused, and
// consumed even by an insert that then fails on a constraint.
using JobId = std::int64_t;
using AttemptId = std::int64_t;

//   pending    not completed: attempts may be running, blocked on an unknown one, or due
//   succeeded  an attempt won the compare-and-swap; `result` holds its output
//   failed     every permitted provider definitively failed (never because of a timeout)
enum class JobStatus { pending, succeeded, failed };

std::string_view to_string(JobStatus status);
std::optional<JobStatus> parse_job_status(std::string_view text);

// The durable record of one intent. Its identity (id, owner, key, request) never changes;
// attempts to fulfil it accumulate under it.
struct Job {
  JobId id = 0;
  std::string owner_id;
  std::string idempotency_key;
  // The canonical bytes of the create request (endpoint + canonical JSON body). Two creates are
  // "the same request" exactly when these bytes are equal; no lossy digest is compared.
  std::string request_fingerprint;
  std::string operation;
  std::string target_provider;
  // Providers automatic failover may use after target_provider, in order (each must also be
  // contract-certified at the time).
  std::vector<std::string> failover;
  std::string input_json;    // canonical JSON of the operation's input
  std::string payload_json;  // canonical JSON of the request body
  JobStatus status = JobStatus::pending;
  // Bumped only by the write that completes the job (the winning compare-and-swap).
  std::int64_t version = 1;
  std::optional<AttemptId> completed_by;  // set once, by the winner, never changed
  std::string result;                     // the winner's output bytes
  std::string failure_reason;             // when failed
  Instant created_at{};
};

}  // namespace onejob
