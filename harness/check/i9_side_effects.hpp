#pragma once

#include <vector>

#include "harness/check/invariant.hpp"

namespace onejob::check {

// I9 — side effects: duplicate provider executions happen only after an explicit cancel, never
// from a timeout alone.
//
// Reads `provider.execute` (recorded by the simulated provider when it really runs a call;
// provider_key "J:N" is attempt N of job J) against the attempt states AttemptFacts replays.
// Attempt numbers come from `attempt.created` (attempt_no), `provider.call` (provider_key) and
// `store.job_inserted` (attempt 1). Checks:
//   - no provider_key executes twice: the provider's own dedup must hold, across providers too;
//   - when attempt N > 1 of job J executes, every earlier attempt of J is SUCCEEDED, FAILED,
//     DISCARDED or CANCELLED. One still STARTING, RUNNING or UNKNOWN may still have its work
//     under way: the new execution is a duplicate side effect that no cancel allowed.
// Does not check:
//   - certification calls (keys "cert:..."), which have no job;
//   - earlier attempts the history never numbers (created and never claimed, with the reply
//     of their creation lost), or that are in doubt (a write for them may have committed
//     without its event; see AttemptFacts);
//   - executions of an earlier attempt that happen after a later one executed (a request
//     delayed in the network): the later execution was judged when it happened.
std::vector<Violation> check_side_effects(const sim::History& history);

}  // namespace onejob::check
