// Metrics and JsonLogSink: the Prometheus text a scrape reads and the JSON lines a node logs,
// fed with events built as the system builds them (the typed structs of system/events/).
#include "system/adapters/metrics.hpp"

#include <cmath>
#include <limits>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "system/events/api_events.hpp"
#include "system/events/attempt_events.hpp"
#include "system/events/reconciler_events.hpp"
#include "system/events/worker_events.hpp"

#include "tests/support/recording_sink.hpp"

namespace onejob {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The series lines of one family (its name followed by `{`), in the order rendered.
std::vector<std::string> series_of(const Metrics& metrics, const std::string& name) {
  std::vector<std::string> found;
  for (auto& line : lines_of(metrics.render())) {
    if (line.starts_with(name + "{")) found.push_back(line);
  }
  return found;
}

Event response(std::string route, std::int64_t status, std::optional<std::string> error = {}) {
  return events::to_event(events::ApiResponse{.request_id = "r-1",
                                              .route = std::move(route),
                                              .status = status,
                                              .owner = "alice",
                                              .key = "k-1",
                                              .error = std::move(error)});
}

Event state_change(AttemptState from, AttemptState to) {
  return events::to_event(events::AttemptStateChanged{
      .job_id = 1, .attempt_id = 2, .from = from, .to = to, .reason = "test", .by = "worker-1"});
}

Event reply(std::string provider, std::string kind, bool late = false) {
  return events::to_event(events::ProviderReplied{.job_id = 1,
                                                  .attempt_id = 2,
                                                  .provider = std::move(provider),
                                                  .reply = std::move(kind),
                                                  .late = late});
}

BOOST_AUTO_TEST_SUITE(metrics)

BOOST_AUTO_TEST_CASE(empty_metrics_print_help_and_type_of_every_family_sorted) {
  const Metrics metrics;
  BOOST_TEST(metrics.render() ==
             "# HELP onejob_attempt_transitions_total Attempt state changes applied, by the state "
             "entered.\n"
             "# TYPE onejob_attempt_transitions_total counter\n"
             "# HELP onejob_cas_total Completion compare-and-swaps, by outcome (won or lost).\n"
             "# TYPE onejob_cas_total counter\n"
             "# HELP onejob_events_total Events emitted, by kind.\n"
             "# TYPE onejob_events_total counter\n"
             "# HELP onejob_http_request_duration_seconds Time from a request's arrival to its "
             "answer, by route.\n"
             "# TYPE onejob_http_request_duration_seconds histogram\n"
             "# HELP onejob_http_requests_total HTTP requests answered, by route and status.\n"
             "# TYPE onejob_http_requests_total counter\n"
             "# HELP onejob_provider_calls_total Provider replies received, by provider and reply "
             "kind.\n"
             "# TYPE onejob_provider_calls_total counter\n"
             "# HELP onejob_store_errors_total Store errors met, by the component that met them "
             "and their kind.\n"
             "# TYPE onejob_store_errors_total counter\n");
}

BOOST_AUTO_TEST_CASE(responses_count_by_route_and_status_and_503s_as_api_store_errors) {
  Metrics metrics;
  metrics.observe(response("create_job", 201));
  metrics.observe(response("get_job", 404, "not_found"));
  metrics.observe(response("create_job", 201));
  metrics.observe(response("create_job", 503, "store_unavailable"));
  // Built by hand, with the field names the API node writes.
  metrics.observe(Event("api.response")
                      .with("request_id", "r-2")
                      .with("route", "get_job")
                      .with("status", 200)
                      .with("owner", "bob")
                      .with("key", ""));
  const std::vector<std::string> expected{
      R"(onejob_http_requests_total{route="create_job",status="201"} 2)",
      R"(onejob_http_requests_total{route="create_job",status="503"} 1)",
      R"(onejob_http_requests_total{route="get_job",status="200"} 1)",
      R"(onejob_http_requests_total{route="get_job",status="404"} 1)",
  };
  BOOST_TEST(series_of(metrics, "onejob_http_requests_total") == expected,
             boost::test_tools::per_element());
  BOOST_TEST(series_of(metrics, "onejob_store_errors_total") ==
                 std::vector<std::string>{
                     R"(onejob_store_errors_total{component="api",kind="store_unavailable"} 1)"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(transitions_count_the_state_entered_and_creation_as_starting) {
  Metrics metrics;
  for (int i = 0; i < 2; ++i) {
    metrics.observe(events::to_event(events::AttemptCreated{.job_id = 1,
                                                            .attempt_id = 2 + i,
                                                            .attempt_no = 1 + i,
                                                            .provider = "p",
                                                            .provider_key = "1:1",
                                                            .origin = AttemptOrigin::initial}));
  }
  metrics.observe(state_change(AttemptState::starting, AttemptState::running));
  metrics.observe(state_change(AttemptState::running, AttemptState::unknown));
  metrics.observe(state_change(AttemptState::unknown, AttemptState::starting));
  const std::vector<std::string> expected{
      R"(onejob_attempt_transitions_total{to="RUNNING"} 1)",
      R"(onejob_attempt_transitions_total{to="STARTING"} 3)",
      R"(onejob_attempt_transitions_total{to="UNKNOWN"} 1)",
  };
  BOOST_TEST(series_of(metrics, "onejob_attempt_transitions_total") == expected,
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(cas_counts_won_and_lost) {
  Metrics metrics;
  const auto cas = [](bool won) {
    return events::to_event(events::JobCas{
        .job_id = 1, .attempt_id = 2, .expected_version = 1, .won = won, .winner = 2});
  };
  metrics.observe(cas(true));
  metrics.observe(cas(false));
  metrics.observe(cas(false));
  const std::vector<std::string> expected{R"(onejob_cas_total{outcome="lost"} 2)",
                                          R"(onejob_cas_total{outcome="won"} 1)"};
  BOOST_TEST(series_of(metrics, "onejob_cas_total") == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(store_errors_count_by_component_and_kind) {
  Metrics metrics;
  const auto worker_error = [](bool maybe_committed) {
    return events::to_event(events::WorkerStoreError{.worker = "worker-1",
                                                     .attempt_id = 2,
                                                     .maybe_committed = maybe_committed,
                                                     .message = "store down",
                                                     .retry_in_us = 1000});
  };
  metrics.observe(worker_error(true));
  metrics.observe(worker_error(false));
  metrics.observe(worker_error(false));
  metrics.observe(
      events::to_event(events::ReconcilerStoreError{.message = "store down", .retry_in_us = 1000}));
  metrics.observe(response("create_job", 503, "store_unavailable"));
  metrics.observe(response("create_job", 503));  // no error code: still a 503
  const std::vector<std::string> expected{
      R"(onejob_store_errors_total{component="api",kind="store_unavailable"} 1)",
      R"(onejob_store_errors_total{component="api",kind="unclassified"} 1)",
      R"(onejob_store_errors_total{component="reconciler",kind="unclassified"} 1)",
      R"(onejob_store_errors_total{component="worker",kind="maybe_committed"} 1)",
      R"(onejob_store_errors_total{component="worker",kind="not_committed"} 2)",
  };
  BOOST_TEST(series_of(metrics, "onejob_store_errors_total") == expected,
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(provider_replies_count_by_provider_and_reply_kind) {
  Metrics metrics;
  metrics.observe(reply("alpha", "answered"));
  metrics.observe(reply("alpha", "answered", /*late=*/true));
  metrics.observe(reply("alpha", "maybe_delivered"));
  metrics.observe(reply("beta", "rejected"));
  const std::vector<std::string> expected{
      R"(onejob_provider_calls_total{provider="alpha",outcome="answered"} 2)",
      R"(onejob_provider_calls_total{provider="alpha",outcome="maybe_delivered"} 1)",
      R"(onejob_provider_calls_total{provider="beta",outcome="rejected"} 1)",
  };
  BOOST_TEST(series_of(metrics, "onejob_provider_calls_total") == expected,
             boost::test_tools::per_element());
}

// A counted kind lacking a field its struct requires is still an event, but no CAS.
BOOST_AUTO_TEST_CASE(every_event_counts_by_kind_and_a_malformed_one_only_there) {
  Metrics metrics;
  metrics.observe(response("get_job", 200));
  metrics.observe(Event("store.notice").with("store", "postgres").with("text", "WARNING"));
  metrics.observe(Event("store.notice"));
  metrics.observe(Event("job.cas").with("job_id", 1));
  const std::vector<std::string> expected{
      R"(onejob_events_total{kind="api.response"} 1)",
      R"(onejob_events_total{kind="job.cas"} 1)",
      R"(onejob_events_total{kind="store.notice"} 2)",
  };
  BOOST_TEST(series_of(metrics, "onejob_events_total") == expected,
             boost::test_tools::per_element());
  BOOST_TEST(series_of(metrics, "onejob_cas_total").empty());
}

BOOST_AUTO_TEST_CASE(histogram_buckets_are_cumulative_with_sum_and_count) {
  Metrics metrics;
  // Dyadic values, so the sum prints exactly.
  for (const double seconds : {0.0009765625, 0.00390625, 0.25, 0.25, 20.0, -1.0}) {
    metrics.observe_request_seconds("create_job", seconds);
  }
  metrics.observe_request_seconds("create_job", std::numeric_limits<double>::quiet_NaN());
  metrics.observe_request_seconds("create_job", std::numeric_limits<double>::infinity());
  metrics.observe_request_seconds("get_job", 0.001);  // on a bound: le is inclusive
  const std::string name = "onejob_http_request_duration_seconds";
  std::vector<std::string> rendered;
  for (auto& line : lines_of(metrics.render())) {
    if (line.starts_with(name + "_")) rendered.push_back(line);
  }
  const std::vector<std::string> expected{
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="0.001"} 2)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="0.0025"} 2)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="0.005"} 3)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="0.01"} 3)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="0.025"} 3)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="0.05"} 3)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="0.1"} 3)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="0.25"} 5)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="0.5"} 5)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="1"} 5)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="2.5"} 5)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="5"} 5)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="10"} 5)",
      R"(onejob_http_request_duration_seconds_bucket{route="create_job",le="+Inf"} 6)",
      R"(onejob_http_request_duration_seconds_sum{route="create_job"} 20.5048828125)",
      R"(onejob_http_request_duration_seconds_count{route="create_job"} 6)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="0.001"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="0.0025"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="0.005"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="0.01"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="0.025"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="0.05"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="0.1"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="0.25"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="0.5"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="1"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="2.5"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="5"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="10"} 1)",
      R"(onejob_http_request_duration_seconds_bucket{route="get_job",le="+Inf"} 1)",
      R"(onejob_http_request_duration_seconds_sum{route="get_job"} 0.001)",
      R"(onejob_http_request_duration_seconds_count{route="get_job"} 1)",
  };
  BOOST_TEST(rendered == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(label_values_escape_backslash_quote_and_newline_and_fix_utf8) {
  Metrics metrics;
  metrics.observe(reply("a\"b\\c\nd", "answered"));
  metrics.observe(reply("bad\xff", "answered"));
  const std::vector<std::string> expected{
      R"(onejob_provider_calls_total{provider="a\"b\\c\nd",outcome="answered"} 1)",
      "onejob_provider_calls_total{provider=\"bad\xEF\xBF\xBD\",outcome=\"answered\"} 1",
  };
  BOOST_TEST(series_of(metrics, "onejob_provider_calls_total") == expected,
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(series_beyond_the_cap_count_as_other) {
  Metrics metrics;
  const auto provider = [](int i) {
    // 10000 + i, less its leading 1: four digits, zero-padded.
    std::string name = std::to_string(10000 + i);
    name[0] = 'p';
    return name;
  };
  for (int i = 0; i < 1005; ++i) metrics.observe(reply(provider(i), "answered"));
  metrics.observe(reply(provider(0), "answered"));  // a series that exists still counts itself
  for (int i = 0; i < 1002; ++i) metrics.observe_request_seconds(provider(i), 0.01);
  const auto series = series_of(metrics, "onejob_provider_calls_total");
  BOOST_TEST(series.size() == Metrics::kMaxSeries + 1);
  BOOST_TEST(series.front() ==
             R"(onejob_provider_calls_total{provider="other",outcome="other"} 5)");
  BOOST_TEST(series[1] == R"(onejob_provider_calls_total{provider="p0000",outcome="answered"} 2)");
  BOOST_TEST(series.back() ==
             R"(onejob_provider_calls_total{provider="p0999",outcome="answered"} 1)");
  const auto counts = series_of(metrics, "onejob_http_request_duration_seconds_count");
  BOOST_TEST(counts.size() == Metrics::kMaxSeries + 1);
  BOOST_TEST(counts.front() == R"(onejob_http_request_duration_seconds_count{route="other"} 2)");
}

BOOST_AUTO_TEST_CASE(concurrent_observers_lose_no_count) {
  Metrics metrics;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&metrics] {
      for (int i = 0; i < 5000; ++i) {
        metrics.observe(response("get_job", 200));
        metrics.observe_request_seconds("get_job", 0.002);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  BOOST_TEST(series_of(metrics, "onejob_http_requests_total") ==
                 std::vector<std::string>{
                     R"(onejob_http_requests_total{route="get_job",status="200"} 20000)"},
             boost::test_tools::per_element());
  BOOST_TEST(series_of(metrics, "onejob_http_request_duration_seconds_count") ==
                 std::vector<std::string>{
                     R"(onejob_http_request_duration_seconds_count{route="get_job"} 20000)"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(json_line_has_ts_node_kind_and_typed_fields_in_order) {
  using namespace std::chrono;
  const sys_time<milliseconds> at = sys_days{2024y / May / 1} + 12h + 3min + 4s + 56ms;
  const Event event = events::to_event(events::WorkerStoreError{.worker = "worker-1",
                                                                .attempt_id = 7,
                                                                .maybe_committed = true,
                                                                .message = "reply \"lost\"",
                                                                .retry_in_us = -5});
  BOOST_TEST(json_log_line(event, "worker-1", at) ==
             R"({"ts":"2024-05-01T12:03:04.056Z","node":"worker-1","event":"worker.store_error",)"
             R"("worker":"worker-1","attempt_id":7,"maybe_committed":true,)"
             R"("message":"reply \"lost\"","retry_in_us":-5})");
  // Before the epoch the milliseconds still count up within their second.
  const auto line =
      nlohmann::json::parse(json_log_line(Event("x"), "n", sys_time<milliseconds>(-1ms)));
  BOOST_TEST(line.at("ts").get<std::string>() == "1969-12-31T23:59:59.999Z");
}

BOOST_AUTO_TEST_CASE(json_line_prefixes_fields_named_ts_node_or_event) {
  const Event event = Event("odd").with("ts", 1).with("node", "inner").with("event", false);
  const auto line = nlohmann::json::parse(json_log_line(event, "api-1", {}));
  BOOST_TEST(line.at("ts").get<std::string>() == "1970-01-01T00:00:00.000Z");
  BOOST_TEST(line.at("node").get<std::string>() == "api-1");
  BOOST_TEST(line.at("event").get<std::string>() == "odd");
  BOOST_TEST(line.at("field_ts").get<std::int64_t>() == 1);
  BOOST_TEST(line.at("field_node").get<std::string>() == "inner");
  BOOST_TEST(line.at("field_event").get<bool>() == false);
}

BOOST_AUTO_TEST_CASE(json_line_replaces_invalid_utf8_and_stays_valid_json) {
  const Event event = Event("api.request").with("path", "/jobs/\xff\xfe").with("owner", "\xc3");
  const std::string text = json_log_line(event, "api-\x80", {});
  nlohmann::json line;
  BOOST_REQUIRE_NO_THROW(line = nlohmann::json::parse(text));
  BOOST_TEST(line.at("path").get<std::string>() == "/jobs/\xEF\xBF\xBD\xEF\xBF\xBD");
  BOOST_TEST(line.at("owner").get<std::string>() == "\xEF\xBF\xBD");
  BOOST_TEST(line.at("node").get<std::string>() == "api-\xEF\xBF\xBD");
}

BOOST_AUTO_TEST_CASE(sink_writes_one_parseable_line_per_event_and_forwards) {
  std::ostringstream out;
  std::mutex out_mutex;
  Metrics metrics;
  test::RecordingSink next;
  JsonLogSink sink(out, out_mutex, "api-1", &metrics, &next);
  const std::vector<Event> sent{response("create_job", 201), response("get_job", 503),
                                reply("alpha", "answered")};
  for (const auto& event : sent) sink.emit(event);

  const auto lines = lines_of(out.str());
  BOOST_REQUIRE_EQUAL(lines.size(), sent.size());
  BOOST_TEST(out.str().back() == '\n');
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto line = nlohmann::json::parse(lines[i]);
    BOOST_TEST(line.at("node").get<std::string>() == "api-1");
    BOOST_TEST(line.at("event").get<std::string>() == sent[i].kind());
    const auto ts = line.at("ts").get<std::string>();
    BOOST_TEST(ts.size() == 24u);
    BOOST_TEST(ts[10] == 'T');
    BOOST_TEST(ts[19] == '.');
    BOOST_TEST(ts.back() == 'Z');
  }
  const auto first = nlohmann::json::parse(lines[0]);
  BOOST_TEST(first.at("status").get<std::int64_t>() == 201);
  BOOST_TEST(first.at("route").get<std::string>() == "create_job");
  BOOST_TEST(nlohmann::json::parse(lines[2]).at("late").is_boolean());

  BOOST_TEST((next.events == sent));
  BOOST_TEST(series_of(metrics, "onejob_events_total") ==
                 (std::vector<std::string>{R"(onejob_events_total{kind="api.response"} 2)",
                                           R"(onejob_events_total{kind="provider.reply"} 1)"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(disabled_sink_writes_nothing_but_still_counts_and_forwards) {
  std::ostringstream out;
  std::mutex out_mutex;
  Metrics metrics;
  test::RecordingSink next;
  JsonLogSink sink(out, out_mutex, "worker-1", &metrics, &next);
  BOOST_TEST(sink.enabled());
  sink.set_enabled(false);
  sink.emit(response("get_job", 200));
  BOOST_TEST(out.str().empty());
  BOOST_TEST(next.events.size() == 1u);
  BOOST_TEST(series_of(metrics, "onejob_http_requests_total").size() == 1u);
  sink.set_enabled(true);
  sink.emit(response("get_job", 200));
  BOOST_TEST(lines_of(out.str()).size() == 1u);
}

// Every node writes to stderr through its own sink and the one shared mutex: lines never mix.
BOOST_AUTO_TEST_CASE(sinks_sharing_a_stream_never_interleave_lines) {
  std::ostringstream out;
  std::mutex out_mutex;
  JsonLogSink api(out, out_mutex, "api-1");
  JsonLogSink worker(out, out_mutex, "worker-1");
  std::vector<std::thread> threads;
  for (JsonLogSink* sink : {&api, &worker, &api, &worker}) {
    threads.emplace_back([sink] {
      for (int i = 0; i < 500; ++i) sink->emit(reply(std::string(200, 'x'), "answered"));
    });
  }
  for (auto& thread : threads) thread.join();
  const auto lines = lines_of(out.str());
  BOOST_REQUIRE_EQUAL(lines.size(), 2000u);
  int from_api = 0;
  for (const auto& line : lines) {
    const auto parsed = nlohmann::json::parse(line);  // throws, failing the test, if mixed
    if (parsed.at("node") == "api-1") ++from_api;
  }
  BOOST_TEST(from_api == 1000);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
