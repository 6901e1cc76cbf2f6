// `onejob bench --only serve`: HTTP creates through `onejob serve`'s Service against a server
// answering a fixed 201 over the same HTTP stack, in interleaved rounds (interleaved.hpp).

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "system/adapters/locked_store.hpp"
#include "system/adapters/memory_store.hpp"
#include "system/app/service.hpp"
#include "system/ports/store_wrapper.hpp"

#include "harness/bench/bench.hpp"
#include "harness/bench/interleaved.hpp"
#include "harness/real/fault_proxy.hpp"
#include "harness/real/http_client.hpp"
#include "harness/real/provider_stub.hpp"
#include "harness/sim/complete_now.hpp"

namespace onejob::bench {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

constexpr const char* kToken = "bench-token";
constexpr const char* kServePayload =
    R"({"operation":"classify","provider":"alpha","input":{"text":"The app crashes on login"}})";

// A server answering every request 201 with a fixed body, over the same HTTP stack (HttpServer,
// Boost.Beast) as the service: what HTTP costs by itself.
class FixedAnswer {
 public:
  FixedAnswer() : server_(accept_io_, "127.0.0.1", 0, HttpLimits{}) {
    server_.add_node(io_, "fixed", [](Request) -> Async<Response> {
      co_return Response{201, {}, R"({"job_id":1,"status":"pending"})"};
    });
    server_.start();
    thread_ = std::thread([this] { io_.run(); });
    accept_thread_ = std::thread([this] { accept_io_.run(); });
  }
  ~FixedAnswer() {
    io_.stop();
    accept_io_.stop();
    thread_.join();
    accept_thread_.join();
  }
  unsigned short port() const { return server_.port(); }

 private:
  // io_ first: destroyed last, after accept_io_'s pending accept, whose socket is io_'s.
  asio::io_context io_{1};
  asio::io_context accept_io_{1};
  asio::executor_work_guard<asio::io_context::executor_type> busy_ = asio::make_work_guard(io_);
  asio::executor_work_guard<asio::io_context::executor_type> accepting_ =
      asio::make_work_guard(accept_io_);
  HttpServer server_;
  std::thread thread_;
  std::thread accept_thread_;
};

// Each thread's call latencies, in seconds.
struct Latencies {
  explicit Latencies(int threads) : by_thread(threads) {}
  std::vector<std::vector<double>> by_thread;
  std::string describe() const {
    std::vector<double> all;
    for (const auto& each : by_thread) all.insert(all.end(), each.begin(), each.end());
    if (all.empty()) return "no calls";
    std::sort(all.begin(), all.end());
    const auto at = [&all](double q) {
      return all[std::min(all.size() - 1, static_cast<std::size_t>(q * all.size()))] * 1000;
    };
    char text[96];
    std::snprintf(text, sizeof text, "p50 %.2f ms, p99 %.2f ms", at(0.50), at(0.99));
    return text;
  }
};

// An HTTP side: `threads` keep-alive connections to `port`, each creating with keys of its own.
std::unique_ptr<Side> http_side(const std::string& name, unsigned short port, int threads,
                                Latencies& latencies, const std::string& run) {
  std::vector<Step> steps;
  for (int t = 0; t < threads; ++t) {
    auto connection = std::make_shared<real::HttpConnection>("127.0.0.1", std::to_string(port));
    auto& mine = latencies.by_thread[t];
    const std::string prefix = run + "-" + std::to_string(t) + "-";
    steps.push_back([connection, &mine, prefix](std::int64_t i) {
      const Headers headers{{"Authorization", std::string("Bearer ") + kToken},
                            {"Idempotency-Key", prefix + std::to_string(i)},
                            {"Content-Type", "application/json"}};
      const auto started = Clock::now();
      const auto reply = connection->send("POST", "/jobs", headers, kServePayload);
      mine.push_back(std::chrono::duration<double>(Clock::now() - started).count());
      if (reply.status != 201) {
        throw std::runtime_error("bench: serve: a create was answered " +
                                 std::to_string(reply.status) + " " + reply.body + reply.failure);
      }
    });
  }
  return std::make_unique<Side>(name, std::move(steps));
}

// PgStore's create called directly: `threads` connections, each inserting keys of its own.
std::unique_ptr<Side> direct_side(const PgTarget& target, int threads, Latencies& latencies,
                                  const std::string& run) {
  std::vector<Step> steps;
  for (int t = 0; t < threads; ++t) {
    std::shared_ptr<Store> store = target.connect();
    auto io = std::make_shared<asio::io_context>();
    auto& mine = latencies.by_thread[t];
    const std::string prefix = run + "-direct-" + std::to_string(t) + "-";
    steps.push_back([store, io, &mine, prefix](std::int64_t i) {
      NewJob job;
      job.owner_id = "bench";
      job.idempotency_key = prefix + std::to_string(i);
      job.request_fingerprint = std::string("POST /jobs\n") + kServePayload;
      job.operation = "classify";
      job.target_provider = "alpha";
      job.input_json = R"({"text":"The app crashes on login"})";
      job.payload_json = kServePayload;
      const auto started = Clock::now();
      const auto result = sim::complete_now(*io, store->insert_job(std::move(job)));
      mine.push_back(std::chrono::duration<double>(Clock::now() - started).count());
      if (result.outcome != InsertJobResult::Outcome::inserted) {
        throw std::runtime_error("bench: PgStore: a fresh key was not inserted");
      }
    });
  }
  return std::make_unique<Side>("PgStore", std::move(steps));
}

ServiceOptions service_options(const real::ProviderStub& alpha) {
  ServiceOptions options;
  options.port = 0;
  options.api_threads = 2;
  options.workers = 1;
  options.json_logs = false;
  options.system.providers.push_back({.name = "alpha"});
  auto endpoint = std::get<HttpProviderEndpoint>(parse_provider_url("alpha", alpha.url()));
  options.endpoints.push_back(endpoint);
  options.system.policy.worker_capacity = 64;
  auto tokens = TokenTable::parse("sha256:" + sha256_hex(kToken) + " bench\n");
  options.tokens = std::get<TokenTable>(std::move(tokens));
  return options;
}

void figures(const std::string& store, unsigned short serve_port, const PgTarget* pg,
             const Settings& settings) {
  static int runs = 0;
  FixedAnswer fixed;
  for (const int threads : {1, 8, 64}) {
    const std::string run = "r" + std::to_string(++runs);
    Latencies serve_latency(threads), fixed_latency(threads), direct_latency(threads);
    std::vector<std::unique_ptr<Side>> sides;
    sides.push_back(http_side("serve", serve_port, threads, serve_latency, run));
    sides.push_back(http_side("fixed-201", fixed.port(), threads, fixed_latency, run));
    if (pg) sides.push_back(direct_side(*pg, threads, direct_latency, run));
    Plan plan;
    plan.name = "HTTP creates on " + store + ", " + std::to_string(threads) +
                (threads == 1 ? " connection" : " connections") + " (keep-alive)";
    plan.threads = threads;
    print_figure(measure(plan, sides, settings));
    std::printf("    latency: serve %s; fixed-201 %s", serve_latency.describe().c_str(),
                fixed_latency.describe().c_str());
    if (pg) std::printf("; PgStore direct %s", direct_latency.describe().c_str());
    std::printf("\n");
    std::fflush(stdout);
  }
}

// The probe's fault proxy (no faults) in front of the service, against the service called
// directly: what the proxy's hop costs, and the rate a probe can drive through it.
void proxy_figures(unsigned short serve_port, const Settings& settings) {
  static int runs = 0;
  real::FaultProxy proxy("127.0.0.1", std::to_string(serve_port), std::vector<real::ProxyRule>{});
  for (const int threads : {1, 8}) {
    const std::string run = "p" + std::to_string(++runs);
    Latencies proxy_latency(threads), direct_latency(threads);
    std::vector<std::unique_ptr<Side>> sides;
    sides.push_back(http_side("via probe proxy", proxy.port(), threads, proxy_latency, run));
    sides.push_back(http_side("serve direct", serve_port, threads, direct_latency, run + "d"));
    Plan plan;
    plan.name = "probe proxy, HTTP creates on memory, " + std::to_string(threads) +
                (threads == 1 ? " connection" : " connections") + " (keep-alive)";
    plan.threads = threads;
    print_figure(measure(plan, sides, settings));
    std::printf("    latency: via probe proxy %s; serve direct %s\n",
                proxy_latency.describe().c_str(), direct_latency.describe().c_str());
    std::fflush(stdout);
  }
}

}  // namespace

void serve(const Settings& settings, const PgTarget* pg) {
  std::printf(
      "serve: HTTP creates (POST /jobs, a fresh key each, keep-alive) through onejob serve's "
      "service (2 API threads, 1 worker, a provider stub), against a server answering a fixed "
      "201 over the same HTTP stack (Boost.Beast); %s\n",
      pg ? "on PostgreSQL also beside PgStore's create called directly" : "on the memory store");
  real::ProviderStub alpha("alpha", {});
  {
    MemoryStore memory;
    LockedStore locked(memory);
    auto options = service_options(alpha);
    options.connect = [&locked](EventSink&) -> std::unique_ptr<Store> {
      return std::make_unique<StoreWrapper>(locked);
    };
    std::ostringstream log;
    Service service(std::move(options), log);
    service.start();
    figures("memory", service.port(), nullptr, settings);
    proxy_figures(service.port(), settings);
    service.stop();
  }
  if (!pg) return;
  auto options = service_options(alpha);
  options.connect = [pg](EventSink&) { return pg->connect(); };
  std::ostringstream log;
  Service service(std::move(options), log);
  service.start();
  figures("PostgreSQL", service.port(), pg, settings);
  service.stop();
}

}  // namespace onejob::bench
