#pragma once

#include "system/domain/time.hpp"
#include "system/ports/async.hpp"

namespace onejob {

// Waiting. The real adapter is a steady_timer; the simulator completes the wait when simulated
// time reaches it, without sleeping.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual Async<void> sleep_for(Duration delay) = 0;
};

}  // namespace onejob
