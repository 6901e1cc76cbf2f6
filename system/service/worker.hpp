#pragma once

#include <memory>
#include <string>

#include "system/service/system_context.hpp"

namespace onejob {

struct WorkerCore;

// Runs attempts. A worker claims the oldest STARTING attempt under a fenced lease, renders the
// prompt through the provider's template, and calls the provider with the attempt's derived key
// and a deadline:
//   - a valid answer goes to the job's compare-and-swap;
//   - a definitive error or an output that breaks the contract FAILS the attempt, and failover
//     moves on to the next certified provider;
//   - no answer by the deadline makes the attempt UNKNOWN and blocks the job: no failover, since
//     the provider may still be working. If the answer comes later it takes the same
//     compare-and-swap path.
// An answer the worker holds is never dropped for a store error or for the race between the
// deadline's write and the answer's: it is written from RUNNING or UNKNOWN alike, and retried
// until the store takes or refuses it. Before the call, a store error is retried too; if the
// lease expires meanwhile, the reconciler re-drives the never-sent attempt, and this worker's
// writes are fenced out. A worker whose claim's reply was lost looks for the attempt it may hold.
// Every write carries the lease token, so once the lease has been taken over (the worker was
// presumed lost), nothing this worker writes lands.
class Worker {
 public:
  Worker(SystemContext& context, std::string name);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Claims and runs attempts until stop(), up to policy.worker_capacity at once. While idle it
  // waits for the context's WorkSignal, at most policy.worker_idle_poll; without one it polls
  // every policy.worker_poll.
  Async<void> run();

  // Claims one attempt and runs it until its outcome is decided (answer or deadline); returns
  // false when nothing was claimable. Late answers are still handled afterwards.
  Async<bool> run_once();

  // The worker stops as a crashed process would: it claims nothing more, and nothing it still
  // had in flight writes anything. Its leases expire and the reconciler takes over.
  void stop();

  const std::string& name() const;

 private:
  std::shared_ptr<WorkerCore> core_;
};

}  // namespace onejob
