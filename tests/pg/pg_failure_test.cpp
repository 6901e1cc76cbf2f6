// PgStore when the database fails under it: backends terminated (pg_terminate_backend) while a
// create, a transaction, a COMMIT and a compare-and-swap are under way, and while idle; a
// server that cannot be reached. Each failure must leave the store as the port's StoreError
// of the right kind, never as a libpqxx exception, and cost at most the call in flight: the
// next call on the same PgStore works.
//
// A call is held at a known point by a lock another connection holds (or by a COMMIT that
// sleeps in a deferred trigger), so the kill lands exactly there, every run.
#include <utility>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include <boost/test/unit_test.hpp>
#include <pqxx/pqxx>

#include "tests/pg/pg_fixture.hpp"

namespace onejob::pg_test {
namespace {

using S = AttemptState;
using Kind = StoreError::Kind;

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::unavailable:
      return "unavailable";
    case Kind::maybe_committed:
      return "maybe_committed";
    case Kind::conflict:
      return "conflict";
    case Kind::rejected:
      return "rejected";
  }
  return "invalid";
}

// What a call on another thread ended with: a value, a StoreError, or anything else (which the
// tests treat as the bug they are looking for).
struct Ending {
  bool returned = false;
  std::optional<Kind> store_error;
  std::string other_exception;
  std::string message;  // the StoreError's

  std::string describe() const {
    if (returned) return "returned";
    if (store_error)
      return "StoreError " + std::string{kind_name(*store_error)} + " (" + message + ")";
    return "other exception: " + other_exception;
  }
};

// Runs `call` on its own thread; waits until a backend of this database other than the
// caller's own matches `waiting` in pg_stat_activity, hands its pid to `act`, and returns how
// the call ended.
Ending act_while(pqxx::connection& admin, const std::string& waiting,
                 const std::function<void(int pid)>& act, const std::function<void()>& call) {
  Ending ending;
  std::thread caller{[&] {
    try {
      call();
      ending.returned = true;
    } catch (const StoreError& e) {
      ending.store_error = e.kind();
      ending.message = e.what();
    } catch (const std::exception& e) {
      ending.other_exception = e.what();
    }
  }};
  bool acted = false;
  for (int tries = 0; tries < 500 && !acted; ++tries) {
    std::optional<int> pid;
    {
      pqxx::nontransaction tx{admin};
      const pqxx::result found = tx.exec(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
          " AND pid <> pg_backend_pid() AND " +
          waiting);
      if (found.size() == 1) pid = found[0][0].as<int>();
    }
    if (pid) {
      act(*pid);
      acted = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  caller.join();
  BOOST_TEST(acted, "no backend ever matched: " << waiting);
  return ending;
}

Ending kill_while(pqxx::connection& admin, const std::string& waiting,
                  const std::function<void()>& call) {
  return act_while(
      admin, waiting,
      [&admin](int pid) {
        pqxx::nontransaction tx{admin};
        tx.exec_params("SELECT pg_terminate_backend($1)", pid);
      },
      call);
}

// Terminates every backend of this database except `keep` (and the caller's own), and waits
// until they are gone.
void kill_all_but(pqxx::connection& admin, const std::vector<int>& keep) {
  pqxx::nontransaction tx{admin};
  std::string list = "0";
  for (const int pid : keep) list.append(",").append(std::to_string(pid));
  const std::string others =
      "datname = current_database() AND pid <> pg_backend_pid()"
      " AND backend_type = 'client backend' AND pid NOT IN (" +
      list + ")";
  tx.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE " + others);
  for (int tries = 0; tries < 500; ++tries) {
    if (tx.exec("SELECT count(*) FROM pg_stat_activity WHERE " + others)[0][0].as<int>() == 0) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  BOOST_FAIL("backends still there after pg_terminate_backend");
}

constexpr const char* kWaitsOnALock = "wait_event_type = 'Lock'";

}  // namespace

BOOST_FIXTURE_TEST_SUITE(pg_failures, PgFixture)

// The create is one autocommit statement: killed while it runs, it may or may not have
// committed. Here it had not (it waited on the other create's key), and the next call, a retry
// of the same create, inserts the job.
BOOST_AUTO_TEST_CASE(a_create_killed_mid_statement_is_maybe_committed_and_costs_one_call) {
  pqxx::work holder{raw()};
  holder.exec_params(
      "INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, operation,"
      " target_provider, input_json, payload_json, created_at_us)"
      " VALUES ('alice', 'key-1', 'x', 'summarize', 'provider-a', '{}', '{}', 1)");
  const Ending ending = kill_while(admin(), kWaitsOnALock,
                                   [&] { run(store().insert_job(new_job("alice", "key-1"))); });
  BOOST_TEST(ending.describe().starts_with("StoreError maybe_committed"), ending.describe());
  holder.abort();
  const InsertJobResult retried = run(store().insert_job(new_job("alice", "key-1")));
  BOOST_TEST(outcome_name(retried.outcome) == "inserted");
}

// A transaction killed before its COMMIT wrote nothing: unavailable.
BOOST_AUTO_TEST_CASE(a_transaction_killed_before_commit_is_unavailable_and_wrote_nothing) {
  const Created created = create_job(store(), "key-1");
  update(store(), created.first.id, {S::starting}, S::failed, std::nullopt, "unsendable");
  pqxx::work holder{raw()};
  holder.exec_params("SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE", created.job.id);
  const Ending ending =
      kill_while(admin(), kWaitsOnALock, [&] { add_attempt(store(), created.job.id); });
  BOOST_TEST(ending.describe().starts_with("StoreError unavailable"), ending.describe());
  holder.abort();
  BOOST_TEST(count_attempts(raw(), created.job.id) == 1);
  BOOST_TEST(outcome_name(add_attempt(store(), created.job.id).outcome) == "inserted");
}

// Killed during COMMIT itself (a deferred trigger makes the COMMIT sleep): libpqxx cannot know
// whether it committed, and neither can the store: maybe_committed.
BOOST_AUTO_TEST_CASE(a_transaction_killed_during_commit_is_maybe_committed) {
  {
    pqxx::nontransaction tx{raw()};
    tx.exec(
        "CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$"
        " BEGIN IF NEW.provider = 'slow-commit' THEN PERFORM pg_sleep(60); END IF;"
        " RETURN NULL; END $$;"
        " CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON attempts"
        " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()");
  }
  const Created created = create_job(store(), "key-1");
  update(store(), created.first.id, {S::starting}, S::failed, std::nullopt, "unsendable");
  const Ending ending = kill_while(admin(), "wait_event = 'PgSleep'",
                                   [&] { add_attempt(store(), created.job.id, "slow-commit"); });
  BOOST_TEST(ending.describe().starts_with("StoreError maybe_committed"), ending.describe());
  // It had not: the COMMIT never finished. The next call works.
  BOOST_TEST(count_attempts(raw(), created.job.id) == 1);
  BOOST_TEST(outcome_name(add_attempt(store(), created.job.id).outcome) == "inserted");
}

// The compare-and-swap is one statement: killed while it waits for the attempt's row, it may
// or may not have committed. It had not; completing again wins.
BOOST_AUTO_TEST_CASE(a_cas_killed_mid_statement_is_maybe_committed_and_costs_one_call) {
  const Created created = create_job(store(), "key-1");
  const Attempt running = claim(store(), "w1", 1000);
  pqxx::work holder{raw()};
  holder.exec_params("SELECT 1 FROM attempts WHERE id = $1 FOR UPDATE", running.id);
  const Ending ending = kill_while(admin(), kWaitsOnALock, [&] {
    complete(store(), running, created.job.version, {S::running}, running.lease_token, "r");
  });
  BOOST_TEST(ending.describe().starts_with("StoreError maybe_committed"), ending.describe());
  holder.abort();
  BOOST_TEST(!load(store(), created.job.id).completed_by.has_value());
  const CompleteAttemptResult again =
      complete(store(), running, created.job.version, {S::running}, running.lease_token, "r");
  BOOST_TEST(outcome_name(again.outcome) == "won");
}

// A backend that dies while its connection is idle costs no call at all: the store notices the
// server's goodbye before it sends anything, and opens a new connection. (Idle means at least
// PgStore::kProbeAfterIdle since the connection last answered.)
BOOST_AUTO_TEST_CASE(an_idle_connection_killed_costs_no_call) {
  const Created created = create_job(store(), "key-1");
  for (int round = 0; round < 3; ++round) {
    kill_all_but(admin(), {backend_pid(raw())});
    std::this_thread::sleep_for(PgStore::kProbeAfterIdle);
    BOOST_CHECK_NO_THROW(run(store().load_job(created.job.id)));
    BOOST_CHECK_NO_THROW(
        run(store().insert_job(new_job("alice", "key-" + std::to_string(round + 2)))));
  }
  BOOST_TEST(count_rows(raw(), "SELECT count(*) FROM jobs WHERE id >= $1", created.job.id) == 4);
}

// Whatever the session's default isolation, PgStore's transactions are READ COMMITTED, which
// the compare-and-swap relies on: a completion that waited for a concurrent winner re-reads
// the committed job and loses (DISCARDED, its result kept). Under SERIALIZABLE it would fail
// with 40001 instead; with conflict_tries = 1 nothing retries that away, so only the pinned
// level can pass this.
BOOST_AUTO_TEST_CASE(a_losing_completion_is_discarded_even_when_the_default_is_serializable) {
  const std::string serializable = pg_url() + " options='-c search_path=" + schema() +
                                   " -c default_transaction_isolation=serializable'";
  {
    pqxx::connection witness{serializable};
    pqxx::nontransaction tx{witness};
    BOOST_TEST(tx.exec1("SHOW default_transaction_isolation")[0].as<std::string>() ==
               "serializable");
  }
  PgStoreOptions options;
  options.connection_string = serializable;
  options.conflict_tries = 1;
  PgStore store_under_test{options};

  const Created created = create_job(store(), "key-1");
  update(store(), created.first.id, {S::starting}, S::cancelled, std::nullopt, "by alice");
  BOOST_REQUIRE(add_attempt(store(), created.job.id).attempt.has_value());
  const Attempt second = claim(store(), "w1", 1000);
  // Another writer completes the job with the first attempt, and holds its row...
  pqxx::work winner{raw()};
  winner.exec_params(
      "UPDATE jobs SET completed_by = $1, status = 'succeeded', result = 'first',"
      " version = version + 1 WHERE id = $2",
      created.first.id, created.job.id);
  // ... while the second attempt's completion waits for it; then it commits.
  CompleteAttemptResult lost;
  const Ending ending = act_while(
      admin(), kWaitsOnALock, [&winner](int) { winner.commit(); },
      [&] {
        lost = complete(store_under_test, second, created.job.version, {S::running},
                        second.lease_token, "second");
      });
  BOOST_TEST(ending.describe() == "returned");
  BOOST_TEST(outcome_name(lost.outcome) == "lost");
  BOOST_REQUIRE(lost.attempt.has_value());
  BOOST_TEST(to_string(lost.attempt->state) == "DISCARDED");
  BOOST_TEST(lost.attempt->result == "second");
  BOOST_TEST(lost.attempt->outcome_reason == "lost to attempt " + std::to_string(created.first.id));
  BOOST_TEST(load(store(), created.job.id).result == "first");
}

// Nothing listens there: the constructor fails with StoreError, not a libpqxx exception.
BOOST_AUTO_TEST_CASE(an_unreachable_server_is_unavailable) {
  BOOST_CHECK_EXCEPTION(PgStore{"host=/nonexistent-onejob-socket-dir port=1 connect_timeout=2"},
                        StoreError,
                        [](const StoreError& e) { return e.kind() == Kind::unavailable; });
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob::pg_test
