#pragma once

#include <vector>

#include "harness/check/invariant.hpp"

namespace onejob::check {

// I4 — a timeout yields UNKNOWN, never FAILED; a job is never failed because of a timeout.
//
// An attempt's call is answered in time when a `provider.reply` of kind answered or rejected,
// not marked late, arrives at or before the call's `deadline_us`. A maybe_delivered reply is no
// answer: the request may have reached the provider, which is as unknown as a timeout.
// Definitive evidence of failure is a rejected `provider.reply` (late or not), an
// `output.rejected`, or a `reconciler.status` of "failed" for the attempt. Checks:
//   - after a `provider.call` not answered in time, the attempt does not go RUNNING -> FAILED
//     (it goes to UNKNOWN, or an operator cancels it);
//   - no attempt goes RUNNING -> FAILED for a reason naming an expired lease or a deadline;
//   - an attempt goes UNKNOWN -> FAILED only after definitive evidence of failure for it;
//   - no `job.failed` while an attempt of that job is UNKNOWN.
// A write whose reply was lost, or a node crash, may hide a transition out of UNKNOWN: attempts
// UNKNOWN at that moment do not block `job.failed` until their next `attempt.state`.
// Does not check:
//   - that UNKNOWN attempts are eventually resolved (I8);
//   - whether the evidence was true (the provider's word is taken);
//   - FAILED reached without any provider call (an unconfigured provider, a prompt too long).
std::vector<Violation> check_timeout_is_unknown(const sim::History& history);

}  // namespace onejob::check
