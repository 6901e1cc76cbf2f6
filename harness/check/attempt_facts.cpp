#include "harness/check/attempt_facts.hpp"

#include <utility>

#include <charconv>

namespace onejob::check {
namespace {

bool is_live(const std::string& state) {
  return state == "STARTING" || state == "RUNNING" || state == "UNKNOWN";
}

// "/attempts/{id}/cancel" -> id.
std::optional<std::int64_t> cancelled_attempt(const std::string& path) {
  constexpr std::string_view kPrefix = "/attempts/";
  if (!path.starts_with(kPrefix)) return std::nullopt;
  std::int64_t id = 0;
  const char* first = path.data() + kPrefix.size();
  auto [end, error] = std::from_chars(first, path.data() + path.size(), id);
  if (error != std::errc{} || std::string_view(end, path.data() + path.size()) != "/cancel") {
    return std::nullopt;
  }
  return id;
}

}  // namespace

void AttemptFacts::learn(std::int64_t job_id, std::int64_t attempt_id, const std::string& state) {
  Attempt& attempt = attempts_[attempt_id];
  attempt.job_id = job_id;
  attempt.state = state;
  attempt.in_doubt = false;
  settling_.erase(attempt_id);
  // A live attempt shows where the job went after any lost failover or failure.
  if (is_live(state)) doubtful_jobs_.erase(job_id);
}

void AttemptFacts::lost_write(std::int64_t attempt_id) {
  auto it = attempts_.find(attempt_id);
  if (it == attempts_.end()) return;
  Attempt& attempt = it->second;
  if (attempt.state == "FAILED") {
    doubtful_jobs_.insert(attempt.job_id);
  } else if (attempt.state != "SUCCEEDED" && attempt.state != "DISCARDED") {
    attempt.in_doubt = true;
  }
}

void AttemptFacts::record_cancel(const Event& event) {
  const auto request_id = event.string_field("request_id").value_or("");
  if (event.kind() == "api.request") {
    const auto attempt_id = cancelled_attempt(event.string_field("path").value_or(""));
    const auto it = attempt_id ? attempts_.find(*attempt_id) : attempts_.end();
    if (it == attempts_.end()) return;
    cancels_[request_id] = {*attempt_id, !it->second.in_doubt};
    it->second.in_doubt = true;
    return;
  }
  auto it = cancels_.find(request_id);
  if (it == cancels_.end()) return;
  const auto [attempt_id, raised_doubt] = it->second;
  // 2xx follows the attempt.state it reports; 4xx wrote nothing; 5xx may have written.
  if (raised_doubt && event.int_field("status").value_or(0) < 500) {
    attempts_.at(attempt_id).in_doubt = false;
  }
  cancels_.erase(it);
}

void AttemptFacts::record_attempt_fact(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const auto& kind = event.kind();
  const auto job_id = event.int_field("job_id");
  const auto attempt_id = event.int_field("attempt_id");
  if (!job_id || !attempt_id) return;
  if (kind == "store.job_inserted" || kind == "attempt.created") {
    if (!attempts_.contains(*attempt_id)) learn(*job_id, *attempt_id, "STARTING");
  } else if (kind == "attempt.state") {
    learn(*job_id, *attempt_id, event.string_field("to").value_or(""));
  } else if (kind == "attempt.write_refused") {
    learn(*job_id, *attempt_id, event.string_field("found").value_or(""));
  } else if (kind == "reconciler.status") {
    // The reconciler queries only attempts it found UNKNOWN; a later state we know stands.
    auto it = attempts_.find(*attempt_id);
    if (it == attempts_.end() || it->second.in_doubt || it->second.state == "STARTING" ||
        it->second.state == "RUNNING") {
      learn(*job_id, *attempt_id, "UNKNOWN");
    }
    const auto status = event.string_field("status").value_or("");
    reconciling_.reset();
    if (status == "completed" || status == "failed") {
      reconciling_.emplace(recorded.node, *attempt_id);
    }
  } else if (kind == "provider.reply") {
    settling_[*attempt_id] = recorded.node;
  }
}

void AttemptFacts::record(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const auto& kind = event.kind();
  if (kind == "node.crash") {
    for (const auto& [attempt_id, worker] : settling_) {
      if (worker == recorded.node) lost_write(attempt_id);
    }
    if (reconciling_ && reconciling_->first == recorded.node) lost_write(reconciling_->second);
  } else if (kind == "store.fault") {
    if (reconciling_ && event.string_field("node") == reconciling_->first &&
        event.string_field("outcome") == "maybe_committed") {
      lost_write(reconciling_->second);
    }
  } else if (kind == "worker.store_error") {
    const auto attempt_id = event.int_field("attempt_id").value_or(0);
    if (attempt_id != 0 && event.string_field("kind") == "maybe_committed") {
      lost_write(attempt_id);
    }
  } else if ((kind == "api.request" || kind == "api.response") &&
             event.string_field("route") == "cancel_attempt") {
    record_cancel(event);
  } else if (kind == "job.completed" || kind == "job.failed") {
    doubtful_jobs_.erase(event.int_field("job_id").value_or(0));
  } else {
    record_attempt_fact(recorded);
  }
}

}  // namespace onejob::check
