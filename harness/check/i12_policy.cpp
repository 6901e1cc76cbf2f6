// I12 — the policy in force holds: the limits the run was configured with (run.policy) bound what
// the system did.
//
// Checks, against the store's commit log and the recorded policy:
//   - no automatic attempt (a failover) takes a job past attempt_limit attempts: its attempt_no
//     is at most the limit (attempt_limit). Operators' explicit retries are not bound by it;
//   - a worker never holds more claimed attempts at once than worker_capacity (over_capacity):
//     an attempt counts from the claim the worker's current incarnation committed until the
//     attempt leaves RUNNING or another writer takes its lease over;
//     and, whatever it got its attempts from (claims, or adoptions of attempts leased to its
//     name), no incarnation has more provider calls under way at once than worker_capacity: a
//     call is under way from its provider.call until it ended for the worker (a reply delivered,
//     else its deadline);
//   - one reconciler incarnation re-drives an attempt (UNKNOWN -> STARTING) at most redrive_limit
//     times (redrive_limit): past it the attempt waits for an operator.
// Does not check: that capacity is used (an idle worker beside waiting work is I8's
// `unclaimed`).
#include <algorithm>

#include "harness/check/invariant.hpp"

namespace onejob::check {
namespace {

bool crashed_between(const HistoryModel& model, const std::string& node, std::uint64_t from,
                     std::uint64_t to) {
  auto life = model.node_life.find(node);
  if (life == model.node_life.end()) return false;
  return std::ranges::any_of(life->second, [&](const At<bool>& change) {
    return !change.what && change.seq > from && change.seq < to;
  });
}

void check_attempt_limit(const HistoryModel& model, const events::RunPolicy& policy,
                         std::vector<Violation>& out) {
  for (const auto& [id, attempt] : model.attempts) {
    const auto& inserted = attempt.inserted.what;
    if (inserted.origin != AttemptOrigin::failover || inserted.attempt_no <= policy.attempt_limit) {
      continue;
    }
    out.push_back(violation("I12.attempt_limit",
                            "the store inserted failover " + attempt_ref(id) + " as attempt " +
                                std::to_string(inserted.attempt_no) + " of " +
                                job_ref(inserted.job_id) + ", past the attempt_limit of " +
                                std::to_string(policy.attempt_limit),
                            attempt.inserted.seq, {}));
  }
}

void check_capacity(const HistoryModel& model, const events::RunPolicy& policy,
                    std::vector<Violation>& out) {
  // Every claim and every move out of a claim, in commit order.
  struct Change {
    std::uint64_t seq;
    const AttemptRecord* attempt;
    const At<Transition>* step;
  };
  std::vector<Change> changes;
  for (const auto& [id, attempt] : model.attempts) {
    for (const auto& step : attempt.steps) changes.push_back({step.seq, &attempt, &step});
  }
  std::ranges::sort(changes, {}, &Change::seq);
  // worker -> the attempts it holds, each with the seq of the claim that gave it.
  std::map<std::string, std::map<std::int64_t, std::uint64_t>> held;
  std::map<std::int64_t, std::string> holder;  // attempt -> worker
  std::set<std::string> reported;
  for (const auto& change : changes) {
    const auto& step = change.step->what;
    const std::int64_t id = change.attempt->id();
    if (auto was = holder.find(id); was != holder.end()) {
      const bool released = step.to != AttemptState::running || step.lease_owner != was->second;
      if (released) {
        held[was->second].erase(id);
        holder.erase(was);
      }
    }
    if (!step.claim) continue;
    // Claims of a worker's earlier incarnation do not count against its current one.
    auto& mine = held[step.lease_owner];
    std::erase_if(mine, [&](const auto& entry) {
      const bool stale = crashed_between(model, step.lease_owner, entry.second, change.seq);
      if (stale) holder.erase(entry.first);
      return stale;
    });
    mine[id] = change.seq;
    holder[id] = step.lease_owner;
    if (static_cast<int>(mine.size()) > policy.worker_capacity &&
        reported.insert(step.lease_owner).second) {
      out.push_back(violation("I12.over_capacity",
                              step.lease_owner + " claimed " + attempt_ref(id) + " while holding " +
                                  std::to_string(mine.size() - 1) +
                                  " claimed attempts, over its worker_capacity of " +
                                  std::to_string(policy.worker_capacity),
                              change.seq, {}));
    }
  }
}

void check_calls_in_flight(const HistoryModel& model, const events::RunPolicy& policy,
                           std::vector<Violation>& out) {
  std::map<std::string, std::vector<const CallSpan*>> by_node;
  for (const auto& span : model.call_spans) by_node[span.node].push_back(&span);
  for (const auto& [node, calls] : by_node) {
    std::vector<const CallSpan*> under_way;  // this incarnation's calls that have not ended
    const CallSpan* previous = nullptr;
    for (const CallSpan* span : calls) {
      if (previous && crashed_between(model, node, previous->call.seq, span->call.seq)) {
        under_way.clear();
      }
      previous = span;
      std::erase_if(under_way,
                    [&](const CallSpan* other) { return other->ended <= span->call.at; });
      under_way.push_back(span);
      if (static_cast<int>(under_way.size()) <= policy.worker_capacity) continue;
      std::vector<std::uint64_t> evidence;
      for (const CallSpan* other : under_way) {
        if (other != span) evidence.push_back(other->call.seq);
      }
      out.push_back(violation("I12.over_capacity",
                              node + " called a provider for " +
                                  attempt_ref(span->call.what.attempt_id) + " with " +
                                  std::to_string(under_way.size() - 1) +
                                  " calls still under way, over its worker_capacity of " +
                                  std::to_string(policy.worker_capacity),
                              span->call.seq, std::move(evidence)));
      break;  // once per worker
    }
  }
}

void check_redrive_limit(const HistoryModel& model, const events::RunPolicy& policy,
                         std::vector<Violation>& out) {
  for (const auto& [id, attempt] : model.attempts) {
    std::map<std::string, std::vector<std::uint64_t>> redrives;  // by writer, this incarnation
    for (const auto& step : attempt.steps) {
      const auto& s = step.what;
      if (s.from != AttemptState::unknown || s.to != AttemptState::starting) continue;
      auto& mine = redrives[s.by];
      if (!mine.empty() && crashed_between(model, s.by, mine.back(), step.seq)) mine.clear();
      mine.push_back(step.seq);
      if (static_cast<std::int64_t>(mine.size()) == policy.redrive_limit + 1) {
        out.push_back(violation(
            "I12.redrive_limit",
            s.by + " re-drove " + attempt_ref(id) + " a " + std::to_string(mine.size()) +
                "th time, past its redrive_limit of " + std::to_string(policy.redrive_limit),
            step.seq, {mine.front()}));
      }
    }
  }
}

}  // namespace

std::vector<Violation> check_policy(const HistoryModel& model) {
  std::vector<Violation> out;
  if (!model.policy) return out;  // a history without run.policy has no policy to judge
  check_attempt_limit(model, model.policy->what, out);
  check_capacity(model, model.policy->what, out);
  check_calls_in_flight(model, model.policy->what, out);
  check_redrive_limit(model, model.policy->what, out);
  return out;
}

}  // namespace onejob::check
