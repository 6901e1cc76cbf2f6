#pragma once

#include <chrono>

namespace onejob {

// The time base of the system. Instants count from the start of the run (simulated) or of the
// process (real); the system only ever compares instants and adds durations to them.
struct TimeBase {
  using duration = std::chrono::microseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<TimeBase>;
  static constexpr bool is_steady = true;
};

using Duration = TimeBase::duration;
using Instant = TimeBase::time_point;

}  // namespace onejob
