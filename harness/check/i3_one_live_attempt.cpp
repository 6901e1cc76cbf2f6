#include "harness/check/i3_one_live_attempt.hpp"

#include <utility>

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace onejob::check {
namespace {

// DESIGN.md's definition, kept here rather than taken from system/: the checker must not share
// a bug with the code it judges.
bool is_live(const std::string& state) {
  return state == "STARTING" || state == "RUNNING" || state == "UNKNOWN";
}

// How far along its life a state is. Every legal transition moves an attempt strictly forward,
// so an attempt's transitions, ordered by stage, form one chain whatever order they were
// reported in.
int stage(const std::string& state) {
  if (state == "STARTING") return 0;
  if (state == "RUNNING") return 1;
  if (state == "UNKNOWN") return 2;
  if (state == "CANCELLED") return 3;
  return 4;
}

// What a write that may have committed without its event could have done.
enum class HiddenWrite {
  none,
  claim,     // STARTING -> RUNNING: still live
  any_move,  // any transition, so a live attempt may have ended
};

// A reply lost after the statement ran leaves a commit nobody reports; so does a node that
// crashes waiting for the reply (a crash records no store.fault).
HiddenWrite hidden_write(const Event& event) {
  if (event.kind() == "node.crash") return HiddenWrite::any_move;
  if (event.kind() != "store.fault" || event.string_field("outcome") != "maybe_committed") {
    return HiddenWrite::none;
  }
  const auto operation = event.string_field("operation").value_or("");
  if (operation == "claim_next_attempt") return HiddenWrite::claim;
  if (operation == "update_attempt" || operation == "complete_attempt") {
    return HiddenWrite::any_move;
  }
  return HiddenWrite::none;
}

struct Transition {
  std::string from;
  std::string to;
  std::uint64_t seq = 0;
};

std::string describe(std::int64_t attempt_id, const Transition& t) {
  return "attempt " + std::to_string(attempt_id) + " moves from " + t.from + " to " + t.to +
         " (event #" + std::to_string(t.seq) + ")";
}

bool steps_back(const Transition& t) { return t.to != t.from && stage(t.to) <= stage(t.from); }

// Every transition of one attempt is a step its store row really took (the event follows the
// commit), but events reach the history when their writers hear back, so two writers' reports
// may arrive out of order, and a report may be lost with its reply. Ordered by stage, the
// reported steps must still join up: a step may start later than the previous one ended only
// if some write went unreported; it may never start earlier (that is a fork) or go back.
void check_chain(std::int64_t attempt_id, std::vector<Transition> steps, std::uint64_t created_seq,
                 bool claims_hidden, bool moves_hidden, std::vector<Violation>& violations) {
  const auto back = std::ranges::stable_partition(steps, std::not_fn(steps_back));
  for (const auto& step : back) {
    violations.push_back(
        {"I3", describe(attempt_id, step) + ": no attempt ever moves back", step.seq});
  }
  steps.erase(back.begin(), back.end());
  std::ranges::stable_sort(steps, {}, [](const Transition& t) { return stage(t.to); });
  Transition reached{"", "STARTING", created_seq};  // every attempt is created STARTING
  for (const auto& step : steps) {
    const auto later_seq = std::max(step.seq, reached.seq);
    const std::string where = reached.seq == 0 ? std::string("at its creation")
                                               : "at event #" + std::to_string(reached.seq);
    if (stage(step.from) < stage(reached.to) ||
        (stage(step.from) == stage(reached.to) && step.from != reached.to)) {
      violations.push_back({"I3",
                            describe(attempt_id, step) + ", but it was already " + reached.to +
                                " " + where + ": the history contradicts itself",
                            later_seq});
    } else if (step.from != reached.to) {
      const bool claimed = reached.to == "STARTING" && step.from == "RUNNING";
      if (!moves_hidden && !(claimed && claims_hidden)) {
        violations.push_back({"I3",
                              describe(attempt_id, step) + ", but the history has it " +
                                  reached.to + " " + where + " and never reaching " + step.from +
                                  ": the history contradicts itself",
                              later_seq});
      }
    }
    reached = step;
  }
}

struct ReplayedAttempt {
  std::int64_t job_id = 0;
  std::string state;            // the furthest state reported so far
  std::uint64_t since_seq = 0;  // the event that reported it
};

// Writes that may have taken an attempt out of the live states without the history showing it
// yet. A write reaches the history when its writer hears back from the store, so it may commit
// before another writer creates the next attempt and still be reported after that creation; if
// its reply is lost, or its writer crashes waiting, it is never reported. Each such write leaves
// a trace first (a cancel request, a provider answer, a reconciler status) or after (a worker's
// store error naming the attempt), so doubt falls on that attempt alone.
class PendingExits {
 public:
  void observe(const sim::TraceEvent& recorded);
  bool any(std::int64_t attempt_id) const {
    auto it = pending_.lower_bound({attempt_id, ""});
    return it != pending_.end() && it->first.first == attempt_id;
  }

 private:
  using Write = std::pair<std::int64_t, std::string>;  // attempt, writer (as `by` names it)
  void add(const Write& write) { ++pending_[write]; }
  // The write did not commit: the store refused it, or never ran it.
  void settle(const Write& write) {
    auto it = pending_.find(write);
    if (it != pending_.end() && --it->second == 0) pending_.erase(it);
  }

  std::map<std::string, std::int64_t> cancels_;  // request id -> attempt, until the API answers
  std::map<Write, int> pending_;                 // writes in doubt
};

// The id in "/attempts/{id}/cancel"; 0 when the path is another.
std::int64_t cancelled_attempt(const std::string& path) {
  constexpr std::string_view kPrefix = "/attempts/";
  if (!path.starts_with(kPrefix)) return 0;
  std::int64_t id = 0;
  std::from_chars(path.data() + kPrefix.size(), path.data() + path.size(), id);
  return id;
}

void PendingExits::observe(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const auto& kind = event.kind();
  const auto attempt_id = event.int_field("attempt_id").value_or(0);
  const bool cancel_route = event.string_field("route") == "cancel_attempt";
  if (kind == "api.request" && cancel_route) {
    const auto target = cancelled_attempt(event.string_field("path").value_or(""));
    cancels_[event.string_field("request_id").value_or("")] = target;
    add({target, "api"});
  } else if (kind == "api.response" && cancel_route) {
    auto cancel = cancels_.find(event.string_field("request_id").value_or(""));
    if (cancel == cancels_.end()) return;
    // A store error may hide a committed cancel: the doubt stays.
    if (event.int_field("status").value_or(500) < 500) settle({cancel->second, "api"});
    cancels_.erase(cancel);
  } else if (kind == "provider.reply") {
    const auto reply = event.string_field("kind");
    if (reply == "answered" || reply == "rejected") add({attempt_id, recorded.node});
  } else if (kind == "reconciler.status") {
    const auto status = event.string_field("status");
    if (status == "completed" || status == "failed") add({attempt_id, "reconciler"});
  } else if (kind == "attempt.write_refused") {
    // A refused move to UNKNOWN was never one of the exits in doubt.
    if (!is_live(event.string_field("wanted").value_or(""))) {
      settle({attempt_id, event.string_field("by").value_or("")});
    }
  } else if (kind == "worker.store_error" && attempt_id != 0) {
    const Write write{attempt_id, event.string_field("worker").value_or("")};
    if (event.string_field("kind") == "unavailable") {
      settle(write);
    } else if (!pending_.contains(write)) {
      add(write);  // a write with no trace before it (a prompt refused, a late cancel)
    }
  }
}

// Replays liveness in history order. A report that arrives after a later one is old news: the
// replay only ever moves an attempt forward.
class LiveAttempts {
 public:
  void on_created(const sim::TraceEvent& recorded);
  void on_state(const sim::TraceEvent& recorded);
  void observe_writes(const sim::TraceEvent& recorded) { exits_.observe(recorded); }
  std::vector<Violation>& violations() { return violations_; }

 private:
  // `back`: follow a step back too (check_chain reports it; liveness must still count it).
  void move(std::int64_t attempt_id, std::int64_t job_id, const std::string& to,
            const sim::TraceEvent& recorded, bool back = false);
  // Reports a second live attempt when `attempt_id` has just become live.
  void check_alone(std::int64_t attempt_id, const sim::TraceEvent& recorded);
  bool counts_as_live(std::int64_t attempt_id, const ReplayedAttempt& attempt) const {
    return is_live(attempt.state) && !exits_.any(attempt_id);
  }

  std::map<std::int64_t, ReplayedAttempt> attempts_;
  PendingExits exits_;
  std::vector<Violation> violations_;
};

void LiveAttempts::check_alone(std::int64_t attempt_id, const sim::TraceEvent& recorded) {
  const ReplayedAttempt& attempt = attempts_.at(attempt_id);
  for (const auto& [other_id, other] : attempts_) {
    if (other_id == attempt_id || other.job_id != attempt.job_id) continue;
    if (!counts_as_live(other_id, other)) continue;
    violations_.push_back({"I3",
                           "attempt " + std::to_string(attempt_id) + " of job " +
                               std::to_string(attempt.job_id) + " became " + attempt.state +
                               " while attempt " + std::to_string(other_id) + " is " + other.state +
                               " (since event #" + std::to_string(other.since_seq) +
                               "): two live attempts",
                           recorded.seq});
    return;
  }
}

void LiveAttempts::move(std::int64_t attempt_id, std::int64_t job_id, const std::string& to,
                        const sim::TraceEvent& recorded, bool back) {
  auto [it, first] = attempts_.try_emplace(attempt_id, ReplayedAttempt{job_id, to, recorded.seq});
  ReplayedAttempt& attempt = it->second;
  const bool was_live = !first && is_live(attempt.state);
  if (!first) {
    if (!back && stage(to) <= stage(attempt.state)) return;
    attempt = {job_id, to, recorded.seq};
  }
  if (is_live(to) && !was_live) check_alone(attempt_id, recorded);
}

void LiveAttempts::on_created(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  move(event.int_field("attempt_id").value_or(0), event.int_field("job_id").value_or(0), "STARTING",
       recorded);
}

void LiveAttempts::on_state(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const auto attempt_id = event.int_field("attempt_id").value_or(0);
  const auto job_id = event.int_field("job_id").value_or(0);
  const Transition step{event.string_field("from").value_or(""),
                        event.string_field("to").value_or(""), recorded.seq};
  // First seen here (its creation's reply was lost, or its report is still on the way): it has
  // been in `from` all along.
  if (!attempts_.contains(attempt_id)) move(attempt_id, job_id, step.from, recorded);
  move(attempt_id, job_id, step.to, recorded, steps_back(step));
}

}  // namespace

std::vector<Violation> check_one_live_attempt(const sim::History& history) {
  LiveAttempts live;
  std::map<std::int64_t, std::vector<Transition>> steps;
  std::map<std::int64_t, std::uint64_t> created_seqs;
  bool claims_hidden = false;
  bool moves_hidden = false;
  for (const auto& recorded : history) {
    const Event& event = recorded.event;
    live.observe_writes(recorded);
    if (event.kind() == "attempt.created") {
      live.on_created(recorded);
      created_seqs.try_emplace(event.int_field("attempt_id").value_or(0), recorded.seq);
    } else if (event.kind() == "attempt.state") {
      live.on_state(recorded);
      steps[event.int_field("attempt_id").value_or(0)].push_back(
          {event.string_field("from").value_or(""), event.string_field("to").value_or(""),
           recorded.seq});
    } else if (const auto write = hidden_write(event); write != HiddenWrite::none) {
      claims_hidden = claims_hidden || write == HiddenWrite::claim;
      moves_hidden = moves_hidden || write == HiddenWrite::any_move;
    }
  }
  auto& violations = live.violations();
  for (auto& [attempt_id, attempt_steps] : steps) {
    const auto created = created_seqs.find(attempt_id);
    check_chain(attempt_id, std::move(attempt_steps),
                created == created_seqs.end() ? 0 : created->second, claims_hidden, moves_hidden,
                violations);
  }
  std::ranges::stable_sort(violations, {}, [](const Violation& v) { return v.event_seq; });
  return std::move(violations);
}

}  // namespace onejob::check
