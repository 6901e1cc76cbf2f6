#include "system/adapters/pg_store.hpp"

#include <utility>

#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <pqxx/pqxx>

#include "system/adapters/pg_schema.hpp"

namespace onejob {
namespace {

// Serializes concurrent apply_schema() calls (two processes starting together): concurrent
// CREATE TABLE IF NOT EXISTS can both see "absent" and one then fails on a catalog unique index.
constexpr std::int64_t kSchemaLockId = 0x6f6e656a6f62;  // "onejob"

constexpr const char* kInsertJob = "onejob_insert_job";
constexpr const char* kFindJobByKey = "onejob_find_job_by_key";
constexpr const char* kFindJob = "onejob_find_job";

// Every statement returns the whole row in this order, so one job_from_row() reads them all.
constexpr std::string_view kJobColumns =
    "id, owner_id, idempotency_key, request_fingerprint, operation, target_provider,"
    " payload_json, status, version, created_at_us";

JobStatus parse_job_status(std::string_view text) {
  if (text == to_string(JobStatus::pending)) return JobStatus::pending;
  // A status this build does not know means the schema and the code disagree (a newer writer,
  // or a hand edit): refuse to guess.
  throw std::runtime_error("jobs.status holds unknown value '" + std::string(text) + "'");
}

Job job_from_row(const pqxx::row& row) {
  return Job{
      .id = row["id"].as<JobId>(),
      .owner_id = row["owner_id"].as<std::string>(),
      .idempotency_key = row["idempotency_key"].as<std::string>(),
      .request_fingerprint = row["request_fingerprint"].as<std::string>(),
      .operation = row["operation"].as<std::string>(),
      .target_provider = row["target_provider"].as<std::string>(),
      .payload_json = row["payload_json"].as<std::string>(),
      .status = parse_job_status(row["status"].as<std::string>()),
      .version = row["version"].as<std::int64_t>(),
      .created_at = Instant{Duration{row["created_at_us"].as<std::int64_t>()}},
  };
}

std::optional<Job> at_most_one_job(const pqxx::result& result) {
  // Both lookups are by a unique key, so more than one row would be a broken schema.
  if (result.size() > 1) throw std::logic_error("jobs lookup by a unique key found several rows");
  if (result.empty()) return std::nullopt;
  return job_from_row(result[0]);
}

}  // namespace

// The blocking half of PgStore: one connection and the statements on it.
class PgStore::Session {
 public:
  explicit Session(const std::string& connection_string) : connection_{connection_string} {
    // Prepared lazily by libpqxx on first use, so they may name tables apply_schema() has not
    // created yet.
    const std::string columns{kJobColumns};
    // status and version come from the column defaults, so the schema is the one place that
    // says what a new job looks like; RETURNING hands back exactly what was committed.
    connection_.prepare(kInsertJob,
                        "INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint,"
                        " operation, target_provider, payload_json, created_at_us)"
                        " VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING " +
                            columns);
    connection_.prepare(
        kFindJobByKey,
        "SELECT " + columns + " FROM jobs WHERE owner_id = $1 AND idempotency_key = $2");
    connection_.prepare(kFindJob,
                        "SELECT " + columns + " FROM jobs WHERE id = $1 AND owner_id = $2");
  }

  void apply_schema() {
    const std::lock_guard lock{mutex_};
    pqxx::work tx{connection_};
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", kSchemaLockId);
    tx.exec(std::string{pg_schema_sql()});
    tx.commit();
  }

  InsertJobResult insert_job(const NewJob& new_job) {
    const std::lock_guard lock{mutex_};
    // An explicit transaction rather than autocommit: if the connection breaks before COMMIT,
    // nothing was written (broken_connection); only a reply lost during COMMIT itself is "may
    // have happened", and libpqxx names exactly that case in_doubt_error.
    pqxx::work tx{connection_};
    Job job;
    try {
      job = job_from_row(tx.exec_prepared1(kInsertJob, new_job.owner_id, new_job.idempotency_key,
                                           new_job.request_fingerprint, new_job.operation,
                                           new_job.target_provider, new_job.payload_json,
                                           new_job.created_at.time_since_epoch().count()));
    } catch (const pqxx::unique_violation&) {
      // The constraint decided: another create holds (owner_id, idempotency_key). The caller
      // reads that job with find_job_by_key, in a new statement that sees it committed.
      tx.abort();
      return InsertJobResult{InsertJobResult::Outcome::unique_violation, std::nullopt};
    }
    tx.commit();
    return InsertJobResult{InsertJobResult::Outcome::inserted, std::move(job)};
  }

  // Reads run in autocommit (one statement = one transaction), so under READ COMMITTED each
  // takes a fresh snapshot and sees every row committed before it started, in particular the
  // row whose unique violation the caller just hit.
  std::optional<Job> find_job_by_key(const std::string& owner_id,
                                     const std::string& idempotency_key) {
    const std::lock_guard lock{mutex_};
    pqxx::nontransaction tx{connection_};
    return at_most_one_job(tx.exec_prepared(kFindJobByKey, owner_id, idempotency_key));
  }

  std::optional<Job> find_job(const std::string& owner_id, JobId id) {
    const std::lock_guard lock{mutex_};
    pqxx::nontransaction tx{connection_};
    return at_most_one_job(tx.exec_prepared(kFindJob, id, owner_id));
  }

 private:
  std::mutex mutex_;  // a libpqxx connection is not thread-safe
  pqxx::connection connection_;
};

PgStore::PgStore(const std::string& connection_string)
    : session_{std::make_unique<Session>(connection_string)} {}

PgStore::~PgStore() = default;

void PgStore::apply_schema() { session_->apply_schema(); }

Async<InsertJobResult> PgStore::insert_job(NewJob job) { co_return session_->insert_job(job); }

Async<std::optional<Job>> PgStore::find_job_by_key(std::string owner_id,
                                                   std::string idempotency_key) {
  co_return session_->find_job_by_key(owner_id, idempotency_key);
}

Async<std::optional<Job>> PgStore::find_job(std::string owner_id, JobId id) {
  co_return session_->find_job(owner_id, id);
}

}  // namespace onejob
