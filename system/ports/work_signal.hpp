#pragma once

#include "system/domain/time.hpp"
#include "system/ports/async.hpp"

namespace onejob {

// How an idle worker learns that there may be work to claim, instead of asking the store over
// and over (in one process a direct call; between processes PostgreSQL's LISTEN/NOTIFY would
// carry it). A hint, never a promise: a ring that is lost or late only delays work, because a
// waiting worker still looks at the store every policy.worker_idle_poll.
class WorkSignal {
 public:
  virtual ~WorkSignal() = default;
  // Completes at the first ring since the previous wait completed (at once when one came in
  // between), or after `at_most`, whichever is first.
  virtual Async<void> wait(Duration at_most) = 0;
};

// What a write that may have left an attempt to claim rings: every WorkSignal listening to it.
class WorkBell {
 public:
  virtual ~WorkBell() = default;
  // Thread-safe; never blocks on a waiter.
  virtual void ring() = 0;
};

}  // namespace onejob
