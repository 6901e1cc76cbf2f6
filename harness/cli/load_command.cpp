#include "harness/cli/load_command.hpp"

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "system/adapters/memory_store.hpp"
#include "system/adapters/real_time.hpp"
#include "system/service/api_handler.hpp"
#include "system/service/reconciler.hpp"
#include "system/service/worker.hpp"

#include "harness/cli/exit_codes.hpp"
#include "harness/cli/store_flag.hpp"
#include "harness/sim/complete_now.hpp"
#include "harness/sim/store_wrapper.hpp"

namespace onejob::cli {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Answers every classify call correctly after a short real wait, as a healthy provider does,
// and remembers what it answered, so the reconciler can settle an attempt whose worker lost
// the store in between.
class QuickProvider final : public ProviderClient {
 public:
  explicit QuickProvider(Timer& timer) : timer_(timer) {}
  Async<ProviderReply> call(ProviderCall call) override {
    co_await timer_.sleep_for(milliseconds(2));
    answered_.insert(call.provider_key);
    co_return ProviderReply{ProviderReply::Kind::answered, std::string(kAnswer), {}};
  }
  Async<ProviderStatus> status(std::string, std::string provider_key) override {
    if (answered_.contains(provider_key)) {
      co_return ProviderStatus{ProviderStatus::Kind::completed, std::string(kAnswer), {}};
    }
    co_return ProviderStatus{ProviderStatus::Kind::not_found, {}, {}};
  }

 private:
  static constexpr std::string_view kAnswer = R"({"label":"billing","confidence":0.9})";
  Timer& timer_;
  std::set<std::string> answered_;
};

// Counts what the system reports, by kind; keeps nothing else.
class CountingSink final : public EventSink {
 public:
  void emit(Event event) override { ++by_kind[event.kind()]; }
  std::map<std::string, std::int64_t> by_kind;
};

// One component (an API node, a worker, the reconciler) with its own store connection.
struct Node {
  std::unique_ptr<Store> store;
  SystemRandom random;
  std::unique_ptr<SystemContext> context;
};

// What one create was finally answered, after retrying 503s with the same key.
struct Answer {
  int key = 0;
  int status = 0;
  std::int64_t job_id = 0;
};

struct Tally {
  std::vector<Answer> answers;
  std::int64_t sent = 0;                 // requests, retries included
  std::int64_t unavailable = 0;          // 503s along the way
  std::int64_t escaped = 0;              // exceptions out of ApiHandler::handle (must stay 0)
  std::vector<std::string> loops_ended;  // workers or the reconciler that stopped on their own
};

std::string owner() { return "load"; }
std::string key_name(int key) { return "load-" + std::to_string(key); }
std::string body_for(int key, bool other_payload) {
  return R"({"operation":"classify","provider":"alpha","input":{"text":")" +
         std::string(other_payload ? "other " : "text ") + std::to_string(key) + R"("}})";
}

std::int64_t job_id_of(const Response& response) {
  const auto body = nlohmann::json::parse(response.body, nullptr, false);
  if (!body.is_object() || !body.contains("job_id") || !body["job_id"].is_number_integer()) {
    return 0;
  }
  return body["job_id"].get<std::int64_t>();
}

Async<void> client(ApiHandler& api, Timer& timer, int index, const LoadFlags& flags,
                   Clock::time_point until, Tally& tally) {
  std::mt19937_64 random(static_cast<std::uint64_t>(index) * 7919 + 1);
  std::int64_t request = 0;
  while (Clock::now() < until) {
    Answer answer;
    answer.key = static_cast<int>(random() % static_cast<std::uint64_t>(flags.keys));
    const bool other_payload = random() % 10 == 0;
    Request create{.method = "POST",
                   .path = "/jobs",
                   .headers = {{"Idempotency-Key", key_name(answer.key)}},
                   .body = body_for(answer.key, other_payload),
                   .principal = owner(),
                   .request_id = "c" + std::to_string(index) + "." + std::to_string(++request)};
    for (int tries = 0; tries < 200; ++tries) {
      ++tally.sent;
      Response response;
      try {
        response = co_await api.handle(create);
      } catch (const std::exception&) {
        ++tally.escaped;
        response.status = 0;
      }
      answer.status = response.status;
      answer.job_id = job_id_of(response);
      if (response.status != 503) break;
      ++tally.unavailable;
      // What Retry-After asks for, shortened: the run is short.
      co_await timer.sleep_for(milliseconds(50));
    }
    tally.answers.push_back(answer);
    co_await timer.sleep_for(milliseconds(1 + static_cast<int>(random() % 5)));
  }
}

// Reads back, on a fresh connection, every job a client was told exists. The store may still
// be restarting: connecting is retried for half a minute.
std::unique_ptr<Store> reopen(const std::function<std::unique_ptr<Store>()>& factory) {
  for (int tries = 0;; ++tries) {
    try {
      return factory();
    } catch (const StoreError& error) {
      if (tries == 300) throw;
      std::this_thread::sleep_for(milliseconds(100));
    }
  }
}

}  // namespace

int load_command(const LoadFlags& flags) {
  StoreChoice choice;
  if (auto problem = parse_store(flags.store, choice)) {
    return bad_input(*problem);
  }
  // Written so that NaN fails them too.
  if (!(flags.seconds > 0 && flags.seconds <= 86400) ||
      !(flags.drain_seconds >= 0 && flags.drain_seconds <= 86400) || flags.clients < 1 ||
      flags.clients > 256 || flags.workers < 1 || flags.workers > 256 || flags.keys < 1) {
    return bad_input(
        "load: --seconds must be in (0, 86400], --drain in [0, 86400], --clients and --workers "
        "from 1 to 256, --keys at least 1");
  }
  // One schema for the whole run, shared by every connection (the memory store: one store).
  std::unique_ptr<Store> shared;
  std::function<std::unique_ptr<Store>()> connect;
  try {
    if (choice.postgres) {
      auto schema = open_shared_schema(choice);
      shared = std::move(schema.owner);
      connect = std::move(schema.connect);
    } else {
      shared = std::make_unique<MemoryStore>();
    }
  } catch (const StoreError& error) {
    return bad_input("--store ", choice.describe(), ": ", error.what());
  }
  auto own_store = [&]() -> std::unique_ptr<Store> {
    if (!connect) return std::make_unique<sim::StoreWrapper>(*shared);
    return reopen(connect);
  };

  boost::asio::io_context io;
  SteadyClock clock;
  AsioTimer timer(io);
  QuickProvider provider(timer);
  CountingSink events;
  SystemConfig config;
  config.providers.push_back({.name = "alpha"});
  config.policy.attempt_deadline = std::chrono::seconds(2);
  config.policy.lease = std::chrono::seconds(4);
  config.policy.reconcile_period = std::chrono::seconds(1);
  config.policy.worker_poll = milliseconds(20);
  config.policy.worker_capacity = 64;
  config.validate();

  std::vector<std::unique_ptr<Node>> nodes;
  auto node = [&]() -> SystemContext& {
    auto made = std::make_unique<Node>();
    made->store = own_store();
    made->context = std::make_unique<SystemContext>(
        SystemContext{*made->store, provider, clock, timer, events, config, made->random});
    nodes.push_back(std::move(made));
    return *nodes.back()->context;
  };

  Tally tally;
  std::vector<std::unique_ptr<ApiHandler>> apis;
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < flags.clients; ++i) apis.push_back(std::make_unique<ApiHandler>(node()));
  for (int i = 0; i < flags.workers; ++i) {
    workers.push_back(std::make_unique<Worker>(node(), "worker-" + std::to_string(i + 1)));
  }
  Reconciler reconciler(node());
  auto watch = [&tally](std::string name) {
    return [&tally, name](std::exception_ptr error) {
      std::string why = "returned";
      if (error) {
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          why = e.what();
        } catch (...) {
          why = "an unknown exception";
        }
      }
      tally.loops_ended.push_back(name + ": " + why);
    };
  };
  for (auto& worker : workers) boost::asio::co_spawn(io, worker->run(), watch(worker->name()));
  boost::asio::co_spawn(io, reconciler.run(), watch("reconciler"));

  const auto started = Clock::now();
  const auto until = started + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(flags.seconds));
  int clients_done = 0;
  for (int i = 0; i < flags.clients; ++i) {
    boost::asio::co_spawn(io,
                          client(*apis[static_cast<std::size_t>(i)], timer, i, flags, until, tally),
                          [&clients_done](std::exception_ptr) { ++clients_done; });
  }
  // Clients, then the drain, then everyone stops; the loops must still be running by then.
  const auto drain_until = until + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(flags.drain_seconds));
  while (Clock::now() < drain_until || clients_done < flags.clients) {
    io.run_for(milliseconds(50));
  }
  const std::vector<std::string> ended_early = tally.loops_ended;
  for (auto& worker : workers) worker->stop();
  reconciler.stop();
  io.stop();

  // Judge on a fresh connection.
  int status_counts[600] = {};
  std::int64_t bad_status = 0;
  std::int64_t lost = 0;
  std::map<int, std::int64_t> acked_id;
  std::int64_t split = 0;
  for (const Answer& answer : tally.answers) {
    if (answer.status >= 0 && answer.status < 600) ++status_counts[answer.status];
    if (answer.status != 201 && answer.status != 200 && answer.status != 422 &&
        answer.status != 503) {
      ++bad_status;
    }
    if (answer.status == 201 || answer.status == 200) {
      auto [it, fresh] = acked_id.emplace(answer.key, answer.job_id);
      if (!fresh && it->second != answer.job_id) ++split;
    }
  }
  boost::asio::io_context check_io;
  auto reader = own_store();
  std::map<std::string, std::int64_t> jobs_by_status;
  for (const auto& [key, id] : acked_id) {
    const auto found = sim::complete_now(check_io, reader->find_job_by_key(owner(), key_name(key)));
    if (!found || found->id != id) {
      ++lost;
      if (lost <= 5) {
        std::cout << "LOST  key " << key_name(key) << ": acknowledged as job " << id
                  << ", the store has " << (found ? std::to_string(found->id) : "none") << "\n";
      }
      continue;
    }
    std::string status{to_string(found->status)};
    if (found->status == JobStatus::pending) {
      // Where it stands: the state of its latest attempt.
      const auto attempts = sim::complete_now(check_io, reader->list_attempts(found->id));
      status += attempts.empty() ? "/none" : "/" + std::string(to_string(attempts.back().state));
    }
    ++jobs_by_status[status];
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  std::printf(
      "load: %zu creates answered in %.1f s on the %s store (%lld requests, %lld 503s on"
      " the way)\n",
      tally.answers.size(), flags.seconds, choice.describe().c_str(),
      static_cast<long long>(tally.sent), static_cast<long long>(tally.unavailable));
  std::printf("answers: 201=%d 200=%d 422=%d 503=%d other=%lld\n", status_counts[201],
              status_counts[200], status_counts[422], status_counts[503],
              static_cast<long long>(bad_status));
  std::printf("acknowledged keys: %zu, lost: %lld, keys answered two job ids: %lld\n",
              acked_id.size(), static_cast<long long>(lost), static_cast<long long>(split));
  std::printf("acknowledged jobs by status:");
  for (const auto& [status, count] : jobs_by_status) {
    std::printf(" %s=%lld", status.c_str(), static_cast<long long>(count));
  }
  std::printf(
      "\nstore errors survived: workers %lld, reconciler %lld; exceptions out of the API:"
      " %lld; loops ended early: %zu; wall %.1f s\n",
      static_cast<long long>(events.by_kind["worker.store_error"]),
      static_cast<long long>(events.by_kind["reconciler.store_error"]),
      static_cast<long long>(tally.escaped), ended_early.size(), elapsed);
  for (const auto& ended : ended_early) std::cout << "ENDED " << ended << "\n";
  const bool held = bad_status == 0 && lost == 0 && split == 0 && tally.escaped == 0 &&
                    ended_early.empty() && !tally.answers.empty();
  std::cout << (held ? "load: every promise held\n" : "load: a promise was broken\n");
  return held ? kExitPass : kExitFail;
}

Command add_load_command(CLI::App& app) {
  auto flags = std::make_shared<LoadFlags>();
  auto* load = app.add_subcommand(
      "load",
      "Run the reference system for real (real time; every API node, worker and the "
      "reconciler on a store connection of its own) under clients that double-click and reuse "
      "keys, then check on a fresh connection that every create was answered "
      "201/200/422/503, no exception left the API, no worker or reconciler loop ended, and no "
      "acknowledged job was lost. Meant to run while the database is being broken (CI kills "
      "backends and restarts PostgreSQL during it).");
  load->add_option("--store", flags->store, "memory, postgres or postgres=URI")
      ->capture_default_str();
  load->add_option("--seconds", flags->seconds, "How long the clients keep creating")
      ->capture_default_str();
  load->add_option("--drain", flags->drain_seconds,
                   "Seconds the workers go on after the clients stop")
      ->capture_default_str();
  load->add_option("--clients", flags->clients, "Clients, each with its own API node")
      ->capture_default_str();
  load->add_option("--workers", flags->workers, "Workers")->capture_default_str();
  load->add_option("--keys", flags->keys, "Distinct idempotency keys the clients draw from")
      ->capture_default_str();
  load->footer("Exit codes: 0 every promise held; 1 one was broken; 2 bad flags or store.");

  return {load, [flags] { return load_command(*flags); }};
}

}  // namespace onejob::cli
