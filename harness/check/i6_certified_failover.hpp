#pragma once

#include <vector>

#include "harness/check/invariant.hpp"

namespace onejob::check {

// I6 — automatic failover only to contract-certified providers; invalid output is never a result.
//
// Checks, from `certification.recorded`, `attempt.created`, `output.rejected`, `job.completed`
// and the job's canonical request:
//   - an attempt created by failover (origin "failover") or on an operator's request (origin
//     "explicit") names a provider whose latest certification recorded before it passed;
//   - every `job.completed` result passes validate_output for the job's operation and input,
//     both read from the job's request: `job.created`'s, or else the one an accepted create
//     response for that job carries (a job whose create reply was lost has no `job.created`);
//   - no job is completed by an attempt whose output was rejected earlier.
// Does not check:
//   - initial attempts: the client chose that provider, certified or not;
//   - attempts to a provider whose latest certification ended in `certification.store_error`:
//     the store may have kept it, but the event carries no verdict;
//   - results of jobs whose request appears nowhere in the history;
//   - losers' results (`result.discarded`; I5 keeps them from readers).
std::vector<Violation> check_certified_failover(const sim::History& history);

}  // namespace onejob::check
