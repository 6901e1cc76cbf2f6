#include "tests/pg/pg_fixture.hpp"

#include <cstdlib>
#include <stdexcept>

#include <boost/test/unit_test.hpp>
#include <unistd.h>

namespace onejob::pg_test {
namespace {

std::string next_schema_name() {
  static int counter = 0;
  return "onejob_test_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
}

}  // namespace

std::string pg_url() {
  const char* url = std::getenv("ONEJOB_PG_URL");
  return url == nullptr ? std::string{} : std::string{url};
}

std::string_view outcome_name(InsertJobResult::Outcome outcome) {
  using O = InsertJobResult::Outcome;
  switch (outcome) {
    case O::inserted:
      return "inserted";
    case O::unique_violation:
      return "unique_violation";
  }
  return "invalid";
}

std::string_view outcome_name(InsertAttemptResult::Outcome outcome) {
  using O = InsertAttemptResult::Outcome;
  switch (outcome) {
    case O::inserted:
      return "inserted";
    case O::live_attempt_exists:
      return "live_attempt_exists";
    case O::job_completed:
      return "job_completed";
    case O::job_not_found:
      return "job_not_found";
    case O::key_exists:
      return "key_exists";
  }
  return "invalid";
}

std::string_view outcome_name(UpdateAttemptResult::Outcome outcome) {
  using O = UpdateAttemptResult::Outcome;
  switch (outcome) {
    case O::applied:
      return "applied";
    case O::fenced:
      return "fenced";
    case O::state_mismatch:
      return "state_mismatch";
    case O::not_found:
      return "not_found";
    case O::key_exists:
      return "key_exists";
  }
  return "invalid";
}

std::string_view outcome_name(CompleteAttemptResult::Outcome outcome) {
  using O = CompleteAttemptResult::Outcome;
  switch (outcome) {
    case O::won:
      return "won";
    case O::lost:
      return "lost";
    case O::fenced:
      return "fenced";
    case O::state_mismatch:
      return "state_mismatch";
    case O::not_found:
      return "not_found";
  }
  return "invalid";
}

NewJob new_job(std::string owner_id, std::string idempotency_key, std::string payload_json) {
  return NewJob{
      .owner_id = std::move(owner_id),
      .idempotency_key = std::move(idempotency_key),
      .request_fingerprint = "POST /jobs\n" + payload_json,
      .operation = "summarize",
      .target_provider = "provider-a",
      .failover = {"provider-b", "provider-c"},
      .input_json = R"({"text":"hello"})",
      .payload_json = payload_json,
      .created_at = at_us(1'234'567),
  };
}

bool names_constraint(const pqxx::unique_violation& e, std::string_view constraint) {
  return e.sqlstate() == "23505" &&
         std::string_view{e.what()}.find(constraint) != std::string_view::npos;
}

std::int64_t count_rows(pqxx::connection& connection, const std::string& query, std::int64_t id) {
  pqxx::nontransaction tx{connection};
  return tx.exec_params1(query, id)[0].as<std::int64_t>();
}

PgFixture::PgFixture() : schema_{next_schema_name()}, admin_{pg_url()} {
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
  store_ = std::make_unique<PgStore>(pg_url());
  store_->migrate();
}

PgFixture::~PgFixture() {
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

void PgFixture::require_own_schema() {
  pqxx::nontransaction tx{*raw_};
  const pqxx::field current = tx.exec1("SELECT current_schema()")[0];
  if (current.is_null() || current.as<std::string>() != schema_) {
    throw std::runtime_error("search_path not applied (does ONEJOB_PG_URL set options=?)");
  }
}

}  // namespace onejob::pg_test
