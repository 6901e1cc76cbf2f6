// The black-box rules (harness/check/black_box.hpp) over real sockets: `onejob serve` driven by
// a recording client, its providers as HTTP stubs whose executions are the ground truth. The
// reference passes every rule with no availability finding; with a defect on, the rule that
// states the broken promise catches it, from client and provider observations alone.

#include <algorithm>
#include <atomic>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "harness/check/black_box.hpp"
#include "harness/check/black_box_jsonl.hpp"
#include "harness/real/black_box_recorder.hpp"
#include "harness/real/fault_proxy.hpp"
#include "harness/real/probe.hpp"
#include "harness/real/provider_stub.hpp"
#include "harness/real/timeline_order.hpp"

#include "tests/serve/serve_process.hpp"

namespace onejob::testing {
namespace {

using nlohmann::json;
using real::BlackBoxRecorder;
using real::FaultProxy;
using real::HttpConnection;
using real::HttpReply;
using real::ProviderStub;
using real::ProxyFault;
using real::ProxyRule;
using real::StubCall;
using sim::ProviderOutcome;
using namespace std::chrono_literals;

// A create body whose input is unique to `text` (inputs link executions to jobs).
std::string classify(const std::string& text, const std::string& provider = "alpha") {
  return json{{"operation", "classify"}, {"provider", provider}, {"input", {{"text", text}}}}
      .dump();
}

json body_of(const HttpReply& reply) { return json::parse(reply.body, nullptr, false); }

std::string job_of(const HttpReply& reply) {
  const json body = body_of(reply);
  return body.contains("job_id") ? std::to_string(body["job_id"].get<std::int64_t>()) : "";
}

std::size_t attempts_at(const ProviderStub& stub) {
  std::size_t n = 0;
  for (const auto& execution : stub.executions()) n += execution.purpose == "attempt" ? 1 : 0;
  return n;
}

void wait_attempts(const ProviderStub& stub, std::size_t n) {
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (attempts_at(stub) < n && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(20ms);
  }
  BOOST_REQUIRE_MESSAGE(attempts_at(stub) >= n, stub.name() << ": " << attempts_at(stub)
                                                            << " attempt calls, expected " << n);
}

// `onejob serve` with `config` and these stubs as its certified providers.
struct Target {
  Target(const std::string& config, const std::vector<const ProviderStub*>& stubs,
         const std::vector<std::string>& defects = {}) {
    std::string text =
        "listen: 127.0.0.1:0\ntokens: " + write_test_tokens(dir) + "\n" + config + "\nproviders:\n";
    for (const ProviderStub* stub : stubs) {
      text += "  - {name: " + stub->name() + ", url: \"" + stub->url() + "\", certify: true}\n";
    }
    std::vector<std::string> flags = {"--config", dir.write("serve.yaml", text)};
    for (const auto& defect : defects) flags.insert(flags.end(), {"--defect", defect});
    process = std::make_unique<ServeProcess>(flags, dir.path() + "/serve.log");
  }
  HttpConnection connect() const { return HttpConnection("127.0.0.1", process->port_text()); }

  TempDir dir;
  std::unique_ptr<ServeProcess> process;
};

std::string describe(const std::vector<check::black_box::Finding>& findings) {
  std::string text;
  for (const auto& f : findings) text += "\n  " + f.clause + ": " + f.message;
  return text.empty() ? " none" : text;
}

bool caught(const std::vector<check::black_box::Finding>& findings, const std::string& clause) {
  return std::ranges::any_of(findings, [&](const auto& f) { return f.clause == clause; });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(serve_black_box)

// Double clicks from sixteen connections, the same key of another owner, a reused key with
// another body, a call that hangs and a retry while it is unknown: every black-box rule holds,
// and every request after the quiet phase is answered. The recorded JSON Lines read back to
// the same verdict.
BOOST_AUTO_TEST_CASE(the_reference_passes_every_black_box_rule) {
  ProviderStub alpha("alpha",
                     {StubCall{ProviderOutcome::ok, 200ms}, StubCall{ProviderOutcome::ok, 50ms},
                      StubCall{ProviderOutcome::hang, 0ms}});
  ProviderStub beta("beta", {});
  Target target("policy: {attempt_deadline: 1s, lease: 3s, reconcile_period: 1h}", {&alpha, &beta});
  BlackBoxRecorder recorder;
  std::atomic<int> ready = 0;
  std::vector<std::thread> clicks;
  for (int i = 0; i < 16; ++i) {
    clicks.emplace_back([&] {
      HttpConnection connection = target.connect();
      connection.send("GET", "/healthz", {}, "");
      ++ready;
      while (ready < 16) std::this_thread::yield();
      recorder.create(connection, "alice", "alice-token", "dc", classify("alice's click"));
    });
  }
  for (auto& click : clicks) click.join();
  wait_attempts(alpha, 1);
  auto connection = target.connect();
  const auto bobs = recorder.create(connection, "bob", "bob-token", "dc", classify("bob's click"));
  BOOST_TEST(bobs.status == 201);
  wait_attempts(alpha, 2);
  const auto reused =
      recorder.create(connection, "alice", "alice-token", "dc", classify("another text"));
  BOOST_TEST(reused.status == 422);
  const auto hung =
      recorder.create(connection, "alice", "alice-token", "k-hang", classify("hangs"));
  BOOST_REQUIRE(hung.status == 201);
  const std::string hang_job = job_of(hung);
  wait_for([&] { return recorder.read(connection, "alice", "alice-token", hang_job); },
           [](const HttpReply& reply) { return body_of(reply).value("blocked", false); });
  const auto retry = wait_for(
      [&] {
        return recorder.retry(connection, "alice", "alice-token", "r-1", hang_job,
                              R"({"provider":"beta"})");
      },
      [](const HttpReply& reply) { return reply.status != 422; });
  BOOST_TEST(retry.status == 409);

  recorder.quiet();
  const auto history_so_far = recorder.history();
  std::set<std::pair<std::string, std::string>> jobs;  // (owner, job)
  for (const auto& response : history_so_far.responses) {
    const auto* request =
        &*std::ranges::find(history_so_far.requests, response.id, &check::black_box::Request::id);
    if (request->action == "create" && response.job && response.status && *response.status < 300) {
      jobs.emplace(request->owner, *response.job);
    }
  }
  BOOST_TEST(jobs.size() == 3u);
  for (const auto& [owner, job] : jobs) {
    const std::string token = owner + "-token";
    wait_for(
        [&, &owner = owner, job = job] { return recorder.read(connection, owner, token, job); },
        [&, job = job](const HttpReply& reply) {
          return job == hang_job || body_of(reply).value("status", "") == "succeeded";
        });
  }
  recorder.add_executions(alpha);
  recorder.add_executions(beta);

  const auto findings = check::black_box::judge(recorder.history());
  BOOST_TEST(findings.empty(), "findings:" << describe(findings));
  // The JSON Lines form is the documented one, and reads back to the same verdict.
  const std::string path = target.dir.write("history.jsonl", recorder.jsonl());
  const auto read = check::black_box::read_jsonl_file(path);
  BOOST_TEST(read.requests.size() == recorder.history().requests.size());
  BOOST_TEST(read.executions.size() == recorder.history().executions.size());
  BOOST_TEST(check::black_box::judge(read).empty());
}

// The article's fractures on the wire, through the fault proxy: a create whose reply is lost
// (the target did the work) and its retry with the same key get one job, the retry answered as a
// replay; a create the target receives twice makes one job and one execution; a create that
// never arrived is created by its retry. Every black-box rule holds.
BOOST_AUTO_TEST_CASE(lost_replies_retransmissions_and_lost_requests_through_the_proxy) {
  ProviderStub alpha("alpha", {}, StubCall{ProviderOutcome::ok, 50ms});
  Target target("", {&alpha});
  FaultProxy proxy(
      "127.0.0.1", target.process->port_text(),
      {ProxyRule{ProxyFault::drop_response}, ProxyRule{}, ProxyRule{ProxyFault::duplicate},
       ProxyRule{ProxyFault::drop_request}, ProxyRule{}});
  BlackBoxRecorder recorder;
  HttpConnection connection("127.0.0.1", proxy.port_text());
  const auto lost = recorder.create(connection, "alice", "alice-token", "k1", classify("lost"));
  BOOST_TEST(!lost.answered());
  const auto replayed = recorder.create(connection, "alice", "alice-token", "k1", classify("lost"));
  BOOST_TEST(replayed.status == 200, replayed.status << " " << replayed.body);
  const auto twice = recorder.create(connection, "alice", "alice-token", "k2", classify("twice"));
  BOOST_TEST(twice.status == 201);
  const auto dropped =
      recorder.create(connection, "alice", "alice-token", "k3", classify("dropped"));
  BOOST_TEST(!dropped.answered());
  const auto created =
      recorder.create(connection, "alice", "alice-token", "k3", classify("dropped"));
  BOOST_TEST(created.status == 201, created.status << " " << created.body);
  const auto events = proxy.events();
  BOOST_REQUIRE(events.size() >= 5u);
  BOOST_TEST(events[0].status == 201);  // the target created k1: only its reply was lost
  BOOST_TEST(events[3].status == 0);    // k3's first send never reached it

  recorder.quiet();
  for (const auto& job : {job_of(replayed), job_of(twice), job_of(created)}) {
    wait_for(
        [&] { return recorder.read(connection, "alice", "alice-token", job); },
        [](const HttpReply& reply) { return body_of(reply).value("status", "") == "succeeded"; });
  }
  recorder.add_executions(alpha);
  BOOST_TEST(attempts_at(alpha) == 3u);
  const auto findings = check::black_box::judge(recorder.history());
  BOOST_TEST(findings.empty(), "findings:" << describe(findings) << "\nhistory:\n"
                                           << recorder.jsonl());
}

// A numbered request (the probe's order field) is told placed once its place at the target is
// fixed, and the field goes no further than the proxy: a second proxy behind the first never
// sees it. Kept in place: after the target answered, or when it was dropped. Given up: when a
// reordering delay begins, well before the answer.
BOOST_AUTO_TEST_CASE(the_proxy_tells_when_a_numbered_request_has_its_place) {
  ProviderStub alpha("alpha", {}, StubCall{ProviderOutcome::ok, 0ms});
  Target target("", {&alpha});
  using Clock = std::chrono::steady_clock;
  std::mutex mutex;
  std::vector<std::pair<std::string, Clock::time_point>> placed;
  std::atomic<int> seen_behind = 0;
  FaultProxy behind(
      "127.0.0.1", target.process->port_text(), [](std::uint64_t) { return ProxyRule{}; }, 10s,
      [&](std::string_view) { ++seen_behind; });
  const std::vector<ProxyRule> script{
      ProxyRule{}, ProxyRule{ProxyFault::drop_request},
      ProxyRule{.fault = ProxyFault::delay, .delay = 400ms},
      ProxyRule{.fault = ProxyFault::delay, .delay = 400ms, .overtaken = true}};
  FaultProxy proxy(
      "127.0.0.1", behind.port_text(),
      [&](std::uint64_t number) {
        return number <= script.size() ? script[number - 1] : ProxyRule{};
      },
      10s,
      [&](std::string_view order) {
        std::lock_guard lock(mutex);
        placed.emplace_back(std::string(order), Clock::now());
      });
  BlackBoxRecorder recorder;
  HttpConnection connection("127.0.0.1", proxy.port_text());
  std::vector<Clock::time_point> sent;
  std::vector<Clock::time_point> answered;
  for (int request = 1; request <= 4; ++request) {
    connection.set_header(std::string(real::kOrderField), std::to_string(request));
    sent.push_back(Clock::now());
    const auto reply =
        recorder.create(connection, "alice", "alice-token", "order-" + std::to_string(request),
                        classify("order " + std::to_string(request)));
    answered.push_back(Clock::now());
    BOOST_TEST(reply.answered() == (request != 2), request << ": " << reply.failure);
  }
  std::lock_guard lock(mutex);
  BOOST_REQUIRE_EQUAL(placed.size(), 4u);
  for (std::size_t i = 0; i < placed.size(); ++i) {
    BOOST_TEST(placed[i].first == std::to_string(i + 1));
    BOOST_TEST((placed[i].second >= sent[i] && placed[i].second <= answered[i]));
  }
  BOOST_TEST((placed[2].second - sent[2] >= 400ms));      // kept its place through the delay
  BOOST_TEST((answered[3] - placed[3].second >= 300ms));  // gave it up as the delay began
  BOOST_TEST(proxy.events()[1].status == 0);  // the dropped one never reached the target
  BOOST_TEST(seen_behind == 0);
  BOOST_TEST(behind.events().size() == 3u);
}

// Each defect breaks a promise a client or a provider can see; the rule stating that promise
// names it, with no knowledge of the defect. (check-then-insert is not here: its race is inside
// one store call, which the memory store's lock serializes, so sixteen concurrent clicks over
// HTTP never make two jobs; the simulator's interleavings catch it.)
BOOST_AUTO_TEST_CASE(defects_observable_over_http_are_caught_by_their_rule) {
  struct Case {
    std::string defect;
    std::string clause;
  };
  const std::vector<Case> cases = {
      {"ignore-fingerprint", "B2.other_payload_accepted"},
      {"timeout-is-failure", "B7.failed_while_running"},
      {"blind-overwrite", "B4.result_changed"},
      {"late-merge", "B4.result_changed"},
      {"read-shows-attempt-results", "B15.output_shown_elsewhere"},
  };
  for (const auto& [defect, clause] : cases) {
    BOOST_TEST_CONTEXT("--defect " << defect) {
      const bool shows = defect == "read-shows-attempt-results";
      const bool late = defect == "blind-overwrite" || defect == "late-merge" || shows;
      ProviderStub alpha("alpha", {StubCall{defect == "timeout-is-failure" ? ProviderOutcome::hang
                                                                           : ProviderOutcome::ok,
                                            late ? 3000ms : 0ms}});
      ProviderStub beta("beta", {});
      Target target(late ? "policy: {attempt_deadline: 20s, lease: 40s}"
                         : "policy: {attempt_deadline: 1s, lease: 3s, reconcile_period: 1h}",
                    {&alpha, &beta}, {defect});
      BlackBoxRecorder recorder;
      auto connection = target.connect();
      // The fallback is certified before anything may move to it.
      const auto give_up = std::chrono::steady_clock::now() + 20s;
      while (beta.executions().empty() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(20ms);
      }
      const auto created =
          recorder.create(connection, "alice", "alice-token", "k1", classify("first"));
      BOOST_REQUIRE(created.status == 201);
      const std::string job = job_of(created);
      if (defect == "ignore-fingerprint") {
        recorder.create(connection, "alice", "alice-token", "k1", classify("second"));
      } else if (defect == "timeout-is-failure") {
        wait_for(
            [&] { return recorder.read(connection, "alice", "alice-token", job); },
            [](const HttpReply& reply) { return body_of(reply).value("status", "") == "failed"; },
            10s);
      } else {  // blind-overwrite, late-merge, read-shows-attempt-results: cancel alpha's call,
                // retry on beta; alpha answers last
        wait_attempts(alpha, 1);
        const auto first = body_of(recorder.read(connection, "alice", "alice-token", job));
        const auto attempt = first["attempts"][0]["attempt_id"].get<std::int64_t>();
        const auto cancel =
            recorder.cancel(connection, "alice", "alice-ops", "c-1", job, std::to_string(attempt));
        BOOST_REQUIRE_MESSAGE(cancel.status == 200, cancel.status << " " << cancel.body);
        wait_for(
            [&] {
              return recorder.retry(connection, "alice", "alice-token", "r-1", job,
                                    R"({"provider":"beta"})");
            },
            [](const HttpReply& reply) { return reply.status == 201; });
        wait_for([&] { return recorder.read(connection, "alice", "alice-token", job); },
                 [](const HttpReply& reply) {
                   return body_of(reply).value("status", "") == "succeeded";
                 });
        // Alpha answers at 3 s; read until the result moves (or, shown, alpha's attempt shows a
        // result of its own) or 8 s pass.
        const auto shown = body_of(recorder.read(connection, "alice", "alice-token", job));
        wait_for([&] { return recorder.read(connection, "alice", "alice-token", job); },
                 [&](const HttpReply& reply) {
                   const auto body = body_of(reply);
                   return shows ? body["attempts"][0].contains("result")
                                : body["result"] != shown["result"];
                 },
                 8s);
      }
      recorder.add_executions(alpha);
      recorder.add_executions(beta);
      const auto findings = check::black_box::judge(recorder.history());
      BOOST_TEST(caught(findings, clause), "expected " << clause << "; found:" << describe(findings)
                                                       << "\nhistory:\n"
                                                       << recorder.jsonl());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// How the probe tells one run's keys from another's without changing what a story says of a key.
BOOST_AUTO_TEST_SUITE(probe_keys)

BOOST_AUTO_TEST_CASE(tagged_keys_keep_emptiness_length_and_distinctness) {
  const std::string tag = "p1a2b-1-";  // 8 characters
  const std::string longest(255, 'k');
  const std::string too_long(256, 'k');
  const std::vector<std::string> keys = {"", "   ", "k1", longest, too_long,
                                         // Overwritten, the three would be sent as one.
                                         "order-00-suffix-0001", "xxxxxxxx-suffix-0001",
                                         "-suffix-0001", "\tcontrol-character-key-here"};
  const auto tagged = real::tag_keys(tag, keys);
  BOOST_TEST(tagged.at("") == "");
  BOOST_TEST(tagged.at("   ") == "   ");  // trimmed to empty by the server: refused as it was
  BOOST_TEST(tagged.at("k1") == tag + "k1");
  BOOST_TEST(tagged.at(longest).size() == 255u);
  BOOST_TEST(tagged.at(too_long).size() == 256u);
  BOOST_TEST(tagged.at(longest).starts_with(tag));
  // Its first characters are not the tag's kind: prefixed, so the story's bad key stays bad.
  BOOST_TEST(tagged.at("\tcontrol-character-key-here") == tag + "\tcontrol-character-key-here");
  std::set<std::string> sent;
  for (const auto& [key, as_sent] : tagged) {
    BOOST_TEST(as_sent.starts_with(tag) == (key.find_first_not_of(' ') != std::string::npos), key);
    sent.insert(as_sent);
  }
  BOOST_TEST(sent.size() == tagged.size(), "two keys are sent as one");
  // No tag: every key as it is.
  for (const auto& [key, as_sent] : real::tag_keys("", keys)) BOOST_TEST(as_sent == key);
}

BOOST_AUTO_TEST_SUITE_END()

// The order a probe's timeline reaches its target in: a request waits for every request of an
// earlier instant to have its place, never for one of its own instant or a later one.
BOOST_AUTO_TEST_SUITE(probe_order)

BOOST_AUTO_TEST_CASE(a_request_waits_for_every_earlier_instant_to_be_placed) {
  // Requests 1..6 at 30, 10, 10, 20, 30 and 0 ms: in time order 6, 2, 3, 4, 1, 5.
  const std::vector<Duration> at{30ms, 10ms, 10ms, 20ms, 30ms, 0ms};
  real::TimelineOrder order(at);
  BOOST_TEST(order.order() == (std::vector<std::size_t>{6, 2, 3, 4, 1, 5}),
             boost::test_tools::per_element());
  BOOST_TEST(order.wait_for_turn(6, 0ms));  // the first instant waits for nothing
  BOOST_TEST(!order.wait_for_turn(2, 0ms));
  order.place(6);
  // 2 and 3 share an instant: neither waits for the other.
  BOOST_TEST(order.wait_for_turn(2, 0ms));
  BOOST_TEST(order.wait_for_turn(3, 0ms));
  order.place(3);
  BOOST_TEST(!order.wait_for_turn(4, 0ms));  // 2 has no place yet
  // Numbers the timeline does not have, and a second place, change nothing.
  order.place(0);
  order.place(7);
  order.place(3);
  BOOST_TEST(!order.wait_for_turn(4, 0ms));
  // A waiter wakes when the place it waits for is given, from another thread.
  std::atomic<bool> turn = false;
  std::thread waiter([&] { turn = order.wait_for_turn(1, 10s); });
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(!turn);
  order.place(2);
  order.place(4);
  waiter.join();
  BOOST_TEST(turn);
  BOOST_TEST(order.wait_for_turn(5, 0ms));   // 1 and 5 share an instant
  BOOST_TEST(order.wait_for_turn(99, 0ms));  // not the timeline's: never held
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob::testing
