#pragma once

#include <cstdint>
#include <string_view>

#include "system/ports/random.hpp"

namespace onejob::sim {

// The simulation's only source of randomness: xoshiro256** seeded through SplitMix64, with its
// own distributions (std:: distributions differ between standard library versions).
//
// Components never share a stream: each takes `fork("name")`, which depends only on this
// generator's seed and the name, never on how many numbers were drawn. Adding a component or a
// draw therefore leaves every other component's numbers unchanged.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  Rng fork(std::string_view stream_name) const;

  std::uint64_t next();
  // Uniform in [0, bound). REQUIRES: bound > 0.
  std::uint64_t below(std::uint64_t bound);
  // Uniform in [low, high]. REQUIRES: low <= high.
  std::int64_t between(std::int64_t low, std::int64_t high);

 private:
  std::uint64_t seed_;
  std::uint64_t state_[4];
};

// The system's Random port on one of the simulation's streams.
class RngRandom final : public Random {
 public:
  explicit RngRandom(Rng rng) : rng_(rng) {}
  std::uint64_t below(std::uint64_t bound) override { return rng_.below(bound); }

 private:
  Rng rng_;
};

// FNV-1a, 64 bit: stable across platforms and library versions; used for stream names and
// trace hashes, never for security.
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash = 0xcbf29ce484222325ULL);

}  // namespace onejob::sim
