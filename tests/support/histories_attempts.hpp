#pragma once

#include <utility>

#include <cstdint>
#include <string>

#include "harness/sim/trace.hpp"

// Helpers for the I2-I5 checker tests: key reuse and the life of attempts. Their own namespace
// keeps a helper of the same name in another test-support header from becoming a second,
// different definition of one inline function.
namespace onejob::test::attempts {

// Builds hand-made histories whose events carry simulated time: each add() appends one event
// with the next seq, at the given time since the start of the run.
class TimedHistoryBuilder {
 public:
  TimedHistoryBuilder& add(Duration at, std::string node, Event event) {
    history_.push_back(sim::TraceEvent{history_.size() + 1, Instant(at), std::move(node),
                                       std::move(event), false});
    return *this;
  }
  const sim::History& history() const { return history_; }

 private:
  sim::History history_;
};

// The canonical request bytes the API records for a classify job of `text`.
inline std::string classify_request(const std::string& text) {
  return "POST /jobs\n{\"input\":{\"text\":\"" + text +
         "\"},\"operation\":\"classify\",\"provider\":\"alpha\"}";
}

inline Event job_created(std::int64_t job_id, std::string owner, std::string key,
                         std::string request) {
  return Event("job.created")
      .with("job_id", job_id)
      .with("owner", std::move(owner))
      .with("key", std::move(key))
      .with("request", std::move(request));
}

// The store's own log of an insert; the only trace of a create whose reply was lost.
inline Event store_job_inserted(std::int64_t job_id, std::string owner, std::string key) {
  return Event("store.job_inserted")
      .with("job_id", job_id)
      .with("owner", std::move(owner))
      .with("key", std::move(key))
      .with("attempt_id", job_id)
      .with("via", "api-1");
}

// An accepted create (200 or 201) for `request`, carrying `job_id`.
inline Event create_accepted(int status, std::int64_t job_id, std::string owner, std::string key,
                             std::string request) {
  return Event("api.response")
      .with("route", "create_job")
      .with("status", status)
      .with("owner", std::move(owner))
      .with("key", std::move(key))
      .with("job_id", job_id)
      .with("request", std::move(request));
}

// A create refused because the key was used with another request; no job id, as the API sends.
inline Event create_refused(std::string owner, std::string key, std::string request) {
  return Event("api.response")
      .with("route", "create_job")
      .with("status", 422)
      .with("owner", std::move(owner))
      .with("key", std::move(key))
      .with("error", "idempotency_key_reused")
      .with("request", std::move(request));
}

inline Event attempt_created(std::int64_t job_id, std::int64_t attempt_id,
                             std::int64_t attempt_no = 1) {
  return Event("attempt.created")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("attempt_no", attempt_no)
      .with("provider", "alpha")
      .with("provider_key", std::to_string(job_id) + ":" + std::to_string(attempt_no))
      .with("origin", attempt_no == 1 ? "initial" : "failover");
}

inline Event attempt_state(std::int64_t job_id, std::int64_t attempt_id, std::string from,
                           std::string to, std::string reason = "test",
                           std::string by = "worker-1") {
  return Event("attempt.state")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("from", std::move(from))
      .with("to", std::move(to))
      .with("reason", std::move(reason))
      .with("by", std::move(by));
}

inline Event provider_call(std::int64_t job_id, std::int64_t attempt_id, Duration deadline) {
  return Event("provider.call")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("provider", "alpha")
      .with("provider_key", std::to_string(job_id) + ":1")
      .with("deadline_us", static_cast<std::int64_t>(deadline.count()));
}

// `kind`: answered, rejected or maybe_delivered.
inline Event provider_reply(std::int64_t job_id, std::int64_t attempt_id, std::string kind,
                            bool late) {
  return Event("provider.reply")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("provider", "alpha")
      .with("kind", std::move(kind))
      .with("late", late);
}

inline Event output_rejected(std::int64_t job_id, std::int64_t attempt_id) {
  return Event("output.rejected")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("provider", "alpha")
      .with("reason", "output is not JSON")
      .with("output", "Sure! Here is the label.");
}

// `status`: completed, failed, running, not_found or unreachable.
inline Event reconciler_status(std::int64_t job_id, std::int64_t attempt_id, std::string status) {
  return Event("reconciler.status")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("provider", "alpha")
      .with("status", std::move(status));
}

inline Event job_failed(std::int64_t job_id, std::string reason) {
  return Event("job.failed").with("job_id", job_id).with("reason", std::move(reason));
}

inline Event job_cas(std::int64_t job_id, std::int64_t attempt_id, std::int64_t expected_version,
                     bool won, std::int64_t winner) {
  return Event("job.cas")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("expected_version", expected_version)
      .with("won", won)
      .with("winner", winner);
}

inline Event job_completed(std::int64_t job_id, std::int64_t attempt_id, std::string result,
                           std::int64_t version = 2) {
  return Event("job.completed")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("version", version)
      .with("result", std::move(result));
}

inline Event result_discarded(std::int64_t job_id, std::int64_t attempt_id, std::int64_t winner,
                              std::string result) {
  return Event("result.discarded")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("winner", winner)
      .with("result", std::move(result));
}

// An operator's POST /attempts/{id}/cancel, as the API records it on arrival.
inline Event cancel_request(std::string request_id, std::int64_t attempt_id) {
  return Event("api.request")
      .with("request_id", std::move(request_id))
      .with("route", "cancel_attempt")
      .with("method", "POST")
      .with("path", "/attempts/" + std::to_string(attempt_id) + "/cancel")
      .with("owner", "alice")
      .with("key", "");
}

// The API's answer to that cancel: 200 when it applied, 409 when the attempt had already ended.
inline Event cancel_response(std::string request_id, int status, std::int64_t job_id,
                             std::int64_t attempt_id) {
  return Event("api.response")
      .with("request_id", std::move(request_id))
      .with("route", "cancel_attempt")
      .with("status", status)
      .with("owner", "alice")
      .with("key", "")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id);
}

// The store refused a guarded write: the attempt was `found` in another state than expected.
inline Event write_refused(std::int64_t job_id, std::int64_t attempt_id, std::string found,
                           std::string wanted, std::string by = "worker-1") {
  return Event("attempt.write_refused")
      .with("job_id", job_id)
      .with("attempt_id", attempt_id)
      .with("why", "state")
      .with("found", std::move(found))
      .with("wanted", std::move(wanted))
      .with("by", std::move(by))
      .with("token", 1);
}

// A worker's write failed: `kind` unavailable (it never ran) or maybe_committed (its reply was
// lost).
inline Event worker_store_error(std::int64_t attempt_id, std::string kind) {
  return Event("worker.store_error")
      .with("worker", "worker-1")
      .with("attempt_id", attempt_id)
      .with("kind", kind)
      .with("message", "store " + kind);
}

// `outcome`: maybe_committed (the write may have committed) or unavailable (nothing ran).
inline Event store_fault(std::string operation, std::string outcome) {
  return Event("store.fault")
      .with("node", "worker-1")
      .with("operation", std::move(operation))
      .with("fault", "reply lost")
      .with("outcome", std::move(outcome));
}

}  // namespace onejob::test::attempts
