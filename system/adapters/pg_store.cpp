#include "system/adapters/pg_store.hpp"

#include <utility>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>

#include "system/adapters/pg_schema.hpp"

namespace onejob {
namespace {

// Serializes concurrent apply_schema() calls (two processes starting together): concurrent
// CREATE TABLE IF NOT EXISTS can both see "absent" and one then fails on a catalog unique index.
constexpr std::int64_t kSchemaLockId = 0x6f6e656a6f62;  // "onejob"

constexpr std::string_view kOwnerKeyConstraint = "jobs_owner_key_unique";
constexpr std::string_view kOneLiveAttemptIndex = "attempts_one_live_per_job";

// A refused insert_attempt reads its blocker afterwards; if that attempt left the live states in
// between, the refusal no longer describes the database and the insert is tried again. Each
// retry needs another attempt to finish inside a few milliseconds, so a handful is plenty.
constexpr int kInsertAttemptTries = 8;

constexpr const char* kInsertJob = "onejob_insert_job";
constexpr const char* kFindJobByKey = "onejob_find_job_by_key";
constexpr const char* kFindJob = "onejob_find_job";
constexpr const char* kLoadJob = "onejob_load_job";
constexpr const char* kLockJob = "onejob_lock_job";
constexpr const char* kReopenJob = "onejob_reopen_job";
constexpr const char* kFailJob = "onejob_fail_job";
constexpr const char* kCompleteJob = "onejob_complete_job";
constexpr const char* kNextAttemptNo = "onejob_next_attempt_no";
constexpr const char* kInsertAttempt = "onejob_insert_attempt";
constexpr const char* kLiveAttemptOfJob = "onejob_live_attempt_of_job";
constexpr const char* kFindAttempt = "onejob_find_attempt";
constexpr const char* kLockAttempt = "onejob_lock_attempt";
constexpr const char* kWriteAttempt = "onejob_write_attempt";
constexpr const char* kListAttempts = "onejob_list_attempts";
constexpr const char* kAttemptsInState = "onejob_attempts_in_state";
constexpr const char* kExpiredLeases = "onejob_expired_leases";
constexpr const char* kIdleJobs = "onejob_idle_jobs";
constexpr const char* kClaimAttempt = "onejob_claim_attempt";
constexpr const char* kInsertCertification = "onejob_insert_certification";
constexpr const char* kLatestCertification = "onejob_latest_certification";
constexpr const char* kFindAction = "onejob_find_action";
constexpr const char* kInsertAction = "onejob_insert_action";

// Every statement returns whole rows in these orders, so one *_from_row() reads them all.
constexpr std::string_view kJobColumns =
    "id, owner_id, idempotency_key, request_fingerprint, operation, target_provider, failover,"
    " input_json, payload_json, status, version, completed_by, result, failure_reason,"
    " created_at_us";
constexpr std::string_view kAttemptColumns =
    "id, job_id, attempt_no, provider, provider_key, origin, state, lease_owner, lease_token,"
    " lease_expires_at_us, created_at_us, finished_at_us, outcome_reason, result";
// The predicate of attempts_one_live_per_job, spelled identically so the planner uses it.
constexpr std::string_view kLiveStates = "('STARTING', 'RUNNING', 'UNKNOWN')";

std::int64_t to_us(Instant at) { return at.time_since_epoch().count(); }
Instant from_us(const pqxx::field& field) { return Instant{Duration{field.as<std::int64_t>()}}; }

// libpqxx 6.4 has no parameter type for a nullable value; a null const char* is SQL NULL.
class NullableParam {
 public:
  explicit NullableParam(std::optional<std::int64_t> value)
      : present_{value.has_value()}, text_{value ? std::to_string(*value) : std::string{}} {}
  const char* get() const { return present_ ? text_.c_str() : nullptr; }

 private:
  bool present_;
  std::string text_;
};

// A text[] literal with every element double-quoted, so that commas, braces, quotes,
// backslashes, blanks, empty strings and the word NULL all come back as the same string.
std::string to_text_array(const std::vector<std::string>& items) {
  std::string literal = "{";
  for (const std::string& item : items) {
    if (literal.size() > 1) literal += ',';
    literal += '"';
    for (const char c : item) {
      if (c == '"' || c == '\\') literal += '\\';
      literal += c;
    }
    literal += '"';
  }
  literal += '}';
  return literal;
}

std::vector<std::string> from_text_array(const pqxx::field& field) {
  std::vector<std::string> items;
  pqxx::array_parser parser = field.as_array();
  for (;;) {
    auto [juncture, value] = parser.get_next();
    switch (juncture) {
      case pqxx::array_parser::string_value:
        items.push_back(std::move(value));
        break;
      case pqxx::array_parser::null_value:
        // Nothing PgStore writes has NULL elements: someone else wrote this row.
        throw std::runtime_error(std::string{field.name()} + " holds a NULL element");
      case pqxx::array_parser::row_start:
      case pqxx::array_parser::row_end:
        break;
      case pqxx::array_parser::done:
        return items;
    }
  }
}

// A value this build does not know means the schema and the code disagree (a newer writer, or
// a hand edit): refuse to guess.
template <typename Parse>
auto known_value(const pqxx::field& field, Parse parse) {
  const std::string text = field.as<std::string>();
  auto value = parse(text);
  if (!value) {
    throw std::runtime_error(std::string{field.name()} + " holds unknown value '" + text + "'");
  }
  return *value;
}

Job job_from_row(const pqxx::row& row) {
  const pqxx::field completed_by = row["completed_by"];
  return Job{
      .id = row["id"].as<JobId>(),
      .owner_id = row["owner_id"].as<std::string>(),
      .idempotency_key = row["idempotency_key"].as<std::string>(),
      .request_fingerprint = row["request_fingerprint"].as<std::string>(),
      .operation = row["operation"].as<std::string>(),
      .target_provider = row["target_provider"].as<std::string>(),
      .failover = from_text_array(row["failover"]),
      .input_json = row["input_json"].as<std::string>(),
      .payload_json = row["payload_json"].as<std::string>(),
      .status = known_value(row["status"], parse_job_status),
      .version = row["version"].as<std::int64_t>(),
      .completed_by =
          completed_by.is_null() ? std::nullopt : std::optional{completed_by.as<AttemptId>()},
      .result = row["result"].as<std::string>(),
      .failure_reason = row["failure_reason"].as<std::string>(),
      .created_at = from_us(row["created_at_us"]),
  };
}

Attempt attempt_from_row(const pqxx::row& row) {
  const pqxx::field finished_at = row["finished_at_us"];
  return Attempt{
      .id = row["id"].as<AttemptId>(),
      .job_id = row["job_id"].as<JobId>(),
      .attempt_no = row["attempt_no"].as<int>(),
      .provider = row["provider"].as<std::string>(),
      .provider_key = row["provider_key"].as<std::string>(),
      .origin = known_value(row["origin"], parse_attempt_origin),
      .state = known_value(row["state"], parse_attempt_state),
      .lease_owner = row["lease_owner"].as<std::string>(),
      .lease_token = row["lease_token"].as<std::int64_t>(),
      .lease_expires_at = from_us(row["lease_expires_at_us"]),
      .created_at = from_us(row["created_at_us"]),
      .finished_at = finished_at.is_null() ? std::nullopt : std::optional{from_us(finished_at)},
      .outcome_reason = row["outcome_reason"].as<std::string>(),
      .result = row["result"].as<std::string>(),
  };
}

std::vector<Attempt> attempts_from(const pqxx::result& result) {
  std::vector<Attempt> attempts;
  attempts.reserve(result.size());
  for (const pqxx::row& row : result) attempts.push_back(attempt_from_row(row));
  return attempts;
}

// For lookups by a unique key, where more than one row would be a broken schema.
template <typename T>
std::optional<T> at_most_one(const pqxx::result& result, T (*from_row)(const pqxx::row&)) {
  if (result.size() > 1) throw std::logic_error("lookup by a unique key found several rows");
  if (result.empty()) return std::nullopt;
  return from_row(result[0]);
}

// pqxx 6.4 does not expose the violated constraint's name; PostgreSQL's message quotes it.
bool violates(const pqxx::unique_violation& e, std::string_view constraint) {
  return std::string_view{e.what()}.find("\"" + std::string{constraint} + "\"") !=
         std::string_view::npos;
}

// libpq sends text parameters as C strings, so a NUL byte would silently cut a value short:
// two idempotency keys that differ only after it would become one job. Refuse instead; every
// statement goes through these three.
void require_no_nul(const char* statement, const std::string& value) {
  if (value.find('\0') != std::string::npos) {
    throw std::invalid_argument(std::string{statement} +
                                ": a text parameter contains a NUL byte, which PostgreSQL text"
                                " cannot hold");
  }
}
template <typename T>
void require_no_nul(const char*, const T&) {}

template <typename... Args>
pqxx::result exec(pqxx::transaction_base& tx, const char* statement, const Args&... args) {
  (require_no_nul(statement, args), ...);
  return tx.exec_prepared(statement, args...);
}

// Exactly one row, or pqxx::unexpected_rows.
template <typename... Args>
pqxx::row exec1(pqxx::transaction_base& tx, const char* statement, const Args&... args) {
  (require_no_nul(statement, args), ...);
  return tx.exec_prepared1(statement, args...);
}

// No rows returned; affected_rows() tells what a write changed.
template <typename... Args>
pqxx::result exec0(pqxx::transaction_base& tx, const char* statement, const Args&... args) {
  (require_no_nul(statement, args), ...);
  return tx.exec_prepared0(statement, args...);
}

bool contains(const std::vector<AttemptState>& states, AttemptState state) {
  return std::ranges::find(states, state) != states.end();
}

// MemoryStore::set_state minus its index upkeep (the database keeps its own indexes), so that
// both stores change an attempt by the same rule. Applied to a row locked FOR UPDATE, then
// written back whole.
void apply_state(Attempt& attempt, AttemptState to, const std::string& reason, Instant at) {
  require_legal_transition(attempt.state, to);
  attempt.state = to;
  if (!reason.empty()) attempt.outcome_reason = reason;
  if (!is_live(to)) attempt.finished_at = at;
}

}  // namespace

// The blocking half of PgStore: one connection and the statements on it. Each public method is
// one transaction (insert_attempt may retry, see kInsertAttemptTries); reads run in autocommit (one
// statement = one transaction), so under READ COMMITTED each takes a fresh snapshot and sees every
// row committed before it started, in particular the row whose unique violation the caller just
// hit.
class PgStore::Session {
 public:
  explicit Session(const std::string& connection_string) : connection_{connection_string} {
    prepare_statements();
  }

  void apply_schema() {
    const std::lock_guard lock{mutex_};
    pqxx::work tx{connection_};
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", kSchemaLockId);
    tx.exec(std::string{pg_schema_sql()});
    tx.commit();
  }

  // ---- jobs ----------------------------------------------------------------------------------

  InsertJobResult insert_job(const NewJob& new_job) {
    const std::lock_guard lock{mutex_};
    // An explicit transaction rather than autocommit: if the connection breaks before COMMIT,
    // nothing was written (broken_connection); only a reply lost during COMMIT itself is "may
    // have happened", and libpqxx names exactly that case in_doubt_error.
    pqxx::work tx{connection_};
    Job job;
    try {
      job = job_from_row(exec1(
          tx, kInsertJob, new_job.owner_id, new_job.idempotency_key, new_job.request_fingerprint,
          new_job.operation, new_job.target_provider, to_text_array(new_job.failover),
          new_job.input_json, new_job.payload_json, to_us(new_job.created_at)));
    } catch (const pqxx::unique_violation& e) {
      if (!violates(e, kOwnerKeyConstraint)) throw;
      // The constraint decided: another create holds (owner_id, idempotency_key). The caller
      // reads that job with find_job_by_key, in a new statement that sees it committed.
      tx.abort();
      return InsertJobResult{InsertJobResult::Outcome::unique_violation, std::nullopt,
                             std::nullopt};
    }
    // In the same transaction, so an accepted job always has work queued.
    Attempt first = insert_attempt_row(tx, job.id, 1, job.target_provider, AttemptOrigin::initial,
                                       job.created_at);
    tx.commit();
    return InsertJobResult{InsertJobResult::Outcome::inserted, std::move(job), std::move(first)};
  }

  std::optional<Job> find_job_by_key(const std::string& owner_id,
                                     const std::string& idempotency_key) {
    const std::lock_guard lock{mutex_};
    pqxx::nontransaction tx{connection_};
    return at_most_one(exec(tx, kFindJobByKey, owner_id, idempotency_key), job_from_row);
  }

  std::optional<Job> find_job(const std::string& owner_id, JobId id) {
    const std::lock_guard lock{mutex_};
    pqxx::nontransaction tx{connection_};
    return at_most_one(exec(tx, kFindJob, id, owner_id), job_from_row);
  }

  std::optional<Job> load_job(JobId id) {
    const std::lock_guard lock{mutex_};
    pqxx::nontransaction tx{connection_};
    return at_most_one(exec(tx, kLoadJob, id), job_from_row);
  }

  bool fail_job(JobId id, const std::string& reason) {
    const std::lock_guard lock{mutex_};
    pqxx::work tx{connection_};
    // Holding the job row first matters: live attempts are only ever created under that lock
    // (insert_attempt) or together with the job, so none can appear between the check below
    // and the write. A single UPDATE would re-check a concurrently changed job row against its
    // old snapshot of attempts and could fail a job that just got a live attempt.
    if (exec(tx, kLockJob, id).empty()) return false;
    const bool changed = exec0(tx, kFailJob, id, reason).affected_rows() == 1;
    tx.commit();
    return changed;
  }

  // ---- attempts ------------------------------------------------------------------------------

  std::optional<ActionRecord> find_action(const std::string& owner_id, const std::string& key) {
    const std::lock_guard lock{mutex_};
    pqxx::nontransaction tx{connection_};
    return find_action_in(tx, owner_id, key);
  }

  InsertAttemptResult insert_attempt(const NewAttempt& new_attempt) {
    using Outcome = InsertAttemptResult::Outcome;
    const std::lock_guard lock{mutex_};
    for (int tries = 1;; ++tries) {
      bool key_lost = false;
      {
        pqxx::work tx{connection_};
        if (new_attempt.key) {
          if (auto recorded =
                  find_action_in(tx, new_attempt.key->owner_id, new_attempt.key->idempotency_key)) {
            return InsertAttemptResult{Outcome::key_exists, {}, {}, std::move(recorded)};
          }
        }
        // The job row lock keeps a winner (complete_attempt) or another insert from landing
        // between this read and the insert, so job_completed and max(attempt_no) stay true.
        const pqxx::result job = exec(tx, kLockJob, new_attempt.job_id);
        if (job.empty()) return InsertAttemptResult{Outcome::job_not_found, {}, {}};
        if (!job[0]["completed_by"].is_null()) {
          return InsertAttemptResult{Outcome::job_completed, {}, {}};
        }
        exec0(tx, kReopenJob, new_attempt.job_id);
        const int attempt_no = exec1(tx, kNextAttemptNo, new_attempt.job_id)[0].as<int>();
        try {
          Attempt attempt =
              insert_attempt_row(tx, new_attempt.job_id, attempt_no, new_attempt.provider,
                                 new_attempt.origin, new_attempt.created_at);
          if (!new_attempt.key || record_action(tx, *new_attempt.key, attempt.id)) {
            tx.commit();
            return InsertAttemptResult{Outcome::inserted, std::move(attempt), {}};
          }
          key_lost = true;  // the same key won meanwhile: nothing of this one is written
        } catch (const pqxx::unique_violation& e) {
          if (!violates(e, kOneLiveAttemptIndex)) throw;
        }
      }  // the failed transaction rolls back, reopening the job included
      pqxx::nontransaction read{connection_};
      if (key_lost) {
        return InsertAttemptResult{
            Outcome::key_exists,
            {},
            {},
            find_action_in(read, new_attempt.key->owner_id, new_attempt.key->idempotency_key)};
      }
      const pqxx::result live = exec(read, kLiveAttemptOfJob, new_attempt.job_id);
      if (!live.empty()) {
        return InsertAttemptResult{Outcome::live_attempt_exists, {}, live[0][0].as<AttemptId>()};
      }
      if (tries == kInsertAttemptTries) {
        throw std::runtime_error("insert_attempt: job " + std::to_string(new_attempt.job_id) +
                                 " kept getting and losing a live attempt");
      }
    }
  }

  std::optional<Attempt> find_attempt(AttemptId id) {
    const std::lock_guard lock{mutex_};
    pqxx::nontransaction tx{connection_};
    return at_most_one(exec(tx, kFindAttempt, id), attempt_from_row);
  }

  std::vector<Attempt> list_attempts(JobId job_id) {
    const std::lock_guard lock{mutex_};
    pqxx::nontransaction tx{connection_};
    return attempts_from(exec(tx, kListAttempts, job_id));
  }

  std::vector<Attempt> find_attempts_in_state(AttemptState state) {
    const std::lock_guard lock{mutex_};
    pqxx::nontransaction tx{connection_};
    return attempts_from(exec(tx, kAttemptsInState, std::string{to_string(state)}));
  }

  std::vector<Job> find_idle_jobs() {
    const std::lock_guard lock{mutex_};
    pqxx::nontransaction tx{connection_};
    std::vector<Job> jobs;
    for (const auto& row : exec(tx, kIdleJobs)) jobs.push_back(job_from_row(row));
    return jobs;
  }

  std::vector<Attempt> find_expired_leases(Instant now) {
    const std::lock_guard lock{mutex_};
    pqxx::nontransaction tx{connection_};
    return attempts_from(exec(tx, kExpiredLeases, to_us(now)));
  }

  std::optional<Attempt> claim_next_attempt(const std::string& worker, Instant lease_expires_at) {
    const std::lock_guard lock{mutex_};
    pqxx::work tx{connection_};
    std::optional<Attempt> claimed =
        at_most_one(exec(tx, kClaimAttempt, worker, to_us(lease_expires_at)), attempt_from_row);
    tx.commit();
    return claimed;
  }

  UpdateAttemptResult update_attempt(const AttemptUpdate& update) {
    using Outcome = UpdateAttemptResult::Outcome;
    if (update.to == AttemptState::succeeded || update.to == AttemptState::discarded) {
      throw std::logic_error(
          "an attempt reaches SUCCEEDED or DISCARDED only through "
          "complete_attempt (the job's compare-and-swap)");
    }
    const std::lock_guard lock{mutex_};
    {
      auto applied = update_attempt_in_transaction(update);
      if (applied.outcome != Outcome::key_exists || applied.recorded) return applied;
    }  // the same key won meanwhile: this transaction rolled back
    pqxx::nontransaction read{connection_};
    return UpdateAttemptResult{
        Outcome::key_exists,
        {},
        {},
        find_action_in(read, update.key->owner_id, update.key->idempotency_key)};
  }

  // update_attempt's transaction; key_exists without `recorded` when the key was taken after the
  // check (the transaction then rolls back).
  UpdateAttemptResult update_attempt_in_transaction(const AttemptUpdate& update) {
    using Outcome = UpdateAttemptResult::Outcome;
    pqxx::work tx{connection_};
    if (update.key) {
      if (auto recorded = find_action_in(tx, update.key->owner_id, update.key->idempotency_key)) {
        return UpdateAttemptResult{Outcome::key_exists, {}, {}, std::move(recorded)};
      }
    }
    std::optional<Attempt> attempt =
        at_most_one(exec(tx, kLockAttempt, update.attempt_id), attempt_from_row);
    if (!attempt) return UpdateAttemptResult{Outcome::not_found, {}, {}};
    if (update.fence && *update.fence != attempt->lease_token) {
      return UpdateAttemptResult{Outcome::fenced, attempt, attempt->state};
    }
    if (!contains(update.from, attempt->state)) {
      return UpdateAttemptResult{Outcome::state_mismatch, attempt, attempt->state};
    }
    const AttemptState before = attempt->state;
    // Throws IllegalTransition before anything is written; the transaction rolls back.
    apply_state(*attempt, update.to, update.reason, update.at);
    if (update.take_over_as) {
      attempt->lease_owner = *update.take_over_as;
      attempt->lease_token += 1;
    }
    Attempt written = write_attempt(tx, *attempt);
    if (update.key && !record_action(tx, *update.key, written.id)) {
      return UpdateAttemptResult{Outcome::key_exists, {}, {}};
    }
    tx.commit();
    return UpdateAttemptResult{Outcome::applied, std::move(written), before};
  }

  CompleteAttemptResult complete_attempt(const CompleteAttempt& completion) {
    using Outcome = CompleteAttemptResult::Outcome;
    const std::lock_guard lock{mutex_};
    pqxx::work tx{connection_};
    std::optional<Attempt> attempt =
        at_most_one(exec(tx, kLockAttempt, completion.attempt_id), attempt_from_row);
    if (!attempt || attempt->job_id != completion.job_id) {
      return CompleteAttemptResult{Outcome::not_found, {}, {}, {}};
    }
    if (completion.fence && *completion.fence != attempt->lease_token) {
      return CompleteAttemptResult{Outcome::fenced, load_job_in(tx, attempt->job_id), attempt,
                                   attempt->state};
    }
    if (!contains(completion.from, attempt->state)) {
      return CompleteAttemptResult{Outcome::state_mismatch, load_job_in(tx, attempt->job_id),
                                   attempt, attempt->state};
    }
    const AttemptState before = attempt->state;
    // The compare-and-swap. A concurrent winner holds the job row until it commits; this
    // UPDATE then re-checks the committed row and matches nothing.
    const bool won = exec0(tx, kCompleteJob, completion.result, attempt->id, completion.job_id,
                           completion.expected_version)
                         .affected_rows() == 1;
    Job job = load_job_in(tx, completion.job_id);
    if (won) {
      apply_state(*attempt, AttemptState::succeeded, "won", completion.at);
    } else {
      const std::string winner = job.completed_by ? std::to_string(*job.completed_by) : "none";
      apply_state(*attempt, AttemptState::discarded, "lost to attempt " + winner, completion.at);
    }
    // Kept on the attempt either way: a loser's bytes are evidence, never the job's result.
    attempt->result = completion.result;
    Attempt written = write_attempt(tx, *attempt);
    tx.commit();
    return CompleteAttemptResult{won ? Outcome::won : Outcome::lost, std::move(job),
                                 std::move(written), before};
  }

  // ---- certifications ------------------------------------------------------------------------

  void record_certification(const Certification& certification) {
    const std::lock_guard lock{mutex_};
    pqxx::work tx{connection_};
    exec0(tx, kInsertCertification, certification.provider, certification.passed,
          to_text_array(certification.reasons), to_us(certification.at));
    tx.commit();
  }

  std::optional<Certification> latest_certification(const std::string& provider) {
    const std::lock_guard lock{mutex_};
    pqxx::nontransaction tx{connection_};
    const pqxx::result found = exec(tx, kLatestCertification, provider);
    if (found.empty()) return std::nullopt;
    const pqxx::row row = found[0];
    return Certification{
        .provider = row["provider"].as<std::string>(),
        .passed = row["passed"].as<bool>(),
        .reasons = from_text_array(row["reasons"]),
        .at = from_us(row["at_us"]),
    };
  }

 private:
  // Prepared lazily by libpqxx on first use, so they may name tables apply_schema() has not
  // created yet.
  void prepare_statements() {
    prepare_job_and_certification_statements();
    prepare_attempt_statements();
  }

  void prepare_job_and_certification_statements() {
    const std::string job_columns{kJobColumns};
    const std::string live_states{kLiveStates};
    // Defaults (status, version, state, lease columns) come from the schema, so it is the one
    // place that says what a new row looks like; RETURNING hands back what was committed.
    connection_.prepare(kInsertJob,
                        "INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint,"
                        " operation, target_provider, failover, input_json, payload_json,"
                        " created_at_us) VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8, $9)"
                        " RETURNING " +
                            job_columns);
    connection_.prepare(
        kFindJobByKey,
        "SELECT " + job_columns + " FROM jobs WHERE owner_id = $1 AND idempotency_key = $2");
    connection_.prepare(kFindJob,
                        "SELECT " + job_columns + " FROM jobs WHERE id = $1 AND owner_id = $2");
    connection_.prepare(kLoadJob, "SELECT " + job_columns + " FROM jobs WHERE id = $1");
    connection_.prepare(kIdleJobs,
                        "SELECT " + job_columns +
                            " FROM jobs j WHERE status = 'pending' AND completed_by IS NULL"
                            " AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = j.id"
                            " AND a.state IN ('STARTING', 'RUNNING', 'UNKNOWN')) ORDER BY id");
    connection_.prepare(kLockJob, "SELECT completed_by FROM jobs WHERE id = $1 FOR UPDATE");
    // failure_reason is left as it was, exactly as MemoryStore does.
    connection_.prepare(kReopenJob, "UPDATE jobs SET status = 'pending' WHERE id = $1");
    connection_.prepare(kFailJob,
                        "UPDATE jobs SET status = 'failed', failure_reason = $2"
                        " WHERE id = $1 AND status = 'pending' AND completed_by IS NULL"
                        " AND NOT EXISTS (SELECT 1 FROM attempts WHERE job_id = $1"
                        " AND state IN " +
                            live_states + ")");
    connection_.prepare(kCompleteJob,
                        "UPDATE jobs SET result = $1, completed_by = $2, status = 'succeeded',"
                        " failure_reason = '', version = version + 1"
                        " WHERE id = $3 AND version = $4 AND completed_by IS NULL");
    connection_.prepare(kInsertCertification,
                        "INSERT INTO certifications (provider, passed, reasons, at_us)"
                        " VALUES ($1, $2, $3::text[], $4)");
    connection_.prepare(kLatestCertification,
                        "SELECT provider, passed, reasons, at_us FROM certifications"
                        " WHERE provider = $1 ORDER BY id DESC LIMIT 1");
  }

  void prepare_attempt_statements() {
    const std::string attempt_columns{kAttemptColumns};
    const std::string live_states{kLiveStates};
    connection_.prepare(kNextAttemptNo,
                        "SELECT COALESCE(max(attempt_no), 0) + 1 FROM attempts WHERE job_id = $1");
    connection_.prepare(kInsertAttempt,
                        "INSERT INTO attempts (job_id, attempt_no, provider, provider_key,"
                        " origin, created_at_us) VALUES ($1, $2, $3, $4, $5, $6) RETURNING " +
                            attempt_columns);
    connection_.prepare(kLiveAttemptOfJob,
                        "SELECT id FROM attempts WHERE job_id = $1"
                        " AND state IN " +
                            live_states);
    connection_.prepare(kFindAttempt, "SELECT " + attempt_columns + " FROM attempts WHERE id = $1");
    connection_.prepare(kFindAction,
                        "SELECT request_fingerprint, attempt_id FROM action_keys"
                        " WHERE owner_id = $1 AND idempotency_key = $2");
    // A concurrent action with the same key waits on the primary key, then writes nothing.
    connection_.prepare(kInsertAction,
                        "INSERT INTO action_keys (owner_id, idempotency_key, request_fingerprint,"
                        " attempt_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING");
    connection_.prepare(kLockAttempt,
                        "SELECT " + attempt_columns + " FROM attempts WHERE id = $1 FOR UPDATE");
    connection_.prepare(kWriteAttempt,
                        "UPDATE attempts SET state = $2, lease_owner = $3, lease_token = $4,"
                        " finished_at_us = $5, outcome_reason = $6, result = $7 WHERE id = $1"
                        " RETURNING " +
                            attempt_columns);
    connection_.prepare(kListAttempts, "SELECT " + attempt_columns +
                                           " FROM attempts WHERE job_id = $1 ORDER BY attempt_no");
    connection_.prepare(kAttemptsInState, "SELECT " + attempt_columns +
                                              " FROM attempts WHERE state = $1 ORDER BY id");
    connection_.prepare(kExpiredLeases, "SELECT " + attempt_columns +
                                            " FROM attempts WHERE state = 'RUNNING'"
                                            " AND lease_expires_at_us <= $1 ORDER BY id");
    // SKIP LOCKED: a worker passes over an attempt another worker is claiming right now rather
    // than queueing behind it; the outer state check re-reads the row once it is locked.
    connection_.prepare(kClaimAttempt,
                        "UPDATE attempts SET state = 'RUNNING', lease_owner = $1,"
                        " lease_token = lease_token + 1, lease_expires_at_us = $2"
                        " WHERE id = (SELECT id FROM attempts WHERE state = 'STARTING'"
                        " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) AND state = 'STARTING'"
                        " RETURNING " +
                            attempt_columns);
  }

  static std::optional<ActionRecord> find_action_in(pqxx::transaction_base& tx,
                                                    const std::string& owner_id,
                                                    const std::string& key) {
    const pqxx::result found = exec(tx, kFindAction, owner_id, key);
    if (found.empty()) return std::nullopt;
    return ActionRecord{found[0][0].as<std::string>(), found[0][1].as<AttemptId>()};
  }

  // Whether this transaction recorded the key (false: another holds it).
  static bool record_action(pqxx::work& tx, const ActionKey& key, AttemptId attempt) {
    return exec0(tx, kInsertAction, key.owner_id, key.idempotency_key, key.request_fingerprint,
                 attempt)
               .affected_rows() == 1;
  }

  static Attempt insert_attempt_row(pqxx::work& tx, JobId job_id, int attempt_no,
                                    const std::string& provider, AttemptOrigin origin,
                                    Instant created_at) {
    return attempt_from_row(exec1(tx, kInsertAttempt, job_id, attempt_no, provider,
                                  derive_provider_key(job_id, attempt_no),
                                  std::string{to_string(origin)}, to_us(created_at)));
  }

  static Attempt write_attempt(pqxx::work& tx, const Attempt& attempt) {
    const NullableParam finished_at{attempt.finished_at ? std::optional{to_us(*attempt.finished_at)}
                                                        : std::nullopt};
    return attempt_from_row(exec1(
        tx, kWriteAttempt, attempt.id, std::string{to_string(attempt.state)}, attempt.lease_owner,
        attempt.lease_token, finished_at.get(), attempt.outcome_reason, attempt.result));
  }

  static Job load_job_in(pqxx::work& tx, JobId id) {
    // attempts.job_id REFERENCES jobs: an attempt's job always exists.
    return job_from_row(exec1(tx, kLoadJob, id));
  }

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

Async<std::optional<Job>> PgStore::load_job(JobId id) { co_return session_->load_job(id); }

// `at` has no column: MemoryStore does not keep it either.
Async<bool> PgStore::fail_job(JobId id, std::string reason, Instant) {
  co_return session_->fail_job(id, reason);
}

Async<InsertAttemptResult> PgStore::insert_attempt(NewAttempt attempt) {
  co_return session_->insert_attempt(attempt);
}

Async<std::optional<Attempt>> PgStore::find_attempt(AttemptId id) {
  co_return session_->find_attempt(id);
}

Async<std::optional<ActionRecord>> PgStore::find_action(std::string owner_id,
                                                        std::string idempotency_key) {
  co_return session_->find_action(owner_id, idempotency_key);
}

Async<std::vector<Attempt>> PgStore::list_attempts(JobId job_id) {
  co_return session_->list_attempts(job_id);
}

Async<std::vector<Attempt>> PgStore::find_attempts_in_state(AttemptState state) {
  co_return session_->find_attempts_in_state(state);
}

Async<std::vector<Job>> PgStore::find_idle_jobs() { co_return session_->find_idle_jobs(); }

Async<std::vector<Attempt>> PgStore::find_expired_leases(Instant now) {
  co_return session_->find_expired_leases(now);
}

// `now` changes nothing a claim writes (RUNNING is live, so finished_at stays unset), as in
// MemoryStore.
Async<std::optional<Attempt>> PgStore::claim_next_attempt(std::string worker, Instant,
                                                          Instant lease_expires_at) {
  co_return session_->claim_next_attempt(worker, lease_expires_at);
}

Async<UpdateAttemptResult> PgStore::update_attempt(AttemptUpdate update) {
  co_return session_->update_attempt(update);
}

Async<CompleteAttemptResult> PgStore::complete_attempt(CompleteAttempt completion) {
  co_return session_->complete_attempt(completion);
}

Async<void> PgStore::record_certification(Certification certification) {
  session_->record_certification(certification);
  co_return;
}

Async<std::optional<Certification>> PgStore::latest_certification(std::string provider) {
  co_return session_->latest_certification(provider);
}

}  // namespace onejob
