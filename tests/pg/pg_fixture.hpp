#pragma once

// Shared by the PostgreSQL test files: the fixture that gives each test case its own schema,
// the helper that runs one store call to completion, and raw-SQL helpers that bypass PgStore.

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>

#include "system/adapters/pg_store.hpp"

#include "tests/support/run_sync.hpp"

namespace onejob::pg_test {

// The database under test, from ONEJOB_PG_URL (set by .ci/with-postgres); empty when unset.
std::string pg_url();

// Runs one store operation to completion and returns its value (or rethrows its exception).
template <typename T>
T run(Async<T> operation) {
  return test::run_sync(std::move(operation));
}

inline Instant at_us(std::int64_t us) { return Instant{Duration{us}}; }
inline std::int64_t us_of(Instant at) { return at.time_since_epoch().count(); }

// Readable names for the outcomes, so a failed BOOST_TEST shows which one came back.
std::string_view outcome_name(InsertJobResult::Outcome outcome);
std::string_view outcome_name(InsertAttemptResult::Outcome outcome);
std::string_view outcome_name(UpdateAttemptResult::Outcome outcome);
std::string_view outcome_name(CompleteAttemptResult::Outcome outcome);

NewJob new_job(std::string owner_id, std::string idempotency_key,
               std::string payload_json = R"({"text":"hello"})");

// Whether a unique violation (SQLSTATE 23505) was raised by `constraint`.
bool names_constraint(const pqxx::unique_violation& e, std::string_view constraint);

// SELECT count(*) with one bigint parameter, e.g. "SELECT count(*) FROM attempts WHERE
// job_id = $1".
std::int64_t count_rows(pqxx::connection& connection, const std::string& query, std::int64_t id);
// The job's attempt rows, whatever their state.
std::int64_t count_attempts(pqxx::connection& connection, JobId job_id);
// The server process behind `connection`.
int backend_pid(pqxx::connection& connection);

// ---- shared store calls (each runs to completion; BOOST_REQUIRE where a value must exist) --

struct Created {
  Job job;
  Attempt first;
};

Created create_job(PgStore& store, const std::string& key);
Attempt claim(PgStore& store, const std::string& worker, std::int64_t lease_expires_us);
UpdateAttemptResult update(PgStore& store, AttemptId id, std::vector<AttemptState> from,
                           AttemptState to, std::optional<std::int64_t> fence,
                           std::string reason = {}, std::int64_t at = 500,
                           std::optional<std::string> take_over_as = std::nullopt);
CompleteAttemptResult complete(PgStore& store, const Attempt& attempt,
                               std::int64_t expected_version, std::vector<AttemptState> from,
                               std::optional<std::int64_t> fence, std::string result,
                               std::int64_t at = 700);
InsertAttemptResult add_attempt(PgStore& store, JobId job_id, std::string provider = "provider-b",
                                std::int64_t at = 600);
Attempt find(PgStore& store, AttemptId id);
Job load(PgStore& store, JobId id);

// A fresh schema per test case, so cases never see each other's rows or sequence values, and a
// developer database the URL points at is never touched outside it. Connections find it
// through PGOPTIONS (libpq reads it when the connection string sets no `options`), which works
// for key=value strings and URIs alike; a PgStore a test creates itself lands there too.
class PgFixture {
 public:
  PgFixture();
  ~PgFixture();
  PgFixture(const PgFixture&) = delete;
  PgFixture& operator=(const PgFixture&) = delete;

  PgStore& store() { return *store_; }
  pqxx::connection& raw() { return *raw_; }
  // A connection outside the test's schema, for watching and killing other backends.
  pqxx::connection& admin() { return admin_; }
  const std::string& schema() const { return schema_; }

 private:
  // If ONEJOB_PG_URL carries its own `options`, PGOPTIONS is ignored and the tests would run in
  // (and drop tables of) some other schema: refuse instead.
  void require_own_schema();

  std::string schema_;
  pqxx::connection admin_;
  std::unique_ptr<pqxx::connection> raw_;
  std::unique_ptr<PgStore> store_;
};

}  // namespace onejob::pg_test
