#include "system/adapters/pg_schema.hpp"

#include <string>

#include "system/adapters/pg_connection.hpp"
#include "system/ports/store.hpp"

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
// after both tables exist, guarded by a catalog lookup.
//
// Migration 1 is written with IF NOT EXISTS throughout, so that it also adopts a database made
// before migrations were recorded. Later ones may assume everything before them.
const std::vector<PgMigration>& pg_migrations() {
  static_assert(kFirstAttemptId == 1001, "migration 4 spells kFirstAttemptId out");
  static const std::vector<PgMigration> migrations = {
      {1, "jobs, attempts and certifications", R"sql(
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
)sql"},
      {2, "operator actions' idempotency keys", R"sql(
-- Operator actions' Idempotency-Keys, each written in the transaction of the action's effect.
CREATE TABLE IF NOT EXISTS action_keys (
  owner_id            text   NOT NULL,
  idempotency_key     text   NOT NULL,
  request_fingerprint text   NOT NULL,
  attempt_id          bigint NOT NULL REFERENCES attempts (id),
  PRIMARY KEY (owner_id, idempotency_key)
);
)sql"},
      {3, "complete_attempt in one round trip", R"sql(
-- complete_attempt in one round trip: the attempt's guard, the job's compare-and-swap and the
-- attempt's new state, in the one transaction of the statement that calls it. Under READ
-- COMMITTED each statement below reads what was committed before it started: a concurrent
-- winner holds the job row until it commits, the UPDATE then re-checks the committed row and
-- matches nothing, and the SELECT after it sees that winner.
--
-- Which transitions are legal is the caller's (system/domain/attempt.cpp): p_may_win and
-- p_may_lose list the states that may become SUCCEEDED and DISCARDED. An illegal one raises
-- OJ001 with "<from> <to>" and the whole statement rolls back, the CAS included.
CREATE OR REPLACE FUNCTION onejob_complete_attempt(
    p_attempt bigint, p_job bigint, p_version bigint, p_from text[], p_fence bigint,
    p_result text, p_at bigint, p_may_win text[], p_may_lose text[])
  RETURNS TABLE (outcome text, before_state text, job jobs, attempt attempts)
  LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  a attempts;
  j jobs;
  prior text;
  won boolean;
BEGIN
  SELECT * INTO a FROM attempts WHERE id = p_attempt FOR UPDATE;
  IF NOT FOUND OR a.job_id <> p_job THEN
    RETURN QUERY SELECT 'not_found'::text, NULL::text, NULL::jobs, NULL::attempts;
    RETURN;
  END IF;
  prior := a.state;
  IF (p_fence IS NOT NULL AND p_fence <> a.lease_token) OR NOT (prior = ANY (p_from)) THEN
    SELECT * INTO j FROM jobs WHERE id = a.job_id;
    RETURN QUERY SELECT CASE WHEN p_fence IS NOT NULL AND p_fence <> a.lease_token
                             THEN 'fenced' ELSE 'state_mismatch' END, prior, j, a;
    RETURN;
  END IF;
  UPDATE jobs SET result = p_result, completed_by = p_attempt, status = 'succeeded',
                  failure_reason = '', version = version + 1
    WHERE id = p_job AND version = p_version AND completed_by IS NULL;
  won := FOUND;
  SELECT * INTO j FROM jobs WHERE id = p_job;
  IF won THEN
    IF NOT (prior = ANY (p_may_win)) THEN
      RAISE EXCEPTION USING ERRCODE = 'OJ001', MESSAGE = prior || ' SUCCEEDED';
    END IF;
    UPDATE attempts SET state = 'SUCCEEDED', outcome_reason = 'won', finished_at_us = p_at,
                        result = p_result
      WHERE id = p_attempt RETURNING * INTO a;
  ELSE
    IF NOT (prior = ANY (p_may_lose)) THEN
      RAISE EXCEPTION USING ERRCODE = 'OJ001', MESSAGE = prior || ' DISCARDED';
    END IF;
    -- The loser's bytes are kept on the attempt as evidence, never on the job.
    UPDATE attempts SET state = 'DISCARDED',
                        outcome_reason = 'lost to attempt ' || COALESCE(j.completed_by::text, 'none'),
                        finished_at_us = p_at, result = p_result
      WHERE id = p_attempt RETURNING * INTO a;
  END IF;
  RETURN QUERY SELECT CASE WHEN won THEN 'won' ELSE 'lost' END, prior, j, a;
END
$fn$;
)sql"},
      // kFirstAttemptId (system/ports/store.hpp). A database that has attempts already keeps its
      // sequence where it is: ids already handed out stay unique either way.
      {4, "attempt ids start at 1001", R"sql(
ALTER SEQUENCE attempts_id_seq START WITH 1001;
SELECT setval('attempts_id_seq', 1001, false) WHERE NOT EXISTS (SELECT 1 FROM attempts);
)sql"},
  };
  return migrations;
}

namespace pg {

namespace {

int recorded_version(pqxx::transaction_base& tx) {
  return tx.exec("SELECT COALESCE(max(version), 0) FROM schema_migrations")[0][0].as<int>();
}

}  // namespace

void apply_migrations(pqxx::connection& c) {
  {
    pqxx::work tx{c};
    wait_for_schema_lock(tx);
    tx.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version integer PRIMARY KEY, name text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now())");
    tx.commit();
  }
  for (const PgMigration& step : pg_migrations()) {
    pqxx::work tx{c};
    wait_for_schema_lock(tx);
    const int applied = recorded_version(tx);
    if (applied > static_cast<int>(pg_migrations().size())) {
      throw StoreError(StoreError::Kind::unavailable,
                       "postgres: the database is at schema version " + std::to_string(applied) +
                           ", newer than this build's " + std::to_string(pg_migrations().size()));
    }
    if (step.version <= applied) continue;
    tx.exec(std::string{step.sql});
    tx.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", step.version,
                   std::string{step.name});
    tx.commit();
  }
}

int schema_version(pqxx::connection& c) {
  pqxx::nontransaction tx{c};
  if (tx.exec("SELECT to_regclass('schema_migrations')")[0][0].is_null()) return 0;
  return recorded_version(tx);
}

void delete_all_rows(pqxx::connection& c) {
  pqxx::work tx{c};
  // One statement, so the foreign keys between jobs and attempts (each references the other)
  // are checked once every row is gone. DELETE, not TRUNCATE: on tables this small it costs tens
  // of microseconds where TRUNCATE, which makes new files, costs milliseconds.
  tx.exec(
      "WITH k AS (DELETE FROM action_keys), a AS (DELETE FROM attempts), "
      "c AS (DELETE FROM certifications) DELETE FROM jobs; "
      "SELECT setval(pg_get_serial_sequence('jobs', 'id'), 1, false), "
      "setval(pg_get_serial_sequence('attempts', 'id'), " +
      std::to_string(kFirstAttemptId) +
      ", false), "
      "setval(pg_get_serial_sequence('certifications', 'id'), 1, false)");
  tx.commit();
}

}  // namespace pg

}  // namespace onejob
