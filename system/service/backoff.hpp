#pragma once

#include <algorithm>

#include "system/domain/check.hpp"
#include "system/domain/time.hpp"
#include "system/ports/random.hpp"

namespace onejob {

// Capped exponential backoff with jitter, for a loop that keeps failing on the store: after
// the n-th failure in a row it waits a uniform draw from [d/2, d], d = min(cap, base * 2^(n-1)).
// The jitter keeps many workers that lost the store together from returning together; the cap
// bounds how late one notices the store is back. The draw comes from the injected Random, so a
// simulated run stays deterministic.
class Backoff {
 public:
  // REQUIRES: base > 0 (SystemConfig::validate checks the policy's). A cap below base counts
  // as base.
  Backoff(Duration base, Duration cap) : base_(base), cap_(std::max(base, cap)) {
    ONEJOB_ASSERT(base > Duration::zero(), "Backoff needs a base above 0");
  }

  // The wait after one more failure.
  Duration next(Random& random) {
    limit_ = limit_ == Duration::zero() ? base_ : std::min(cap_, limit_ * 2);
    const auto half = limit_.count() / 2;
    const auto span = static_cast<std::uint64_t>(limit_.count() - half) + 1;
    return Duration(half + static_cast<Duration::rep>(random.below(span)));
  }

  // A success: the next failure starts again from base.
  void reset() { limit_ = Duration::zero(); }

 private:
  Duration base_;
  Duration cap_;
  Duration limit_{};  // d of the last failure; zero after a success
};

}  // namespace onejob
