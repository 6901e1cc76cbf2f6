#include "harness/scenario/runner.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <stdexcept>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "system/adapters/memory_store.hpp"
#include "system/service/api_handler.hpp"

#include "harness/scenario/expectations.hpp"
#include "harness/sim/sim_loop.hpp"

namespace onejob::scenario {
namespace {

constexpr const char* kApiNode = "api-1";

// Scenarios so far exercise the API alone: no worker runs, so nothing may call a provider.
// A call would mean the harness wired a worker without a provider simulation.
class NoProviderSimulation final : public ProviderClient {
 public:
  Async<ProviderReply> call(ProviderCall call) override {
    throw std::logic_error("provider " + call.provider + " called, but this run simulates none");
  }
  Async<ProviderStatus> status(std::string provider, std::string) override {
    throw std::logic_error("provider " + provider + " asked, but this run simulates none");
  }
};

SystemConfig system_config(const ScenarioSpec& spec) {
  SystemConfig config;
  for (const auto& provider : spec.providers) config.providers.push_back({.name = provider.name});
  config.validate();
  return config;
}

// One simulated world: clients, a client<->API link with latency, one API node, one store.
class World {
 public:
  World(const ScenarioSpec& spec, std::uint64_t seed, std::unique_ptr<Store> store)
      : spec_(spec),
        root_rng_(seed),
        loop_(root_rng_.fork("loop.ties")),
        trace_(loop_),
        store_(std::move(store)),
        api_events_(trace_, kApiNode),
        config_(system_config(spec)),
        api_context_{*store_, providers_, loop_, loop_, api_events_, config_},
        api_(api_context_),
        client_api_rng_(root_rng_.fork("net.client_api")),
        received_(spec.timeline.size()) {}

  void run() {
    for (const auto& entry : spec_.timeline) {
      loop_.schedule_at(Instant(entry.at), [this, &entry] { send(entry); });
    }
    loop_.run();
  }

  const sim::Trace& trace() const { return trace_; }
  const std::vector<std::optional<ReceivedResponse>>& received() const { return received_; }

 private:
  Duration client_api_latency() {
    const auto& latency = spec_.network.client_lb.latency;
    return Duration(client_api_rng_.between(latency.min.count(), latency.max.count()));
  }

  void send(const TimelineEntry& entry) {
    const auto& action = entry.create_job;
    const auto& client = *std::ranges::find(spec_.clients, action.client, &ClientSpec::name);
    Request request{.method = "POST",
                    .path = "/jobs",
                    .headers = {},
                    .body = action.body,
                    .principal = client.owner,
                    .request_id = "req-" + std::to_string(entry.request)};
    Event event("client.send");
    event.with("request", entry.request);
    if (action.key) {
      request.headers.emplace_back("Idempotency-Key", *action.key);
      event.with("key", *action.key);
    }
    event.with("body", action.body);
    trace_.record(client.name, std::move(event));
    loop_.schedule_after(
        client_api_latency(), [this, request = std::move(request), number = entry.request,
                               client_name = client.name]() mutable {
          boost::asio::co_spawn(
              loop_.io(), serve(this, std::move(request), number, std::move(client_name)), rethrow);
        });
  }

  // A named coroutine rather than a lambda: its parameters live in the coroutine frame.
  static Async<void> serve(World* world, Request request, int number, std::string client) {
    Response response = co_await world->api_.handle(std::move(request));
    world->loop_.schedule_after(world->client_api_latency(), [world, response = std::move(response),
                                                              number, client = std::move(client)] {
      world->receive(number, client, response);
    });
  }

  static void rethrow(std::exception_ptr error) {
    if (error) std::rethrow_exception(error);
  }

  void receive(int number, const std::string& client, const Response& response) {
    std::optional<std::int64_t> job_id;
    const auto body = nlohmann::json::parse(response.body, nullptr, false);
    if (body.is_object() && body.contains("job_id") && body["job_id"].is_number_integer()) {
      job_id = body["job_id"].get<std::int64_t>();
    }
    Event event("client.receive");
    event.with("request", number).with("status", response.status);
    if (job_id) event.with("job_id", *job_id);
    const auto& recorded = trace_.record(client, std::move(event));
    received_[number - 1] = ReceivedResponse{response.status, job_id, recorded.seq};
  }

  const ScenarioSpec& spec_;
  sim::Rng root_rng_;
  sim::SimLoop loop_;
  sim::Trace trace_;
  std::unique_ptr<Store> store_;
  sim::NodeEventSink api_events_;
  NoProviderSimulation providers_;
  SystemConfig config_;
  SystemContext api_context_;
  ApiHandler api_;
  sim::Rng client_api_rng_;
  std::vector<std::optional<ReceivedResponse>> received_;
};

}  // namespace

RunResult run_scenario(const ScenarioSpec& spec, const RunOptions& options) {
  RunResult result;
  result.name = spec.name;
  result.file = spec.file;
  result.seed = options.seed.value_or(spec.seed);
  auto store = options.make_store ? options.make_store() : std::make_unique<MemoryStore>();
  World world(spec, result.seed, std::move(store));
  std::optional<std::string> aborted;
  try {
    world.run();
  } catch (const std::exception& error) {
    aborted = error.what();
  }
  result.history = world.trace().events();
  result.trace_jsonl = world.trace().to_jsonl();
  result.trace_hash = world.trace().hash();
  if (aborted) {
    result.violations.push_back({"run", "the run aborted: " + *aborted, std::nullopt});
  }
  for (const auto& id : spec.invariants) {
    auto found = check::find_invariant(id)->check(result.history);
    result.violations.insert(result.violations.end(), found.begin(), found.end());
  }
  auto failed = check_expectations(spec, world.received(), result.history);
  result.violations.insert(result.violations.end(), failed.begin(), failed.end());
  return result;
}

}  // namespace onejob::scenario
