#pragma once

#include "system/ports/store_wrapper.hpp"
#include "system/ports/work_signal.hpp"

namespace onejob {

// Rings the WorkBell after every write that left, or may have left, an attempt STARTING: a
// job's first attempt, a failover's or an operator's next one, a re-drive. Idle workers wait for
// the ring instead of polling (see WorkSignal). A write whose reply was lost
// (maybe_committed) rings too: a ring too many costs one empty claim, a ring too few a poll.
class RingingStore final : public StoreWrapper {
 public:
  // REQUIRES: `target` and `bell` outlive the store.
  RingingStore(Store& target, WorkBell& bell) : StoreWrapper(target), bell_(bell) {}

  Async<InsertJobResult> insert_job(NewJob job) override;
  Async<InsertAttemptResult> insert_attempt(NewAttempt attempt) override;
  Async<UpdateAttemptResult> update_attempt(AttemptUpdate update) override;

 private:
  WorkBell& bell_;
};

}  // namespace onejob
