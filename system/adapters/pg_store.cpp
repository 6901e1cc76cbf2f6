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

#include "system/adapters/pg_connection.hpp"
#include "system/adapters/pg_rows.hpp"
#include "system/adapters/pg_schema.hpp"
#include "system/adapters/pg_statements.hpp"
#include "system/domain/check.hpp"

namespace onejob {
namespace {

using pg::Effect;
using namespace pg::statement;  // the prepared statements' names

constexpr std::string_view kOneLiveAttemptIndex = "attempts_one_live_per_job";

// A refused insert_attempt reads its blocker afterwards; if that attempt left the live states in
// between, the refusal no longer describes the database and the insert is tried again. Each
// retry needs another attempt to finish inside a few milliseconds, so a handful is plenty.
constexpr int kInsertAttemptTries = 8;

// pqxx 6.4 does not expose the violated constraint's name; PostgreSQL's message quotes it.
bool violates(const pqxx::unique_violation& e, std::string_view constraint) {
  return std::string_view{e.what()}.find("\"" + std::string{constraint} + "\"") !=
         std::string_view::npos;
}

// Every statement goes through these three, so no text parameter with a NUL byte is ever sent.
template <typename... Args>
pqxx::result exec(pqxx::transaction_base& tx, const char* statement, const Args&... args) {
  (pg::require_no_nul(statement, args), ...);
  return tx.exec_prepared(statement, args...);
}

// Exactly one row, or pqxx::unexpected_rows.
template <typename... Args>
pqxx::row exec1(pqxx::transaction_base& tx, const char* statement, const Args&... args) {
  (pg::require_no_nul(statement, args), ...);
  return tx.exec_prepared1(statement, args...);
}

// No rows returned; affected_rows() tells what a write changed.
template <typename... Args>
pqxx::result exec0(pqxx::transaction_base& tx, const char* statement, const Args&... args) {
  (pg::require_no_nul(statement, args), ...);
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

// The states from which `to` is a legal transition, as the text[] onejob_complete_attempt takes.
std::string states_that_may_become(AttemptState to) {
  std::vector<AttemptState> from;
  for (const auto& [a, b] : legal_attempt_transitions()) {
    if (b == to) from.push_back(a);
  }
  return pg::to_text_array(from);
}

// onejob_complete_attempt refused an illegal transition (SQLSTATE OJ001, "<from> <to>").
[[noreturn]] void throw_illegal_transition(const pqxx::sql_error& error) {
  std::string_view text{error.what()};
  const std::size_t colon = text.find(":  ");
  if (colon != std::string_view::npos) text.remove_prefix(colon + 3);
  text = text.substr(0, text.find('\n'));
  const std::size_t blank = text.find(' ');
  const auto from = parse_attempt_state(std::string{text.substr(0, blank)});
  const auto to = blank == std::string_view::npos
                      ? std::nullopt
                      : parse_attempt_state(std::string{text.substr(blank + 1)});
  if (!from || !to) throw std::logic_error(std::string{"complete_attempt: "} + error.what());
  throw IllegalTransition(*from, *to);
}

}  // namespace

// The blocking half of PgStore: one connection and the statements on it. Each public method is
// one transaction (insert_attempt may retry, see kInsertAttemptTries); reads and the one-
// statement writes run in autocommit (one statement = one transaction), so under READ COMMITTED
// each takes a fresh snapshot and sees every row committed before it started, in particular the
// row whose unique violation the caller just hit.
class PgStore::Session {
 public:
  explicit Session(PgStoreOptions options)
      : connection_{std::move(options), pg::prepare_statements} {}

  void migrate() {
    const std::lock_guard lock{mutex_};
    connection_.run(
        "migrate", Effect::transaction,
        [](pqxx::connection& c) {
          pg::apply_migrations(c);
          return 0;
        },
        PgStore::kMigrateReplyTimeout);
  }

  int schema_version() {
    const std::lock_guard lock{mutex_};
    return connection_.run("schema_version", Effect::read, pg::schema_version);
  }

  void clear() {
    const std::lock_guard lock{mutex_};
    connection_.run("clear", Effect::transaction, [](pqxx::connection& c) {
      pg::delete_all_rows(c);
      return 0;
    });
  }

  // ---- jobs ----------------------------------------------------------------------------------

  InsertJobResult insert_job(NewJob new_job) {
    const std::lock_guard lock{mutex_};
    return connection_.run("insert_job", Effect::statement, [&](pqxx::connection& c) {
      pqxx::nontransaction tx{c};
      const pqxx::result created = exec(
          tx, kCreateJob, new_job.owner_id, new_job.idempotency_key, new_job.request_fingerprint,
          new_job.operation, new_job.target_provider, pg::to_text_array(new_job.failover),
          new_job.input_json, new_job.payload_json, pg::to_us(new_job.created_at));
      if (created.empty()) {
        // The constraint decided: another create holds (owner_id, idempotency_key). The caller
        // reads that job with find_job_by_key, in a new statement that sees it committed.
        return InsertJobResult{InsertJobResult::Outcome::unique_violation, std::nullopt,
                               std::nullopt};
      }
      ONEJOB_ASSERT(created.size() == 1, "a create inserts one job or, on a taken key, none");
      // The rest of both rows is what the statement wrote: the inputs and the schema's defaults.
      const JobId id = created[0][0].as<JobId>();
      Attempt first = starting_attempt(created[0][1].as<AttemptId>(), id, 1,
                                       new_job.target_provider, created[0][2].as<std::string>(),
                                       AttemptOrigin::initial, new_job.created_at);
      Job job = created_job(std::move(new_job), id);
      return InsertJobResult{InsertJobResult::Outcome::inserted, std::move(job), std::move(first)};
    });
  }

  std::optional<Job> find_job_by_key(const std::string& owner_id,
                                     const std::string& idempotency_key) {
    return read_one("find_job_by_key", pg::job_from_row, kFindJobByKey, owner_id, idempotency_key);
  }

  std::optional<Job> find_job(const std::string& owner_id, JobId id) {
    return read_one("find_job", pg::job_from_row, kFindJob, id, owner_id);
  }

  std::optional<Job> load_job(JobId id) {
    return read_one("load_job", pg::job_from_row, kLoadJob, id);
  }

  bool fail_job(JobId id, const std::string& reason) {
    const std::lock_guard lock{mutex_};
    return connection_.run("fail_job", Effect::transaction, [&](pqxx::connection& c) {
      pqxx::work tx{c};
      // Holding the job row first matters: live attempts are only ever created under that lock
      // (insert_attempt) or together with the job, so none can appear between the check below
      // and the write. A single UPDATE would re-check a concurrently changed job row against
      // its old snapshot of attempts and could fail a job that just got a live attempt.
      if (exec(tx, kLockJob, id).empty()) return false;
      const auto changed_rows = exec0(tx, kFailJob, id, reason).affected_rows();
      ONEJOB_ASSERT(changed_rows <= 1, "failing a job by its primary key changes one row at most");
      const bool changed = changed_rows == 1;
      tx.commit();
      return changed;
    });
  }

  // ---- attempts ------------------------------------------------------------------------------

  std::optional<ActionRecord> find_action(const std::string& owner_id, const std::string& key) {
    const std::lock_guard lock{mutex_};
    return connection_.run("find_action", Effect::read, [&](pqxx::connection& c) {
      pqxx::nontransaction tx{c};
      return find_action_in(tx, owner_id, key);
    });
  }

  InsertAttemptResult insert_attempt(const NewAttempt& new_attempt) {
    const std::lock_guard lock{mutex_};
    return connection_.run("insert_attempt", Effect::transaction,
                           [&](pqxx::connection& c) { return insert_attempt_on(c, new_attempt); });
  }

  std::optional<Attempt> find_attempt(AttemptId id) {
    return read_one("find_attempt", pg::attempt_from_row, kFindAttempt, id);
  }

  std::vector<Attempt> list_attempts(JobId job_id) {
    return read_all("list_attempts", pg::attempts_from, kListAttempts, job_id);
  }

  std::vector<Attempt> find_attempts_in_state(AttemptState state) {
    return read_all("find_attempts_in_state", pg::attempts_from, kAttemptsInState,
                    std::string{to_string(state)});
  }

  std::vector<Job> find_idle_jobs() { return read_all("find_idle_jobs", pg::jobs_from, kIdleJobs); }

  std::vector<Attempt> find_expired_leases(Instant now) {
    return read_all("find_expired_leases", pg::attempts_from, kExpiredLeases, pg::to_us(now));
  }

  SweepWork find_sweep_work(Instant now) {
    return read_all("find_sweep_work", pg::sweep_work_from, kSweepWork, pg::to_us(now));
  }

  std::optional<Attempt> claim_next_attempt(const std::string& worker, Instant lease_expires_at) {
    const std::lock_guard lock{mutex_};
    return connection_.run("claim_next_attempt", Effect::statement, [&](pqxx::connection& c) {
      pqxx::nontransaction tx{c};
      return pg::at_most_one(exec(tx, kClaimAttempt, worker, pg::to_us(lease_expires_at)),
                             pg::attempt_from_row);
    });
  }

  UpdateAttemptResult update_attempt(const AttemptUpdate& update) {
    using Outcome = UpdateAttemptResult::Outcome;
    if (update.to == AttemptState::succeeded || update.to == AttemptState::discarded) {
      throw std::logic_error(
          "an attempt reaches SUCCEEDED or DISCARDED only through "
          "complete_attempt (the job's compare-and-swap)");
    }
    const std::lock_guard lock{mutex_};
    return connection_.run("update_attempt", Effect::transaction, [&](pqxx::connection& c) {
      {
        auto applied = update_attempt_in_transaction(c, update);
        if (applied.outcome != Outcome::key_exists || applied.recorded) return applied;
      }  // the same key won meanwhile: this transaction rolled back
      pqxx::nontransaction read{c};
      return UpdateAttemptResult{
          Outcome::key_exists,
          {},
          {},
          find_action_in(read, update.key->owner_id, update.key->idempotency_key)};
    });
  }

  CompleteAttemptResult complete_attempt(const CompleteAttempt& completion) {
    using Outcome = CompleteAttemptResult::Outcome;
    const std::lock_guard lock{mutex_};
    return connection_.run("complete_attempt", Effect::statement, [&](pqxx::connection& c) {
      // Computed once: the transition table does not change while the program runs.
      static const std::string may_win = states_that_may_become(AttemptState::succeeded);
      static const std::string may_lose = states_that_may_become(AttemptState::discarded);
      pqxx::nontransaction tx{c};
      const pg::NullableParam fence{completion.fence};
      pqxx::row row;
      try {
        row = exec1(tx, kCompleteAttempt, completion.attempt_id, completion.job_id,
                    completion.expected_version, pg::to_text_array(completion.from), fence.get(),
                    completion.result, pg::to_us(completion.at), may_win, may_lose);
      } catch (const pqxx::sql_error& error) {
        if (error.sqlstate() == "OJ001") throw_illegal_transition(error);
        throw;
      }
      const std::string outcome = row[0].as<std::string>();
      if (outcome == "not_found") return CompleteAttemptResult{Outcome::not_found, {}, {}, {}};
      CompleteAttemptResult result{Outcome::not_found, pg::job_from_row(row, 2),
                                   pg::attempt_from_row(row, 2 + pg::kJobColumnCount),
                                   parse_attempt_state(row[1].as<std::string>())};
      ONEJOB_ASSERT(result.before.has_value(), "the completion names the state it found");
      if (outcome == "won") {
        result.outcome = Outcome::won;
      } else if (outcome == "lost") {
        result.outcome = Outcome::lost;
      } else if (outcome == "fenced") {
        result.outcome = Outcome::fenced;
      } else if (outcome == "state_mismatch") {
        result.outcome = Outcome::state_mismatch;
      } else {
        throw StoreError(
            StoreError::Kind::unavailable,
            "postgres: complete_attempt answered an unknown outcome '" + outcome + "'");
      }
      return result;
    });
  }

  // ---- certifications ------------------------------------------------------------------------

  void record_certification(const Certification& certification) {
    const std::lock_guard lock{mutex_};
    connection_.run("record_certification", Effect::statement, [&](pqxx::connection& c) {
      pqxx::nontransaction tx{c};
      exec0(tx, kInsertCertification, certification.provider, certification.passed,
            pg::to_text_array(certification.reasons), pg::to_us(certification.at));
      return 0;
    });
  }

  std::optional<Certification> latest_certification(const std::string& provider) {
    const std::lock_guard lock{mutex_};
    return connection_.run("latest_certification", Effect::read,
                           [&](pqxx::connection& c) -> std::optional<Certification> {
                             pqxx::nontransaction tx{c};
                             const pqxx::result found = exec(tx, kLatestCertification, provider);
                             if (found.empty()) return std::nullopt;
                             const pqxx::row row = found[0];
                             return Certification{
                                 .provider = row[0].as<std::string>(),
                                 .passed = row[1].as<bool>(),
                                 .reasons = pg::from_text_array(row[2]),
                                 .at = pg::from_us(row[3]),
                             };
                           });
  }

 private:
  // A read by a unique key, in autocommit.
  template <typename T, typename... Args>
  std::optional<T> read_one(const char* operation, T (*from_row)(const pqxx::row&, int),
                            const char* statement, const Args&... args) {
    const std::lock_guard lock{mutex_};
    return connection_.run(operation, Effect::read, [&](pqxx::connection& c) {
      pqxx::nontransaction tx{c};
      return pg::at_most_one(exec(tx, statement, args...), from_row);
    });
  }

  // A read of whole result sets, in autocommit: `from(result)` is what it returns.
  template <typename T, typename... Args>
  T read_all(const char* operation, T (*from)(const pqxx::result&), const char* statement,
             const Args&... args) {
    const std::lock_guard lock{mutex_};
    return connection_.run(operation, Effect::read, [&](pqxx::connection& c) {
      pqxx::nontransaction tx{c};
      return from(exec(tx, statement, args...));
    });
  }

  static InsertAttemptResult insert_attempt_on(pqxx::connection& c, const NewAttempt& new_attempt) {
    using Outcome = InsertAttemptResult::Outcome;
    for (int tries = 1;; ++tries) {
      bool key_lost = false;
      {
        pqxx::work tx{c};
        if (new_attempt.key) {
          if (auto recorded =
                  find_action_in(tx, new_attempt.key->owner_id, new_attempt.key->idempotency_key)) {
            return InsertAttemptResult{Outcome::key_exists, {}, {}, std::move(recorded)};
          }
        }
        // The job row lock keeps a winner (complete_attempt) or another insert from landing
        // between these reads and the insert, so job_completed, the live attempt and
        // max(attempt_no) stay true: live attempts are only created under this lock or with
        // the job itself.
        const pqxx::result job = exec(tx, kLockJob, new_attempt.job_id);
        if (job.empty()) return InsertAttemptResult{Outcome::job_not_found, {}, {}};
        // Again under the lock: a twin request with the same key (a double click) that held it
        // has committed its attempt and its key by now, and this statement's snapshot sees them.
        // Without this look the twin's attempt would read as a live attempt: 409, not a replay.
        if (new_attempt.key) {
          if (auto recorded =
                  find_action_in(tx, new_attempt.key->owner_id, new_attempt.key->idempotency_key)) {
            return InsertAttemptResult{Outcome::key_exists, {}, {}, std::move(recorded)};
          }
        }
        if (!job[0][0].is_null()) return InsertAttemptResult{Outcome::job_completed, {}, {}};
        if (new_attempt.origin == AttemptOrigin::failover &&
            job[0][1].as<std::string>() == to_string(JobStatus::failed)) {
          return InsertAttemptResult{Outcome::job_failed, {}, {}};
        }
        // Looked up before inserting, so a refused insert spends no attempt id (the sequence
        // stays where MemoryStore's does); the index below still refuses whatever slips past.
        const pqxx::result live = exec(tx, kLiveAttemptOfJob, new_attempt.job_id);
        if (!live.empty()) {
          return InsertAttemptResult{Outcome::live_attempt_exists, {}, live[0][0].as<AttemptId>()};
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
      pqxx::nontransaction read{c};
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
        throw StoreError(StoreError::Kind::conflict, "postgres: insert_attempt: job " +
                                                         std::to_string(new_attempt.job_id) +
                                                         " kept getting and losing a live attempt");
      }
    }
  }

  // update_attempt's transaction; key_exists without `recorded` when the key was taken after
  // the check (the transaction then rolls back).
  static UpdateAttemptResult update_attempt_in_transaction(pqxx::connection& c,
                                                           const AttemptUpdate& update) {
    using Outcome = UpdateAttemptResult::Outcome;
    pqxx::work tx{c};
    if (update.key) {
      if (auto recorded = find_action_in(tx, update.key->owner_id, update.key->idempotency_key)) {
        return UpdateAttemptResult{Outcome::key_exists, {}, {}, std::move(recorded)};
      }
    }
    std::optional<Attempt> attempt =
        pg::at_most_one(exec(tx, kLockAttempt, update.attempt_id), pg::attempt_from_row);
    if (!attempt) return UpdateAttemptResult{Outcome::not_found, {}, {}};
    // Again under the row lock: a twin request with the same key (a double-clicked cancel) that
    // held it has committed its transition and its key by now, and this statement's snapshot
    // sees them. Without this look the twin's transition would read as a state mismatch (409).
    if (update.key) {
      if (auto recorded = find_action_in(tx, update.key->owner_id, update.key->idempotency_key)) {
        return UpdateAttemptResult{Outcome::key_exists, {}, {}, std::move(recorded)};
      }
    }
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
    return pg::attempt_from_row(exec1(tx, kInsertAttempt, job_id, attempt_no, provider,
                                      derive_provider_key(job_id, attempt_no),
                                      std::string{to_string(origin)}, pg::to_us(created_at)));
  }

  static Attempt write_attempt(pqxx::work& tx, const Attempt& attempt) {
    const pg::NullableParam finished_at{
        attempt.finished_at ? std::optional{pg::to_us(*attempt.finished_at)} : std::nullopt};
    return pg::attempt_from_row(exec1(
        tx, kWriteAttempt, attempt.id, std::string{to_string(attempt.state)}, attempt.lease_owner,
        attempt.lease_token, finished_at.get(), attempt.outcome_reason, attempt.result));
  }

  std::mutex mutex_;  // a libpqxx connection is not thread-safe
  pg::Connection connection_;
};

PgStore::PgStore(const std::string& connection_string)
    : PgStore([&connection_string] {
        PgStoreOptions options;
        options.connection_string = connection_string;
        return options;
      }()) {}

PgStore::PgStore(PgStoreOptions options)
    : session_{std::make_unique<Session>(std::move(options))} {}

PgStore::~PgStore() = default;

void PgStore::migrate() { session_->migrate(); }

int PgStore::schema_version() { return session_->schema_version(); }
void PgStore::clear() { session_->clear(); }
Async<InsertJobResult> PgStore::insert_job(NewJob job) {
  co_return session_->insert_job(std::move(job));
}

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

Async<SweepWork> PgStore::find_sweep_work(Instant now) { co_return session_->find_sweep_work(now); }

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
