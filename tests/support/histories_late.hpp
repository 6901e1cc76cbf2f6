#pragma once

#include <utility>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/sim/trace.hpp"

// Helpers for the I6-I9 checker tests. They live in their own namespace so that a helper of
// the same name in another test-support header can never become a second, different
// definition of one inline function.
namespace onejob::test::late {

// Builds hand-made histories whose events carry simulated time: each add() appends one event
// with the next seq at the current instant; at() moves the clock.
class TimedHistoryBuilder {
 public:
  TimedHistoryBuilder& at(Duration since_start) {
    now_ = Instant(since_start);
    return *this;
  }
  TimedHistoryBuilder& add(std::string node, Event event, bool injected = false) {
    history_.push_back(
        sim::TraceEvent{history_.size() + 1, now_, std::move(node), std::move(event), injected});
    return *this;
  }
  // The seq of the event added last: what a checker names as the offending event.
  std::uint64_t last_seq() const { return history_.size(); }
  const sim::History& history() const { return history_; }

 private:
  Instant now_{};
  sim::History history_;
};

// A canonical POST /jobs body (keys sorted, no spaces), as the API records it.
inline std::string create_body(const std::string& operation, const std::string& provider,
                               const std::string& input_json,
                               const std::vector<std::string>& failover = {}) {
  nlohmann::json body = {{"operation", operation},
                         {"provider", provider},
                         {"input", nlohmann::json::parse(input_json)}};
  if (!failover.empty()) body["failover"] = failover;
  return body.dump();
}

inline std::string job_request(const std::string& body) { return "POST /jobs\n" + body; }

inline Event job_created(std::int64_t job_id, std::string owner, std::string key,
                         const std::string& body) {
  return Event("job.created")
      .with("job_id", job_id)
      .with("owner", owner)
      .with("key", key)
      .with("request", job_request(body));
}

inline Event store_job_inserted(std::int64_t job_id, std::string owner, std::string key,
                                std::int64_t attempt_id) {
  return Event("store.job_inserted")
      .with("job_id", job_id)
      .with("owner", owner)
      .with("key", key)
      .with("attempt_id", attempt_id)
      .with("via", "api-1");
}

inline std::string provider_key(std::int64_t job_id, std::int64_t attempt_no) {
  return std::to_string(job_id) + ":" + std::to_string(attempt_no);
}

inline Event attempt_created(std::int64_t job_id, std::int64_t attempt_id, std::int64_t attempt_no,
                             std::string provider, std::string origin) {
  return Event("attempt.created")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("attempt_no", attempt_no)
      .with("provider", provider)
      .with("provider_key", provider_key(job_id, attempt_no))
      .with("origin", origin);
}

inline Event attempt_state(std::int64_t job_id, std::int64_t attempt_id, std::string from,
                           std::string to, std::string by = "worker-1") {
  return Event("attempt.state")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("from", from)
      .with("to", to)
      .with("reason", "test")
      .with("by", by);
}

inline Event provider_call(std::int64_t job_id, std::int64_t attempt_id, std::int64_t attempt_no,
                           std::string provider) {
  return Event("provider.call")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("provider", provider)
      .with("provider_key", provider_key(job_id, attempt_no))
      .with("deadline_us", std::int64_t{0});
}

// Recorded on the provider's node, as the simulated provider does.
inline Event provider_execute(std::string key, std::string operation = "classify") {
  const auto colon = key.find(':');
  const std::string job = key.starts_with("cert:") ? std::string() : key.substr(0, colon);
  return Event("provider.execute")
      .with("provider_key", key)
      .with("job_id", job)
      .with("operation", operation)
      .with("outcome", "ok")
      .with("latency_us", std::int64_t{20000});
}

inline Event job_completed(std::int64_t job_id, std::int64_t attempt_id, std::string result) {
  return Event("job.completed")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("version", 2)
      .with("result", result);
}

inline Event job_failed(std::int64_t job_id, std::string reason) {
  return Event("job.failed").with("job_id", job_id).with("reason", reason);
}

inline Event output_rejected(std::int64_t job_id, std::int64_t attempt_id, std::string provider,
                             std::string output) {
  return Event("output.rejected")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("provider", provider)
      .with("reason", "test")
      .with("output", output);
}

inline Event certification_recorded(std::string provider, bool passed) {
  return Event("certification.recorded")
      .with("provider", provider)
      .with("passed", passed)
      .with("reasons", passed ? "" : "sample 1: unexpected top-level key");
}

// The certifier's report that recording `provider`'s certification lost its store reply.
inline Event certification_store_error(std::string provider) {
  return Event("certification.store_error")
      .with("provider", provider)
      .with("message", "store reply lost during record_certification");
}

// An accepted create answer that carries the canonical request, as the API records it.
inline Event create_response_with_request(int status, std::int64_t job_id, std::string owner,
                                          std::string key, const std::string& body) {
  return Event("api.response")
      .with("request_id", "r1.1.1")
      .with("route", "create_job")
      .with("status", status)
      .with("owner", owner)
      .with("key", key)
      .with("job_id", job_id)
      .with("request", job_request(body));
}

inline Event client_receive(int request, int status, std::optional<std::int64_t> job_id) {
  Event event("client.receive");
  event.with("request", request).with("attempt", 1).with("status", status);
  if (job_id) event.with("job_id", *job_id);
  return event;
}

inline Event get_job_request(std::string request_id, std::string owner, std::int64_t job_id) {
  return Event("api.request")
      .with("request_id", request_id)
      .with("route", "get_job")
      .with("method", "GET")
      .with("path", "/jobs/" + std::to_string(job_id))
      .with("owner", owner)
      .with("key", "");
}

// A get_job answer; the API names the job only when it found it.
inline Event get_job_response(std::string request_id, int status, std::string owner,
                              std::optional<std::int64_t> job_id) {
  Event event("api.response");
  event.with("request_id", request_id)
      .with("route", "get_job")
      .with("status", status)
      .with("owner", owner)
      .with("key", "");
  if (job_id) event.with("job_id", *job_id);
  if (status == 404) event.with("error", "not_found");
  return event;
}

// The worker's report of a store error while it settled `attempt_id` ("maybe_committed" or
// "unavailable").
inline Event worker_store_error(std::string worker, std::int64_t attempt_id, std::string kind,
                                std::string operation) {
  return Event("worker.store_error")
      .with("worker", worker)
      .with("attempt_id", attempt_id)
      .with("kind", kind)
      .with("message", "store reply lost during " + operation);
}

inline Event provider_reply(std::int64_t job_id, std::int64_t attempt_id, std::string provider) {
  return Event("provider.reply")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("provider", provider)
      .with("kind", "answered")
      .with("late", false);
}

inline Event reconciler_status(std::int64_t job_id, std::int64_t attempt_id, std::string status) {
  return Event("reconciler.status")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("provider", "alpha")
      .with("status", status);
}

inline Event write_refused(std::int64_t job_id, std::int64_t attempt_id, std::string found,
                           std::string wanted) {
  return Event("attempt.write_refused")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("why", "state")
      .with("found", found)
      .with("wanted", wanted)
      .with("by", "worker-1")
      .with("token", 1);
}

inline Event cancel_request(std::string request_id, std::string owner, std::int64_t attempt_id) {
  return Event("api.request")
      .with("request_id", request_id)
      .with("route", "cancel_attempt")
      .with("method", "POST")
      .with("path", "/attempts/" + std::to_string(attempt_id) + "/cancel")
      .with("owner", owner)
      .with("key", "");
}

// A cancel answer without the ids, as a refused or failed cancel carries none.
inline Event cancel_response(std::string request_id, int status, std::string owner) {
  return Event("api.response")
      .with("request_id", request_id)
      .with("route", "cancel_attempt")
      .with("status", status)
      .with("owner", owner)
      .with("key", "");
}

// Recorded on the crashed node, marked injected.
inline Event node_crash() { return Event("node.crash"); }

inline Event run_end() { return Event("run.end"); }

}  // namespace onejob::test::late
