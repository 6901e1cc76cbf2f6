#pragma once
// Instants on the simulated clock, for tests that place events by hand.
#include <chrono>

#include "system/domain/time.hpp"

namespace onejob::test {

// `s` seconds after the clock's epoch.
inline Instant at(int s) { return Instant(std::chrono::seconds(s)); }

}  // namespace onejob::test
