#pragma once

// The PostgreSQL bench's second baseline: create and compare-and-swap written as the plainest
// statements that do the same work on PgStore's schema, prepared on a connection of the
// bench's own. Where the adapter baseline (PgStore's own statements through libpqxx) measures
// what PgStore adds around its SQL, this one measures the SQL: were the one-statement create
// (a CTE) and the PL/pgSQL compare-and-swap (migration 3, system/adapters/pg_schema.cpp) slow,
// PgStore would fall behind it. Included only by bench_pg.cpp: it brings libpqxx.

#include <cstdint>
#include <string>

#include <pqxx/pqxx>

#include "system/adapters/pg_rows.hpp"

namespace onejob::bench::plain {

inline constexpr const char* kInsertJob = "plain_insert_job";
inline constexpr const char* kInsertFirstAttempt = "plain_insert_first_attempt";
inline constexpr const char* kJobByKey = "plain_job_by_key";
inline constexpr const char* kFinishAttempt = "plain_finish_attempt";
inline constexpr const char* kWinJob = "plain_win_job";
inline constexpr const char* kLoseAttempt = "plain_lose_attempt";
inline constexpr const char* kAttemptAndJob = "plain_attempt_and_job";
inline constexpr const char* kJobById = "plain_job_by_id";

inline void prepare(pqxx::connection& c) {
  // Whole rows come back in PgStore's column order, so both baselines read the same bytes.
  const std::string job_columns{pg::kJobColumns};
  const std::string attempt_columns{pg::kAttemptColumns};
  c.prepare(kInsertJob,
            "INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, operation,"
            " target_provider, failover, input_json, payload_json, created_at_us)"
            " VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8, $9)"
            " ON CONFLICT (owner_id, idempotency_key) DO NOTHING RETURNING id");
  c.prepare(kInsertFirstAttempt,
            "INSERT INTO attempts (job_id, attempt_no, provider, provider_key, origin,"
            " created_at_us) VALUES ($1, 1, $2, $3, 'initial', $4) RETURNING id");
  c.prepare(kJobByKey,
            "SELECT " + job_columns + " FROM jobs WHERE owner_id = $1 AND idempotency_key = $2");
  // The attempt first, as onejob_complete_attempt locks it first: the same lock order, so the
  // two never deadlock on the same rows. Its WHERE is the fence and the state guard.
  c.prepare(kFinishAttempt,
            "UPDATE attempts SET state = 'SUCCEEDED', outcome_reason = 'won', result = $4,"
            " finished_at_us = $5 WHERE id = $1 AND job_id = $2 AND state = 'RUNNING'"
            " AND lease_token = $3 RETURNING " +
                attempt_columns);
  c.prepare(kWinJob,
            "UPDATE jobs SET result = $3, completed_by = $4, status = 'succeeded',"
            " failure_reason = '', version = version + 1"
            " WHERE id = $1 AND version = $2 AND completed_by IS NULL RETURNING " +
                job_columns);
  c.prepare(kLoseAttempt,
            "UPDATE attempts SET state = 'DISCARDED', outcome_reason = 'lost to attempt ' ||"
            " COALESCE((SELECT completed_by FROM jobs WHERE id = $2)::text, 'none')"
            " WHERE id = $1 RETURNING " +
                attempt_columns);
  c.prepare(kAttemptAndJob, "SELECT " + pg::prefixed_columns(pg::kAttemptColumns, "a.") + ", " +
                                pg::prefixed_columns(pg::kJobColumns, "j.") +
                                " FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE a.id = $1");
  c.prepare(kJobById, "SELECT " + job_columns + " FROM jobs WHERE id = $1");
}

// A create as a careful engineer would write it without a CTE: the job, and its first attempt
// only when the job is new, in one transaction (four round trips: BEGIN, two INSERTs, COMMIT).
// Returns whether the key was new; on a taken key, `replay` (the job holding it) is filled.
struct NewJobRow {
  std::string owner_id, key, fingerprint, operation, provider, failover, input, payload;
};
inline bool create(pqxx::connection& c, const NewJobRow& job, pqxx::result& replay) {
  pqxx::work tx{c};
  const pqxx::result inserted =
      tx.exec_prepared(kInsertJob, job.owner_id, job.key, job.fingerprint, job.operation,
                       job.provider, job.failover, job.input, job.payload, std::int64_t{0});
  if (inserted.empty()) {
    replay = tx.exec_prepared(kJobByKey, job.owner_id, job.key);
    tx.commit();
    return false;
  }
  // The provider key is "<job id>:<attempt_no>", as derive_provider_key spells it.
  const auto id = inserted[0][0].as<std::int64_t>();
  tx.exec_prepared1(kInsertFirstAttempt, id, job.provider, std::to_string(id) + ":1",
                    std::int64_t{0});
  tx.commit();
  return true;
}

// The compare-and-swap of one RUNNING attempt, with PgStore's outcomes: "won", "lost" (another
// attempt completed the job: this one is DISCARDED), "fenced", "state_mismatch" or
// "not_found", and, as PgStore returns them, the attempt's and the job's rows after it (their
// bytes added to `bytes`). Four round trips on every path: BEGIN, the attempt's guarded UPDATE,
// the job's CAS (or the read that says why the guard matched nothing), COMMIT (or ROLLBACK); a
// loser pays two more.
inline std::string complete(pqxx::connection& c, std::int64_t attempt, std::int64_t job,
                            std::int64_t version, std::int64_t fence, const std::string& result,
                            std::size_t& bytes) {
  const auto add = [&bytes](const pqxx::row& row) {
    for (const auto& field : row) bytes += field.size();
  };
  pqxx::work tx{c};
  const pqxx::result finished =
      tx.exec_prepared(kFinishAttempt, attempt, job, fence, result, std::int64_t{0});
  if (finished.empty()) {
    // Read in the same transaction: under READ COMMITTED it sees whoever got there first.
    const pqxx::result found = tx.exec_prepared(kAttemptAndJob, attempt);
    if (found.empty() || found[0][1].as<std::int64_t>() != job) return "not_found";
    add(found[0]);
    return found[0][8].as<std::int64_t>() != fence ? "fenced" : "state_mismatch";
  }
  const pqxx::result won = tx.exec_prepared(kWinJob, job, version, result, attempt);
  if (!won.empty()) {
    add(finished[0]);
    add(won[0]);
    tx.commit();
    return "won";
  }
  add(tx.exec_prepared1(kLoseAttempt, attempt, job));
  add(tx.exec_prepared1(kJobById, job));
  tx.commit();
  return "lost";
}

}  // namespace onejob::bench::plain
