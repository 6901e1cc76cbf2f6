#include "harness/sim/rng.hpp"

#include <string>

#include "system/domain/check.hpp"

namespace onejob::sim {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

Rng::Rng(std::uint64_t seed) : seed_(seed) {
  std::uint64_t x = seed;
  for (auto& word : state_) word = splitmix64(x);
}

Rng Rng::fork(std::string_view stream_name) const {
  std::uint64_t x = seed_ ^ fnv1a64(stream_name);
  return Rng(splitmix64(x));
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

std::uint64_t Rng::below(std::uint64_t bound) {
  ONEJOB_ASSERT(bound > 0, "Rng::below needs a bound above 0");
  // Reject the low values that would make `r % bound` favour small results.
  const std::uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const std::uint64_t r = next();
    if (r >= threshold) return r % bound;
  }
}

std::int64_t Rng::between(std::int64_t low, std::int64_t high) {
  ONEJOB_ASSERT(low <= high, "Rng::between needs low <= high, got " + std::to_string(low) + " > " +
                                 std::to_string(high));
  const auto span = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  if (span == UINT64_MAX) return static_cast<std::int64_t>(next());
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + below(span + 1));
}

}  // namespace onejob::sim
