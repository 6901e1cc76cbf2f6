#pragma once

#include <optional>
#include <string>

#include "system/adapters/memory_store.hpp"
#include "system/events/api_events.hpp"
#include "system/events/attempt_events.hpp"
#include "system/events/certification_events.hpp"
#include "system/events/reconciler_events.hpp"
#include "system/events/worker_events.hpp"
#include "system/service/api_handler.hpp"
#include "system/service/reconciler.hpp"
#include "system/service/system_context.hpp"
#include "system/service/worker.hpp"

#include "harness/sim/rng.hpp"
#include "harness/sim/sim_loop.hpp"

#include "tests/support/fake_providers.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/typed_events.hpp"

namespace onejob::test {

// The whole reference system on MemoryStore, scripted providers and a simulated clock:
// providers alpha, beta and gamma; attempt deadline 10s, lease 20s, reconcile every 5s.
struct SystemFixture {
  SystemFixture();
  ~SystemFixture();

  // Runs `operation` until it completes, letting simulated time pass as needed (at most a day).
  void run(Async<void> operation);
  template <typename T>
  T run(Async<T> operation) {
    std::optional<T> out;
    run(store_into(std::move(operation), &out));
    return std::move(*out);
  }

  Response request(std::string method, std::string path, std::string body = "",
                   std::string owner = "alice", std::optional<std::string> key = std::nullopt);
  // POST /jobs with {"operation":"classify","provider":provider,"input":{"text":text}}.
  Response create(std::string key, std::string text = "I was charged twice",
                  std::string provider = "alpha", std::string failover_json = "[]",
                  std::string owner = "alice");
  // Runs the contract suite against a provider (its current script/default decides).
  bool certify(const std::string& provider);
  // Starts a worker (and the reconciler when asked) on the loop; they run until stopped.
  void start_worker(Worker& worker);
  void start_reconciler(Reconciler& reconciler);

  void run_until_done(const bool& done);
  template <typename T>
  static Async<void> store_into(Async<T> operation, std::optional<T>* out) {
    out->emplace(co_await std::move(operation));
  }
  std::optional<Job> job(JobId id);
  std::vector<Attempt> attempts(JobId id);

  sim::SimLoop loop;
  MemoryStore store;
  FakeProviders providers;
  RecordingSink events;
  SystemConfig config;
  sim::RngRandom random{sim::Rng{1}};
  SystemContext context;
  ApiHandler api;
};

// An HTTP request as a client sends it: `key` becomes the Idempotency-Key header.
Request make_request(std::string method, std::string path, std::string body, std::string owner,
                     std::optional<std::string> key);

// The integer "field" of a JSON response body (0 when absent).
std::int64_t json_int(const Response& response, const std::string& field);
std::string json_string(const Response& response, const std::string& field);

}  // namespace onejob::test
