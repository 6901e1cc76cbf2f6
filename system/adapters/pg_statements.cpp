#include "system/adapters/pg_statements.hpp"

#include <string>

#include "system/adapters/pg_rows.hpp"

namespace onejob::pg {
namespace {

using namespace statement;

// The create: one statement inserting the job and its first attempt, nothing when the key is
// taken.
std::string_view create_job_sql() {
  return "WITH job AS (INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint,"
         " operation, target_provider, failover, input_json, payload_json, created_at_us)"
         " VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8, $9)"
         " ON CONFLICT ON CONSTRAINT jobs_owner_key_unique DO NOTHING RETURNING id),"
         " first AS (INSERT INTO attempts (job_id, attempt_no, provider, provider_key,"
         " origin, created_at_us) SELECT id, 1, $5, id || ':1', 'initial', $9 FROM job"
         " RETURNING id, job_id, provider_key)"
         " SELECT first.job_id, first.id, first.provider_key FROM first";
}

void prepare_job_and_certification_statements(pqxx::connection& c) {
  const std::string job_columns{kJobColumns};
  const std::string live_states{kLiveStates};
  // One statement, one round trip: the job and its first attempt, or nothing at all when
  // (owner_id, idempotency_key) is taken. ON CONFLICT waits for a concurrent create of the
  // same key to commit or roll back, then does nothing; the id sequence advances either way
  // (as MemoryStore's does). Defaults (status, version, state, lease columns) come from the
  // schema; it returns only the ids and the provider key, which derive_provider_key
  // (system/domain/attempt.cpp) spells "<job id>:<attempt_no>".
  c.prepare(kCreateJob, std::string(create_job_sql()));
  c.prepare(kFindJobByKey,
            "SELECT " + job_columns + " FROM jobs WHERE owner_id = $1 AND idempotency_key = $2");
  c.prepare(kFindJob, "SELECT " + job_columns + " FROM jobs WHERE id = $1 AND owner_id = $2");
  c.prepare(kLoadJob, "SELECT " + job_columns + " FROM jobs WHERE id = $1");
  c.prepare(kIdleJobs, "SELECT " + job_columns +
                           " FROM jobs j WHERE status = 'pending' AND completed_by IS NULL"
                           " AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = j.id"
                           " AND a.state IN " +
                           live_states + ") ORDER BY id");
  c.prepare(kLockJob, "SELECT completed_by, status FROM jobs WHERE id = $1 FOR UPDATE");
  // failure_reason is left as it was, exactly as MemoryStore does.
  c.prepare(kReopenJob, "UPDATE jobs SET status = 'pending' WHERE id = $1");
  c.prepare(kFailJob,
            "UPDATE jobs SET status = 'failed', failure_reason = $2"
            " WHERE id = $1 AND status = 'pending' AND completed_by IS NULL"
            " AND NOT EXISTS (SELECT 1 FROM attempts WHERE job_id = $1 AND state IN " +
                live_states + ")");
  // The compare-and-swap is onejob_complete_attempt (migration 3): one round trip.
  c.prepare(kCompleteAttempt,
            "SELECT r.outcome, r.before_state, " + prefixed_columns(kJobColumns, "(r.job).") +
                ", " + prefixed_columns(kAttemptColumns, "(r.attempt).") +
                " FROM onejob_complete_attempt($1, $2, $3, $4::text[], $5, $6, $7,"
                " $8::text[], $9::text[]) r");
  c.prepare(kInsertCertification,
            "INSERT INTO certifications (provider, passed, reasons, at_us)"
            " VALUES ($1, $2, $3::text[], $4)");
  c.prepare(kLatestCertification,
            "SELECT provider, passed, reasons, at_us FROM certifications"
            " WHERE provider = $1 ORDER BY id DESC LIMIT 1");
}

void prepare_attempt_statements(pqxx::connection& c) {
  const std::string attempt_columns{kAttemptColumns};
  const std::string live_states{kLiveStates};
  c.prepare(kNextAttemptNo,
            "SELECT COALESCE(max(attempt_no), 0) + 1 FROM attempts WHERE job_id = $1");
  c.prepare(kInsertAttempt,
            "INSERT INTO attempts (job_id, attempt_no, provider, provider_key,"
            " origin, created_at_us) VALUES ($1, $2, $3, $4, $5, $6) RETURNING " +
                attempt_columns);
  c.prepare(kLiveAttemptOfJob,
            "SELECT id FROM attempts WHERE job_id = $1 AND state IN " + live_states);
  c.prepare(kFindAttempt, "SELECT " + attempt_columns + " FROM attempts WHERE id = $1");
  c.prepare(kFindAction,
            "SELECT request_fingerprint, attempt_id FROM action_keys"
            " WHERE owner_id = $1 AND idempotency_key = $2");
  // A concurrent action with the same key waits on the primary key, then writes nothing.
  c.prepare(kInsertAction,
            "INSERT INTO action_keys (owner_id, idempotency_key, request_fingerprint,"
            " attempt_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING");
  c.prepare(kLockAttempt, "SELECT " + attempt_columns + " FROM attempts WHERE id = $1 FOR UPDATE");
  c.prepare(kWriteAttempt,
            "UPDATE attempts SET state = $2, lease_owner = $3, lease_token = $4,"
            " finished_at_us = $5, outcome_reason = $6, result = $7 WHERE id = $1"
            " RETURNING " +
                attempt_columns);
  c.prepare(kListAttempts,
            "SELECT " + attempt_columns + " FROM attempts WHERE job_id = $1 ORDER BY attempt_no");
  c.prepare(kAttemptsInState,
            "SELECT " + attempt_columns + " FROM attempts WHERE state = $1 ORDER BY id");
  c.prepare(kExpiredLeases, "SELECT " + attempt_columns +
                                " FROM attempts WHERE state = 'RUNNING'"
                                " AND lease_expires_at_us <= $1 ORDER BY id");
  // The reconciler's sweep in one statement: the rows of find_expired_leases (list 0), of
  // find_attempts_in_state('UNKNOWN') (list 1) and each idle job's latest attempt (list 2),
  // each list in its own order; then one live attempt, if any is (list 3: SweepWork::any_live).
  c.prepare(
      kSweepWork,
      "SELECT list, " + attempt_columns +
          " FROM ("
          " SELECT 0 AS list, a.id AS sort, a.* FROM attempts a"
          "  WHERE a.state = 'RUNNING' AND a.lease_expires_at_us <= $1"
          " UNION ALL"
          " SELECT 1, a.id, a.* FROM attempts a WHERE a.state = 'UNKNOWN'"
          " UNION ALL"
          " SELECT 2, j.id, a.* FROM jobs j CROSS JOIN LATERAL"
          "  (SELECT * FROM attempts l WHERE l.job_id = j.id ORDER BY l.attempt_no DESC LIMIT 1) a"
          "  WHERE j.status = 'pending' AND j.completed_by IS NULL"
          "  AND NOT EXISTS (SELECT 1 FROM attempts b WHERE b.job_id = j.id AND b.state IN " +
          live_states +
          ")"
          " UNION ALL"
          " (SELECT 3, a.id, a.* FROM attempts a WHERE a.state IN " +
          live_states + " LIMIT 1)) w ORDER BY list, sort");
  // SKIP LOCKED: a worker passes over an attempt another worker is claiming right now rather
  // than queueing behind it; the outer state check re-reads the row once it is locked.
  c.prepare(kClaimAttempt,
            "UPDATE attempts SET state = 'RUNNING', lease_owner = $1,"
            " lease_token = lease_token + 1, lease_expires_at_us = $2"
            " WHERE id = (SELECT id FROM attempts WHERE state = 'STARTING'"
            " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) AND state = 'STARTING'"
            " RETURNING " +
                attempt_columns);
}

}  // namespace

void prepare_statements(pqxx::connection& c) {
  prepare_job_and_certification_statements(c);
  prepare_attempt_statements(c);
}

}  // namespace onejob::pg
