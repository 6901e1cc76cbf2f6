#include "system/adapters/pg_schema.hpp"

namespace onejob {

// One column per field of struct Job (system/domain/job.hpp), Attempt
// (system/domain/attempt.hpp) and Certification (system/ports/store.hpp).
//
// payload_json, input_json and request_fingerprint are text, not jsonb: jsonb re-orders keys,
// drops whitespace and duplicate keys, so reading it back would not return the canonical bytes
// the create stored, and the job must hand providers exactly those bytes. result is text for
// the same reason (the winner's bytes, returned as they came).
//
// failover and reasons are text[], not jsonb: each is an ordered list of plain strings that
// SQL can query as is (`'beta' = ANY (failover)`), text[] keeps order and duplicates, and the
// adapter needs no JSON codec for them (array literals are quoted by pg_store.cpp).
//
// *_at_us columns count microseconds of the run's time base (system/domain/time.hpp), not wall
// time, so they are bigint rather than timestamptz. lease_expires_at_us is 0, not NULL, before
// a claim, as Attempt's default Instant{} is.
//
// Constraint and index names are part of the contract (PgStore, tests and logs look for them):
//   jobs_owner_key_unique       one job per (owner, key): the database, not a check-then-insert
//                               in the service, decides which of two racing creates wins
//   attempts_one_live_per_job   at most one STARTING/RUNNING/UNKNOWN attempt per job (I3); it,
//                               not a read in PgStore, is what refuses a second live attempt
//   jobs_succeeded_iff_completed / jobs_completed_by_attempt_of_job
//                               a job is succeeded exactly when it has a winner, and the winner
//                               is one of its own attempts (I5)
//   attempts_finished_iff_not_live
//                               finished_at_us is set exactly when the attempt is not live
//
// jobs.completed_by -> attempts and attempts.job_id -> jobs form a cycle, so the first is added
// after both tables exist, guarded by a catalog lookup so that the script stays idempotent.
// PgStore::apply_schema() runs it under an advisory lock, so two processes never race on it.
std::string_view pg_schema_sql() {
  return R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  id                  bigserial PRIMARY KEY,
  owner_id            text      NOT NULL,
  idempotency_key     text      NOT NULL,
  request_fingerprint text      NOT NULL,
  operation           text      NOT NULL,
  target_provider     text      NOT NULL,
  failover            text[]    NOT NULL DEFAULT '{}',
  input_json          text      NOT NULL,
  payload_json        text      NOT NULL,
  status              text      NOT NULL DEFAULT 'pending',
  version             bigint    NOT NULL DEFAULT 1,
  completed_by        bigint,
  result              text      NOT NULL DEFAULT '',
  failure_reason      text      NOT NULL DEFAULT '',
  created_at_us       bigint    NOT NULL,
  CONSTRAINT jobs_owner_key_unique UNIQUE (owner_id, idempotency_key),
  CONSTRAINT jobs_status_known CHECK (status IN ('pending', 'succeeded', 'failed')),
  CONSTRAINT jobs_succeeded_iff_completed
    CHECK ((status = 'succeeded') = (completed_by IS NOT NULL))
);

CREATE TABLE IF NOT EXISTS attempts (
  id                  bigserial PRIMARY KEY,
  job_id              bigint    NOT NULL REFERENCES jobs (id),
  attempt_no          integer   NOT NULL,
  provider            text      NOT NULL,
  provider_key        text      NOT NULL,
  origin              text      NOT NULL,
  state               text      NOT NULL DEFAULT 'STARTING',
  lease_owner         text      NOT NULL DEFAULT '',
  lease_token         bigint    NOT NULL DEFAULT 0,
  lease_expires_at_us bigint    NOT NULL DEFAULT 0,
  created_at_us       bigint    NOT NULL,
  finished_at_us      bigint,
  outcome_reason      text      NOT NULL DEFAULT '',
  result              text      NOT NULL DEFAULT '',
  CONSTRAINT attempts_job_attempt_no_unique UNIQUE (job_id, attempt_no),
  -- The target of jobs_completed_by_attempt_of_job.
  CONSTRAINT attempts_job_id_unique UNIQUE (job_id, id),
  CONSTRAINT attempts_origin_known CHECK (origin IN ('initial', 'failover', 'explicit')),
  CONSTRAINT attempts_state_known CHECK (state IN ('STARTING', 'RUNNING', 'UNKNOWN',
    'SUCCEEDED', 'FAILED', 'CANCELLED', 'DISCARDED')),
  CONSTRAINT attempts_finished_iff_not_live
    CHECK ((finished_at_us IS NULL) = (state IN ('STARTING', 'RUNNING', 'UNKNOWN')))
);

CREATE UNIQUE INDEX IF NOT EXISTS attempts_one_live_per_job ON attempts (job_id)
  WHERE state IN ('STARTING', 'RUNNING', 'UNKNOWN');
-- claim_next_attempt, find_attempts_in_state and find_expired_leases scan one state by id.
CREATE INDEX IF NOT EXISTS attempts_state_id ON attempts (state, id);

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint
                 WHERE conname = 'jobs_completed_by_attempt_of_job'
                   AND conrelid = 'jobs'::regclass) THEN
    ALTER TABLE jobs ADD CONSTRAINT jobs_completed_by_attempt_of_job
      FOREIGN KEY (id, completed_by) REFERENCES attempts (job_id, id);
  END IF;
END
$$;

CREATE TABLE IF NOT EXISTS certifications (
  id       bigserial PRIMARY KEY,
  provider text      NOT NULL,
  passed   boolean   NOT NULL,
  reasons  text[]    NOT NULL DEFAULT '{}',
  at_us    bigint    NOT NULL
);
-- latest_certification: the newest row of one provider. Newest means last recorded (highest
-- id), not highest at_us, exactly as MemoryStore keeps them.
CREATE INDEX IF NOT EXISTS certifications_provider_id ON certifications (provider, id);

-- Operator actions' Idempotency-Keys, each written in the transaction of the action's effect.
CREATE TABLE IF NOT EXISTS action_keys (
  owner_id            text   NOT NULL,
  idempotency_key     text   NOT NULL,
  request_fingerprint text   NOT NULL,
  attempt_id          bigint NOT NULL REFERENCES attempts (id),
  PRIMARY KEY (owner_id, idempotency_key)
);
)sql";
}

}  // namespace onejob
