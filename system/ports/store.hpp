#pragma once

#include <optional>
#include <string>

#include "system/domain/job.hpp"
#include "system/ports/async.hpp"

namespace onejob {

// The fields a create writes; the store assigns the id (from its sequence) and the version.
struct NewJob {
  std::string owner_id;
  std::string idempotency_key;
  std::string request_fingerprint;
  std::string operation;
  std::string target_provider;
  std::string payload_json;
  Instant created_at{};
};

struct InsertJobResult {
  enum class Outcome {
    inserted,          // the row is committed; `job` holds it
    unique_violation,  // (owner_id, idempotency_key) exists already; nothing was written
  };
  Outcome outcome;
  std::optional<Job> job;
};

// Durable state. Implementations must give exactly the semantics of the SQL schema in
// system/adapters/pg_schema.cpp, constraint violations included: the database, not a
// read-then-write in the service, is what makes one (owner, key) one job.
class Store {
 public:
  virtual ~Store() = default;

  // INSERT INTO jobs ...; a duplicate (owner_id, idempotency_key) is a unique_violation and
  // writes nothing (the id sequence still advances, as PostgreSQL's does).
  virtual Async<InsertJobResult> insert_job(NewJob job) = 0;

  // SELECT ... WHERE owner_id = $1 AND idempotency_key = $2; sees every committed row.
  virtual Async<std::optional<Job>> find_job_by_key(std::string owner_id,
                                                    std::string idempotency_key) = 0;

  // SELECT ... WHERE id = $1 AND owner_id = $2: another owner's job is indistinguishable from
  // an absent one.
  virtual Async<std::optional<Job>> find_job(std::string owner_id, JobId id) = 0;
};

}  // namespace onejob
