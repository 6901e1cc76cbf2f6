#pragma once

#include <vector>

#include "harness/check/invariant.hpp"

namespace onejob::check {

// I1 — one job per (owner, idempotency key).
//
// Checks, from `job.created` (the API's report), `store.job_inserted` (the store's own log, which
// also covers a commit whose reply was lost) and `api.response` events:
//   - no second job is created for an (owner, key) pair that already has one;
//   - every accepted create response (route create_job, 200 or 201) that carries a job id carries
//   the id of the
//     job created for its (owner, key), and that job was created before the response.
// Does not check:
//   - that the payloads matched (I2 judges a reused key with another payload);
//   - what the client finally received over the network (responses may be lost; I7);
//   - jobs created outside the recorded history (a store pre-seeded by hand).
std::vector<Violation> check_one_job_per_key(const sim::History& history);

}  // namespace onejob::check
