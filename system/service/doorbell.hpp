#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "system/ports/timer.hpp"
#include "system/ports/work_signal.hpp"

namespace onejob {

// One waiter's WorkSignal: ring() ends its wait, or the next one if it is not waiting. Built on
// the Timer port alone, so the simulator's time and real time wait alike; a wait a ring ended
// leaves its timer to run out unheeded. ring() may come from any thread: the waiter resumes on
// its own executor.
class Doorbell final : public WorkSignal {
 public:
  // REQUIRES: `timer` outlives every wait.
  explicit Doorbell(Timer& timer);
  ~Doorbell() override;
  Doorbell(const Doorbell&) = delete;
  Doorbell& operator=(const Doorbell&) = delete;

  // REQUIRES: one wait at a time.
  Async<void> wait(Duration at_most) override;
  void ring();

  struct State;  // shared with the timeouts still running

 private:
  std::shared_ptr<State> state_;
  Timer& timer_;
};

// Rings every Doorbell added to it (the WorkBell of one process).
class Doorbells final : public WorkBell {
 public:
  void ring() override;
  // REQUIRES: `bell` stays alive until removed.
  void add(Doorbell& bell);
  void remove(Doorbell& bell);

 private:
  std::mutex mutex_;
  std::vector<Doorbell*> bells_;
};

}  // namespace onejob
