#pragma once

#include <vector>

#include "harness/check/invariant.hpp"

namespace onejob::check {

// I5 — at most one winner per job; completed_by never changes once set; the result is the
// winner's; the version bumps exactly once; every loser is recorded discarded.
//
// A job's winner is set by its winning `job.cas`, or, when that event is missing (the CAS's
// reply was lost), by the first non-zero `winner` a losing `job.cas` or `result.discarded`
// names. Checks, from `job.cas`, `job.completed`, `result.discarded` and `attempt.state`:
//   - at most one `job.cas` with won=true and at most one `job.completed` per job;
//   - every `job.cas`, `result.discarded` and `job.completed` names the job's one winner;
//   - `job.completed` comes from the winning attempt and has version 2 (the initial version 1,
//     bumped once), which is its winning `job.cas`'s expected_version + 1;
//   - only the winner becomes SUCCEEDED;
//   - every losing `job.cas` is followed by a `result.discarded` for the same job and attempt,
//     and that attempt ends DISCARDED;
//   - no discarded attempt is the one `job.completed` names, so its result never becomes the
//     job's.
// Does not check:
//   - what readers saw (`api.response` carries no result; the API hides attempt results);
//   - that a discarded result differs from the winner's (two providers may agree);
//   - completions whose events are all missing (a CAS whose reply was lost, never retried).
std::vector<Violation> check_one_winner(const sim::History& history);

}  // namespace onejob::check
