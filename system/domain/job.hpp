#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "system/domain/time.hpp"

namespace onejob {

// Ids come from a database sequence (bigserial): positive, increasing, never reused, and
// consumed even by an insert that then fails on a constraint.
using JobId = std::int64_t;

enum class JobStatus { pending };

std::string_view to_string(JobStatus status);

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
  std::string payload_json;  // canonical JSON of the request body
  JobStatus status = JobStatus::pending;
  std::int64_t version = 1;
  Instant created_at{};
};

}  // namespace onejob
