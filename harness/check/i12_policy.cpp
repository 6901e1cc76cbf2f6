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
//     else its deadline); nor two calls under way at once for one attempt (call_doubled): a
//     worker calls once per claim or adoption, and adopts only what it is not running;
//   - one reconciler incarnation re-drives an attempt (UNKNOWN -> STARTING) at most redrive_limit
//     times (redrive_limit): past it the attempt waits for an operator;
//   - a worker's provider call ends at attempt_deadline after it (call_deadline): the deadline
//     its provider.call names is the call's instant plus attempt_deadline;
//   - a claim's lease runs for `lease` from the instant its worker sent the claim (lease_length):
//     its expiry is at most the claim's commit instant plus lease, and at least lease after the
//     instant the claim loop was last seen moving: the worker incarnation's start, or its previous
//     claim's commit (the loop sends one claim at a time, the next after the last one's round
//     trip; a crashed incarnation's connection commits nothing more);
//   - a store error's wait is the backoff README promises (backoff_out_of_bounds): after the n-th
//     failure in a row of one loop, a draw from [d/2, d], d = min(cap, base * 2^(n-1)), for a
//     worker base = worker_poll and cap = store_backoff_cap, for the reconciler both bounded by
//     reconcile_period (a cap below base counts as base). A success is not always in the history,
//     so n is bounded from above by the loop's failures since the last proof of one: a node start,
//     for a worker's claim loop a claim the commit log has whose reply was not lost, for the
//     reconciler's sweep its report that a sweep went through (reconciler.store_recovered). Every
//     wait is then at least base/2 and at most d for that bound;
//   - the waits are drawn (backoff_not_jittered): a draw from [d/2, d] lands on one of the few
//     values that end a possible range (base * 2^i capped, or half of one) with probability at
//     most 3 / (base/2 + 1); three such waits in a row in one loop mean no draw was made. Judged
//     for a base of 2 ms or more, where three in a row by chance is below 3e-8;
//   - the wait grows while the store is cut off (backoff_not_grown): while a node_store partition
//     (run.partition, until the quiet phase heals it) cuts a node off, every store call it makes
//     fails, so the j-th store error of its claim loop (or the reconciler's sweep) inside one such
//     window is at least its j-th failure in a row: its wait is at least half of
//     min(cap, base * 2^(j-1));
//   - the wait is taken (backoff_not_waited): a worker's claim loop, or the reconciler's sweep,
//     meets its next store error no sooner than the wait it reported after the last one.
//   - a status query is answered within status_timeout or given up at it: the reconciler reports
//     an attempt's status no later than status_timeout after its query left it (status_overdue),
//     and not as "unreachable" when another status reached it before then, nor before then with
//     nothing delivered (status_dropped); neither is judged across a pause of the node;
// Does not check: that capacity is used (an idle worker beside waiting work is I8's
// `unclaimed`).
#include <algorithm>

#include "system/events/reconciler_events.hpp"

#include "harness/check/event_switch.hpp"
#include "harness/check/invariant.hpp"
#include "harness/events/provider_events.hpp"
#include "harness/events/world_events.hpp"

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
      for (const CallSpan* other : under_way) {
        if (other->call.what.attempt_id != span->call.what.attempt_id) continue;
        out.push_back(violation("I12.call_doubled",
                                node + " called a provider for " +
                                    attempt_ref(span->call.what.attempt_id) +
                                    " while its call for it was still under way",
                                span->call.seq, {other->call.seq}));
        break;
      }
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

void check_call_deadlines(const HistoryModel& model, const events::RunPolicy& policy,
                          std::vector<Violation>& out) {
  const Duration deadline(policy.attempt_deadline_us);
  for (const auto& span : model.call_spans) {
    if (span.deadline == span.call.at + deadline) continue;
    out.push_back(violation("I12.call_deadline",
                            span.node.str() + " called for " +
                                attempt_ref(span.call.what.attempt_id) + " with a deadline " +
                                std::to_string((span.deadline - span.call.at).count()) +
                                " us after the call, not the attempt_deadline of " +
                                std::to_string(policy.attempt_deadline_us) + " us",
                            span.call.seq, {}));
  }
}

void check_lease_lengths(const HistoryModel& model, const events::RunPolicy& policy,
                         std::vector<Violation>& out) {
  const Duration lease(policy.lease_us);
  std::vector<const At<Transition>*> claims;  // in commit order
  for (const auto& [id, attempt] : model.attempts) {
    for (const auto& step : attempt.steps) {
      if (step.what.claim && step.what.lease_expires_at) claims.push_back(&step);
    }
  }
  std::ranges::sort(claims, {}, [](const At<Transition>* step) { return step->seq; });
  std::map<std::string, const At<Transition>*> previous;  // each worker's last claim
  for (const auto* claim : claims) {
    const std::string& worker = claim->what.lease_owner;
    // The instant the claim loop was last seen moving: it sent this claim no earlier.
    std::optional<Instant> moved;
    if (auto life = model.node_life.find(worker); life != model.node_life.end()) {
      for (const auto& change : life->second) {
        if (change.seq > claim->seq) break;
        if (change.what) moved = change.at;
      }
    }
    auto& last = previous[worker];
    if (last != nullptr && !crashed_between(model, worker, last->seq, claim->seq)) {
      moved = moved ? std::max(*moved, last->at) : last->at;
    }
    last = claim;
    const Instant expires = *claim->what.lease_expires_at;
    const bool too_long = expires > claim->at + lease;
    const bool too_short = moved && expires < *moved + lease;
    if (!too_long && !too_short) continue;
    const auto us = [](Duration d) { return std::to_string(d.count()) + " us"; };
    out.push_back(
        violation("I12.lease_length",
                  worker + "'s claim of " + attempt_ref(claim->what.attempt_id) +
                      " leases it until " + us(expires.time_since_epoch()) +
                      (too_long ? ", past its commit (" + us(claim->at.time_since_epoch()) + ")"
                                : ", before its claim loop was last seen moving (" +
                                      us(moved->time_since_epoch()) + ")") +
                      " plus the lease of " + us(lease),
                  claim->seq, {}));
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

// Whether `wait` ends one of the ranges a backoff from `base` capped at `cap` draws from: a
// ceiling d = min(max(base, cap), base * 2^i) or d/2.
bool ends_a_backoff_range(std::int64_t wait, std::int64_t base, std::int64_t cap) {
  const std::int64_t top = std::max(base, cap);
  for (std::int64_t limit = base;; limit = limit > top / 2 ? top : limit * 2) {
    if (wait == limit || wait == limit / 2) return true;
    if (limit >= top) return false;
  }
}

// The longest wait a backoff from `base` capped at `cap` may draw after `failures` failures in a
// row: min(max(base, cap), base * 2^(failures - 1)), without overflow. REQUIRES: failures >= 1.
std::int64_t backoff_ceiling(std::int64_t base, std::int64_t cap, std::int64_t failures) {
  const std::int64_t top = std::max(base, cap);
  std::int64_t limit = base;
  for (std::int64_t n = 1; n < failures && limit < top; ++n) {
    limit = limit > top / 2 ? top : limit * 2;
  }
  return std::min(limit, top);
}

// One loop's store failures since the last proof that it succeeded, for one node incarnation.
struct FailureRun {
  std::int64_t failures = 0;
  // The claim loop only: a reset was proven (a claim whose reply came back), and the latest claim
  // the commit log has for the worker whose fate is not known yet (a lost reply to it is a
  // store.fault of claim_next_attempt that may have committed, before the loop's next error).
  // The sweep: a reconciler.store_recovered reported a sweep that went through since the last
  // error.
  bool reset_seen = false;
  bool claim_unconfirmed = false;
  int range_ends_in_a_row = 0;  // waits that each end a possible range, since the last that did not
  // The claim loop and the sweep only (an attempt may have two retrying loops at once): the last
  // error, when it was met and the wait reported after it.
  std::optional<Instant> waited_from{};
  std::uint64_t last_error = 0;
  std::int64_t last_wait_us = 0;
  // The claim loop and the sweep only: the cut-off window (CutWindows) its last error was met in,
  // and its errors inside it so far.
  const std::pair<Instant, Instant>* window = nullptr;
  std::int64_t cut_in_a_row = 0;
};

// The windows in which a node's every store call fails, by node: its node_store partitions, each
// ended early by the quiet phase (which heals every link).
class CutWindows {
 public:
  using Window = std::pair<Instant, Instant>;  // [from, until)
  explicit CutWindows(const HistoryModel& model) {
    std::optional<Instant> healed;
    if (model.quiet_seq) healed = model.history->instant(*model.quiet_seq - 1);
    model.history->visit_kinds(
        {&events::kind_name<events::RunPartition>()}, [&](const sim::TraceEvent& recorded) {
          auto cut = events::from_event<events::RunPartition>(recorded.event);
          if (!cut || cut->link != "node_store") return;
          const Instant until = healed ? std::min(cut->until, *healed) : cut->until;
          if (cut->from < until) windows_[cut->node].push_back({cut->from, until});
        });
  }
  // The window cutting `node` off at `at` (the first, when several overlap), or null.
  const Window* at(const std::string& node, Instant at) const {
    const auto found = windows_.find(node);
    if (found == windows_.end()) return nullptr;
    for (const auto& window : found->second) {
      if (window.first <= at && at < window.second) return &window;
    }
    return nullptr;
  }

 private:
  std::map<std::string, std::vector<Window>, std::less<>> windows_;
};

void check_backoff(const HistoryModel& model, const events::RunPolicy& policy,
                   std::vector<Violation>& out) {
  if (model.history == nullptr) return;
  // Each worker's claims, in commit order: the only successes of a claim loop the log shows.
  std::map<std::string, std::vector<std::uint64_t>> claims;
  for (const auto& [id, attempt] : model.attempts) {
    for (const auto& step : attempt.steps) {
      if (step.what.claim) claims[step.what.by].push_back(step.seq);
    }
  }
  for (auto& [worker, seqs] : claims) std::ranges::sort(seqs);
  std::map<std::string, std::size_t> claims_passed;
  // (node, loop) -> its run of failures; loop: the attempt (0: the worker's claim loop, -1: the
  // reconciler's sweep).
  std::map<std::pair<std::string, std::int64_t>, FailureRun> runs;
  const auto run_of = [&](const std::string& node, std::int64_t loop,
                          std::uint64_t seq) -> FailureRun& {
    FailureRun& run = runs[{node, loop}];
    if (loop != 0) return run;
    // The claims the worker committed before `seq`, in order: each one the next claim follows
    // (rather than a lost reply) came back, so the loop succeeded.
    const auto found = claims.find(node);
    if (found == claims.end()) return run;
    std::size_t& passed = claims_passed[node];
    while (passed < found->second.size() && found->second[passed] < seq) {
      if (run.claim_unconfirmed) run.reset_seen = true;
      run.claim_unconfirmed = true;
      ++passed;
    }
    return run;
  };
  const CutWindows cut_off(model);
  const auto judge = [&](const std::string& node, std::int64_t loop, std::int64_t retry_us,
                         std::int64_t base, std::int64_t cap, const sim::PackedEvent& recorded) {
    const std::uint64_t seq = recorded.seq;
    FailureRun& run = run_of(node, loop, seq);
    const std::string loop_name = loop == 0    ? "its claim loop"
                                  : loop == -1 ? "its sweep"
                                               : "its work on " + attempt_ref(loop);
    if (run.waited_from && recorded.at < *run.waited_from + Duration(run.last_wait_us)) {
      out.push_back(violation("I12.backoff_not_waited",
                              node + " met a store error in " + loop_name + " " +
                                  std::to_string((recorded.at - *run.waited_from).count()) +
                                  " us after the one it said it would wait " +
                                  std::to_string(run.last_wait_us) + " us after",
                              seq, {run.last_error}));
    }
    if (loop == 0 || loop == -1) {
      run.waited_from = recorded.at;
      run.last_error = seq;
      run.last_wait_us = retry_us;
    }
    if (run.claim_unconfirmed) run.reset_seen = true;  // no lost reply came before this error
    run.claim_unconfirmed = false;
    if (run.reset_seen) run.failures = 0;
    run.reset_seen = false;
    ++run.failures;
    const std::int64_t low = base / 2;
    const std::int64_t high = backoff_ceiling(base, cap, run.failures);
    constexpr std::int64_t kJitterJudgedFrom = 2000;  // us of base
    constexpr int kUndrawnInARow = 3;                 // the message says "third"
    run.range_ends_in_a_row =
        ends_a_backoff_range(retry_us, base, cap) ? run.range_ends_in_a_row + 1 : 0;
    if (base >= kJitterJudgedFrom && run.range_ends_in_a_row == kUndrawnInARow) {
      out.push_back(violation("I12.backoff_not_jittered",
                              node + " waits " + std::to_string(retry_us) +
                                  " us after a store error in " + loop_name +
                                  ", the third wait in a row that ends a range the backoff "
                                  "draws from (base " +
                                  std::to_string(base) + " us, doubling, cap " +
                                  std::to_string(std::max(base, cap)) + " us): no jitter",
                              seq, {}));
    }
    if (retry_us >= low && retry_us <= high) {
      if (loop != 0 && loop != -1) return;
      const auto* window = cut_off.at(node, recorded.at);
      if (window != run.window) run.cut_in_a_row = 0;
      run.window = window;
      if (window == nullptr) return;
      ++run.cut_in_a_row;
      const std::int64_t floor = backoff_ceiling(base, cap, run.cut_in_a_row) / 2;
      if (retry_us >= floor) return;
      out.push_back(violation(
          "I12.backoff_not_grown",
          node + " waits " + std::to_string(retry_us) + " us after a store error in " + loop_name +
              ", error " + std::to_string(run.cut_in_a_row) +
              " in a row while the store was cut off from it (every call in between failed): "
              "the backoff draws at least " +
              std::to_string(floor) + " us by then (base " + std::to_string(base) +
              ", doubling, cap " + std::to_string(std::max(base, cap)) + ")",
          seq, {}));
      return;
    }
    out.push_back(violation("I12.backoff_out_of_bounds",
                            node + " waits " + std::to_string(retry_us) +
                                " us after a store error in " + loop_name + ", failure " +
                                std::to_string(run.failures) + " at most in a row (counted since " +
                                (loop == 0    ? "its start or its last claim that came back"
                                 : loop == -1 ? "its start or its last sweep that went through"
                                              : "its start") +
                                "): the backoff draws from [" + std::to_string(low) + ", " +
                                std::to_string(high) + "] us (base " + std::to_string(base) +
                                ", cap " + std::to_string(std::max(base, cap)) + ")",
                            seq, {}));
  };
  const std::int64_t worker_base = policy.worker_poll_us;
  const std::int64_t worker_cap = policy.store_backoff_cap_us;
  const std::int64_t sweep_base = std::min(policy.worker_poll_us, policy.reconcile_period_us);
  const std::int64_t sweep_cap = std::min(policy.store_backoff_cap_us, policy.reconcile_period_us);
  EventSwitch passes;
  passes
      .on<events::NodeStarted>([&](events::NodeStarted&&, const sim::PackedEvent& recorded) {
        const std::string& node = recorded.node.str();
        // A new incarnation starts every loop afresh; its claims before now are behind it.
        std::erase_if(runs, [&](const auto& entry) { return entry.first.first == node; });
        if (const auto found = claims.find(node); found != claims.end()) {
          std::size_t& passed = claims_passed[node];
          while (passed < found->second.size() && found->second[passed] < recorded.seq) ++passed;
        }
      })
      .on<events::StoreFault>([&](events::StoreFault&& fault, const sim::PackedEvent& recorded) {
        if (!fault.maybe_committed || fault.operation != "claim_next_attempt") return;
        run_of(fault.node, 0, recorded.seq).claim_unconfirmed = false;  // that claim failed
      })
      .on<events::WorkerStoreError>(
          [&](events::WorkerStoreError&& error, const sim::PackedEvent& recorded) {
            // A store error that ended an attempt's run (a value the store refuses) has no wait.
            if (error.attempt_id != 0 && error.retry_in_us == 0) return;
            judge(recorded.node.str(), error.attempt_id, error.retry_in_us, worker_base, worker_cap,
                  recorded);
          })
      .on<events::ReconcilerStoreError>(
          [&](events::ReconcilerStoreError&& error, const sim::PackedEvent& recorded) {
            judge(recorded.node.str(), -1, error.retry_in_us, sweep_base, sweep_cap, recorded);
          })
      .on<events::ReconcilerStoreRecovered>(
          [&](events::ReconcilerStoreRecovered&&, const sim::PackedEvent& recorded) {
            // A sweep went through: the sweep's next store error is the first of a new run.
            runs[{recorded.node.str(), -1}].reset_seen = true;
          });
  passes.run(*model.history);
}

}  // namespace

// A status query is answered within status_timeout or given up at it: the reconciler reports an
// attempt's status (reconciler.status) no later than status_timeout after its query for that
// attempt's provider key left it (status_overdue), and does not report "unreachable" when a status
// other than that reached it before then, nor before then with nothing delivered (status_dropped).
// Not judged across a pause of the node.
void check_status_waits(const HistoryModel& model, const events::RunPolicy& policy,
                        std::vector<Violation>& out) {
  if (model.history == nullptr) return;
  const Duration timeout(policy.status_timeout_us);
  std::map<std::pair<std::string, std::string>, At<events::ProviderStatusAsked>> asked;
  model.history->visit_kinds(
      {&events::kind_name<events::ProviderStatusAsked>(),
       &events::kind_name<events::ReconcilerStatus>()},
      [&](const sim::TraceEvent& recorded) {
        const std::string& node = recorded.node.str();
        if (auto ask = events::from_event<events::ProviderStatusAsked>(recorded.event)) {
          const std::string key = ask->provider_key;
          asked.insert_or_assign({node, key}, At<events::ProviderStatusAsked>{
                                                  std::move(*ask), recorded.seq, recorded.at});
          return;
        }
        const auto status = events::from_event<events::ReconcilerStatus>(recorded.event);
        const AttemptRecord* attempt = status ? model.attempt(status->attempt_id) : nullptr;
        if (attempt == nullptr) return;
        const auto found = asked.find({node, attempt->inserted.what.provider_key});
        if (found == asked.end()) return;
        const auto ask = found->second;
        asked.erase(found);
        if (model.paused_during(node, ask.seq, recorded.seq)) return;
        const Instant due = ask.at + timeout;
        if (recorded.at > due) {
          out.push_back(violation("I12.status_overdue",
                                  node + " reported " + attempt_ref(status->attempt_id) + " " +
                                      status->status + " " +
                                      std::to_string((recorded.at - ask.at).count()) +
                                      " us after asking, past the status_timeout of " +
                                      std::to_string(timeout.count()) + " us",
                                  recorded.seq, {ask.seq}));
          return;
        }
        if (status->status != "unreachable") return;
        // The statuses the transport delivered to it for this query before the report.
        const Delivery* answered = nullptr;
        bool unreachable = false;  // the transport itself said so (a reset connection)
        if (const auto deliveries = model.deliveries.find(ask.what.provider_key);
            deliveries != model.deliveries.end()) {
          for (const Delivery& delivery : deliveries->second) {
            if (delivery.node.str() != node || delivery.seq < ask.seq ||
                delivery.seq > recorded.seq || delivery.call.str() != events::kDeliveredStatus) {
              continue;
            }
            if (delivery.outcome.str() == "unreachable") {
              unreachable = true;
            } else if (delivery.at < due && answered == nullptr) {
              answered = &delivery;
            }
          }
        }
        if (answered != nullptr) {
          out.push_back(violation("I12.status_dropped",
                                  node + " reported " + attempt_ref(status->attempt_id) +
                                      " unreachable, but its provider's status (" +
                                      answered->outcome.str() +
                                      ") reached it within the status_timeout",
                                  recorded.seq, {ask.seq, answered->seq}));
        } else if (!unreachable && recorded.at < due) {
          out.push_back(violation(
              "I12.status_dropped",
              node + " reported " + attempt_ref(status->attempt_id) + " unreachable " +
                  std::to_string((recorded.at - ask.at).count()) +
                  " us after asking, before the status_timeout of " +
                  std::to_string(timeout.count()) + " us was over, with nothing delivered",
              recorded.seq, {ask.seq}));
        }
      });
}

std::vector<Violation> check_policy(const HistoryModel& model) {
  std::vector<Violation> out;
  if (!model.policy) return out;  // a history without run.policy has no policy to judge
  check_attempt_limit(model, model.policy->what, out);
  check_capacity(model, model.policy->what, out);
  check_calls_in_flight(model, model.policy->what, out);
  check_redrive_limit(model, model.policy->what, out);
  check_call_deadlines(model, model.policy->what, out);
  check_lease_lengths(model, model.policy->what, out);
  check_backoff(model, model.policy->what, out);
  check_status_waits(model, model.policy->what, out);
  return out;
}

}  // namespace onejob::check
