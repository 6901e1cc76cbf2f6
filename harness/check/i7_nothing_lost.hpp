#pragma once

#include <vector>

#include "harness/check/invariant.hpp"

namespace onejob::check {

// I7 — no accepted job is lost across crash, restart or lost store replies; reads are
// owner-scoped.
//
// A job exists from its first report: `store.job_inserted` (the store's own log, which survives
// a lost commit reply) or `job.created` (the API's). Checks:
//   - every job has its initial attempt: an `attempt.created` for it, or, for a job only the
//     store reported (the API never learned of its commit, so never emitted attempt.created),
//     the attempt id of `store.job_inserted`;
//   - by `run.end`, some attempt of every job was picked up: it left STARTING by an
//     `attempt.state`, or by a fact AttemptFacts reads when the claim's reply was lost, or it
//     is in doubt (a write for it, such as an operator's cancel, may have committed unseen);
//     unless the run ended within a minute of the job's creation; reported at run.end;
//   - a job id a client received (`client.receive` 200/201) belongs to a job that existed
//     before the client received it;
//   - a `get_job` 200 shows a job of the asking owner;
//   - a `get_job` 404 to the job's own owner is for a job that did not exist yet when the
//     request arrived (a job committed before the read began must be found).
// Does not check:
//   - what a get_job answer contained beyond its owner (status, result: I5);
//   - reads of jobs outside the recorded history (pre-seeded stores);
//   - pick-up with no `run.end` in the history, or within a minute of it: a lease longer
//     than that can legitimately hide a claim whose reply was lost;
//   - create_attempt and cancel_attempt answers (also owner-scoped, but writes).
std::vector<Violation> check_nothing_lost(const sim::History& history);

}  // namespace onejob::check
