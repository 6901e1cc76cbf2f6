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
    case O::job_failed:
      return "job_failed";
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

std::int64_t count_attempts(pqxx::connection& connection, JobId job_id) {
  return count_rows(connection, "SELECT count(*) FROM attempts WHERE job_id = $1", job_id);
}

int backend_pid(pqxx::connection& connection) {
  pqxx::nontransaction tx{connection};
  return tx.exec1("SELECT pg_backend_pid()")[0].as<int>();
}

Created create_job(PgStore& store, const std::string& key) {
  InsertJobResult inserted = run(store.insert_job(new_job("alice", key)));
  BOOST_REQUIRE(inserted.job.has_value());
  BOOST_REQUIRE(inserted.initial_attempt.has_value());
  return Created{*inserted.job, *inserted.initial_attempt};
}

Attempt claim(PgStore& store, const std::string& worker, std::int64_t lease_expires_us) {
  std::optional<Attempt> claimed =
      run(store.claim_next_attempt(worker, at_us(10), at_us(lease_expires_us)));
  BOOST_REQUIRE(claimed.has_value());
  return *claimed;
}

UpdateAttemptResult update(PgStore& store, AttemptId id, std::vector<AttemptState> from,
                           AttemptState to, std::optional<std::int64_t> fence, std::string reason,
                           std::int64_t at, std::optional<std::string> take_over_as) {
  return run(store.update_attempt(AttemptUpdate{
      .attempt_id = id,
      .from = std::move(from),
      .to = to,
      .fence = fence,
      .take_over_as = std::move(take_over_as),
      .reason = std::move(reason),
      .at = at_us(at),
  }));
}

CompleteAttemptResult complete(PgStore& store, const Attempt& attempt,
                               std::int64_t expected_version, std::vector<AttemptState> from,
                               std::optional<std::int64_t> fence, std::string result,
                               std::int64_t at) {
  return run(store.complete_attempt(CompleteAttempt{
      .attempt_id = attempt.id,
      .job_id = attempt.job_id,
      .expected_version = expected_version,
      .from = std::move(from),
      .fence = fence,
      .result = std::move(result),
      .at = at_us(at),
  }));
}

InsertAttemptResult add_attempt(PgStore& store, JobId job_id, std::string provider,
                                std::int64_t at) {
  return run(store.insert_attempt(NewAttempt{
      .job_id = job_id,
      .provider = std::move(provider),
      .origin = AttemptOrigin::failover,
      .created_at = at_us(at),
  }));
}

Attempt find(PgStore& store, AttemptId id) {
  std::optional<Attempt> found = run(store.find_attempt(id));
  BOOST_REQUIRE(found.has_value());
  return *found;
}

Job load(PgStore& store, JobId id) {
  std::optional<Job> found = run(store.load_job(id));
  BOOST_REQUIRE(found.has_value());
  return *found;
}

PgFixture::PgFixture() : schema_{next_schema_name()}, admin_{pg_url()} {
  {
    pqxx::nontransaction tx{admin_};
    const std::string name = tx.quote_name(schema_);
    // A crashed earlier run with the same pid may have left it behind.
    tx.exec("DROP SCHEMA IF EXISTS " + name + " CASCADE");
    tx.exec("CREATE SCHEMA " + name);
  }
  // The test's own raw statements are bounded too (PgStore bounds its own): a statement stuck
  // on a lock a bug left held fails the case, naming the statement, instead of hanging it.
  ::setenv("PGOPTIONS", ("-c search_path=" + schema_ + " -c statement_timeout=20000").c_str(), 1);
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
