// HttpProviderClient over real sockets on 127.0.0.1: what it sends, how an answer, a refusal and
// each transport failure map to the port's outcomes (as the simulated network's do), status
// lookups, and parse_provider_url. The provider is an HttpServer where it behaves, and a raw
// acceptor where it must misbehave. Timing is checked loosely (a real clock on a shared machine).
#include "system/adapters/http_provider.hpp"

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <array>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "system/adapters/http_server.hpp"
#include "system/adapters/real_time.hpp"
#include "system/service/http.hpp"

namespace onejob {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using tcp = asio::ip::tcp;

// One thread's io_context and a real clock; a client's call runs on it to its end.
struct Loop {
  ~Loop() { drain(); }

  // Runs `operation` (and whatever else is on io) until it ends; a call still running after
  // 10 s fails the test instead of hanging it.
  template <typename T>
  T finish(Async<T> operation) {
    std::optional<T> value;
    std::exception_ptr error;
    asio::co_spawn(io, std::move(operation), [&](std::exception_ptr e, T result) {
      error = e;
      value = std::move(result);
      io.stop();
    });
    io.restart();
    io.run_for(seconds(10));
    if (error) std::rethrow_exception(error);
    BOOST_REQUIRE_MESSAGE(value.has_value(), "the client's coroutine never ended");
    return std::move(*value);
  }

  // Lets the servers' coroutines end (a closed connection, a shut-down server).
  void drain() {
    io.restart();
    io.run_for(seconds(2));
  }

  asio::io_context io{1};
  SteadyClock clock;
};

HttpProviderEndpoint endpoint_at(unsigned short port, const std::string& base_path = "") {
  auto parsed = parse_provider_url("p", "http://127.0.0.1:" + std::to_string(port) + base_path);
  BOOST_REQUIRE(std::holds_alternative<HttpProviderEndpoint>(parsed));
  return std::get<HttpProviderEndpoint>(std::move(parsed));
}

ProviderCall a_call(Instant deadline) {
  ProviderCall call;
  call.purpose = CallPurpose::certification;
  call.provider = "p";
  call.provider_key = "job-7:2";
  call.operation = "summarize";
  call.prompt = "Summarize: hello";
  call.input_json = R"({"n":[1,2],"text":"hello"})";
  call.temperature = 0.25;
  call.deadline = deadline;
  return call;
}

// A provider that answers every request with `answer` and keeps what it received.
struct ScriptedProvider {
  Async<Response> handle(Request request) {
    received.push_back(std::move(request));
    co_return answer;
  }

  Response answer{200, {}, R"({"output":"ok"})"};
  std::vector<Request> received;
};

// A ScriptedProvider behind an HttpServer, and a client of it, all on one Loop.
struct ProviderOverHttp {
  explicit ProviderOverHttp(const std::string& base_path = "")
      : server(loop.io, "127.0.0.1", 0, HttpLimits{}),
        client(loop.io, loop.clock, {endpoint_at(server.port(), base_path)}) {
    server.add_node(loop.io, "provider",
                    [this](Request request) { return provider.handle(std::move(request)); });
    server.start();
  }
  // The server's coroutines must end before it goes: they refer to it.
  ~ProviderOverHttp() {
    server.shutdown();
    loop.drain();
  }

  ProviderReply call(Instant deadline) { return loop.finish(client.call(a_call(deadline))); }
  ProviderStatus status(std::string key) { return loop.finish(client.status("p", std::move(key))); }

  Loop loop;
  ScriptedProvider provider;
  HttpServer server;
  HttpProviderClient client;
};

tcp::acceptor listening(asio::io_context& io) {
  return tcp::acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
}

// A port on 127.0.0.1 that nobody listens on (refuses connections), barring a race with another
// process that binds it in between.
unsigned short a_closed_port() {
  asio::io_context io;
  return listening(io).local_endpoint().port();
}

// Accepts one connection, reads the start of the request, and closes without answering.
Async<void> hang_up_after_reading(tcp::acceptor acceptor) {
  tcp::socket socket = co_await acceptor.async_accept(use_async);
  std::array<char, 16> start{};
  co_await socket.async_read_some(asio::buffer(start), use_async);
}

// Accepts one connection and never answers; reads and drops bytes until the client goes.
Async<void> never_answer(tcp::acceptor acceptor) {
  tcp::socket socket = co_await acceptor.async_accept(use_async);
  std::array<char, 1024> sink{};
  error_code ec;
  while (!ec) {
    co_await socket.async_read_some(asio::buffer(sink), asio::redirect_error(use_async, ec));
  }
}

// A client of a raw acceptor that `behaviour` serves.
struct MisbehavingProvider {
  MisbehavingProvider(Async<void> (*behaviour)(tcp::acceptor), milliseconds status_timeout)
      : acceptor(listening(loop.io)),
        endpoint(endpoint_at(acceptor.local_endpoint().port())),
        client(loop.io, loop.clock, {with_status_timeout(endpoint, status_timeout)}) {
    asio::co_spawn(loop.io, behaviour(std::move(acceptor)), asio::detached);
  }
  static HttpProviderEndpoint with_status_timeout(HttpProviderEndpoint e, milliseconds timeout) {
    e.status_timeout = timeout;
    return e;
  }

  Loop loop;
  tcp::acceptor acceptor;
  HttpProviderEndpoint endpoint;
  HttpProviderClient client;
};

std::string reason_of(const std::variant<HttpProviderEndpoint, std::string>& parsed) {
  return std::holds_alternative<std::string>(parsed) ? std::get<std::string>(parsed) : "";
}

BOOST_AUTO_TEST_SUITE(http_provider)

// ---- nothing sent: rejected ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_refused_connection_is_rejected_as_not_sent) {
  Loop loop;
  HttpProviderClient client(loop.io, loop.clock, {endpoint_at(a_closed_port())});
  const ProviderReply reply = loop.finish(client.call(a_call(loop.clock.now() + seconds(2))));
  BOOST_TEST(to_string(reply.kind) == "rejected");
  BOOST_TEST(reply.reason.starts_with("not sent"), reply.reason);
}

BOOST_AUTO_TEST_CASE(a_deadline_already_passed_is_rejected_as_not_sent_and_nothing_arrives) {
  ProviderOverHttp net;
  const ProviderReply reply = net.call(net.loop.clock.now() - milliseconds(1));
  BOOST_TEST(to_string(reply.kind) == "rejected");
  BOOST_TEST(reply.reason.starts_with("not sent"), reply.reason);
  BOOST_TEST(net.provider.received.empty());
}

// ---- sent, then no answer: maybe_delivered ---------------------------------------------------

BOOST_AUTO_TEST_CASE(a_connection_broken_after_the_request_is_maybe_delivered) {
  MisbehavingProvider net(hang_up_after_reading, seconds(5));
  const ProviderReply reply =
      net.loop.finish(net.client.call(a_call(net.loop.clock.now() + seconds(2))));
  BOOST_TEST(to_string(reply.kind) == "maybe_delivered");
  BOOST_TEST(reply.reason.starts_with("connection broke"), reply.reason);
}

BOOST_AUTO_TEST_CASE(no_answer_by_the_deadline_is_maybe_delivered_at_about_the_deadline) {
  MisbehavingProvider net(never_answer, seconds(5));
  const Instant start = net.loop.clock.now();
  const ProviderReply reply = net.loop.finish(net.client.call(a_call(start + milliseconds(300))));
  const Duration took = net.loop.clock.now() - start;
  BOOST_TEST(to_string(reply.kind) == "maybe_delivered");
  BOOST_TEST(reply.reason.starts_with("no answer within"), reply.reason);
  BOOST_TEST((took >= milliseconds(250)));
  BOOST_TEST((took < seconds(2)));
}

// ---- an answer ---------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_200_envelope_is_answered_with_its_output) {
  ProviderOverHttp net;
  net.provider.answer = {200, {}, R"({"output":"{\"summary\":\"hi\"}"})"};
  const ProviderReply reply = net.call(net.loop.clock.now() + seconds(2));
  BOOST_TEST(to_string(reply.kind) == "answered");
  BOOST_TEST(reply.output == R"({"summary":"hi"})");
}

BOOST_AUTO_TEST_CASE(a_200_body_outside_the_envelope_is_answered_with_the_raw_body) {
  ProviderOverHttp net;
  for (const std::string body : {"plain words", R"({"result":"x"})", R"({"output":42})"}) {
    net.provider.answer = {200, {}, body};
    const ProviderReply reply = net.call(net.loop.clock.now() + seconds(2));
    BOOST_TEST(to_string(reply.kind) == "answered");
    BOOST_TEST(reply.output == body);
  }
}

BOOST_AUTO_TEST_CASE(a_503_is_rejected_with_the_status_and_the_providers_error) {
  ProviderOverHttp net;
  net.provider.answer = {503, {}, R"({"error":"model overloaded"})"};
  const ProviderReply reply = net.call(net.loop.clock.now() + seconds(2));
  BOOST_TEST(to_string(reply.kind) == "rejected");
  BOOST_TEST(reply.reason.find("503") != std::string::npos, reply.reason);
  BOOST_TEST(reply.reason.find("model overloaded") != std::string::npos, reply.reason);
}

// Any status but 200 is the provider's refusal, whatever its body says: never an answer (a 4xx
// whose body held an "output" would otherwise be judged as one).
BOOST_AUTO_TEST_CASE(every_status_but_200_is_rejected) {
  ProviderOverHttp net;
  for (const int status : {201, 400, 404, 429, 500}) {
    net.provider.answer = {status, {}, R"({"output":"{\"label\":\"billing\"}"})"};
    const ProviderReply reply = net.call(net.loop.clock.now() + seconds(2));
    BOOST_TEST(to_string(reply.kind) == "rejected", status);
    BOOST_TEST(reply.reason.find(std::to_string(status)) != std::string::npos, reply.reason);
  }
}

// WallClock's instants are microseconds since the Unix epoch, as every process sharing a database
// reads them (not since the machine's boot: a lease written before a reboot, or on another host,
// would mean another instant).
BOOST_AUTO_TEST_CASE(wall_clock_counts_from_the_epoch) {
  const auto epoch_us = [] {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const std::int64_t before = epoch_us();
  const std::int64_t now = WallClock().now().time_since_epoch().count();
  const std::int64_t after = epoch_us();
  BOOST_TEST(now >= before);
  BOOST_TEST(now <= after);
}

// A long error is cut, never inside a character: 199 bytes of 'x' and then euro signs (three
// bytes each) put the 200-byte limit inside the first one.
BOOST_AUTO_TEST_CASE(a_long_error_is_cut_between_characters) {
  ProviderOverHttp net;
  std::string error(199, 'x');
  for (int i = 0; i < 10; ++i) error += "\xE2\x82\xAC";
  net.provider.answer = {503, {}, nlohmann::json{{"error", error}}.dump()};
  const ProviderReply reply = net.call(net.loop.clock.now() + seconds(2));
  BOOST_TEST(to_string(reply.kind) == "rejected");
  BOOST_TEST(reply.reason.ends_with(std::string(199, 'x') + "..."), reply.reason);
}

// ---- what it sends -----------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_call_posts_the_key_the_deadline_and_the_call_as_json_under_the_base_path) {
  ProviderOverHttp net("/v1/");
  net.call(net.loop.clock.now() + milliseconds(300));
  BOOST_REQUIRE(net.provider.received.size() == 1u);
  const Request& request = net.provider.received[0];
  BOOST_TEST(request.method == "POST");
  BOOST_TEST(request.path == "/v1/calls");
  BOOST_TEST(find_header(request.headers, "Idempotency-Key").value_or("") == "job-7:2");
  const int deadline_ms = std::stoi(find_header(request.headers, "X-Deadline-Ms").value_or("-1"));
  BOOST_TEST(deadline_ms > 0);
  BOOST_TEST(deadline_ms <= 300);
  const json body = json::parse(request.body, nullptr, false);
  BOOST_REQUIRE(body.is_object());
  BOOST_TEST(body.value("purpose", "") == "certification");
  BOOST_TEST(body.value("operation", "") == "summarize");
  BOOST_TEST(body.value("prompt", "") == "Summarize: hello");
  BOOST_TEST(body["input"] == json::parse(R"({"n":[1,2],"text":"hello"})"));
  BOOST_TEST(body.value("temperature", -1.0) == 0.25);
}

// ---- status ------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(status_maps_each_protocol_answer) {
  ProviderOverHttp net;
  net.provider.answer = {404, {}, R"({"error":"no such call"})"};
  BOOST_TEST(to_string(net.status("job-7:2").kind) == "not_found");

  net.provider.answer = {200, {}, R"({"status":"completed","output":"x"})"};
  ProviderStatus status = net.status("job-7:2");
  BOOST_TEST(to_string(status.kind) == "completed");
  BOOST_TEST(status.output == "x");

  net.provider.answer = {200, {}, R"({"status":"failed","reason":"r"})"};
  status = net.status("job-7:2");
  BOOST_TEST(to_string(status.kind) == "failed");
  BOOST_TEST(status.reason == "r");

  net.provider.answer = {200, {}, R"({"status":"running"})"};
  BOOST_TEST(to_string(net.status("job-7:2").kind) == "running");

  BOOST_REQUIRE(net.provider.received.size() == 4u);
  BOOST_TEST(net.provider.received[0].method == "GET");
  BOOST_TEST(net.provider.received[0].path == "/calls/job-7:2");
}

BOOST_AUTO_TEST_CASE(status_outside_the_protocol_is_unreachable) {
  ProviderOverHttp net;
  for (const Response& answer :
       {Response{500, {}, R"({"error":"boom"})"}, Response{429, {}, R"({"error":"slow down"})"},
        Response{400, {}, R"({"error":"bad"})"}, Response{200, {}, "not json"},
        Response{200, {}, R"({"status":"paused"})"},
        Response{200, {}, R"({"status":"completed"})"}}) {
    net.provider.answer = answer;
    const ProviderStatus status = net.status("job-7:2");
    BOOST_TEST(to_string(status.kind) == "unreachable", answer.status << " " << answer.body);
  }
}

BOOST_AUTO_TEST_CASE(status_of_a_refused_connection_is_unreachable) {
  Loop loop;
  HttpProviderClient client(loop.io, loop.clock, {endpoint_at(a_closed_port())});
  const ProviderStatus status = loop.finish(client.status("p", "job-7:2"));
  BOOST_TEST(to_string(status.kind) == "unreachable");
  BOOST_TEST(!status.reason.empty());
}

BOOST_AUTO_TEST_CASE(status_with_no_answer_is_unreachable_after_the_status_timeout) {
  MisbehavingProvider net(never_answer, milliseconds(300));
  const Instant start = net.loop.clock.now();
  const ProviderStatus status = net.loop.finish(net.client.status("p", "job-7:2"));
  BOOST_TEST(to_string(status.kind) == "unreachable");
  BOOST_TEST((net.loop.clock.now() - start < seconds(2)));
}

BOOST_AUTO_TEST_CASE(status_percent_encodes_the_key_in_the_path) {
  ProviderOverHttp net("/v1");
  net.provider.answer = {404, {}, "{}"};
  net.status("job 7/attempt:2?#%");
  BOOST_REQUIRE(net.provider.received.size() == 1u);
  BOOST_TEST(net.provider.received[0].path == "/v1/calls/job%207%2Fattempt:2%3F%23%25");
}

// ---- parse_provider_url ------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_good_url_gives_host_port_and_base_path_without_a_trailing_slash) {
  struct Case {
    std::string url, host, port, base_path;
  };
  for (const Case& c :
       {Case{"http://127.0.0.1:8080", "127.0.0.1", "8080", ""},
        Case{"http://127.0.0.1:8080/", "127.0.0.1", "8080", ""},
        Case{"http://models.local:9000/v1/chat/", "models.local", "9000", "/v1/chat"},
        Case{"http://models.local:1/v1", "models.local", "1", "/v1"},
        Case{"http://models.local:65535//", "models.local", "65535", ""}}) {
    const auto parsed = parse_provider_url("alpha", c.url);
    BOOST_REQUIRE_MESSAGE(std::holds_alternative<HttpProviderEndpoint>(parsed),
                          c.url << ": " << reason_of(parsed));
    const auto& endpoint = std::get<HttpProviderEndpoint>(parsed);
    BOOST_TEST(endpoint.name == "alpha");
    BOOST_TEST(endpoint.host == c.host, c.url);
    BOOST_TEST(endpoint.port == c.port, c.url);
    BOOST_TEST(endpoint.base_path == c.base_path, c.url);
  }
}

BOOST_AUTO_TEST_CASE(a_refused_url_is_named_with_its_problem) {
  struct Case {
    std::string url, problem;
  };
  for (const Case& c :
       {Case{"https://models.local:443", "TLS"}, Case{"models.local:80", "http://"},
        Case{"http://models.local", "host and port"},
        Case{"http://models.local/v1", "host and port"}, Case{"http://:8080", "host and port"},
        Case{"http://models.local:0", "port"}, Case{"http://models.local:70000", "port"},
        Case{"http://models.local:abc", "port"}, Case{"http://models.local:", "port"},
        Case{"http://user@models.local:80", "user"},
        Case{"http://models.local:80/v1?model=x", "query"},
        Case{"http://models.local:80/v1#top", "fragment"}}) {
    const auto parsed = parse_provider_url("alpha", c.url);
    const std::string reason = reason_of(parsed);
    BOOST_TEST(!reason.empty(), c.url << " was accepted");
    BOOST_TEST(reason.find(c.problem) != std::string::npos, c.url << ": " << reason);
    BOOST_TEST(reason.find(c.url) != std::string::npos, c.url << ": " << reason);
  }
}

// Without a path, the query (or fragment) follows the port, and the text must still name it.
BOOST_AUTO_TEST_CASE(a_query_or_fragment_right_after_the_port_is_named) {
  for (const std::string url : {"http://models.local:80?model=x", "http://models.local:80#top"}) {
    const std::string reason = reason_of(parse_provider_url("alpha", url));
    BOOST_TEST(!reason.empty(), url << " was accepted");
    BOOST_TEST(reason.find("query or fragment") != std::string::npos, url << ": " << reason);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
