#pragma once

#include <vector>

#include "harness/check/invariant.hpp"

namespace onejob::check {

// I2 — the same (owner, idempotency key) with a different request is refused: 422
// idempotency_key_reused, no job id returned, nothing stored.
//
// A pair's request is the one its first `job.created` recorded; when that event is missing (the
// create's reply was lost, so only `store.job_inserted` saw the job), the first accepted create
// response of the pair stands for it. Checks, from those events and `api.response` (route
// create_job, judged by its `request` field, the canonical request bytes):
//   - a 422 create response carries no job id;
//   - no job is created for a pair that already has one with another request;
//   - every accepted create response (200 or 201) carries the pair's request;
//   - a 422 refuses a request that differs from the pair's, for a pair that has a job.
// Does not check:
//   - a second job created with the same request (I1 judges it);
//   - which job id an accepted response carries (I1);
//   - responses without a `request` field (the body was invalid: nothing to compare);
//   - what the client finally received over the network (responses may be lost; I7).
std::vector<Violation> check_key_reuse_conflict(const sim::History& history);

}  // namespace onejob::check
