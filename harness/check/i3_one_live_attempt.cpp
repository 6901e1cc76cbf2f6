// I3 — at most one live attempt (STARTING, RUNNING or UNKNOWN) per job at any instant.
//
// Replays the store's commit log in commit order. Checks:
//   - no attempt is inserted, or moves into a live state, while another attempt of its job is
//     live;
//   - every committed transition starts from the state the log last gave the attempt, and names
//     an attempt the log inserted, of a job it inserted before (the log, and so the store, never
//     contradicts itself);
//   - every insert the store refused because the job has a live attempt is refused truthfully:
//     the attempt it names is live in the log at that point (a refusal without one blocks the
//     job for nothing: a cancel that does not unblock);
//   - no attempt is inserted for a job after the compare-and-swap that won it (attempt_after_win):
//     a won job is done, and a new attempt's work would run, and be paid for, for nothing;
//   - a claim takes the oldest STARTING attempt (claim_not_oldest): no attempt with a smaller id
//     is STARTING at that point of the log, as the Store port promises (a simulated store runs one
//     operation at a time; PgStore's SKIP LOCKED may pass over a row another claim is taking,
//     which only concurrent real workers can see);
//   - every committed transition is one the attempt's life allows (illegal_step), by this rule's
//     own table, written from the design rather than taken from the domain's: a store whose
//     guard lets FAILED become SUCCEEDED, or a cancel undo a win, is caught here even when no
//     other rule sees the consequence.
// Does not check:
//   - what nodes believed about an attempt (their reports are views, not the truth).
#include "harness/check/event_switch.hpp"
#include "harness/check/invariant.hpp"
#include "harness/events/commit_events.hpp"

namespace onejob::check {
namespace {

// The attempt's life as the design states it: a worker claims a STARTING attempt (or an operator
// cancels it, or its prompt cannot be sent); a RUNNING one ends with its call's outcome, becomes
// UNKNOWN (deadline, lost worker) or is cancelled; an UNKNOWN one learns late truth, is cancelled,
// or is re-driven (STARTING again); a CANCELLED one's late result still competes for the job.
// SUCCEEDED, FAILED and DISCARDED are final (a takeover is RUNNING -> UNKNOWN under a new lease).
bool step_allowed(AttemptState from, AttemptState to) {
  using S = AttemptState;
  switch (from) {
    case S::starting:
      return to == S::running || to == S::cancelled || to == S::failed;
    case S::running:
      return to == S::succeeded || to == S::discarded || to == S::failed || to == S::unknown ||
             to == S::cancelled;
    case S::unknown:
      return to == S::succeeded || to == S::discarded || to == S::failed || to == S::cancelled ||
             to == S::starting;
    case S::cancelled:
      return to == S::succeeded || to == S::discarded;
    case S::succeeded:
    case S::failed:
    case S::discarded:
      return false;
  }
  return false;
}

struct Replay {
  std::map<std::int64_t, AttemptState> states;
  std::map<std::int64_t, std::int64_t> job_of;
  std::map<std::int64_t, std::map<std::int64_t, std::uint64_t>> live_by_job;  // -> since
  std::map<std::int64_t, std::uint64_t> starting;  // STARTING attempts -> since
};

void became_live(Replay& replay, std::int64_t job, std::int64_t attempt, std::uint64_t seq,
                 std::vector<Violation>& out) {
  auto& live_now = replay.live_by_job[job];
  if (!live_now.empty()) {
    const auto& [other, since] = *live_now.begin();
    out.push_back(violation("I3.two_live",
                            attempt_ref(attempt) + " of " + job_ref(job) + " became live while " +
                                attempt_ref(other) + " is live: two live attempts",
                            seq, {since}));
  }
  live_now.emplace(attempt, seq);
}

}  // namespace

// A live-attempt refusal names an attempt of its job that the log has live.
void check_refusal(const Replay& replay, const At<events::StoreRefused>& refused,
                   std::vector<Violation>& out) {
  if (refused.what.refusal != events::kRefusedLiveAttempt || !refused.what.job_id) return;
  const auto job = *refused.what.job_id;
  const auto live = replay.live_by_job.find(job);
  const bool any_live = live != replay.live_by_job.end() && !live->second.empty();
  const auto named = refused.what.attempt_id;
  if (any_live && (!named || live->second.contains(*named))) return;
  std::string state = "never inserted";
  if (named) {
    if (auto found = replay.states.find(*named); found != replay.states.end()) {
      state = std::string(to_string(found->second));
    }
  }
  out.push_back(
      violation("I3.refused_without_live",
                "the store refused a new attempt of " + job_ref(job) + " for a live attempt (" +
                    (named ? attempt_ref(*named) + ", " + state : std::string("none named")) +
                    "), but the log has " + (any_live ? "another" : "none") + " live",
                refused.seq, {}));
}

std::vector<Violation> check_one_live_attempt(const HistoryModel& model) {
  std::vector<Violation> out;
  Replay replay;
  auto refusal = model.refusals.begin();
  sim::PackedEvent recorded;  // read in place into one event, its room reused
  for (const std::size_t index : model.commit_log) {
    model.history->read(index, recorded);
    for (; refusal != model.refusals.end() && refusal->seq < recorded.seq; ++refusal) {
      check_refusal(replay, *refusal, out);
    }
    if (auto inserted = from_packed<events::CommitAttemptInserted>(recorded)) {
      const JobRecord* job = model.job(inserted->job_id);
      if (job == nullptr || job->inserted.seq > recorded.seq) {
        out.push_back(violation("I3.attempt_of_unknown_job",
                                "the store inserted " + attempt_ref(inserted->attempt_id) + " of " +
                                    job_ref(inserted->job_id) + ", which it never inserted before",
                                recorded.seq));
      } else if (const auto* won = job->won(); won != nullptr && won->seq < recorded.seq) {
        out.push_back(violation("I3.attempt_after_win",
                                "the store inserted " + attempt_ref(inserted->attempt_id) + " of " +
                                    job_ref(inserted->job_id) + " after " +
                                    attempt_ref(won->what.attempt_id) + " won it",
                                recorded.seq, {won->seq}));
      }
      replay.states[inserted->attempt_id] = AttemptState::starting;
      replay.starting.emplace(inserted->attempt_id, recorded.seq);
      replay.job_of[inserted->attempt_id] = inserted->job_id;
      became_live(replay, inserted->job_id, inserted->attempt_id, recorded.seq, out);
      continue;
    }
    auto step = from_packed<events::CommitAttemptTransition>(recorded);
    if (!step) continue;
    auto state = replay.states.find(step->attempt_id);
    if (state == replay.states.end()) {
      out.push_back(violation(
          "I3.moved_never_inserted",
          "the store moved " + attempt_ref(step->attempt_id) + ", which it never inserted",
          recorded.seq, {}));
      continue;
    }
    if (state->second != step->from) {
      out.push_back(violation("I3.moved_from_another_state",
                              "the store moved " + attempt_ref(step->attempt_id) + " from " +
                                  std::string(to_string(step->from)) + ", but it was " +
                                  std::string(to_string(state->second)),
                              recorded.seq, {}));
    }
    if (!step_allowed(step->from, step->to)) {
      out.push_back(violation("I3.illegal_step",
                              "the store moved " + attempt_ref(step->attempt_id) + " from " +
                                  std::string(to_string(step->from)) + " to " +
                                  std::string(to_string(step->to)) +
                                  ", a step an attempt's life does not have",
                              recorded.seq, {}));
    }
    if (step->claim && !replay.starting.empty() &&
        replay.starting.begin()->first < step->attempt_id) {
      const auto& [older, since] = *replay.starting.begin();
      out.push_back(violation("I3.claim_not_oldest",
                              "the store gave " + step->lease_owner + " " +
                                  attempt_ref(step->attempt_id) + " while the older " +
                                  attempt_ref(older) + " was STARTING: a claim takes the oldest",
                              recorded.seq, {since}));
    }
    if (state->second == AttemptState::starting) replay.starting.erase(step->attempt_id);
    if (step->to == AttemptState::starting) replay.starting.emplace(step->attempt_id, recorded.seq);
    const bool was_live = is_live_state(state->second);
    state->second = step->to;
    const auto job = replay.job_of.at(step->attempt_id);
    if (is_live_state(step->to) && !was_live) {
      became_live(replay, job, step->attempt_id, recorded.seq, out);
    } else if (!is_live_state(step->to) && was_live) {
      replay.live_by_job[job].erase(step->attempt_id);
    }
  }
  for (; refusal != model.refusals.end(); ++refusal) check_refusal(replay, *refusal, out);
  return out;
}

}  // namespace onejob::check
