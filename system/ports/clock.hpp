#pragma once

#include "system/domain/time.hpp"

namespace onejob {

// The only source of time for system/ code.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Instant now() const = 0;
};

}  // namespace onejob
