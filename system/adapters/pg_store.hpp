#pragma once

#include <memory>
#include <optional>
#include <string>

#include "system/ports/store.hpp"

namespace onejob {

// The durable store on PostgreSQL (libpqxx), with the schema of pg_schema_sql().
//
// Every call does its database round trips synchronously and only then completes: it never
// suspends, so it blocks the thread running the io_context for that long, and to the caller
// (and to the simulator) each call is one atomic step. One connection, serialized by a mutex,
// so calls from several threads are safe but do not run in parallel.
//
// Errors other than the unique violation are thrown, not returned, because the Store port has
// no outcome for them yet: pqxx::broken_connection (nothing was committed), and from
// insert_job pqxx::in_doubt_error (the COMMIT was sent but its reply was lost: the row may or
// may not exist; read it back by key to find out). All derive from std::exception.
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

 private:
  // Defined in pg_store.cpp, so that only that file pays for (and sees) libpqxx.
  class Session;
  std::unique_ptr<Session> session_;
};

}  // namespace onejob
