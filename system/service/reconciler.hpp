#pragma once

#include <memory>

#include "system/service/system_context.hpp"

namespace onejob {

struct ReconcilerCore;

// Resolves what workers could not. Every policy.reconcile_period it
//   - takes over RUNNING attempts whose lease expired (their worker is presumed lost): they
//     become UNKNOWN, never FAILED and never retried, and the token bump fences the old
//     worker's writes out;
//   - asks each UNKNOWN attempt's provider for the status of its derived key: a completed
//     answer goes to the job's compare-and-swap exactly as an in-time answer would, a definitive
//     failure fails the attempt (and failover runs); a provider with no record of the key never
//     got the call, so the attempt is re-driven (back to STARTING, same provider key, at most
//     policy.redrive_limit times); running or unreachable leaves it UNKNOWN, blocking the job
//     until the provider knows or an operator cancels;
//   - resumes failover for pending jobs whose latest attempt FAILED but that have no live
//     attempt (a store fault cut the failover short).
// A sweep that finds no attempt live and no idle job has nothing to act on until an attempt
// turns STARTING, a write that rings the WorkBell. With a WorkSignal the reconciler then waits
// for that ring instead of a period, and sweeps anyway after max(reconcile_period,
// worker_idle_poll).
class Reconciler {
 public:
  explicit Reconciler(SystemContext& context);
  ~Reconciler();
  Reconciler(const Reconciler&) = delete;
  Reconciler& operator=(const Reconciler&) = delete;

  Async<void> run();
  Async<void> sweep_once();
  void stop();

 private:
  std::shared_ptr<ReconcilerCore> core_;
};

}  // namespace onejob
