#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <pqxx/pqxx>
#include <sched.h>

#include "system/adapters/pg_rows.hpp"
#include "system/adapters/pg_statements.hpp"
#include "system/ports/store.hpp"

#include "harness/bench/bench.hpp"
#include "harness/bench/interleaved.hpp"
#include "harness/bench/pg_plain_sql.hpp"
#include "harness/sim/complete_now.hpp"

namespace onejob::bench {
namespace {

// Three sides per figure, on the same server and schema:
//   PgStore    the port, as the API and the workers call it;
//   adapter    PgStore's own prepared statements (pg::prepare_statements) in autocommit through
//              libpqxx directly: PgStore's figure is the same SQL plus what the port asks of
//              it (typed failures, reconnection checks, NUL checks, the rows it builds, a
//              coroutine), so this ratio is the adapter's overhead;
//   plain SQL  the same effect written the plain way (pg_plain_sql.hpp): this ratio says
//              whether PgStore's SQL itself (the CTE create, the PL/pgSQL compare-and-swap) is
//              slow.

constexpr const char* kPayload =
    R"({"operation":"classify","provider":"alpha","input":{"text":"bench"}})";
constexpr const char* kResult = R"({"label":"billing","confidence":0.9})";

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

// A libpqxx connection of the bench's own in `schema`, set up as PgStore sets up its own, with
// PgStore's statements and the plain ones registered.
std::shared_ptr<pqxx::connection> raw_connection(const PgTarget& target) {
  auto connection = std::make_shared<pqxx::connection>(target.uri);
  pqxx::nontransaction tx{*connection};
  tx.exec(
      "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED; "
      "SET search_path TO " +
      tx.quote_name(target.schema));
  pg::prepare_statements(*connection);
  plain::prepare(*connection);
  return connection;
}

// Every column of a row read, as PgStore reads them.
std::size_t bytes_of(const pqxx::row& row) {
  std::size_t bytes = 0;
  for (const auto& field : row) bytes += field.size();
  return bytes;
}

// ---- where everything measured runs --------------------------------------------------------

// On a machine whose other CPUs are busy (other builds, or a virtual machine's host taking CPUs
// away), where the scheduler places a client thread and its server backend, on one CPU or
// across two, changes a 1-connection side's rate as much as twofold and stays put for seconds:
// one side gets lucky for a whole figure. So the bench fixes the placement, the same for every
// side: its own threads on one CPU and its connections' backends on another, as a client and
// its database server run in a deployment. (On one shared CPU the client's code and data also
// evict the server's from that CPU's caches between calls, which slows the server by an amount
// that grows with the client's footprint rather than with its CPU time.) With one CPU allowed,
// everything runs on it. The backends are those that appeared in pg_stat_activity while a side
// connected; pinning them needs the server on this machine and the right to set their
// affinity, and when either is missing the bench says so and runs unpinned.
class Pinning {
 public:
  explicit Pinning(const PgTarget& target) : connection_{raw_connection(target)} {
    if (sched_getaffinity(0, sizeof original_, &original_) != 0) {
      disable("sched_getaffinity");
      return;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &original_)) continue;
      if (client_cpu_ < 0) client_cpu_ = cpu;
      server_cpu_ = cpu;
    }
    const cpu_set_t mask = only(client_cpu_);
    // Threads started from now on (every side's) inherit this thread's mask.
    if (sched_setaffinity(0, sizeof mask, &mask) != 0) {
      disable("sched_setaffinity");
      return;
    }
  }
  ~Pinning() { sched_setaffinity(0, sizeof original_, &original_); }
  Pinning(const Pinning&) = delete;
  Pinning& operator=(const Pinning&) = delete;

  // The backends of this database now.
  std::vector<int> pids() {
    pqxx::nontransaction tx{*connection_};
    std::vector<int> out;
    for (const auto& row : tx.exec("SELECT pid FROM pg_stat_activity"
                                   " WHERE datname = current_database()")) {
      out.push_back(row[0].as<int>());
    }
    return out;
  }
  // Pins the backends that appeared since `before`.
  void pin_since(const std::vector<int>& before) {
    std::vector<int> added;
    for (const int pid : pids()) {
      if (std::find(before.begin(), before.end(), pid) == before.end()) added.push_back(pid);
    }
    pin(added);
  }
  std::string describe() const {
    if (!problem_.empty()) return "not pinned (" + problem_ + ")";
    if (client_cpu_ == server_cpu_) {
      return "CPU " + std::to_string(client_cpu_) +
             " for the bench's threads and backends (the only CPU allowed)";
    }
    return "the bench's threads on CPU " + std::to_string(client_cpu_) + ", its backends on CPU " +
           std::to_string(server_cpu_);
  }

 private:
  static cpu_set_t only(int cpu) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    CPU_SET(cpu, &mask);
    return mask;
  }
  void pin(const std::vector<int>& backends) {
    if (!problem_.empty()) return;
    const cpu_set_t mask = only(server_cpu_);
    for (const int pid : backends) {
      std::ifstream comm{"/proc/" + std::to_string(pid) + "/comm"};
      std::string name;
      if (!(comm >> name) || name.rfind("postgres", 0) != 0) {
        disable("the server's backends are not processes of this machine");
        return;
      }
      if (sched_setaffinity(pid, sizeof mask, &mask) != 0) {
        disable("no permission to set the backends' affinity");
        return;
      }
    }
  }
  void disable(const std::string& why) {
    if (problem_.empty()) problem_ = why;
    sched_setaffinity(0, sizeof original_, &original_);
  }

  std::shared_ptr<pqxx::connection> connection_;
  cpu_set_t original_{};
  int client_cpu_ = -1;
  int server_cpu_ = -1;
  std::string problem_;
};

// ---- the calls each side makes ----------------------------------------------------------------

// One create of `key`: true when it inserted the job, false when the key was taken and the job
// holding it was read back (the API's replay). Throws when a taken key has no job.
using CreateCall = std::function<bool(const std::string& key)>;
// One compare-and-swap of a RUNNING attempt (version 1, fence 1): its outcome's name.
using CasCall = std::function<std::string(AttemptId, JobId)>;

// Each maker runs on the measuring thread and opens one connection per call of it.
struct Caller {
  const char* name;
  std::function<CreateCall()> create;
  std::function<CasCall()> cas;
  Pinning* pinning = nullptr;  // shared by all callers
};

Caller pgstore_caller(const PgTarget& target) {
  auto connect = [&target] {
    return std::make_pair(std::shared_ptr<Store>(target.connect()),
                          std::make_shared<boost::asio::io_context>());
  };
  auto create = [connect]() -> CreateCall {
    auto [store, io] = connect();
    return [store = store, io = io](const std::string& key) {
      const auto result = sim::complete_now(*io, store->insert_job(bench_job(key)));
      if (result.outcome == InsertJobResult::Outcome::inserted) return true;
      if (!sim::complete_now(*io, store->find_job_by_key("bench", key))) {
        throw std::runtime_error("bench: PgStore: a taken key has no job");
      }
      return false;
    };
  };
  auto cas = [connect]() -> CasCall {
    auto [store, io] = connect();
    return [store = store, io = io](AttemptId attempt, JobId job) -> std::string {
      CompleteAttempt completion;
      completion.attempt_id = attempt;
      completion.job_id = job;
      completion.expected_version = 1;
      completion.from = {AttemptState::running};
      completion.fence = 1;
      completion.result = kResult;
      using Outcome = CompleteAttemptResult::Outcome;
      switch (sim::complete_now(*io, store->complete_attempt(std::move(completion))).outcome) {
        case Outcome::won:
          return "won";
        case Outcome::lost:
          return "lost";
        case Outcome::fenced:
          return "fenced";
        case Outcome::state_mismatch:
          return "state_mismatch";
        case Outcome::not_found:
          return "not_found";
      }
      return "unknown";
    };
  };
  return {"PgStore", create, cas};
}

Caller adapter_caller(const PgTarget& target) {
  auto create = [&target]() -> CreateCall {
    auto connection = raw_connection(target);
    const NewJob job = bench_job("");
    const std::string failover = pg::to_text_array(job.failover);
    return [connection, job, failover](const std::string& key) {
      pqxx::nontransaction tx{*connection};
      const pqxx::result r = tx.exec_prepared(
          pg::statement::kCreateJob, job.owner_id, key, job.request_fingerprint, job.operation,
          job.target_provider, failover, job.input_json, job.payload_json, std::int64_t{0});
      if (r.size() == 1) return true;
      const pqxx::result found = tx.exec_prepared(pg::statement::kFindJobByKey, job.owner_id, key);
      if (found.empty() || bytes_of(found[0]) == 0) {
        throw std::runtime_error("bench: adapter: a taken key has no job");
      }
      return false;
    };
  };
  auto cas = [&target]() -> CasCall {
    auto connection = raw_connection(target);
    // PgStore's call, with the states it passes (from RUNNING; those that may win or lose).
    return [connection](AttemptId attempt, JobId job) {
      pqxx::nontransaction tx{*connection};
      const pqxx::row r = tx.exec_prepared1(
          pg::statement::kCompleteAttempt, attempt, job, std::int64_t{1}, std::string("{RUNNING}"),
          std::int64_t{1}, std::string(kResult), std::int64_t{0},
          std::string("{RUNNING,UNKNOWN,CANCELLED}"), std::string("{RUNNING,UNKNOWN,CANCELLED}"));
      if (bytes_of(r) == 0) throw std::runtime_error("bench: adapter: an empty CAS row");
      return r[0].as<std::string>();
    };
  };
  return {"adapter", create, cas};
}

Caller plain_caller(const PgTarget& target) {
  auto create = [&target]() -> CreateCall {
    auto connection = raw_connection(target);
    const NewJob job = bench_job("");
    auto row = std::make_shared<plain::NewJobRow>(plain::NewJobRow{
        job.owner_id, "", job.request_fingerprint, job.operation, job.target_provider,
        pg::to_text_array(job.failover), job.input_json, job.payload_json});
    return [connection, row](const std::string& key) {
      row->key = key;
      pqxx::result replay;
      if (plain::create(*connection, *row, replay)) return true;
      if (replay.empty() || bytes_of(replay[0]) == 0) {
        throw std::runtime_error("bench: plain SQL: a taken key has no job");
      }
      return false;
    };
  };
  auto cas = [&target]() -> CasCall {
    auto connection = raw_connection(target);
    return [connection](AttemptId attempt, JobId job) {
      std::size_t bytes = 0;
      return plain::complete(*connection, attempt, job, 1, 1, kResult, bytes);
    };
  };
  return {"plain SQL", create, cas};
}

// ---- the figures ------------------------------------------------------------------------------

// Many callers on the same keys and rows: each key, or attempt, is given to this many calls in
// a row from a side-wide counter, so the racers hit it at the same moment.
constexpr int kRacers = 8;

// Each side's threads, each with a CreateCall of its own, creating keys `key_of(i)` of a prefix
// of its own: every key fresh (`replays` false), or every key twice in a row.
std::vector<std::unique_ptr<Side>> private_key_sides(const std::vector<Caller>& callers,
                                                     int threads, bool replays) {
  static std::atomic<std::int64_t> serial{0};
  std::vector<std::unique_ptr<Side>> sides;
  for (const auto& caller : callers) {
    const std::vector<int> before = caller.pinning->pids();
    std::vector<Step> steps;
    for (int t = 0; t < threads; ++t) {
      const std::string prefix =
          std::string(caller.name) + "-" + std::to_string(serial.fetch_add(1)) + "-";
      steps.push_back([call = caller.create(), prefix, replays](std::int64_t i) {
        const bool inserted = call(prefix + std::to_string(replays ? i / 2 : i));
        if (inserted != (!replays || i % 2 == 0)) {
          throw std::runtime_error("bench: a create found a fresh key taken, or a taken key free");
        }
      });
    }
    caller.pinning->pin_since(before);
    sides.push_back(std::make_unique<Side>(caller.name, std::move(steps)));
  }
  return sides;
}

// Creates where kRacers calls at a time ask for the same fresh key: one inserts, the others
// wait on the unique constraint for it to commit, then read the job back.
struct KeyRace {
  std::string prefix;
  std::atomic<std::int64_t> next{0};
  std::atomic<std::int64_t> inserted{0};

  void check(const std::string& side) const {
    const std::int64_t keys = (next + kRacers - 1) / kRacers;
    if (inserted != keys) {
      throw std::runtime_error("bench: " + side + ": " + std::to_string(keys) +
                               " raced keys, but " + std::to_string(inserted.load()) +
                               " creates inserted");
    }
  }
};

// The rows the CAS figures complete: jobs with one RUNNING attempt each (lease token 1), made in
// two bulk statements before each round, so no side ever finds its next row missing.
class CasPool {
 public:
  explicit CasPool(const PgTarget& target) : connection_{raw_connection(target)} {}

  void refill(std::int64_t count) {
    static std::atomic<std::int64_t> batch{0};
    rows_.clear();
    pqxx::work tx{*connection_};
    const pqxx::result made = tx.exec_params(
        "WITH job AS (INSERT INTO jobs (owner_id, idempotency_key, request_fingerprint,"
        " operation, target_provider, input_json, payload_json, created_at_us)"
        " SELECT 'cas', $1 || g, 'fp', 'classify', 'alpha', '{}', '{}', 0"
        " FROM generate_series(1, $2) g RETURNING id)"
        " INSERT INTO attempts (job_id, attempt_no, provider, provider_key, origin, state,"
        " lease_owner, lease_token, created_at_us) SELECT id, 1, 'alpha', id || ':1', 'initial',"
        " 'RUNNING', 'bench', 1, 0 FROM job RETURNING id, job_id",
        "cas-" + std::to_string(batch.fetch_add(1)) + "-", count);
    tx.commit();
    for (const auto& row : made) rows_.emplace_back(row[0].as<AttemptId>(), row[1].as<JobId>());
    wins_ = std::make_unique<std::atomic<int>[]>(rows_.size());
    next_ = 0;
  }
  std::size_t size() const { return rows_.size(); }
  const std::pair<AttemptId, JobId>& operator[](std::size_t i) const {
    if (i >= rows_.size()) throw std::runtime_error("bench: the CAS pool ran out");
    return rows_[i];
  }
  std::size_t take() { return next_.fetch_add(1); }
  std::atomic<int>& wins(std::size_t i) { return wins_[i]; }

 private:
  std::shared_ptr<pqxx::connection> connection_;
  std::vector<std::pair<AttemptId, JobId>> rows_;
  std::unique_ptr<std::atomic<int>[]> wins_;
  std::atomic<std::size_t> next_{0};
};

void create_figures(const std::vector<Caller>& callers, const Settings& flags) {
  for (const bool replays : {false, true}) {
    for (const int threads : {1, 8}) {
      Plan plan;
      plan.name = std::string(replays ? "double-click storm" : "creates") + ", " +
                  std::to_string(threads) + (threads == 1 ? " connection" : " connections");
      plan.threads = threads;
      print_figure(measure(plan, private_key_sides(callers, threads, replays), flags));
    }
  }
  // The contended storm: every side's kRacers threads on one shared run of keys.
  std::vector<std::unique_ptr<KeyRace>> races;
  std::vector<std::unique_ptr<Side>> sides;
  for (const auto& caller : callers) {
    races.push_back(std::make_unique<KeyRace>());
    KeyRace& race = *races.back();
    race.prefix = std::string(caller.name) + "-race-";
    const std::vector<int> before = caller.pinning->pids();
    std::vector<Step> steps;
    for (int t = 0; t < kRacers; ++t) {
      steps.push_back([call = caller.create(), &race](std::int64_t) {
        if (call(race.prefix + std::to_string(race.next.fetch_add(1) / kRacers))) ++race.inserted;
      });
    }
    caller.pinning->pin_since(before);
    sides.push_back(std::make_unique<Side>(caller.name, std::move(steps)));
  }
  Plan plan;
  plan.name = "contended creates, 8 racers a key";
  plan.threads = kRacers;
  plan.after_round = [&] {
    for (std::size_t s = 0; s < races.size(); ++s) races[s]->check(sides[s]->name());
  };
  print_figure(measure(plan, sides, flags));
}

// Compare-and-swap: every call completes a RUNNING attempt of its own, so each one wins.
Figure cas_figure(const PgTarget& target, const std::vector<Caller>& callers, int threads,
                  const Settings& flags) {
  CasPool pool{target};
  std::vector<std::unique_ptr<Side>> sides;
  for (const auto& caller : callers) {
    const std::vector<int> before = caller.pinning->pids();
    std::vector<Step> steps;
    for (int t = 0; t < threads; ++t) {
      steps.push_back([call = caller.cas(), &pool](std::int64_t) {
        const auto& [attempt, job] = pool[pool.take()];
        if (call(attempt, job) != "won") throw std::runtime_error("bench: a fresh CAS did not win");
      });
    }
    caller.pinning->pin_since(before);
    sides.push_back(std::make_unique<Side>(caller.name, std::move(steps)));
  }
  Plan plan;
  plan.name = "CAS, " + std::to_string(threads) + (threads == 1 ? " connection" : " connections");
  plan.threads = threads;
  plan.warmup_calls = 50;
  plan.before_round = [&](std::int64_t calls) {
    pool.refill(calls * threads * static_cast<std::int64_t>(callers.size()));
  };
  return measure(plan, sides, flags);
}

// Contended CAS: kRacers threads complete the same RUNNING attempt at once. Exactly one may win;
// the others wait for its row lock and find it SUCCEEDED (state_mismatch). Each side races on
// attempts of its own.
Figure cas_race_figure(const PgTarget& target, const std::vector<Caller>& callers,
                       const Settings& flags) {
  std::vector<std::unique_ptr<CasPool>> pools;
  std::vector<std::unique_ptr<Side>> sides;
  for (const auto& caller : callers) {
    pools.push_back(std::make_unique<CasPool>(target));
    CasPool& pool = *pools.back();
    const std::vector<int> before = caller.pinning->pids();
    std::vector<Step> steps;
    for (int t = 0; t < kRacers; ++t) {
      steps.push_back([call = caller.cas(), &pool](std::int64_t) {
        const std::size_t i = pool.take() / kRacers;
        const auto& [attempt, job] = pool[i];
        const std::string outcome = call(attempt, job);
        if (outcome == "won") {
          ++pool.wins(i);
        } else if (outcome != "state_mismatch") {
          throw std::runtime_error("bench: a raced CAS answered " + outcome);
        }
      });
    }
    caller.pinning->pin_since(before);
    sides.push_back(std::make_unique<Side>(caller.name, std::move(steps)));
  }
  Plan plan;
  plan.name = "contended CAS, 8 racers an attempt";
  plan.threads = kRacers;
  plan.warmup_calls = 50;
  plan.before_round = [&](std::int64_t calls) {
    for (auto& pool : pools) pool->refill(calls + 1);
  };
  plan.after_round = [&] {
    for (std::size_t s = 0; s < pools.size(); ++s) {
      const std::size_t raced = (pools[s]->take() + kRacers - 1) / kRacers;
      for (std::size_t i = 0; i < raced && i < pools[s]->size(); ++i) {
        if (pools[s]->wins(i) != 1) {
          throw std::runtime_error("bench: " + sides[s]->name() + ": a raced attempt won " +
                                   std::to_string(pools[s]->wins(i).load()) + " times");
        }
      }
    }
  };
  return measure(plan, sides, flags);
}

}  // namespace

void postgres(const PgTarget& target, const Settings& requested) {
  // --quick keeps its promise of about a minute here too: two short rounds, figures that show
  // the bench works, not ones to plan with.
  Settings flags = requested;
  if (flags.quick) {
    flags.rounds = std::min(flags.rounds, 2);
    flags.seconds = std::min(flags.seconds, 0.3);
  }
  Pinning pinning{target};
  std::vector<Caller> callers = {pgstore_caller(target), adapter_caller(target),
                                 plain_caller(target)};
  for (auto& caller : callers) caller.pinning = &pinning;
  std::printf(
      "PostgreSQL (%s): PgStore against two baselines on the same server: \"adapter\",\n"
      "PgStore's own statements through libpqxx, and \"plain SQL\", hand-written statements\n"
      "doing the same work. After a discarded warm-up round, %d rounds; in each, every side\n"
      "runs %.2f s in %d slices ordered A B C, C B A, ..., its rate the median of its slices'.\n"
      "Rates: geometric mean over rounds (spread: (max - min) / that mean). Ratios: PgStore's\n"
      "rate over the baseline's, which is also the geometric mean of the per-round ratios; then\n"
      "the median and range of the per-round ratios.\nPlacement: %s.\n",
      target.description.c_str(), flags.rounds, flags.seconds, passes(flags),
      pinning.describe().c_str());
  std::fflush(stdout);
  create_figures(callers, flags);
  for (const int threads : {1, 8}) print_figure(cas_figure(target, callers, threads, flags));
  print_figure(cas_race_figure(target, callers, flags));
}

}  // namespace onejob::bench
