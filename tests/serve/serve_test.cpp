// `onejob serve` over real sockets: a real HTTP client against the process, providers as HTTP
// stubs, signals and kill -9.

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "system/adapters/locked_store.hpp"
#include "system/adapters/memory_store.hpp"
#include "system/app/service.hpp"
#include "system/ports/store_wrapper.hpp"

#include "harness/real/http_client.hpp"
#include "harness/real/provider_stub.hpp"

#include "tests/serve/serve_process.hpp"

namespace onejob::testing {
namespace {

using nlohmann::json;
using real::HttpConnection;
using real::HttpReply;
using real::ProviderStub;
using real::StubCall;
using namespace std::chrono_literals;
using sim::ProviderOutcome;

const std::string kClassify =
    R"({"operation":"classify","provider":"alpha","input":{"text":"The app crashes on login"}})";

Headers auth(const std::string& token, const std::string& key = {}) {
  Headers headers{{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}};
  if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
  return headers;
}

// The stub's executions for attempts (its certification's left out).
std::vector<real::StubExecution> attempts_at(const ProviderStub& stub) {
  auto executions = stub.executions();
  std::erase_if(executions, [](const auto& execution) { return execution.purpose != "attempt"; });
  return executions;
}

json body_of(const HttpReply& reply) { return json::parse(reply.body, nullptr, false); }

// A serve process on a config file of its own, with its providers' stubs.
struct Serving {
  Serving(const std::string& extra_config, const std::vector<const ProviderStub*>& stubs,
          std::vector<std::string> flags = {}) {
    std::string config = "listen: 127.0.0.1:0\ntokens: " + write_test_tokens(dir) +
                         "\nshutdown_grace: 5s\n" + extra_config + "\nproviders:\n";
    for (const ProviderStub* stub : stubs) {
      config += "  - {name: " + stub->name() + ", url: \"" + stub->url() + "\", certify: true}\n";
    }
    flags.insert(flags.begin(), {"--config", dir.write("serve.yaml", config)});
    process = std::make_unique<ServeProcess>(flags, dir.path() + "/serve.log");
  }
  HttpConnection connect() const { return HttpConnection("127.0.0.1", process->port_text()); }
  // What the process wrote on stderr (its JSON event lines), for a failure's message.
  std::string log() const {
    std::ifstream in(dir.path() + "/serve.log");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  TempDir dir;
  std::unique_ptr<ServeProcess> process;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(serve)

BOOST_AUTO_TEST_CASE(sixty_four_concurrent_identical_creates_make_one_job) {
  ProviderStub alpha("alpha", {});
  Serving serving("api_threads: 4", {&alpha});
  constexpr int kClients = 64;
  std::vector<HttpReply> replies(kClients);
  std::atomic<int> ready = 0;
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      HttpConnection connection = serving.connect();
      // Connected first, then all at once.
      connection.send("GET", "/healthz", {}, "");
      ++ready;
      while (ready < kClients) std::this_thread::yield();
      replies[i] = connection.send("POST", "/jobs", auth("alice-token", "double-click"), kClassify);
    });
  }
  for (auto& client : clients) client.join();
  std::set<std::int64_t> ids;
  int created = 0;
  for (const auto& reply : replies) {
    BOOST_REQUIRE_MESSAGE(reply.status == 201 || reply.status == 200,
                          "status " << reply.status << " " << reply.body << reply.failure);
    created += reply.status == 201;
    ids.insert(body_of(reply)["job_id"].get<std::int64_t>());
  }
  BOOST_TEST(ids.size() == 1u);
  BOOST_TEST(created == 1);
  // And it runs once: one execution at the provider.
  auto connection = serving.connect();
  const auto job = wait_for(
      [&] {
        return body_of(connection.send("GET", "/jobs/" + std::to_string(*ids.begin()),
                                       auth("alice-token"), ""));
      },
      [](const json& body) { return body.value("status", "") == "succeeded"; }, 20s);
  BOOST_TEST(job.value("status", "") == "succeeded");
  BOOST_TEST(attempts_at(alpha).size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_reused_key_with_another_payload_is_422_and_stores_nothing) {
  ProviderStub alpha("alpha", {});
  Serving serving("", {&alpha});
  auto connection = serving.connect();
  const auto first = connection.send("POST", "/jobs", auth("alice-token", "k-reuse"), kClassify);
  BOOST_REQUIRE(first.status == 201);
  auto other = json::parse(kClassify);
  other["input"]["text"] = "Another text entirely";
  const auto reused =
      connection.send("POST", "/jobs", auth("alice-token", "k-reuse"), other.dump());
  BOOST_TEST(reused.status == 422);
  BOOST_TEST(body_of(reused).value("error", "") == "idempotency_key_reused");
  BOOST_TEST(!body_of(reused).contains("job_id"));
  // The same key is another owner's own: bob's create is a job of his.
  const auto bobs = connection.send("POST", "/jobs", auth("bob-token", "k-reuse"), other.dump());
  BOOST_TEST(bobs.status == 201);
  BOOST_TEST(body_of(bobs)["job_id"] != body_of(first)["job_id"]);
}

BOOST_AUTO_TEST_CASE(a_retry_while_an_attempt_is_unknown_is_409) {
  ProviderStub alpha("alpha", {StubCall{ProviderOutcome::hang, 0ms}});
  ProviderStub beta("beta", {});
  Serving serving("policy: {attempt_deadline: 1s, lease: 3s, reconcile_period: 1h}",
                  {&alpha, &beta});
  auto connection = serving.connect();
  const auto created = connection.send("POST", "/jobs", auth("alice-token", "k-hang"), kClassify);
  BOOST_REQUIRE(created.status == 201);
  const std::string job = "/jobs/" + std::to_string(body_of(created)["job_id"].get<std::int64_t>());
  const auto seen =
      wait_for([&] { return body_of(connection.send("GET", job, auth("alice-token"), "")); },
               [](const json& body) { return body.value("blocked", false); }, 20s);
  BOOST_REQUIRE_MESSAGE(seen.value("blocked", false), seen.dump());
  BOOST_TEST(seen["attempts"][0]["state"] == "UNKNOWN");
  BOOST_TEST(seen.value("status", "") != "failed");
  // A plain retry (the job's own provider), and one on the certified fallback.
  for (const std::string& body : {std::string(), json{{"provider", "beta"}}.dump()}) {
    // A retry needs its provider certified, which takes a moment after the start (422
    // provider_not_certified until then).
    const auto retry = wait_for(
        [&] {
          return connection.send("POST", job + "/attempts",
                                 auth("alice-token", "r-" + std::to_string(body.size())), body);
        },
        [](const HttpReply& reply) { return reply.status != 422; }, 20s);
    BOOST_TEST(retry.status == 409, serving.log());
    BOOST_TEST(body_of(retry).value("error", "") == "attempt_in_flight");
  }
  BOOST_TEST(attempts_at(alpha).size() == 1u);
  BOOST_TEST(attempts_at(beta).empty());
}

BOOST_AUTO_TEST_CASE(reverse_order_completion_the_first_to_return_wins) {
  ProviderStub alpha("alpha", {StubCall{ProviderOutcome::ok, 3s}});
  ProviderStub beta("beta", {});
  Serving serving("policy: {attempt_deadline: 20s, lease: 40s}", {&alpha, &beta});
  auto connection = serving.connect();
  // The fallback is certified before it may be retried on.
  wait_for([&] { return beta.executions().size(); }, [](std::size_t n) { return n >= 1; }, 20s);
  const auto created =
      connection.send("POST", "/jobs", auth("alice-token", "k-reverse"), kClassify);
  BOOST_REQUIRE(created.status == 201);
  const std::string job = "/jobs/" + std::to_string(body_of(created)["job_id"].get<std::int64_t>());
  // Attempt 1 is under way at alpha; an operator cancels it and retries on beta.
  wait_for([&] { return attempts_at(alpha).size(); }, [](std::size_t n) { return n >= 1; }, 20s);
  const auto first = body_of(connection.send("GET", job, auth("alice-token"), ""));
  const auto attempt = first["attempts"][0]["attempt_id"].get<std::int64_t>();
  const auto cancel = connection.send("POST", "/attempts/" + std::to_string(attempt) + "/cancel",
                                      auth("alice-ops", "cancel-1"), "");
  BOOST_REQUIRE_MESSAGE(cancel.status == 200, cancel.status << " " << cancel.body);
  const auto retry = wait_for(
      [&] {
        return connection.send("POST", job + "/attempts", auth("alice-token", "retry-1"),
                               R"({"provider":"beta"})");
      },
      [](const HttpReply& reply) { return reply.status == 201; }, 20s);
  BOOST_REQUIRE_MESSAGE(retry.status == 201, retry.status << " " << retry.body);
  const auto won =
      wait_for([&] { return body_of(connection.send("GET", job, auth("alice-token"), "")); },
               [](const json& body) { return body.value("status", "") == "succeeded"; }, 20s);
  BOOST_REQUIRE_MESSAGE(won.value("status", "") == "succeeded", won.dump());
  BOOST_TEST(won["completed_by"] == body_of(retry)["attempt_id"]);
  // Alpha's answer arrives after beta's and is discarded: the result never changes.
  const auto late = wait_for(
      [&] { return body_of(connection.send("GET", job, auth("alice-token"), "")); },
      [](const json& body) { return body["attempts"][0].value("state", "") == "DISCARDED"; }, 20s);
  BOOST_TEST(late["attempts"][0]["state"] == "DISCARDED");
  BOOST_TEST(late["result"] == won["result"]);
  BOOST_TEST(late["completed_by"] == won["completed_by"]);
  const auto executions = attempts_at(beta);
  BOOST_REQUIRE(executions.size() == 1u);
  BOOST_TEST(attempts_at(alpha).size() == 1u);
  BOOST_TEST(json::parse(executions.back().output) == won["result"]);
}

BOOST_AUTO_TEST_CASE(tokens_and_owners) {
  ProviderStub alpha("alpha", {});
  Serving serving("", {&alpha});
  auto connection = serving.connect();
  const auto created = connection.send("POST", "/jobs", auth("alice-token", "k-own"), kClassify);
  BOOST_REQUIRE(created.status == 201);
  const auto id = body_of(created)["job_id"].get<std::int64_t>();
  const std::string job = "/jobs/" + std::to_string(id);
  // Missing, unknown, malformed: 401, with the scheme to use.
  for (const Headers& headers :
       {Headers{}, Headers{{"Authorization", "Bearer wrong-token"}},
        Headers{{"Authorization", "Basic YWxpY2U6eA=="}}, Headers{{"Authorization", "Bearer"}},
        Headers{{"Authorization", "alice-token"}}, Headers{{"X-Principal", "alice"}},
        Headers{{"X-Owner", "alice"}, {"Authorization", "Bearer ALICE-TOKEN"}}}) {
    const auto reply = connection.send("GET", job, headers, "");
    BOOST_TEST(reply.status == 401);
    BOOST_TEST(find_header(reply.headers, "WWW-Authenticate").value_or("") == "Bearer");
    BOOST_TEST(body_of(reply).value("error", "") == "unauthenticated");
    BOOST_TEST(!body_of(reply).contains("status"));
    const auto create = connection.send("POST", "/jobs", headers, kClassify);
    BOOST_TEST(create.status == 401);
  }
  // Another owner's job is as absent as a missing one: same status, same body.
  const auto bobs = connection.send("GET", job, auth("bob-token"), "");
  const auto missing = connection.send("GET", "/jobs/999999", auth("bob-token"), "");
  BOOST_TEST(bobs.status == 404);
  BOOST_TEST(body_of(bobs).dump() == body_of(missing).dump());
  BOOST_TEST(connection.send("POST", job + "/attempts", auth("bob-token", "r-1"), "").status ==
             404);
  const auto attempt =
      wait_for([&] { return body_of(connection.send("GET", job, auth("alice-token"), "")); },
               [](const json& body) { return !body["attempts"].empty(); }, 20s);
  const std::string cancel =
      "/attempts/" + std::to_string(attempt["attempts"][0]["attempt_id"].get<std::int64_t>()) +
      "/cancel";
  // Cancelling needs an operator token, and the operator of another owner sees nothing.
  const auto by_owner = connection.send("POST", cancel, auth("alice-token", "c-1"), "");
  BOOST_TEST(by_owner.status == 403);
  BOOST_TEST(body_of(by_owner).value("error", "") == "operator_only");
  // Another method on a cancel's path is the API's 405 for anyone, as in the simulation.
  BOOST_TEST(connection.send("GET", cancel, auth("alice-token"), "").status == 405);
  BOOST_TEST(connection.send("POST", cancel, auth("bob-ops", "c-2"), "").status == 404);
  // Alice's token reads her job; bob's create with her key is his own job.
  BOOST_TEST(connection.send("GET", job, auth("alice-token"), "").status == 200);
}

// Connections are bounded: one past max_connections is closed at once, unanswered, until another
// closes; one that never sends a byte is closed at the idle timeout.
BOOST_AUTO_TEST_CASE(surplus_and_silent_connections_are_closed) {
  ProviderStub alpha("alpha", {});
  Serving serving("limits: {request_timeout: 1s, idle_timeout: 2s, max_connections: 4}", {&alpha});
  const std::string host = "127.0.0.1";
  const std::string port = serving.process->port_text();
  const std::string healthz = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  {
    std::vector<std::unique_ptr<HttpConnection>> held;
    for (int i = 0; i < 4; ++i) {
      held.push_back(std::make_unique<HttpConnection>(host, port));
      BOOST_TEST(held.back()->send("GET", "/healthz", {}, "", 2s).status == 200);
    }
    BOOST_TEST(HttpConnection::raw(host, port, healthz, 1s).empty());
    held.pop_back();
    bool answered = false;
    for (int tries = 0; tries < 10 && !answered; ++tries) {
      answered = HttpConnection::raw(host, port, healthz, 1s).starts_with("HTTP/1.1 200");
      if (!answered) std::this_thread::sleep_for(100ms);
    }
    BOOST_TEST(answered, "a connection was refused after one of the four closed");
  }
  const auto started = std::chrono::steady_clock::now();
  BOOST_TEST(HttpConnection::raw(host, port, "", 8s).empty());
  BOOST_TEST((std::chrono::steady_clock::now() - started < 5s),
             "a silent connection outlived the 2 s idle timeout");
}

// /readyz asks the node's own store: 503 store_unavailable while it does not answer (a load
// balancer then sends nothing there), 200 again once it does. In process, so that the store can
// be cut off and given back.
BOOST_AUTO_TEST_CASE(readiness_follows_the_store) {
  MemoryStore memory;
  LockedStore locked(memory);
  std::atomic<bool> cut_off{false};
  struct CutOff final : StoreWrapper {
    CutOff(Store& target, std::atomic<bool>& cut) : StoreWrapper(target), cut_(cut) {}
    Async<std::optional<Job>> find_job(std::string owner_id, JobId id) override {
      if (cut_) throw StoreError(StoreError::Kind::unavailable, "the store is cut off");
      return StoreWrapper::find_job(std::move(owner_id), id);
    }
    std::atomic<bool>& cut_;
  };
  ServiceOptions options;
  options.port = 0;
  options.api_threads = 1;
  options.workers = 1;
  options.connect = [&](EventSink&) -> std::unique_ptr<Store> {
    return std::make_unique<CutOff>(locked, cut_off);
  };
  std::ostringstream log;
  Service service(std::move(options), log);
  service.start();
  HttpConnection connection("127.0.0.1", std::to_string(service.port()));
  BOOST_TEST(connection.send("GET", "/readyz", {}, "").status == 200);
  cut_off = true;
  const HttpReply unready = connection.send("GET", "/readyz", {}, "");
  BOOST_TEST(unready.status == 503);
  BOOST_TEST(body_of(unready).value("error", "") == "store_unavailable");
  cut_off = false;
  BOOST_TEST(connection.send("GET", "/readyz", {}, "").status == 200);
  BOOST_TEST(service.stop());
}

BOOST_AUTO_TEST_CASE(hostile_requests_over_the_socket) {
  ProviderStub alpha("alpha", {});
  Serving serving("limits: {request_timeout: 1s, idle_timeout: 10s, max_connections: 64}",
                  {&alpha});
  const std::string host = "127.0.0.1";
  const std::string port = serving.process->port_text();
  const long rss_before = serving.process->rss_kib();
  const auto status_line = [](const std::string& raw) { return raw.substr(0, raw.find("\r\n")); };
  // Oversized headers: 431, and the connection closes.
  const std::string big_header =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(64 * 1024, 'a') + "\r\n\r\n";
  BOOST_TEST(status_line(HttpConnection::raw(host, port, big_header, 5s)) ==
             "HTTP/1.1 431 Request Header Fields Too Large");
  // A body over 1 MiB: 413 before it is read.
  const std::string big_body =
      "POST /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer alice-token\r\n"
      "Idempotency-Key: big\r\nContent-Length: 2000000\r\n\r\n" +
      std::string(2'000'000, '{');
  const std::string too_large = HttpConnection::raw(host, port, big_body, 5s);
  BOOST_TEST(status_line(too_large) == "HTTP/1.1 413 Payload Too Large");
  // Named with the contract's word for a 413, as the API names one it reads whole.
  BOOST_TEST(too_large.find(R"("error":"payload_too_large")") != std::string::npos, too_large);
  // Answered from the header alone: the body is never awaited (its request timeout would cut
  // the connection first, with no answer).
  BOOST_TEST(status_line(HttpConnection::raw(
                 host, port,
                 "POST /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer alice-token\r\n"
                 "Idempotency-Key: big-2\r\nContent-Length: 2000000\r\n\r\n",
                 5s)) == "HTTP/1.1 413 Payload Too Large");
  // Pipelined: a good request answered, then garbage answered 400 and the connection closed.
  const std::string pipelined =
      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE \x01\x02 NOT HTTP\r\n\r\n"
      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string answers = HttpConnection::raw(host, port, pipelined, 5s);
  BOOST_TEST(answers.starts_with("HTTP/1.1 200 OK"));
  BOOST_TEST(answers.find("HTTP/1.1 400 Bad Request") != std::string::npos);
  BOOST_TEST(answers.find("HTTP/1.1 200", 10) == std::string::npos);  // nothing after the 400
  // JSON nested 100,000 deep: 400, nothing stored.
  auto connection = serving.connect();
  const auto deep = connection.send("POST", "/jobs", auth("alice-token", "deep"),
                                    std::string(100'000, '[') + std::string(100'000, ']'));
  BOOST_TEST(deep.status == 400);
  // Slowloris: a header a byte at a time is cut off at the request timeout (1 s), well before
  // the idle timeout (10 s).
  {
    const auto started = std::chrono::steady_clock::now();
    std::thread slow([&] {
      HttpConnection::raw(host, port, "POST /jobs HTTP/1.1\r\nHost: x\r\nX-Slow: a", 15s);
    });
    slow.join();
    BOOST_TEST((std::chrono::steady_clock::now() - started < 5s));
  }
  // Connections beyond the limit are closed at once; the server goes on answering.
  {
    std::vector<std::unique_ptr<HttpConnection>> idle;
    for (int i = 0; i < 100; ++i) {
      idle.push_back(std::make_unique<HttpConnection>(host, port));
      idle.back()->send("GET", "/healthz", {}, "", 2s);
    }
  }
  // Random bytes: answered 400 or closed, never a crash.
  std::mt19937_64 random(7);
  for (int i = 0; i < 300; ++i) {
    std::string bytes(1 + random() % 2000, '\0');
    for (auto& byte : bytes) byte = static_cast<char>(random());
    if (i % 2 == 0) bytes = "POST /jobs HTTP/1.1\r\n" + bytes;
    const std::string raw = HttpConnection::raw(host, port, bytes, 3s);
    BOOST_TEST((raw.empty() || raw.starts_with("HTTP/1.1 400") || raw.starts_with("HTTP/1.1 431") ||
                raw.starts_with("HTTP/1.1 413")),
               "answer to random bytes #" << i << ": " << status_line(raw));
  }
  const auto alive = serving.connect().send("GET", "/healthz", {}, "");
  BOOST_TEST(alive.status == 200);
  const long rss_after = serving.process->rss_kib();
  BOOST_TEST_MESSAGE("serve RSS before the corpus " << rss_before << " KiB, after " << rss_after
                                                    << " KiB");
  BOOST_TEST(rss_after - rss_before < 100 * 1024);
  BOOST_TEST(serving.process->wait(0ms) == -1);  // still running
}

BOOST_AUTO_TEST_CASE(operable_health_readiness_metrics_and_a_clean_sigterm) {
  ProviderStub alpha("alpha", {});
  Serving serving("", {&alpha});
  auto connection = serving.connect();
  BOOST_TEST(connection.send("GET", "/healthz", {}, "").status == 200);
  BOOST_TEST(connection.send("GET", "/readyz", {}, "").status == 200);
  const auto created = connection.send("POST", "/jobs", auth("alice-token", "k-m"), kClassify);
  BOOST_REQUIRE(created.status == 201);
  const auto metrics =
      wait_for([&] { return connection.send("GET", "/metrics", {}, "").body; },
               [](const std::string& text) {
                 return text.find("onejob_cas_total{outcome=\"won\"} 1") != std::string::npos;
               },
               20s);
  BOOST_TEST(metrics.find("onejob_http_requests_total{route=\"create_job\",status=\"201\"} 1") !=
                 std::string::npos,
             metrics);
  BOOST_TEST(metrics.find("onejob_cas_total{outcome=\"won\"} 1") != std::string::npos);
  BOOST_TEST(
      metrics.find("onejob_provider_calls_total{provider=\"alpha\",outcome=\"answered\"} 1") !=
      std::string::npos);
  BOOST_TEST(metrics.find("onejob_http_request_duration_seconds_count{route=\"create_job\"} 1") !=
             std::string::npos);
  serving.process->signal(SIGTERM);
  BOOST_TEST(serving.process->wait(10s) == 0);
  // One JSON line per event on stderr.
  std::ifstream log(serving.dir.path() + "/serve.log");
  std::string line;
  int events = 0;
  bool created_seen = false;
  while (std::getline(log, line)) {
    if (!line.starts_with("{")) continue;
    const auto event = json::parse(line, nullptr, false);
    BOOST_TEST(!event.is_discarded(), line);
    ++events;
    created_seen = created_seen || event.value("event", "") == "job.created";
  }
  BOOST_TEST(events > 4);
  BOOST_TEST(created_seen);
}

BOOST_AUTO_TEST_CASE(bad_config_is_named_with_file_line_col_and_exit_2) {
  TempDir dir;
  const std::string tokens = write_test_tokens(dir);
  const auto run = [&](const std::string& config) {
    const std::string file = dir.write("bad.yaml", config);
    const std::string command =
        std::string(ONEJOB_BINARY) + " serve --config " + file + " 2>" + dir.path() + "/err.txt";
    const int status = std::system(command.c_str());
    std::ifstream err(dir.path() + "/err.txt");
    std::stringstream text;
    text << err.rdbuf();
    return std::make_pair(WEXITSTATUS(status), text.str());
  };
  auto [code, message] = run("tokens: " + tokens + "\npolicy: {lease: 1s, attempt_deadline: 2s}\n");
  BOOST_TEST(code == 2);
  BOOST_TEST(message.find("bad.yaml:2:") != std::string::npos, message);
  std::tie(code, message) = run("tokens: " + tokens + "\nlisten: nowhere\n");
  BOOST_TEST(code == 2);
  BOOST_TEST(message.find("bad.yaml:2:9: listen: expected HOST:PORT") != std::string::npos,
             message);
  std::tie(code, message) = run("tokens: " + tokens + "\nprovidres: []\n");
  BOOST_TEST(code == 2);
  BOOST_TEST(message.find("bad.yaml:2:1:") != std::string::npos, message);
  std::tie(code, message) =
      run("tokens: " + tokens + "\nproviders: [{name: a, url: \"https://x:1\"}]\n");
  BOOST_TEST(code == 2);
  BOOST_TEST(message.find("http://") != std::string::npos, message);
  const std::string plain = dir.write("plain.txt", "alice-token alice\n");
  std::tie(code, message) = run("tokens: " + plain + "\n");
  BOOST_TEST(code == 2);
  BOOST_TEST(message.find("plain.txt:1:1:") != std::string::npos, message);
  BOOST_TEST(message.find("alice-token") == std::string::npos, message);  // never echoed
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob::testing
