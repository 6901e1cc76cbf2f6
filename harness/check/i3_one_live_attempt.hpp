#pragma once

#include <vector>

#include "harness/check/invariant.hpp"

namespace onejob::check {

// I3 — at most one live attempt (STARTING, RUNNING or UNKNOWN) per job at any instant.
//
// Replays every attempt from `attempt.created` (an attempt starts STARTING) and `attempt.state`
// {from, to}. A writer reports a step when the store's reply reaches it, so one attempt's steps
// may be recorded out of order (a claim before the creation; a late answer's UNKNOWN -> FAILED
// before the deadline's RUNNING -> UNKNOWN), and a step whose reply was lost (`store.fault`
// maybe_committed) or whose writer crashed waiting (`node.crash`) is never reported. Every legal
// step moves an attempt forward (STARTING, RUNNING, UNKNOWN, CANCELLED, then an end state), so
// the replay keeps each attempt's furthest reported state. Checks:
//   - no attempt becomes live (is created or first seen live, or steps back into a live state)
//     while another attempt of its job is live;
//   - each attempt's reported steps, ordered by how far they go, form one chain from STARTING:
//     no step back, no two steps from one state (a fork), and no step starting from a state the
//     chain never reached, unless the history shows an unreported write that explains the gap
//     (a lost claim for STARTING -> RUNNING; a lost update or completion, or a crash, for any).
// An attempt does not count as live while a write that may have ended it is in doubt: from the
// trace it leaves first (a cancel request, a provider answer or refusal, a reconciler's
// completed/failed status) until the store refuses it or never runs it, the API answers the cancel
// without a store error, or a report takes the attempt out of the live states; or from a worker's
// store error naming the attempt (its reply was lost) until such a report. Such a write can commit
// before another writer creates the next attempt and still be reported after, or never.
// Does not check:
//   - that each step is legal (the store refuses illegal ones; the domain tests its table);
//   - what an attempt did between two reports when writes went unreported;
//   - an overlap hidden behind a write in doubt (see above);
//   - attempts that never appear in the history.
// Known limit: a step out of the live states that leaves no trace before its own report (a
// worker failing an attempt whose prompt the provider cannot take), raced by another writer's
// creation of the next attempt, could be reported as an overlap: the history orders reports, not
// commits. A store log of attempt writes in commit order would remove this and the doubts above.
std::vector<Violation> check_one_live_attempt(const sim::History& history);

}  // namespace onejob::check
