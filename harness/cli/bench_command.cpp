#include "harness/cli/bench_command.hpp"

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <pqxx/pqxx>
#include <unistd.h>

#include "system/adapters/pg_store.hpp"

#include "harness/cli/exit_codes.hpp"
#include "harness/cli/store_flag.hpp"

namespace onejob::cli {
namespace {

using Clock = std::chrono::steady_clock;

// The baseline: the one statement a create needs (a job and its first attempt, nothing when
// the key exists), prepared and run in autocommit by libpqxx directly. PgStore's create is the
// same work plus everything the port asks of it (typed failures, reconnection, NUL checks,
// building the rows it returns, a coroutine).
constexpr const char* kRawCreate =
    "WITH job AS (INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint, operation,"
    " target_provider, failover, input_json, payload_json, created_at_us)"
    " VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8, $9)"
    " ON CONFLICT ON CONSTRAINT jobs_owner_key_unique DO NOTHING RETURNING id),"
    " first AS (INSERT INTO attempts (job_id, attempt_no, provider, provider_key, origin,"
    " created_at_us) SELECT id, 1, $5, id || ':1', 'initial', $9 FROM job"
    " RETURNING id, job_id, provider_key)"
    " SELECT first.job_id, first.id, first.provider_key FROM first";

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

template <typename T>
T complete_now(boost::asio::io_context& io, Async<T> operation) {
  std::optional<T> out;
  boost::asio::co_spawn(io, std::move(operation), [&](std::exception_ptr e, T value) {
    if (e) std::rethrow_exception(e);
    out.emplace(std::move(value));
  });
  io.restart();
  io.run();
  return std::move(*out);
}

// Runs `threads` threads, each calling its `step(thread, i)` until `seconds` pass; returns
// the calls per second all threads made together.
double rate(int threads, double seconds,
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
      while (Clock::now() < until) step(mine++);
      calls += mine;
    });
  }
  while (ready < threads) std::this_thread::yield();
  const auto start = Clock::now();
  until =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  go = true;
  for (auto& thread : running) thread.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(calls.load()) / elapsed;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

struct Figure {
  std::string name;
  std::vector<double> subject;
  std::vector<double> baseline;
};

void print_figure(const Figure& figure, const char* subject, const char* baseline) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < figure.subject.size(); ++i) {
    ratios.push_back(figure.subject[i] / figure.baseline[i]);
  }
  std::printf("  %-28s %s %9.0f/s   %s %9.0f/s   ratio %.2f (min %.2f, max %.2f)\n",
              figure.name.c_str(), subject, median(figure.subject), baseline,
              median(figure.baseline), median(ratios),
              *std::min_element(ratios.begin(), ratios.end()),
              *std::max_element(ratios.begin(), ratios.end()));
}

int bench_postgres(const StoreChoice& choice, const BenchFlags& flags) {
  const std::string schema = "onejob_bench_" + std::to_string(::getpid());
  std::unique_ptr<Store> owner;
  try {
    owner = open_postgres(choice, schema, true);
  } catch (const StoreError& error) {
    std::cerr << "onejob: --store " << choice.describe() << ": " << error.what() << "\n";
    return kExitBadInput;
  }
  // Every create uses a fresh key: the measure is the insert path, not the conflict path.
  std::atomic<std::int64_t> serial{0};
  auto next_key = [&serial](const char* who) {
    return std::string(who) + "-" + std::to_string(serial.fetch_add(1));
  };
  auto pgstore_creates = [&](int) -> std::function<void(std::int64_t)> {
    auto store = std::shared_ptr<Store>(open_postgres(choice, schema, false));
    auto io = std::make_shared<boost::asio::io_context>();
    return [store, io, &next_key](std::int64_t) {
      const auto result = complete_now(*io, store->insert_job(bench_job(next_key("pgstore"))));
      if (result.outcome != InsertJobResult::Outcome::inserted) {
        throw std::runtime_error("bench: a fresh key was refused");
      }
    };
  };
  auto raw_creates = [&](int) -> std::function<void(std::int64_t)> {
    auto connection = std::make_shared<pqxx::connection>(choice.uri);
    {
      pqxx::nontransaction tx{*connection};
      tx.exec("SET search_path TO " + tx.quote_name(schema));
    }
    connection->prepare("raw_create", kRawCreate);
    const NewJob job = bench_job("");
    const std::string failover = "{\"beta\"}";
    return [connection, job, failover, &next_key](std::int64_t) {
      pqxx::nontransaction tx{*connection};
      const pqxx::result r = tx.exec_prepared(
          "raw_create", job.owner_id, next_key("raw"), job.request_fingerprint, job.operation,
          job.target_provider, failover, job.input_json, job.payload_json, std::int64_t{0});
      if (r.size() != 1) throw std::runtime_error("bench: a fresh key was refused");
    };
  };

  std::vector<Figure> figures;
  for (const int connections : {1, 8}) {
    Figure figure{"creates, " + std::to_string(connections) +
                      (connections == 1 ? " connection" : " connections"),
                  {},
                  {}};
    for (int round = 0; round < flags.rounds; ++round) {
      figure.baseline.push_back(rate(connections, flags.seconds, raw_creates));
      figure.subject.push_back(rate(connections, flags.seconds, pgstore_creates));
    }
    figures.push_back(std::move(figure));
  }
  std::printf(
      "PostgreSQL (%s): PgStore against a raw statement doing the same work on the same server;"
      "\n%d interleaved rounds of %.1f s each, medians\n",
      choice.describe().c_str(), flags.rounds, flags.seconds);
  for (const auto& figure : figures) print_figure(figure, "PgStore", "raw");
  return kExitPass;
}

}  // namespace

int bench_command(const BenchFlags& flags) {
  StoreChoice choice;
  if (auto problem = parse_store(flags.store, choice)) {
    std::cerr << "onejob: " << *problem << "\n";
    return kExitBadInput;
  }
  if (!(flags.seconds > 0 && flags.seconds <= 3600) || flags.rounds < 1 || flags.rounds > 1000) {
    std::cerr << "onejob: bench: --seconds must be in (0, 3600] and --rounds from 1 to 1000\n";
    return kExitBadInput;
  }
  if (!choice.postgres) {
    std::cerr << "onejob: bench: the figures so far are PostgreSQL's: give --store postgres or "
                 "--store postgres=URI\n";
    return kExitBadInput;
  }
  return bench_postgres(choice, flags);
}

}  // namespace onejob::cli
