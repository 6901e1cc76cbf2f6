#include "harness/check/i4_timeout_is_unknown.hpp"

#include <utility>

#include <map>
#include <set>
#include <string>

namespace onejob::check {
namespace {

struct Call {
  std::uint64_t seq = 0;
  Instant deadline{};
  bool answered_in_time = false;
};

struct ReplayedAttempt {
  std::int64_t job_id = 0;
  std::string state;  // the furthest state reported so far
  std::uint64_t since_seq = 0;
  bool uncertain = false;  // an unreported write may have moved it since
};

// How far along its life a state is; every legal transition moves an attempt forward. Reports
// reach the history when their writers hear back from the store, so a step can be reported after
// a later one: the replay keeps the furthest.
int stage(const std::string& state) {
  if (state == "STARTING") return 0;
  if (state == "RUNNING") return 1;
  if (state == "UNKNOWN") return 2;
  if (state == "CANCELLED") return 3;
  return 4;
}

// A write that may have committed without its event: its reply was lost, or its node crashed
// waiting for the reply (a crash records no store.fault).
bool may_hide_a_write(const Event& event) {
  if (event.kind() == "node.crash") return true;
  if (event.kind() != "store.fault" || event.string_field("outcome") != "maybe_committed") {
    return false;
  }
  const auto operation = event.string_field("operation").value_or("");
  return operation == "update_attempt" || operation == "complete_attempt";
}

// Reasons only a timeout produces: the worker's deadline, or the lease of a worker presumed lost.
bool names_a_timeout(const std::string& reason) {
  return reason.find("lease expired") != std::string::npos ||
         reason.find("deadline") != std::string::npos;
}

std::string attempt_name(std::int64_t attempt_id) {
  return "attempt " + std::to_string(attempt_id);
}

class TimeoutChecker {
 public:
  void on_call(const sim::TraceEvent& recorded);
  void on_reply(const sim::TraceEvent& recorded);
  void on_evidence(const sim::TraceEvent& recorded) {
    evidence_.insert(recorded.event.int_field("attempt_id").value_or(0));
  }
  void on_created(const sim::TraceEvent& recorded);
  void on_state(const sim::TraceEvent& recorded);
  void on_job_failed(const sim::TraceEvent& recorded);
  void on_possible_hidden_write();
  std::vector<Violation> take() { return std::move(violations_); }

 private:
  void report(std::string message, std::uint64_t seq) {
    violations_.push_back({"I4", std::move(message), seq});
  }

  std::map<std::int64_t, Call> calls_;  // the latest call of each attempt
  std::set<std::int64_t> evidence_;     // attempts with definitive evidence of failure
  std::map<std::int64_t, ReplayedAttempt> attempts_;
  std::vector<Violation> violations_;
};

void TimeoutChecker::on_call(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const Duration deadline{event.int_field("deadline_us").value_or(0)};
  calls_[event.int_field("attempt_id").value_or(0)] = {recorded.seq, Instant{deadline}, false};
}

void TimeoutChecker::on_reply(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const auto attempt_id = event.int_field("attempt_id").value_or(0);
  const auto kind = event.string_field("kind").value_or("");
  if (kind == "rejected") evidence_.insert(attempt_id);
  auto call = calls_.find(attempt_id);
  if (call == calls_.end() || event.bool_field("late").value_or(true)) return;
  // The deadline decides, not the worker's own flag: a reply after it is late whatever it says.
  if ((kind == "answered" || kind == "rejected") && recorded.at <= call->second.deadline) {
    call->second.answered_in_time = true;
  }
}

void TimeoutChecker::on_created(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  // A claim may be reported before the creation: never move an attempt back to STARTING.
  attempts_.try_emplace(
      event.int_field("attempt_id").value_or(0),
      ReplayedAttempt{event.int_field("job_id").value_or(0), "STARTING", recorded.seq});
}

void TimeoutChecker::on_state(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const auto attempt_id = event.int_field("attempt_id").value_or(0);
  const auto from = event.string_field("from").value_or("");
  const auto to = event.string_field("to").value_or("");
  const auto reason = event.string_field("reason").value_or("");
  if (from == "RUNNING" && to == "FAILED") {
    const auto call = calls_.find(attempt_id);
    if (names_a_timeout(reason)) {
      report(attempt_name(attempt_id) + " went RUNNING -> FAILED because \"" + reason +
                 "\": a timeout yields UNKNOWN, never FAILED",
             recorded.seq);
    } else if (call != calls_.end() && !call->second.answered_in_time) {
      report(attempt_name(attempt_id) + " went RUNNING -> FAILED (\"" + reason +
                 "\") but its provider call (event #" + std::to_string(call->second.seq) +
                 ", deadline " + std::to_string(call->second.deadline.time_since_epoch().count()) +
                 " us) had no answer in time: a timeout yields UNKNOWN, never FAILED",
             recorded.seq);
    }
  } else if (from == "UNKNOWN" && to == "FAILED" && !evidence_.contains(attempt_id)) {
    report(attempt_name(attempt_id) + " went UNKNOWN -> FAILED (\"" + reason +
               "\") without a rejection, an output.rejected or a failed provider status for it",
           recorded.seq);
  }
  auto [attempt, first] = attempts_.try_emplace(attempt_id);
  if (first || stage(to) > stage(attempt->second.state)) {
    attempt->second = {event.int_field("job_id").value_or(0), to, recorded.seq};
  }
}

void TimeoutChecker::on_job_failed(const sim::TraceEvent& recorded) {
  const auto job_id = recorded.event.int_field("job_id").value_or(0);
  for (const auto& [attempt_id, attempt] : attempts_) {
    if (attempt.job_id != job_id || attempt.state != "UNKNOWN" || attempt.uncertain) continue;
    report("job " + std::to_string(job_id) + " failed (\"" +
               recorded.event.string_field("reason").value_or("") + "\") while " +
               attempt_name(attempt_id) + " is UNKNOWN (since event #" +
               std::to_string(attempt.since_seq) + "): an unknown outcome is not a failure",
           recorded.seq);
    return;
  }
}

void TimeoutChecker::on_possible_hidden_write() {
  for (auto& [id, attempt] : attempts_) {
    if (attempt.state == "UNKNOWN") attempt.uncertain = true;
  }
}

}  // namespace

std::vector<Violation> check_timeout_is_unknown(const sim::History& history) {
  TimeoutChecker checker;
  for (const auto& recorded : history) {
    const Event& event = recorded.event;
    const auto& kind = event.kind();
    if (kind == "provider.call") {
      checker.on_call(recorded);
    } else if (kind == "provider.reply") {
      checker.on_reply(recorded);
    } else if (kind == "output.rejected" ||
               (kind == "reconciler.status" && event.string_field("status") == "failed")) {
      checker.on_evidence(recorded);
    } else if (kind == "attempt.created") {
      checker.on_created(recorded);
    } else if (kind == "attempt.state") {
      checker.on_state(recorded);
    } else if (kind == "job.failed") {
      checker.on_job_failed(recorded);
    } else if (may_hide_a_write(event)) {
      checker.on_possible_hidden_write();
    }
  }
  return checker.take();
}

}  // namespace onejob::check
