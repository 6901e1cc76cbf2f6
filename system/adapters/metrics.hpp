#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>

#include "system/ports/event_sink.hpp"

namespace onejob {

// Operational counters for `onejob serve`, read from the events the system already emits, and
// rendered in the Prometheus text exposition format 0.0.4. Thread-safe: every call may come
// from any thread.
//
// Families (label values as the events carry them):
//   onejob_http_requests_total{route,status}           api.response
//   onejob_http_request_duration_seconds{route}        observe_request_seconds (a histogram)
//   onejob_attempt_transitions_total{to}               attempt.state (`to`); attempt.created
//                                                      counts as to="STARTING"
//   onejob_cas_total{outcome="won"|"lost"}             job.cas (`won`)
//   onejob_store_errors_total{component,kind}          worker.store_error, reconciler.store_error,
//                                                      api.response with status 503
//   onejob_provider_calls_total{provider,outcome}      provider.reply (`reply`)
//   onejob_events_total{kind}                          every event
// An event of a counted kind that lacks a field its typed struct requires (see system/events/)
// counts in onejob_events_total only.
//
// Label values may carry text a client influenced, so each family holds at most kMaxSeries
// series; an observation that would make a new one beyond that counts in the family's overflow
// series, whose every label value is "other". Invalid UTF-8 in a label value becomes U+FFFD.
class Metrics {
 public:
  static constexpr std::size_t kMaxSeries = 1000;

  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  void observe(const Event& event);

  // One request's time from its first byte to its answer, into the latency histogram (buckets
  // 0.001 s to 10 s, then +Inf). A negative time counts as 0; a NaN or infinite one is dropped.
  void observe_request_seconds(std::string_view route, double seconds);

  // Every family, sorted by name, each with its # HELP and # TYPE lines even before it has a
  // series; series sorted by label values; counters as integers.
  std::string render() const;

 private:
  struct State;
  mutable std::mutex mutex_;
  std::unique_ptr<State> state_;  // its series: REQUIRES mutex_ held
};

// One event as one JSON log line (with no newline):
//   {"ts":"2024-05-01T12:00:00.123Z","node":"api-1","event":"api.response","route":...}
// then every field in the event's order, by name, typed (integer, boolean, string). A field
// named ts, node or event is written as field_ts, field_node, field_event. Invalid UTF-8
// anywhere becomes U+FFFD, so the line is always valid JSON.
std::string json_log_line(const Event& event, std::string_view node,
                          std::chrono::sys_time<std::chrono::milliseconds> at);

// The event sink of a production node: writes each event as a JSON line to `out`, then hands it
// to `metrics` (when set), then to `next` (when set), so one sink per node both logs and counts.
// Thread-safe. `out_mutex` guards `out` and is shared by every sink writing to the same stream
// (all nodes write to stderr), so lines never interleave; each line is flushed as written.
// REQUIRES: out, out_mutex, metrics and next outlive the sink.
class JsonLogSink final : public EventSink {
 public:
  JsonLogSink(std::ostream& out, std::mutex& out_mutex, std::string node,
              Metrics* metrics = nullptr, EventSink* next = nullptr);

  void emit(Event event) override;

  // Off: no line is written; metrics and next still see every event. On by default.
  void set_enabled(bool enabled) { enabled_.store(enabled, std::memory_order_relaxed); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

 private:
  std::ostream& out_;
  std::mutex& out_mutex_;
  const std::string node_;
  Metrics* const metrics_;
  EventSink* const next_;
  std::atomic<bool> enabled_{true};
};

}  // namespace onejob
