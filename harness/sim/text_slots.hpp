#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/sim/rng.hpp"

namespace onejob::sim {

// Values made from texts, kept for the texts met lately: N slots chosen by the text's FNV-1a 64
// hash, a new text taking its slot's place. A text met again is not made again; what a slot gives
// is what making it gives. Nothing is held until the first text.
template <typename T, std::size_t N>
class TextSlots {
 public:
  // The value for `text`: `make(hash)` (hash: the text's FNV-1a 64) unless its slot holds `text`
  // already. Valid until the next call.
  template <typename Make>
  const T& get(const std::string& text, Make make) {
    if (slots_.empty()) slots_.resize(N);
    const std::uint64_t hash = fnv1a64(text);
    Slot& slot = slots_[hash % N];
    if (!slot.used || slot.text != text) {
      slot.value = make(hash);
      slot.text = text;
      slot.used = true;
    }
    return slot.value;
  }

 private:
  struct Slot {
    std::string text;
    T value{};
    bool used = false;
  };
  std::vector<Slot> slots_;
};

}  // namespace onejob::sim
