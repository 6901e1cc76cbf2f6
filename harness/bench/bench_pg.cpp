#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <pqxx/pqxx>

#include "system/adapters/pg_rows.hpp"
#include "system/adapters/pg_statements.hpp"
#include "system/ports/store.hpp"

#include "harness/bench/bench.hpp"
#include "harness/sim/complete_now.hpp"

namespace onejob::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The baselines run PgStore's own prepared statements (pg::prepare_statements) in autocommit,
// through libpqxx directly. PgStore's figure is the same work plus
// everything the port asks of it (typed failures, reconnection, NUL checks, building the rows
// it returns, a coroutine).

constexpr const char* kPayload =
    R"({"operation":"classify","provider":"alpha","input":{"text":"bench"}})";

NewJob bench_job(const std::string& key) {
  NewJob job;
  job.owner_id = "bench";
  job.idempotency_key = key;
  job.request_fingerprint = std::string("POST /jobs\n") + kPayload;
  job.operation = "classify";
  job.target_provider = "alpha";
  job.failover = {"beta"};
  job.input_json = R"({"text":"bench"})";
  job.payload_json = kPayload;
  job.created_at = Instant{};
  return job;
}

// A libpqxx connection of its own in `schema`, with PgStore's statements, for the raw
// baselines.
std::shared_ptr<pqxx::connection> raw_connection(const std::string& uri,
                                                 const std::string& schema) {
  auto connection = std::make_shared<pqxx::connection>(uri);
  pqxx::nontransaction tx{*connection};
  tx.exec("SET search_path TO " + tx.quote_name(schema));
  pg::prepare_statements(*connection);
  return connection;
}

// Every column of a row read, as PgStore reads them.
std::size_t bytes_of(const pqxx::row& row) {
  std::size_t bytes = 0;
  for (const auto& field : row) bytes += field.size();
  return bytes;
}

// How long each thread of a measurement runs: for `seconds`, or for `calls` calls.
struct Budget {
  double seconds = 0;
  std::int64_t calls = 0;
};

// Runs `threads` threads, each calling its `step(i)` for i = 0, 1, ... within `budget`;
// returns the calls per second all threads made together.
double rate(int threads, Budget budget,
            const std::function<std::function<void(std::int64_t)>(int)>& make) {
  std::atomic<std::int64_t> calls{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> running;
  Clock::time_point until;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      auto step = make(t);  // connects before the clock starts
      ++ready;
      while (!go) std::this_thread::yield();
      std::int64_t mine = 0;
      if (budget.calls > 0) {
        while (mine < budget.calls) step(mine++);
      } else {
        while (Clock::now() < until) step(mine++);
      }
      calls += mine;
    });
  }
  while (ready < threads) std::this_thread::yield();
  const auto start = Clock::now();
  until = start + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(budget.seconds));
  go = true;
  for (auto& thread : running) thread.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(calls.load()) / elapsed;
}

struct Figure {
  std::string name;
  std::vector<double> subject;
  std::vector<double> baseline;
};

// One figure per connection count (1 and 8): `flags.rounds` measurements of each side,
// baseline first, interleaved.
void measure_per_connections(std::vector<Figure>& figures, const std::string& name,
                             const Settings& flags, const std::function<double(int)>& baseline,
                             const std::function<double(int)>& subject) {
  for (const int connections : {1, 8}) {
    Figure figure{name + ", " + std::to_string(connections) +
                      (connections == 1 ? " connection" : " connections"),
                  {},
                  {}};
    for (int round = 0; round < flags.rounds; ++round) {
      figure.baseline.push_back(baseline(connections));
      figure.subject.push_back(subject(connections));
    }
    figures.push_back(std::move(figure));
  }
}

void print_figure(const Figure& figure, const char* subject, const char* baseline) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < figure.subject.size(); ++i) {
    ratios.push_back(figure.subject[i] / figure.baseline[i]);
  }
  std::printf("  %-34s %s %9.0f/s   %s %9.0f/s   ratio %.2f (min %.2f, max %.2f)\n",
              figure.name.c_str(), subject, median(figure.subject), baseline,
              median(figure.baseline), median(ratios),
              *std::min_element(ratios.begin(), ratios.end()),
              *std::max_element(ratios.begin(), ratios.end()));
}

}  // namespace

void postgres(const PgTarget& shared, const Settings& flags) {
  // Creates, every key fresh: the measure is the insert path. A double-click storm: every key
  // created twice in a row, so half the creates are replays, and a replay costs what the API
  // pays for it: the create that finds the key taken, then the read of the job that holds it.
  // Each thread's keys carry a prefix of their own.
  std::atomic<std::int64_t> serial{0};
  auto prefix = [&serial](const char* who) {
    return std::string(who) + "-" + std::to_string(serial.fetch_add(1)) + "-";
  };
  auto pgstore_creates = [&](bool storm) {
    return [&, storm](int) -> std::function<void(std::int64_t)> {
      auto store = std::shared_ptr<Store>(shared.connect());
      auto io = std::make_shared<boost::asio::io_context>();
      return [store, io, storm, mine = prefix("pgstore")](std::int64_t i) {
        const std::string key = mine + std::to_string(storm ? i / 2 : i);
        const auto result = sim::complete_now(*io, store->insert_job(bench_job(key)));
        if (result.outcome == InsertJobResult::Outcome::inserted) return;
        if (!storm) throw std::runtime_error("bench: a fresh key was refused");
        if (!sim::complete_now(*io, store->find_job_by_key("bench", key))) {
          throw std::runtime_error("bench: a replayed key has no job");
        }
      };
    };
  };
  auto raw_creates = [&](bool storm) {
    return [&, storm](int) -> std::function<void(std::int64_t)> {
      auto connection = raw_connection(shared.uri, shared.schema);
      const NewJob job = bench_job("");
      const std::string failover = pg::to_text_array(job.failover);
      return [connection, job, failover, storm, mine = prefix("raw")](std::int64_t i) {
        const std::string key = mine + std::to_string(storm ? i / 2 : i);
        pqxx::nontransaction tx{*connection};
        const pqxx::result r = tx.exec_prepared(
            pg::statement::kCreateJob, job.owner_id, key, job.request_fingerprint, job.operation,
            job.target_provider, failover, job.input_json, job.payload_json, std::int64_t{0});
        if (r.size() == 1) return;
        if (!storm) throw std::runtime_error("bench: a fresh key was refused");
        const pqxx::result found =
            tx.exec_prepared(pg::statement::kFindJobByKey, job.owner_id, key);
        if (found.empty()) throw std::runtime_error("bench: a replayed key has no job");
        if (bytes_of(found[0]) == 0) throw std::runtime_error("bench: an empty job row");
      };
    };
  };

  std::vector<Figure> figures;
  const Budget timed{flags.seconds, 0};
  for (const bool storm : {false, true}) {
    measure_per_connections(
        figures, storm ? "double-click storm" : "creates", flags,
        [&](int n) { return rate(n, timed, raw_creates(storm)); },
        [&](int n) { return rate(n, timed, pgstore_creates(storm)); });
  }

  // Compare-and-swap: every call completes a RUNNING attempt of its own, so each one wins. The
  // pool is made in two bulk statements; the baseline calls the same one-round-trip function
  // PgStore does, through libpqxx directly.
  constexpr std::int64_t kCasCalls = 2'500;  // per thread and round
  const std::int64_t pool_size = kCasCalls * 2 * (1 + 8) * flags.rounds;
  std::vector<std::pair<AttemptId, JobId>> pool;
  {
    pqxx::connection connection{shared.uri};
    pqxx::work tx{connection};
    tx.exec("SET LOCAL search_path TO " + tx.quote_name(shared.schema));
    tx.exec_params(
        "INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, operation,"
        " target_provider, input_json, payload_json, created_at_us) SELECT 'cas', 'cas-' || g,"
        " 'fp', 'classify', 'alpha', '{}', '{}', 0 FROM generate_series(1, $1) g",
        pool_size);
    for (const auto& row :
         tx.exec("INSERT INTO attempts (job_id, attempt_no, provider, provider_key, origin, state,"
                 " lease_owner, lease_token, created_at_us) SELECT id, 1, 'alpha', id || ':1',"
                 " 'initial', 'RUNNING', 'bench', 1, 0 FROM jobs WHERE owner_id = 'cas'"
                 " RETURNING id, job_id")) {
      pool.emplace_back(row[0].as<AttemptId>(), row[1].as<JobId>());
    }
    tx.commit();
  }
  std::atomic<std::size_t> next_attempt{0};
  auto take = [&pool, &next_attempt] {
    const std::size_t i = next_attempt.fetch_add(1);
    if (i >= pool.size()) throw std::runtime_error("bench: the CAS pool ran out");
    return pool[i];
  };
  auto pgstore_cas = [&](int) -> std::function<void(std::int64_t)> {
    auto store = std::shared_ptr<Store>(shared.connect());
    auto io = std::make_shared<boost::asio::io_context>();
    return [store, io, &take](std::int64_t) {
      const auto [attempt, job] = take();
      CompleteAttempt completion;
      completion.attempt_id = attempt;
      completion.job_id = job;
      completion.expected_version = 1;
      completion.from = {AttemptState::running};
      completion.fence = 1;
      completion.result = R"({"label":"billing","confidence":0.9})";
      const auto result = sim::complete_now(*io, store->complete_attempt(std::move(completion)));
      if (result.outcome != CompleteAttemptResult::Outcome::won) {
        throw std::runtime_error("bench: a fresh CAS did not win");
      }
    };
  };
  auto raw_cas = [&](int) -> std::function<void(std::int64_t)> {
    auto connection = raw_connection(shared.uri, shared.schema);
    // PgStore's own call, with the states it passes (from RUNNING; those that may win or lose).
    return [connection, &take](std::int64_t) {
      const auto [attempt, job] = take();
      pqxx::nontransaction tx{*connection};
      const pqxx::row r = tx.exec_prepared1(
          pg::statement::kCompleteAttempt, attempt, job, std::int64_t{1}, std::string("{RUNNING}"),
          std::int64_t{1}, std::string(R"({"label":"billing","confidence":0.9})"), std::int64_t{0},
          std::string("{RUNNING,UNKNOWN,CANCELLED}"), std::string("{RUNNING,UNKNOWN,CANCELLED}"));
      if (r[0].as<std::string>() != "won") throw std::runtime_error("bench: a fresh CAS lost");
      if (bytes_of(r) == 0) throw std::runtime_error("bench: an empty CAS row");
    };
  };
  measure_per_connections(
      figures, "CAS", flags,
      [&](int n) {
        return rate(n, {0, kCasCalls}, raw_cas);
      },
      [&](int n) {
        return rate(n, {0, kCasCalls}, pgstore_cas);
      });

  std::printf(
      "PostgreSQL (%s): PgStore against a raw statement doing the same work on the same server;"
      "\n%d interleaved rounds of %.1f s each, medians\n",
      shared.description.c_str(), flags.rounds, flags.seconds);
  for (const auto& figure : figures) print_figure(figure, "PgStore", "raw");
}

}  // namespace onejob::bench
