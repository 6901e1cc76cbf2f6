#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "system/ports/store.hpp"

namespace onejob {

// The durable store on PostgreSQL (libpqxx), with the schema of pg_schema_sql(). It gives the
// semantics MemoryStore models, with the database's constraints doing the refusing.
//
// Every call does its database round trips synchronously and only then completes: it never
// suspends, so it blocks the thread running the io_context for that long, and to the caller
// (and to the simulator) each call is one atomic step. One connection, serialized by a mutex,
// so calls from several threads are safe but do not run in parallel. Several PgStores (several
// processes) may share one database: every operation is one READ COMMITTED transaction whose
// row locks make it atomic against the others.
//
// Errors other than the outcomes the port names are thrown, not returned, because the Store
// port has no outcome for them yet: pqxx::broken_connection (nothing was committed), and from a
// writing call pqxx::in_doubt_error (the COMMIT was sent but its reply was lost: it may or may
// not have happened; read the rows back to find out). IllegalTransition and std::logic_error
// as the port documents them for update_attempt and complete_attempt; the transaction is then
// rolled back, so nothing was written. All derive from std::exception.
//
// Strings are PostgreSQL text: UTF-8 without NUL bytes. A string with a NUL byte throws
// std::invalid_argument before anything is sent (libpq would silently cut it there, so two
// keys differing after it would name one job); invalid UTF-8 is refused by the server
// (pqxx::data_exception). MemoryStore accepts both.
class PgStore final : public Store {
 public:
  // `connection_string` is anything libpq accepts ("host=... dbname=..." or a postgresql://
  // URI); the PG* environment variables fill in what it leaves out. Connects immediately and
  // throws pqxx::broken_connection if it cannot.
  explicit PgStore(const std::string& connection_string);
  ~PgStore() override;
  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;

  // Runs pg_schema_sql() in one transaction. Safe to repeat and to run from several processes
  // at once.
  void apply_schema();

  Async<InsertJobResult> insert_job(NewJob job) override;
  Async<std::optional<Job>> find_job_by_key(std::string owner_id,
                                            std::string idempotency_key) override;
  Async<std::optional<Job>> find_job(std::string owner_id, JobId id) override;
  Async<std::optional<Job>> load_job(JobId id) override;
  Async<bool> fail_job(JobId id, std::string reason, Instant at) override;

  Async<InsertAttemptResult> insert_attempt(NewAttempt attempt) override;
  Async<std::optional<Attempt>> find_attempt(AttemptId id) override;
  Async<std::optional<ActionRecord>> find_action(std::string owner_id,
                                                 std::string idempotency_key) override;
  Async<std::vector<Attempt>> list_attempts(JobId job_id) override;
  Async<std::vector<Attempt>> find_attempts_in_state(AttemptState state) override;
  Async<std::vector<Job>> find_idle_jobs() override;
  Async<std::vector<Attempt>> find_expired_leases(Instant now) override;
  Async<std::optional<Attempt>> claim_next_attempt(std::string worker, Instant now,
                                                   Instant lease_expires_at) override;
  Async<UpdateAttemptResult> update_attempt(AttemptUpdate update) override;
  Async<CompleteAttemptResult> complete_attempt(CompleteAttempt completion) override;

  Async<void> record_certification(Certification certification) override;
  Async<std::optional<Certification>> latest_certification(std::string provider) override;

 private:
  // Defined in pg_store.cpp, so that only that file pays for (and sees) libpqxx.
  class Session;
  std::unique_ptr<Session> session_;
};

}  // namespace onejob
