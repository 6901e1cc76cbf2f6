#include "system/adapters/pg_schema.hpp"

namespace onejob {

// One column per field of struct Job (system/domain/job.hpp).
//
// payload_json is text, not jsonb: jsonb re-orders keys, drops whitespace and duplicate keys,
// so reading it back would not return the canonical bytes the create stored, and the job must
// hand providers exactly those bytes. request_fingerprint is text for the same reason (it is
// compared byte for byte, never parsed). Both are produced by our own canonicalizer, which
// already guarantees valid JSON.
//
// created_at_us counts microseconds of the run's time base (system/domain/time.hpp), not wall
// time, so it is a bigint rather than a timestamptz.
//
// jobs_owner_key_unique is the heart of "one job per intent": the database, not a
// check-then-insert in the service, decides which of two racing creates wins. Its name is part
// of the contract (tests and logs look for it).
std::string_view pg_schema_sql() {
  return R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  id                  bigserial PRIMARY KEY,
  owner_id            text      NOT NULL,
  idempotency_key     text      NOT NULL,
  request_fingerprint text      NOT NULL,
  operation           text      NOT NULL,
  target_provider     text      NOT NULL,
  payload_json        text      NOT NULL,
  status              text      NOT NULL DEFAULT 'pending',
  version             bigint    NOT NULL DEFAULT 1,
  created_at_us       bigint    NOT NULL,
  CONSTRAINT jobs_owner_key_unique UNIQUE (owner_id, idempotency_key)
);
)sql";
}

}  // namespace onejob
