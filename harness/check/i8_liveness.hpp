#pragma once

#include <vector>

#include "harness/check/invariant.hpp"

namespace onejob::check {

// I8 — liveness: once faults heal, every job reaches a terminal state within bounded simulated
// time, or is reported as blocked on an UNKNOWN attempt awaiting out-of-band resolution.
//
// Judged once, at `run.end`, for every job reported before it (`job.created` or
// `store.job_inserted`), with attempt states replayed by AttemptFacts. Each job must be
//   - completed (`job.completed`, or an attempt SUCCEEDED or DISCARDED: both mean the job
//     has its winner), or failed (`job.failed`), or
//   - blocked: an attempt of it is UNKNOWN (a legitimate end, reported by nothing).
// Violations, reported at the run.end event:
//   - a job with an attempt still STARTING or RUNNING when the run ended;
//   - a stuck job: neither completed nor failed, and no live attempt left to finish it.
// "Its latest attempt" is read as its live one: I3 allows one, and the live attempt is the one
// whatever its number, even when the history missed its creation.
// Does not check:
//   - anything when the history has no `run.end` (a run cut short has no end to judge at);
//   - when faults healed: the history does not say, so the scenario's duration must leave
//     time after the last fault and the last request;
//   - how long UNKNOWN attempts wait for their out-of-band resolution;
//   - jobs in doubt, or whose only unfinished-looking attempts are in doubt (a write may have
//     committed without its event; see AttemptFacts): the history cannot tell where they are.
//     A failure whose reply was lost, then no failover, is a stuck job this misses.
std::vector<Violation> check_liveness(const sim::History& history);

}  // namespace onejob::check
