// PgStore and the jobs schema against a live PostgreSQL (ONEJOB_PG_URL; see .ci/with-postgres).
// Each test case gets its own freshly created schema, so cases never see each other's rows or
// sequence values, and a developer database the URL points at is never touched outside it.
#define BOOST_TEST_MODULE onejob_pg
#define BOOST_TEST_NO_MAIN

#include "system/adapters/pg_store.hpp"

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>
#include <pqxx/pqxx>
#include <unistd.h>

#include "system/adapters/pg_schema.hpp"

#include "harness/scenario/runner.hpp"

#include "tests/support/scenarios.hpp"

namespace {

using onejob::InsertJobResult;
using onejob::Job;
using onejob::JobId;
using onejob::NewJob;

std::string pg_url() {
  const char* url = std::getenv("ONEJOB_PG_URL");
  return url == nullptr ? std::string{} : std::string{url};
}

// Runs one store operation to completion on a private io_context and returns its value (or
// rethrows its exception).
template <typename T>
T run(onejob::Async<T> operation) {
  boost::asio::io_context io;
  std::optional<T> result;
  std::exception_ptr error;
  boost::asio::co_spawn(io, std::move(operation), [&](std::exception_ptr e, T value) {
    error = e;
    if (!e) result.emplace(std::move(value));
  });
  io.run();
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

std::string_view outcome_name(InsertJobResult::Outcome outcome) {
  switch (outcome) {
    case InsertJobResult::Outcome::inserted:
      return "inserted";
    case InsertJobResult::Outcome::unique_violation:
      return "unique_violation";
  }
  return "invalid";
}

NewJob new_job(std::string owner_id, std::string idempotency_key,
               std::string payload_json = R"({"text":"hello"})") {
  return NewJob{
      .owner_id = std::move(owner_id),
      .idempotency_key = std::move(idempotency_key),
      .request_fingerprint = "POST /jobs\n" + payload_json,
      .operation = "summarize",
      .target_provider = "provider-a",
      .payload_json = payload_json,
      .created_at = onejob::Instant{onejob::Duration{1'234'567}},
  };
}

// A raw INSERT, bypassing PgStore: what any client of the database could do.
JobId insert_row(pqxx::transaction_base& tx, const std::string& owner_id,
                 const std::string& idempotency_key, const std::string& payload_json = "{}") {
  return tx
      .exec_params1(
          "INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, operation,"
          " target_provider, payload_json, created_at_us)"
          " VALUES ($1, $2, $3, 'summarize', 'provider-a', $4, 42) RETURNING id",
          owner_id, idempotency_key, "POST /jobs\n" + payload_json, payload_json)[0]
      .as<JobId>();
}

JobId insert_committed_row(pqxx::connection& connection, const std::string& owner_id,
                           const std::string& idempotency_key,
                           const std::string& payload_json = "{}") {
  pqxx::work tx{connection};
  const JobId id = insert_row(tx, owner_id, idempotency_key, payload_json);
  tx.commit();
  return id;
}

std::int64_t count_jobs(pqxx::connection& connection, const std::string& owner_id,
                        const std::string& idempotency_key) {
  pqxx::nontransaction tx{connection};
  return tx
      .exec_params1("SELECT count(*) FROM jobs WHERE owner_id = $1 AND idempotency_key = $2",
                    owner_id, idempotency_key)[0]
      .as<std::int64_t>();
}

bool names_owner_key_constraint(const pqxx::unique_violation& e) {
  return e.sqlstate() == "23505" &&
         std::string_view{e.what()}.find("jobs_owner_key_unique") != std::string_view::npos;
}

void check_same_job(const Job& actual, const Job& expected) {
  BOOST_TEST(actual.id == expected.id);
  BOOST_TEST(actual.owner_id == expected.owner_id);
  BOOST_TEST(actual.idempotency_key == expected.idempotency_key);
  BOOST_TEST(actual.request_fingerprint == expected.request_fingerprint);
  BOOST_TEST(actual.operation == expected.operation);
  BOOST_TEST(actual.target_provider == expected.target_provider);
  BOOST_TEST(actual.payload_json == expected.payload_json);
  BOOST_TEST(onejob::to_string(actual.status) == onejob::to_string(expected.status));
  BOOST_TEST(actual.version == expected.version);
  BOOST_TEST(actual.created_at.time_since_epoch().count() ==
             expected.created_at.time_since_epoch().count());
}

// A fresh schema per test case. Connections find it through PGOPTIONS (libpq reads it when the
// connection string sets no `options`), which works for key=value strings and URIs alike.
class PgFixture {
 public:
  PgFixture() : schema_{next_schema_name()}, admin_{pg_url()} {
    {
      pqxx::nontransaction tx{admin_};
      const std::string name = tx.quote_name(schema_);
      // A crashed earlier run with the same pid may have left it behind.
      tx.exec("DROP SCHEMA IF EXISTS " + name + " CASCADE");
      tx.exec("CREATE SCHEMA " + name);
    }
    ::setenv("PGOPTIONS", ("-c search_path=" + schema_).c_str(), 1);
    raw_ = std::make_unique<pqxx::connection>(pg_url());
    require_own_schema();
    store_ = std::make_unique<onejob::PgStore>(pg_url());
    store_->apply_schema();
  }

  ~PgFixture() {
    store_.reset();
    raw_.reset();
    ::unsetenv("PGOPTIONS");
    try {
      pqxx::nontransaction tx{admin_};
      tx.exec("DROP SCHEMA " + tx.quote_name(schema_) + " CASCADE");
    } catch (const std::exception& e) {
      BOOST_TEST_MESSAGE("could not drop schema " << schema_ << ": " << e.what());
    }
  }

  PgFixture(const PgFixture&) = delete;
  PgFixture& operator=(const PgFixture&) = delete;

  onejob::PgStore& store() { return *store_; }
  pqxx::connection& raw() { return *raw_; }

 private:
  static std::string next_schema_name() {
    static int counter = 0;
    return "onejob_test_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
  }

  // If ONEJOB_PG_URL carries its own `options`, PGOPTIONS is ignored and the tests would run in
  // (and drop tables of) some other schema: refuse instead.
  void require_own_schema() {
    pqxx::nontransaction tx{*raw_};
    const pqxx::field current = tx.exec1("SELECT current_schema()")[0];
    if (current.is_null() || current.as<std::string>() != schema_) {
      throw std::runtime_error("search_path not applied (does ONEJOB_PG_URL set options=?)");
    }
  }

  std::string schema_;
  pqxx::connection admin_;
  std::unique_ptr<pqxx::connection> raw_;
  std::unique_ptr<onejob::PgStore> store_;
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(pg_store, PgFixture)

BOOST_AUTO_TEST_CASE(schema_applies_twice) {
  // The fixture applied it once already.
  BOOST_CHECK_NO_THROW(store().apply_schema());
  BOOST_CHECK_NO_THROW(store().apply_schema());
  // Also as plain SQL, the way psql or a migration tool would feed it.
  pqxx::nontransaction tx{raw()};
  BOOST_CHECK_NO_THROW(tx.exec(std::string{onejob::pg_schema_sql()}));
  const auto constraints = tx.exec1(
      "SELECT count(*) FROM pg_constraint"
      " WHERE conname = 'jobs_owner_key_unique' AND conrelid = 'jobs'::regclass")[0];
  BOOST_TEST(constraints.as<int>() == 1);
}

// The acceptance item: the database itself, with no application code involved, refuses a
// second job for one (owner_id, idempotency_key).
BOOST_AUTO_TEST_CASE(database_rejects_second_row_for_one_owner_and_key) {
  insert_committed_row(raw(), "alice", "key-1", R"({"text":"first"})");
  {
    pqxx::work tx{raw()};
    BOOST_CHECK_EXCEPTION(insert_row(tx, "alice", "key-1", R"({"text":"second"})"),
                          pqxx::unique_violation, names_owner_key_constraint);
  }
  BOOST_TEST(count_jobs(raw(), "alice", "key-1") == 1);
}

BOOST_AUTO_TEST_CASE(database_accepts_same_key_for_another_owner) {
  const JobId alice_id = insert_committed_row(raw(), "alice", "key-1");
  const JobId bob_id = insert_committed_row(raw(), "bob", "key-1");
  BOOST_TEST(alice_id != bob_id);
  BOOST_TEST(count_jobs(raw(), "alice", "key-1") == 1);
  BOOST_TEST(count_jobs(raw(), "bob", "key-1") == 1);
}

BOOST_AUTO_TEST_CASE(insert_job_reports_unique_violation_and_consumes_an_id) {
  const NewJob first = new_job("alice", "key-1", R"({"text":"first"})");
  const InsertJobResult inserted = run(store().insert_job(first));
  BOOST_TEST(outcome_name(inserted.outcome) == "inserted");
  BOOST_REQUIRE(inserted.job.has_value());
  const Job expected{
      .id = inserted.job->id,
      .owner_id = first.owner_id,
      .idempotency_key = first.idempotency_key,
      .request_fingerprint = first.request_fingerprint,
      .operation = first.operation,
      .target_provider = first.target_provider,
      .payload_json = first.payload_json,
      .status = onejob::JobStatus::pending,
      .version = 1,
      .created_at = first.created_at,
  };
  check_same_job(*inserted.job, expected);

  const InsertJobResult duplicate =
      run(store().insert_job(new_job("alice", "key-1", R"({"text":"second"})")));
  BOOST_TEST(outcome_name(duplicate.outcome) == "unique_violation");
  BOOST_TEST(!duplicate.job.has_value());

  // nextval() ran for the rejected row too, exactly as MemoryStore models it.
  const InsertJobResult next = run(store().insert_job(new_job("alice", "key-2")));
  BOOST_REQUIRE(next.job.has_value());
  BOOST_TEST(next.job->id == inserted.job->id + 2);

  // The rejected insert wrote nothing: the first job is intact.
  BOOST_TEST(count_jobs(raw(), "alice", "key-1") == 1);
  const std::optional<Job> stored = run(store().find_job_by_key("alice", "key-1"));
  BOOST_REQUIRE(stored.has_value());
  check_same_job(*stored, expected);
}

BOOST_AUTO_TEST_CASE(find_job_is_owner_scoped) {
  const InsertJobResult inserted = run(store().insert_job(new_job("alice", "key-1")));
  BOOST_REQUIRE(inserted.job.has_value());
  const JobId id = inserted.job->id;

  const std::optional<Job> own = run(store().find_job("alice", id));
  BOOST_REQUIRE(own.has_value());
  check_same_job(*own, *inserted.job);
  BOOST_TEST(!run(store().find_job("bob", id)).has_value());
  BOOST_TEST(!run(store().find_job("alice", id + 1000)).has_value());
}

BOOST_AUTO_TEST_CASE(find_job_by_key_sees_row_committed_by_another_connection) {
  BOOST_TEST(!run(store().find_job_by_key("alice", "key-1")).has_value());

  // Committed on another connection after PgStore's previous read: a new statement must see
  // it (no snapshot is held across calls). Whitespace, key order and non-ASCII bytes must
  // come back exactly, which is why payload_json is text and not jsonb.
  const std::string payload = "{\"b\": 1,  \"a\": [\"caf\xc3\xa9\"]}";
  const JobId id = insert_committed_row(raw(), "alice", "key-1", payload);

  const std::optional<Job> found = run(store().find_job_by_key("alice", "key-1"));
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(found->id == id);
  BOOST_TEST(found->owner_id == "alice");
  BOOST_TEST(found->idempotency_key == "key-1");
  BOOST_TEST(found->payload_json == payload);
  BOOST_TEST(found->request_fingerprint == "POST /jobs\n" + payload);
  BOOST_TEST(found->version == 1);
  BOOST_TEST(onejob::to_string(found->status) == "pending");
  BOOST_TEST(found->created_at.time_since_epoch().count() == 42);

  BOOST_TEST(!run(store().find_job_by_key("bob", "key-1")).has_value());
  BOOST_TEST(!run(store().find_job_by_key("alice", "key-2")).has_value());
}

// The same API handler and simulated clients as the scenario suite, with PgStore underneath:
// the unique constraint in PostgreSQL, not MemoryStore, now decides.
onejob::scenario::RunResult run_on_pg(const onejob::scenario::ScenarioSpec& spec) {
  auto result = onejob::scenario::run_scenario(
      spec, {.seed = std::nullopt,
             .make_store = [] { return std::make_unique<onejob::PgStore>(pg_url()); }});
  for (const auto& violation : result.violations) {
    BOOST_TEST_MESSAGE(violation.invariant << ": " << violation.message);
  }
  return result;
}

BOOST_AUTO_TEST_CASE(double_click_through_the_api_is_one_job_on_postgres) {
  auto spec = onejob::test::double_click_spec(5, 7);
  spec.expect.same_job_id.push_back({{1, 2, 3, 4, 5}, {}});
  spec.expect.jobs = 1;
  BOOST_TEST(run_on_pg(spec).passed());
  BOOST_TEST(count_jobs(raw(), "alice", "click-1") == 1);
}

BOOST_AUTO_TEST_CASE(reused_key_with_another_payload_is_422_on_postgres) {
  auto spec = onejob::test::double_click_spec(2, 7);
  spec.timeline[1].at = onejob::Duration(std::chrono::seconds(1));
  spec.timeline[1].create_job.body = onejob::test::classify_body("another text");
  spec.expect.responses.push_back({1, {201}, {}});
  spec.expect.responses.push_back({2, {422}, {}});
  BOOST_TEST(run_on_pg(spec).passed());
  BOOST_TEST(count_jobs(raw(), "alice", "click-1") == 1);
}

BOOST_AUTO_TEST_SUITE_END()

int main(int argc, char* argv[]) {
  if (pg_url().empty()) {
    // 77 is the test's SKIP_RETURN_CODE: ctest shows "skipped", never a silent pass.
    std::cout << "pg tests skipped: ONEJOB_PG_URL not set\n";
    return 77;
  }
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
