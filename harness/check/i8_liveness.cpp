// I8 — liveness: once faults heal and the system has had time to act, every job is completed or
// failed, or waits where the truth really is out of the system's reach: blocked on an UNKNOWN
// attempt whose provider never answers, or whose provider no reconciler can ask (none in the
// topology), or that was re-driven as often as the policy allows; or awaiting an operator (its
// latest attempt was cancelled and nobody retried).
//
// Judged at `run.end` from ground truth, never from what nodes report of themselves: the store's
// commit log (what each attempt's state really is), the providers' own records (provider.execute:
// whether a key reached the provider and whether that execution answers), what the transport
// delivered to each node (provider.deliver), node starts and crashes, and the policy the run used
// (run.policy). Violations, each with its evidence:
//   - answer_dropped: an attempt still live (RUNNING or UNKNOWN) although a definitive answer for
//     its key (a reply: answered or rejected; a status: completed or failed) reached a node that
//     did not crash afterwards: the system held the truth and never recorded it;
//   - truth_not_learned: an attempt still live although its provider's record shows an execution
//     that answered, a reconciler was up, and there was time to ask;
//   - never_sent: an attempt still live although its provider has no record of its key at all
//     (the call never reached it), a reconciler was up, and it was re-driven fewer times than the
//     policy's redrive_limit;
//   - unclaimed: an attempt still STARTING although a worker was up all along: no worker claims
//     work (a stopped worker, leaked capacity);
//   - still_running: an attempt STARTING or RUNNING for any other reason (once the system had
//     time since its last commit, when the run recorded its policy), except one RUNNING
//     whose lease holder crashed after claiming it when no reconciler is up (only a reconciler
//     takes an expired lease over: it waits for an operator). A worker whose claim's reply was
//     lost is not excused: it looks for what it holds;
//   - cancelled_result_dropped: a job with no result and no failure although one of its attempts
//     that an operator cancelled got a valid answer (its provider's execution ok or plausible),
//     delivered as the reply to the worker holding its lease when it could act on it (then, or
//     at its resume had it been paused), which did not crash afterwards: a cancelled attempt's
//     late result still competes in the compare-and-swap;
//   - stuck: a pending job with nothing live whose latest attempt an operator did not cancel (once
//     the system had time since the job's last commit, when the run recorded its policy): no
//     one will act (except a failover whose writer crashed after the FAILED write when no
//     reconciler is up to resume it: it waits for an operator).
// Every clause is judged only on what the system had time for: the settle horizon
// (settle_horizon) after both the faults' end and the event the clause names (the delivery, the
// answer, the attempt's or the job's last commit), unless the run ended quiescent (nothing was
// left that would move; the world declares that only after the horizon). A run whose duration
// ran out with work in flight is therefore not read as broken. The first four and
// cancelled_result_dropped are judged only when the run recorded its policy (run.policy);
// without it, still_running and stuck are judged at run end whatever the time.
// Does not check:
//   - anything when the history has no `run.end` (a run cut short has no end to judge at);
//   - how long blocked or parked jobs wait, or how fast jobs finish.
#include <algorithm>

#include "harness/check/invariant.hpp"
#include "harness/check/provider_outcomes.hpp"

namespace onejob::check {

// The longest the rules give the system to settle an attempt after the faults end: its lease
// runs out (lease), a sweep takes it over (reconcile_period), the next asks its provider
// (reconcile_period + status_timeout), a re-drive waits for a claim (reconcile_period,
// worker_poll: an idle worker is rung by the write that left the attempt STARTING, so its
// worker_idle_poll is never waited for) and a call (attempt_deadline), and writes wait out a
// store that just came back
// (store_backoff_cap, twice); one more attempt_deadline for a call already in flight.
Duration settle_horizon(const events::RunPolicy& p) {
  return Duration(p.lease_us + 3 * p.reconcile_period_us + p.status_timeout_us +
                  2 * p.attempt_deadline_us + p.worker_poll_us + 2 * p.store_backoff_cap_us);
}

namespace {

bool definitive(const Delivery& delivered) {
  return delivered.outcome == "answered" || delivered.outcome == "rejected" ||
         delivered.outcome == "completed" || delivered.outcome == "failed";
}

// The instant of the attempt's last commit: its insertion or its latest step.
Instant last_commit_at(const AttemptRecord& record) {
  return record.steps.empty() ? record.inserted.at : record.steps.back().at;
}

std::string ms(Instant at) { return std::to_string(at.time_since_epoch().count() / 1000) + " ms"; }

struct Judge {
  const HistoryModel& model;
  std::uint64_t end_seq;
  bool judge_time = false;  // the run recorded its policy
  bool quiescent = false;   // it ended once nothing was left to move
  Instant end{};
  Instant faults_over{};
  Duration horizon{};
  bool reconciler_up = false;
  std::vector<std::string> workers_up;
  std::vector<Violation> out;

  void attempt(std::int64_t job_id, const AttemptRecord& attempt);
  void cancelled(const JobRecord& job, const AttemptRecord& attempt);

  // Whether the system had the settle horizon to act on something that happened at `at` (and
  // after the faults ended), or the run ended with nothing left to move.
  bool had_time_since(Instant at) const {
    return judge_time && (quiescent || end >= std::max(at, faults_over) + horizon);
  }

  // A failover cut short by its writer's crash (after the FAILED write, before the next attempt
  // or the job's failure) is resumed only by a reconciler; without one it waits for an operator.
  bool failover_waits_for_an_operator(const JobRecord& job) const {
    if (reconciler_up || job.attempts.empty()) return false;
    const AttemptRecord& latest = model.attempts.at(job.attempts.back());
    if (latest.state != AttemptState::failed || latest.steps.empty()) return false;
    const auto& failed = latest.steps.back();
    return model.crashed_after(failed.what.by, failed.seq);
  }
};

void Judge::attempt(std::int64_t job_id, const AttemptRecord& record) {
  const auto state = record.state;
  const std::string& key = record.inserted.what.provider_key;
  const std::string subject = attempt_ref(record.id()) + " of " + job_ref(job_id) + " (" +
                              std::string(to_string(state)) + " at run end, key " + key + ")";
  const std::uint64_t last_step =
      record.steps.empty() ? record.inserted.seq : record.steps.back().seq;
  const Instant last_step_at = last_commit_at(record);
  if (judge_time && (state == AttemptState::running || state == AttemptState::unknown)) {
    if (auto found = model.deliveries.find(key); found != model.deliveries.end()) {
      for (const Delivery& delivery : found->second) {
        if (!definitive(delivery) || model.crashed_after(delivery.node, delivery.seq) ||
            !had_time_since(delivery.at)) {
          continue;
        }
        out.push_back(violation("I8.answer_dropped",
                                subject + ": " + delivery.node + " received its provider's " +
                                    delivery.call + " \"" + delivery.outcome +
                                    "\" and stayed up, but it was never recorded",
                                end_seq, {delivery.seq}));
        return;
      }
    }
    if (reconciler_up) {
      const Execution* execution = model.execution_of(record.id());
      if (execution != nullptr && execution->executed.what.answers_at &&
          had_time_since(*execution->executed.what.answers_at)) {
        out.push_back(violation("I8.truth_not_learned",
                                subject + ": " + execution->provider + " executed it and " +
                                    "answered at " + ms(*execution->executed.what.answers_at) +
                                    ", and a reconciler was up, but the job never learned it",
                                end_seq, {execution->executed.seq}));
        return;
      }
      if (execution == nullptr && had_time_since(last_step_at)) {
        const auto redrives = std::ranges::count_if(record.steps, [](const auto& step) {
          return step.what.from == AttemptState::unknown && step.what.to == AttemptState::starting;
        });
        if (redrives < model.policy->what.redrive_limit) {
          out.push_back(violation(
              "I8.never_sent",
              subject + ": " + record.inserted.what.provider + " has no record of the key (the " +
                  "call never reached it), a reconciler was up, and it was re-driven " +
                  std::to_string(redrives) + " of " +
                  std::to_string(model.policy->what.redrive_limit) + " times",
              end_seq, {last_step}));
          return;
        }
      }
    }
  }
  if (state == AttemptState::starting && had_time_since(last_step_at) && !workers_up.empty()) {
    std::string workers;
    for (const auto& worker : workers_up) workers += (workers.empty() ? "" : ", ") + worker;
    out.push_back(violation("I8.unclaimed",
                            subject + ": no worker claimed it, although " + workers + " stayed up",
                            end_seq, {last_step}));
    return;
  }
  if (state == AttemptState::running && !reconciler_up) {
    // Its lease holder crashed after claiming it: only a reconciler takes an expired lease over,
    // and there is none, so it waits for an operator by design.
    const At<Transition>* claim = nullptr;
    for (const auto& step : record.steps) {
      if (step.what.claim) claim = &step;
    }
    if (claim != nullptr && model.crashed_after(claim->what.lease_owner, claim->seq)) return;
  }
  // A run cut short (its duration over before the system could move the attempt on) is not
  // judged: as above, the system is owed the settle horizon after the attempt's last commit.
  if (judge_time && !had_time_since(last_step_at)) return;
  if (state == AttemptState::starting || state == AttemptState::running) {
    out.push_back(violation("I8.still_running",
                            job_ref(job_id) +
                                " still has a STARTING or RUNNING attempt at run end (" +
                                attempt_ref(record.id()) + ")",
                            end_seq, {last_step}));
  }
}

// The worker that held the attempt's lease at trace event `seq`: the latest claim or takeover's.
sim::NodeName lease_holder(const AttemptRecord& record, std::uint64_t seq) {
  sim::NodeName holder;
  for (const auto& step : record.steps) {
    if (step.seq > seq) break;
    if (step.what.claim || step.what.takeover) holder = step.what.lease_owner;
  }
  return holder;
}

// When `node` could first act on what reached it at trace event `seq`: then, or, had it been
// paused then, at its resume (a paused worker's lease may be taken over before it wakes).
std::uint64_t acts_at(const HistoryModel& model, const std::string& node, std::uint64_t seq) {
  const auto found = model.node_pauses.find(node);
  if (found == model.node_pauses.end()) return seq;
  bool paused = false;
  for (const auto& change : found->second) {
    if (change.seq <= seq) {
      paused = change.what;
      continue;
    }
    if (!paused) return seq;
    if (!change.what) return change.seq;  // its resume
  }
  return seq;  // paused to the end: judged by paused_at_end
}

// An operator's cancel leaves a late result free to compete: a valid answer (its provider's
// execution ok, or plausible: the contract's shape) delivered as the reply to the worker holding
// the lease is written, and wins a job nothing else won or failed.
void Judge::cancelled(const JobRecord& job, const AttemptRecord& record) {
  if (!judge_time || record.state != AttemptState::cancelled || job.won() != nullptr ||
      !job.failures.empty() || !model.cancelled_by_operator(record, end_seq)) {
    return;
  }
  const Execution* execution = model.execution_of(record.id());
  if (execution == nullptr) return;
  const auto& outcome = execution->executed.what.outcome;
  if (outcome_gives(outcome.str()) != OutcomeGives::accepted_answer) return;
  const std::string& key = record.inserted.what.provider_key;
  const auto found = model.deliveries.find(key);
  if (found == model.deliveries.end()) return;
  for (const Delivery& delivery : found->second) {
    if (delivery.call != events::kDeliveredReply || delivery.outcome != "answered" ||
        lease_holder(record, acts_at(model, delivery.node, delivery.seq)) != delivery.node ||
        model.crashed_after(delivery.node, delivery.seq) || model.paused_at_end(delivery.node) ||
        !had_time_since(delivery.at)) {
      continue;
    }
    out.push_back(violation("I8.cancelled_result_dropped",
                            attempt_ref(record.id()) + " of " + job_ref(job.id()) +
                                " (CANCELLED by an operator, key " + key + "): " + delivery.node +
                                " received its provider's valid answer (" + outcome +
                                ") and stayed up, but the job has no result: a " +
                                "cancelled attempt's late result still competes",
                            end_seq, {delivery.seq}));
    return;
  }
}

// The instant of the job's last commit: its insertion or its attempts' latest step.
Instant last_commit_at(const HistoryModel& model, const JobRecord& job) {
  Instant last = job.inserted.at;
  for (const auto attempt_id : job.attempts) {
    last = std::max(last, last_commit_at(model.attempts.at(attempt_id)));
  }
  return last;
}

}  // namespace

std::vector<Violation> check_liveness(const HistoryModel& model) {
  if (!model.end_seq) return {};
  Judge judge{model, *model.end_seq, false, false, {}, {}, {}, false, {}, {}};
  if (model.policy) {
    const auto& policy = model.policy->what;
    const Instant end = *model.end_at();
    judge.judge_time = true;
    judge.quiescent = model.quiescent_end;
    judge.end = end;
    judge.faults_over = policy.faults_over;
    judge.horizon = settle_horizon(policy);
    // Up at the end, and started no later than the faults' end (a node the quiet phase restarts
    // starts at that instant).
    auto settled_up = [&](const std::string& node) {
      if (!model.up_at_end(node)) return false;
      return model.node_life.at(node).back().at <= policy.faults_over;
    };
    judge.reconciler_up = policy.reconciler && settled_up("reconciler");
    for (const auto& [node, life] : model.node_life) {
      if (node.rfind("worker-", 0) == 0 && settled_up(node)) judge.workers_up.push_back(node);
    }
  }
  for (const auto& [id, job] : model.jobs) {
    const JobEnd end = model.end_of(job);
    if (end == JobEnd::succeeded || end == JobEnd::failed) continue;
    for (const auto attempt_id : job.attempts) {
      const AttemptRecord& record = model.attempts.at(attempt_id);
      if (is_live_state(record.state)) judge.attempt(id, record);
      judge.cancelled(job, record);
    }
    if (end == JobEnd::stuck && !judge.failover_waits_for_an_operator(job) &&
        (!judge.judge_time || judge.had_time_since(last_commit_at(model, job)))) {
      judge.out.push_back(violation("I8.stuck",
                                    job_ref(id) +
                                        " is stuck at run end: pending, no live attempt, and its "
                                        "latest attempt was not cancelled by an operator",
                                    *model.end_seq, {job.inserted.seq}));
    }
  }
  return std::move(judge.out);
}

}  // namespace onejob::check
