#pragma once

#include <cstdint>

namespace onejob {

// The only source of randomness for system/ code (today: jitter on store retries). The
// simulator hands each node its own seeded stream, so a run stays a function of its seed.
class Random {
 public:
  virtual ~Random() = default;
  // Uniform in [0, bound). REQUIRES: bound > 0.
  virtual std::uint64_t below(std::uint64_t bound) = 0;
};

}  // namespace onejob
