// PgStore under real concurrency: threads, each with its own connection, racing on one key,
// one job's live-attempt slot, one job's compare-and-swap, one expired lease. Every race runs
// twice: undisturbed, and with a killer thread terminating random backends while it runs.
// Killed calls may fail, but only with StoreError, and the safety rules hold either way: one
// job per key, at most one live attempt, at most one winner, one takeover per token. Then two
// writes made to meet on one row, in a chosen order (a gate holds the row until both wait):
// each decides on what the other committed.
#include <utility>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <pqxx/pqxx>

#include "system/service/api_handler.hpp"
#include "system/service/system_context.hpp"

#include "harness/sim/rng.hpp"
#include "harness/sim/sim_loop.hpp"

#include "tests/pg/pg_fixture.hpp"
#include "tests/support/fake_providers.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/scenarios.hpp"
#include "tests/support/system_fixture.hpp"

namespace onejob::pg_test {
namespace {

using S = AttemptState;
namespace bdata = boost::unit_test::data;

// Terminates a random client backend of this database (never `spared`) every few milliseconds,
// at most `budget` times, until destroyed; counts its kills. The budget lets a race finish: once
// every other thread is done, the last one's backend is the only victim left, and on a slow
// machine it could be killed again before each reconnect had done anything (200 tries lost in a
// row, and the test aborted).
class Killer {
 public:
  Killer(bool active, std::vector<int> spared, int budget)
      : spared_{std::move(spared)}, budget_{budget} {
    if (!active) return;
    thread_ = std::thread{[this] { loop(); }};
  }
  ~Killer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  Killer(const Killer&) = delete;
  Killer& operator=(const Killer&) = delete;

  int kills() const { return kills_; }

 private:
  void loop() {
    pqxx::connection admin{pg_url()};
    std::string spared = std::to_string(backend_pid(admin));
    for (const int pid : spared_) spared.append(",").append(std::to_string(pid));
    std::minstd_rand random{42};
    std::vector<int> killed;
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1 + random() % 4));
      if (kills_ >= budget_) continue;
      pqxx::nontransaction tx{admin};
      const pqxx::result victims = tx.exec(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
          " AND backend_type = 'client backend' AND pid NOT IN (" +
          spared + ") ORDER BY random() LIMIT 1");
      if (victims.empty()) continue;
      const int victim = victims[0][0].as<int>();
      tx.exec_params("SELECT pg_terminate_backend($1)", victim);
      killed.push_back(victim);
      ++kills_;
    }
    // Wait until every victim has exited (and so has said goodbye on its socket): a call made
    // after the killer is gone must find its connection dead or alive, not dying.
    for (const int victim : killed) {
      pqxx::nontransaction tx{admin};
      while (tx.exec_params1("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", victim)[0]
                 .as<int>() > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }

  std::vector<int> spared_;
  int budget_;
  std::atomic<bool> stop_{false};
  std::atomic<int> kills_{0};
  std::thread thread_;
};

// Runs `body(i)` on `n` threads started together.
void race(int n, const std::function<void(int)>& body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      ++ready;
      while (ready < n) std::this_thread::yield();
      body(i);
    });
  }
  for (auto& thread : threads) thread.join();
}

// A store of its own per thread, in the fixture's schema (PGOPTIONS names it). The killer may
// end its first connection while it is being opened: that is a StoreError too; try again.
std::unique_ptr<PgStore> own_store() {
  for (int tries = 0;; ++tries) {
    try {
      return std::make_unique<PgStore>(pg_url());
    } catch (const StoreError&) {
      if (tries == 200) throw;
    }
  }
}

// Calls `call` until it returns a value: a StoreError (a killed backend) tries again, up to a
// limit; anything else escapes and fails the test.
template <typename T>
T until_answered(const std::function<T()>& call, int* store_errors) {
  for (int tries = 0;; ++tries) {
    try {
      return call();
    } catch (const StoreError&) {
      ++*store_errors;
      if (tries == 200) throw;
    }
  }
}

// A transaction of its own holding one row (`lock_sql`: a SELECT ... FOR UPDATE of row `id`)
// while the racing calls queue behind it, one by one, so each reaches the lock in the order the
// test starts it; open() lets them through. Without it two calls meet at a lock only by chance.
class RowGate {
 public:
  RowGate(const std::string& lock_sql, std::int64_t id) : connection_{pg_url()}, tx_{connection_} {
    tx_.exec_params(lock_sql, id);
  }
  void open() { tx_.commit(); }

 private:
  pqxx::connection connection_;
  pqxx::work tx_;
};

// Whether `n` backends of this database came to wait on a lock (the calls a gate holds back)
// within 3 seconds.
bool await_lock_waiters(int n) {
  pqxx::connection watcher{pg_url()};
  for (int polls = 0; polls < 300; ++polls) {
    pqxx::nontransaction tx{watcher};
    const auto waiting = tx.exec1(
                               "SELECT count(*) FROM pg_stat_activity WHERE datname ="
                               " current_database() AND wait_event_type = 'Lock'")[0]
                             .as<int>();
    if (waiting >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Runs `first` and, once it waits on the gate, `second`; then opens the gate and waits for both.
// Each runs on a store (a connection) of its own. A call that never queued is a failure (the
// gate opens all the same, so the other call ends).
void gated_race(RowGate& gate, const std::function<void(PgStore&)>& first,
                const std::function<void(PgStore&)>& second) {
  auto first_store = own_store();
  auto second_store = own_store();
  std::mutex mutex;
  std::string thrown;  // what a call threw, not to end the test binary from its thread
  const auto guarded = [&](const std::function<void(PgStore&)>& call, PgStore& store) {
    try {
      call(store);
    } catch (const std::exception& error) {
      const std::lock_guard lock{mutex};
      thrown += std::string(error.what()) + "; ";
    } catch (const AssertionFailure& failure) {
      const std::lock_guard lock{mutex};
      thrown += failure.what() + "; ";
    }
  };
  std::thread one{[&] { guarded(first, *first_store); }};
  const bool first_queued = await_lock_waiters(1);
  std::thread two{[&] { guarded(second, *second_store); }};
  const bool both_queued = await_lock_waiters(2);
  gate.open();
  one.join();
  two.join();
  BOOST_TEST(first_queued, "the first call never waited on the gate's row");
  BOOST_TEST(both_queued, "the second call never waited on a lock");
  BOOST_TEST(thrown.empty(), thrown);
}

// The same call twice through the gate, each on a connection of its own: their results, in the
// order they queued.
template <typename Result>
std::pair<std::optional<Result>, std::optional<Result>> twice(
    RowGate& gate, const std::function<Result(PgStore&)>& call) {
  std::optional<Result> first;
  std::optional<Result> second;
  gated_race(
      gate, [&](PgStore& mine) { first = call(mine); },
      [&](PgStore& mine) { second = call(mine); });
  return {std::move(first), std::move(second)};
}

const std::string kLockJobRow = "SELECT id FROM jobs WHERE id = $1 FOR UPDATE";
const std::string kLockAttemptRow = "SELECT id FROM attempts WHERE id = $1 FOR UPDATE";
}  // namespace

BOOST_FIXTURE_TEST_SUITE(pg_concurrency, PgFixture)

// 64 creates at once through the API, 8 per key, with two payloads per key: per key exactly
// one job, its 201 and 200s naming it, 422 exactly for the other payload (or for the same
// payload's losers when the other won). Every request is answered 201/200/422/503.
BOOST_DATA_TEST_CASE(sixty_four_way_create_with_mixed_payloads, bdata::make({false, true}),
                     with_kills) {
  constexpr int kThreads = 64;
  constexpr int kKeys = 8;
  std::mutex mutex;
  std::map<int, std::vector<std::pair<int, std::int64_t>>> by_key;  // status, job id
  std::map<int, std::vector<int>> payload_of;
  int unavailable = 0;
  {
    // Fewer kills than one thread's 100 tries, so even the last thread gets through.
    Killer killer{with_kills, {backend_pid(raw()), backend_pid(admin())}, kThreads};
    race(kThreads, [&](int i) {
      const int key = i % kKeys;
      const int payload = (i / kKeys) % 2;
      auto store = own_store();
      sim::SimLoop loop{sim::Rng{static_cast<std::uint64_t>(i)}};
      test::FakeProviders providers{loop};
      test::RecordingSink events;
      SystemConfig config;
      config.providers.push_back({.name = "alpha"});
      sim::RngRandom random{sim::Rng{static_cast<std::uint64_t>(i)}};
      SystemContext context{*store, providers, loop, loop, events, config, random};
      ApiHandler api{context};
      const std::string body = test::classify_body(payload == 0 ? "first" : "second");
      for (int tries = 0; tries < 100; ++tries) {
        const Response response = run(api.handle(
            test::make_request("POST", "/jobs", body, "alice", "key-" + std::to_string(key))));
        const std::lock_guard lock{mutex};
        if (response.status == 503) {
          ++unavailable;
          continue;  // the same request with the same key, as a client retries
        }
        by_key[key].emplace_back(response.status, test::json_int(response, "job_id"));
        payload_of[key].push_back(payload);
        return;
      }
    });
    BOOST_TEST_MESSAGE("kills " << killer.kills() << ", 503s " << unavailable);
  }
  for (int key = 0; key < kKeys; ++key) {
    BOOST_TEST_CONTEXT("key " << key) {
      const auto& answers = by_key[key];
      BOOST_TEST(answers.size() == static_cast<std::size_t>(kThreads / kKeys));
      const std::string key_name = "key-" + std::to_string(key);
      pqxx::nontransaction tx{raw()};
      const pqxx::result jobs = tx.exec_params(
          "SELECT id, payload_json FROM jobs WHERE owner_id = 'alice' AND idempotency_key = $1",
          key_name);
      BOOST_REQUIRE(jobs.size() == 1);
      const std::int64_t id = jobs[0][0].as<std::int64_t>();
      const bool first_won = jobs[0][1].as<std::string>().find("first") != std::string::npos;
      int created = 0;
      for (std::size_t i = 0; i < answers.size(); ++i) {
        const auto [status, job_id] = answers[i];
        const bool same_payload = (payload_of[key][i] == 0) == first_won;
        if (same_payload) {
          BOOST_TEST((status == 201 || status == 200), "status " << status);
          BOOST_TEST(job_id == id);
          created += status == 201 ? 1 : 0;
        } else {
          BOOST_TEST(status == 422);
        }
      }
      // A create killed after it committed is answered 200 on the retry, not 201.
      BOOST_TEST(created <= 1);
      if (!with_kills) BOOST_TEST(created == 1);
    }
  }
}

// One job whose attempt failed; 16 threads each try to start the next attempt: exactly one
// is inserted, every other is refused naming it.
BOOST_DATA_TEST_CASE(attempt_race_inserts_exactly_one, bdata::make({false, true}), with_kills) {
  constexpr int kThreads = 16;
  constexpr int kRounds = 5;
  for (int round = 0; round < kRounds; ++round) {
    const Created created = create_job(store(), "key-" + std::to_string(round));
    update(store(), created.first.id, {S::starting}, S::failed, std::nullopt, "unsendable");
    std::mutex mutex;
    std::vector<InsertAttemptResult> results;
    int store_errors = 0;
    {
      Killer killer{with_kills, {backend_pid(raw()), backend_pid(admin())}, 4 * kThreads};
      race(kThreads, [&](int) {
        auto store = own_store();
        int errors = 0;
        const auto result = until_answered<InsertAttemptResult>(
            [&] {
              return run(store->insert_attempt(NewAttempt{.job_id = created.job.id,
                                                          .provider = "provider-b",
                                                          .origin = AttemptOrigin::explicit_retry,
                                                          .created_at = at_us(600)}));
            },
            &errors);
        const std::lock_guard lock{mutex};
        results.push_back(result);
        store_errors += errors;
      });
      BOOST_TEST_MESSAGE("round " << round << ": kills " << killer.kills());
    }
    const std::int64_t live = count_rows(raw(),
                                         "SELECT count(*) FROM attempts WHERE job_id = $1"
                                         " AND state IN ('STARTING', 'RUNNING', 'UNKNOWN')",
                                         created.job.id);
    BOOST_TEST(live == 1);
    const std::int64_t live_id = pqxx::nontransaction{raw()}
                                     .exec_params1(
                                         "SELECT id FROM attempts WHERE job_id = $1"
                                         " AND state = 'STARTING'",
                                         created.job.id)[0]
                                     .as<std::int64_t>();
    int inserted = 0;
    for (const auto& result : results) {
      if (result.outcome == InsertAttemptResult::Outcome::inserted) {
        ++inserted;
        BOOST_TEST(result.attempt->id == live_id);
      } else {
        BOOST_TEST(outcome_name(result.outcome) == "live_attempt_exists");
        BOOST_TEST(result.blocking.value_or(0) == live_id);
      }
    }
    // A killed insert that committed is answered live_attempt_exists on its retry.
    BOOST_TEST(inserted <= 1);
    if (!with_kills) BOOST_TEST(inserted == 1);
    BOOST_TEST(count_attempts(raw(), created.job.id) == 2);
    BOOST_TEST_MESSAGE("round " << round << ": store errors retried " << store_errors);
  }
}

// Eight cancelled attempts of one job complete at once (late results): exactly one wins, every
// other is DISCARDED naming it, with its own result kept on the attempt.
BOOST_DATA_TEST_CASE(cas_race_has_exactly_one_winner, bdata::make({false, true}), with_kills) {
  constexpr int kAttempts = 8;
  for (int round = 0; round < 5; ++round) {
    const Created created = create_job(store(), "key-" + std::to_string(round));
    std::vector<Attempt> attempts{created.first};
    for (int i = 1; i < kAttempts; ++i) {
      update(store(), attempts.back().id, {S::starting}, S::cancelled, std::nullopt, "by alice");
      const InsertAttemptResult next = add_attempt(store(), created.job.id);
      BOOST_REQUIRE(next.attempt.has_value());
      attempts.push_back(*next.attempt);
    }
    update(store(), attempts.back().id, {S::starting}, S::cancelled, std::nullopt, "by alice");
    std::mutex mutex;
    std::map<AttemptId, CompleteAttemptResult> results;
    {
      Killer killer{with_kills, {backend_pid(raw()), backend_pid(admin())}, 4 * kAttempts};
      race(kAttempts, [&](int i) {
        auto store = own_store();
        const Attempt& mine = attempts[static_cast<std::size_t>(i)];
        int errors = 0;
        // A retry after a maybe_committed may find its own earlier completion: state_mismatch.
        const auto result = until_answered<CompleteAttemptResult>(
            [&] {
              return run(
                  store->complete_attempt(CompleteAttempt{.attempt_id = mine.id,
                                                          .job_id = created.job.id,
                                                          .expected_version = created.job.version,
                                                          .from = {S::cancelled},
                                                          .fence = std::nullopt,
                                                          .result = "result-" + std::to_string(i),
                                                          .at = at_us(900)}));
            },
            &errors);
        const std::lock_guard lock{mutex};
        results.emplace(mine.id, result);
      });
      BOOST_TEST_MESSAGE("kills " << killer.kills());
    }
    const Job job = load(store(), created.job.id);
    BOOST_REQUIRE(job.completed_by.has_value());
    int won = 0;
    for (const Attempt& attempt : attempts) {
      const Attempt row = find(store(), attempt.id);
      const auto& result = results.at(attempt.id);
      if (row.id == *job.completed_by) {
        BOOST_TEST(to_string(row.state) == "SUCCEEDED");
        BOOST_TEST(job.result == row.result);
      } else {
        BOOST_TEST(to_string(row.state) == "DISCARDED");
        BOOST_TEST(row.outcome_reason == "lost to attempt " + std::to_string(*job.completed_by));
      }
      BOOST_TEST(!row.result.empty());  // kept either way
      won += result.outcome == CompleteAttemptResult::Outcome::won ? 1 : 0;
      if (result.outcome == CompleteAttemptResult::Outcome::lost) {
        BOOST_TEST(row.id != *job.completed_by);
      }
    }
    BOOST_TEST(won <= 1);
    if (!with_kills) BOOST_TEST(won == 1);
    BOOST_TEST(job.version == created.job.version + 1);
  }
}

// One RUNNING attempt whose lease expired; eight reconcilers take it over at once, each
// fencing with the token it read: exactly one takeover applies and the token moves once.
BOOST_DATA_TEST_CASE(lease_takeover_race_applies_once, bdata::make({false, true}), with_kills) {
  constexpr int kThreads = 8;
  for (int round = 0; round < 5; ++round) {
    const Created created = create_job(store(), "key-" + std::to_string(round));
    const Attempt running = claim(store(), "w1", 100);
    std::atomic<int> applied{0};
    {
      Killer killer{with_kills, {backend_pid(raw()), backend_pid(admin())}, 4 * kThreads};
      race(kThreads, [&](int i) {
        auto store = own_store();
        int errors = 0;
        const auto result = until_answered<UpdateAttemptResult>(
            [&] {
              return run(store->update_attempt(
                  AttemptUpdate{.attempt_id = running.id,
                                .from = {S::running},
                                .to = S::unknown,
                                .fence = running.lease_token,
                                .take_over_as = "reconciler-" + std::to_string(i),
                                .reason = "lease expired",
                                .at = at_us(200)}));
            },
            &errors);
        if (result.outcome == UpdateAttemptResult::Outcome::applied) ++applied;
      });
      BOOST_TEST_MESSAGE("kills " << killer.kills());
    }
    const Attempt row = find(store(), running.id);
    BOOST_TEST(to_string(row.state) == "UNKNOWN");
    BOOST_TEST(row.lease_token == running.lease_token + 1);
    BOOST_TEST(row.lease_owner.starts_with("reconciler-"));
    BOOST_TEST(applied.load() <= 1);
    if (!with_kills) BOOST_TEST(applied.load() == 1);
  }
}

// ---- two writes that meet on one row (each holds the row while it decides) -------------------

// An operator cancelled a job's attempt, and its late answer wins the job while a new attempt is
// being inserted (a failover's here; an operator's retry takes the same path). The retry decides on
// the job as the win left it: refused, job_completed. A retry that read the job without holding its
// row would reopen the won job (status pending, with a winner) once the win let go, and the result
// would be shown to nobody.
BOOST_AUTO_TEST_CASE(a_retry_that_waits_on_a_win_sees_the_job_completed) {
  const Created created = create_job(store(), "key-1");
  update(store(), created.first.id, {S::starting}, S::cancelled, std::nullopt, "by alice");
  RowGate gate{kLockJobRow, created.job.id};
  std::optional<CompleteAttemptResult> win;
  std::optional<InsertAttemptResult> retry;
  gated_race(
      gate,
      [&](PgStore& mine) {
        win = run(mine.complete_attempt(CompleteAttempt{.attempt_id = created.first.id,
                                                        .job_id = created.job.id,
                                                        .expected_version = created.job.version,
                                                        .from = {S::cancelled},
                                                        .fence = std::nullopt,
                                                        .result = "late",
                                                        .at = at_us(900)}));
      },
      [&](PgStore& mine) { retry = add_attempt(mine, created.job.id, "provider-b", 950); });
  BOOST_REQUIRE(win && retry);
  BOOST_TEST(outcome_name(win->outcome) == "won");
  BOOST_TEST(outcome_name(retry->outcome) == "job_completed");
  const Job job = load(store(), created.job.id);
  BOOST_TEST(job.completed_by.value_or(0) == created.first.id);
  BOOST_TEST(to_string(job.status) == "succeeded");
  BOOST_TEST(count_attempts(raw(), created.job.id) == 1);
}

// A job's only attempt failed; a new attempt is being inserted (a failover's, as an operator's
// retry would be) while another failover gives up on the job. The failure decides on the job as the
// retry left it, with a live attempt: no failure. One that did not hold the job's row would check
// for live attempts in a snapshot from before the retry, and fail a job with a STARTING attempt.
BOOST_AUTO_TEST_CASE(a_failure_that_waits_on_a_retry_sees_its_live_attempt) {
  const Created created = create_job(store(), "key-1");
  update(store(), created.first.id, {S::starting}, S::failed, std::nullopt, "refused");
  RowGate gate{kLockJobRow, created.job.id};
  std::optional<InsertAttemptResult> retry;
  std::optional<bool> failed;
  gated_race(
      gate, [&](PgStore& mine) { retry = add_attempt(mine, created.job.id, "provider-b", 900); },
      [&](PgStore& mine) { failed = run(mine.fail_job(created.job.id, "none left", at_us(950))); });
  BOOST_REQUIRE(retry && failed);
  BOOST_TEST(outcome_name(retry->outcome) == "inserted");
  BOOST_TEST(!*failed);
  BOOST_TEST(to_string(load(store(), created.job.id).status) == "pending");
}

// A double-clicked operator action: the same key twice at once. The second, queued behind the
// first on the row, finds the key the first recorded: the first's effect, replayed (key_exists),
// never a refusal of the state the first left (a cancel's 409 attempt_not_live, a retry's 409
// attempt_in_flight).
BOOST_AUTO_TEST_CASE(a_double_clicked_action_replays_the_first_click) {
  const Created created = create_job(store(), "key-1");
  RowGate attempt_row{kLockAttemptRow, created.first.id};
  const auto [cancelled, cancel_again] =
      twice<UpdateAttemptResult>(attempt_row, [&](PgStore& mine) {
        return run(mine.update_attempt(
            AttemptUpdate{.attempt_id = created.first.id,
                          .from = {S::starting},
                          .to = S::cancelled,
                          .fence = {},
                          .take_over_as = {},
                          .reason = "cancelled by alice",
                          .at = at_us(900),
                          .key = ActionKey{"alice", "op-cancel", "POST /attempts/1/cancel\n"}}));
      });
  BOOST_REQUIRE(cancelled && cancel_again);
  BOOST_TEST(outcome_name(cancelled->outcome) == "applied");
  BOOST_TEST(outcome_name(cancel_again->outcome) == "key_exists");
  BOOST_TEST(cancel_again->recorded.has_value());
  RowGate job_row{kLockJobRow, created.job.id};
  const auto [retried, retry_again] = twice<InsertAttemptResult>(job_row, [&](PgStore& mine) {
    return run(mine.insert_attempt(
        NewAttempt{.job_id = created.job.id,
                   .provider = "provider-b",
                   .origin = AttemptOrigin::explicit_retry,
                   .created_at = at_us(950),
                   .key = ActionKey{"alice", "op-retry", "POST /jobs/1/attempts\n"}}));
  });
  BOOST_REQUIRE(retried && retry_again);
  BOOST_TEST(outcome_name(retried->outcome) == "inserted");
  BOOST_TEST(outcome_name(retry_again->outcome) == "key_exists");
  BOOST_TEST(count_attempts(raw(), created.job.id) == 2);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob::pg_test
