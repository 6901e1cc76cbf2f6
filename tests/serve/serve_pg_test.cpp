// `onejob serve` on PostgreSQL, under load, killed with SIGKILL and stopped with SIGTERM, then
// restarted: nothing acknowledged is lost, and every acknowledged job completes.
// Needs ONEJOB_PG_URL; without it the binary exits 77 (skipped), or fails when
// ONEJOB_REQUIRE_PG is set.

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "harness/real/http_client.hpp"
#include "harness/real/provider_stub.hpp"

#include "tests/serve/serve_process.hpp"

namespace onejob::testing {
namespace {

using nlohmann::json;
using real::HttpConnection;
using real::ProviderStub;
using namespace std::chrono_literals;
using sim::ProviderOutcome;

std::string pg_url() {
  const char* url = std::getenv("ONEJOB_PG_URL");
  if (url && *url) return url;
  if (std::getenv("ONEJOB_REQUIRE_PG")) BOOST_FAIL("ONEJOB_PG_URL is not set");
  std::cerr << "serve_pg: ONEJOB_PG_URL is not set: skipped\n";
  std::exit(77);
}

// Clients creating jobs with keys of their own, each retried with the same key and payload
// until acknowledged, across whatever happens to the server (its port may change on restart).
class Clients {
 public:
  explicit Clients(int count) {
    for (int i = 0; i < count; ++i) threads_.emplace_back([this, i] { run(i); });
  }
  ~Clients() { finish(); }
  void point_at(unsigned short port) { port_ = port; }
  // Clients stop starting new keys; each one still retries its key until acknowledged (at
  // most a minute).
  void finish() {
    stopping_ = true;
    for (auto& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }
  std::map<std::string, std::int64_t> acknowledged() const {
    std::lock_guard lock(mutex_);
    return acked_;
  }
  int split() const { return split_; }
  int unanswered() const { return unanswered_; }

 private:
  void run(int index) {
    for (int n = 0; !stopping_; ++n) {
      std::string key = std::to_string(index) + "-" + std::to_string(n);
      key.insert(key.begin(), 'c');  // not "c" + ...: g++ 12 warns (-Wrestrict) on that
      const std::string body =
          R"({"operation":"classify","provider":"alpha","input":{"text":")" + key + R"("}})";
      const auto give_up = std::chrono::steady_clock::now() + 1min;
      bool acked = false;
      while (!acked && std::chrono::steady_clock::now() < give_up) {
        HttpConnection connection("127.0.0.1", std::to_string(port_.load()));
        const auto reply = connection.send(
            "POST", "/jobs", {{"Authorization", "Bearer alice-token"}, {"Idempotency-Key", key}},
            body, 10s);
        if (reply.status == 201 || reply.status == 200) {
          const auto id = json::parse(reply.body)["job_id"].get<std::int64_t>();
          std::lock_guard lock(mutex_);
          auto [it, fresh] = acked_.emplace(key, id);
          if (!fresh && it->second != id) ++split_;
          acked = true;
        } else {
          std::this_thread::sleep_for(50ms);
        }
      }
      if (!acked) ++unanswered_;
    }
  }

  std::atomic<unsigned short> port_{0};
  std::atomic<bool> stopping_ = false;
  std::atomic<int> split_ = 0;
  std::atomic<int> unanswered_ = 0;
  mutable std::mutex mutex_;
  std::map<std::string, std::int64_t> acked_;
  std::vector<std::thread> threads_;
};

struct PgServing {
  PgServing() : tokens(write_test_tokens(dir)) {
    schema = "onejob_serve_" + std::to_string(::getpid()) + "_" + std::to_string(++runs);
  }
  std::unique_ptr<ServeProcess> start(const ProviderStub& alpha) {
    return std::make_unique<ServeProcess>(
        std::vector<std::string>{"--listen", "127.0.0.1:0", "--store", "postgres=" + pg_url(),
                                 "--schema", schema, "--tokens", tokens, "--provider",
                                 "alpha=" + alpha.url(), "--config", config, "--workers", "2",
                                 "--shutdown-grace", "5"},
        dir.path() + "/serve.log");
  }
  static inline int runs = 0;
  TempDir dir;
  std::string tokens;
  std::string schema;
  // Short leases, so that attempts a killed process held are taken over within seconds.
  std::string config = dir.write(
      "serve.yaml", "policy: {attempt_deadline: 1s, lease: 2s, reconcile_period: 300ms}\n");
};

// Every acknowledged key has its job, under the id its client was given, and it succeeded.
void every_acknowledged_job_completes(const Clients& clients, unsigned short port) {
  const auto acked = clients.acknowledged();
  BOOST_TEST_MESSAGE(acked.size() << " acknowledged jobs");
  BOOST_REQUIRE(acked.size() > 20u);
  BOOST_TEST(clients.split() == 0);
  BOOST_TEST(clients.unanswered() == 0);
  HttpConnection connection("127.0.0.1", std::to_string(port));
  int lost = 0;
  int stranded = 0;
  for (const auto& [key, id] : acked) {
    std::string status;
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    for (;;) {
      const auto reply = connection.send("GET", "/jobs/" + std::to_string(id),
                                         {{"Authorization", "Bearer alice-token"}}, "");
      if (reply.status == 404) break;
      status = json::parse(reply.body, nullptr, false).value("status", "");
      if (status == "succeeded" || std::chrono::steady_clock::now() > give_up) break;
      std::this_thread::sleep_for(100ms);
    }
    if (status.empty()) {
      ++lost;
      BOOST_TEST_MESSAGE("lost: " << key << " acknowledged as job " << id);
    } else if (status != "succeeded") {
      ++stranded;
      BOOST_TEST_MESSAGE("stranded: " << key << " job " << id << " " << status);
    }
  }
  BOOST_TEST(lost == 0);
  BOOST_TEST(stranded == 0);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(serve_pg)

BOOST_AUTO_TEST_CASE(kill_9_under_load_then_restart_loses_nothing_acknowledged) {
  ProviderStub alpha("alpha", {}, {ProviderOutcome::ok, 20ms});
  PgServing serving;
  auto process = serving.start(alpha);
  Clients clients(8);
  clients.point_at(process->port());
  std::this_thread::sleep_for(2s);
  process->signal(SIGKILL);
  BOOST_TEST(process->wait(5s) == 128 + SIGKILL);
  process = serving.start(alpha);
  clients.point_at(process->port());
  std::this_thread::sleep_for(2s);
  clients.finish();
  every_acknowledged_job_completes(clients, process->port());
}

BOOST_AUTO_TEST_CASE(sigterm_under_load_exits_within_the_grace_and_loses_nothing) {
  ProviderStub alpha("alpha", {}, {ProviderOutcome::ok, 20ms});
  PgServing serving;
  auto process = serving.start(alpha);
  Clients clients(8);
  clients.point_at(process->port());
  std::this_thread::sleep_for(2s);
  const auto signalled = std::chrono::steady_clock::now();
  process->signal(SIGTERM);
  const int code = process->wait(10s);
  const auto took = std::chrono::steady_clock::now() - signalled;
  BOOST_TEST_MESSAGE("SIGTERM to exit: " << std::chrono::duration<double>(took).count()
                                         << " s, code " << code);
  BOOST_TEST((code == 0 || code == 1));
  BOOST_TEST((took < 5s + 1s));  // the grace, and a second to exit
  process = serving.start(alpha);
  clients.point_at(process->port());
  std::this_thread::sleep_for(1s);
  clients.finish();
  every_acknowledged_job_completes(clients, process->port());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob::testing
