#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/sim/rng.hpp"

namespace onejob::sim {

// Values made from texts, kept for the texts met lately: N slots chosen by the text's FNV-1a 64
// hash, a new text taking its slot's place. A text met again is not made again; what a slot gives
// is what making it gives. Nothing is held until the first text, and a slot only once used.
template <typename T, std::size_t N>
class TextSlots {
 public:
  // The value for `text`: `make(hash)` (hash: the text's FNV-1a 64) unless its slot holds `text`
  // already. Valid until the next call.
  template <typename Make>
  const T& get(const std::string& text, Make make) {
    if (slots_.empty()) slots_.resize(N);
    const std::uint64_t hash = fnv1a64(text);
    std::unique_ptr<Slot>& slot = slots_[hash % N];
    if (slot == nullptr) {
      slot = std::make_unique<Slot>(Slot{text, make(hash)});
    } else if (slot->text != text) {
      slot->value = make(hash);
      slot->text = text;
    }
    return slot->value;
  }

 private:
  struct Slot {
    std::string text;
    T value{};
  };
  std::vector<std::unique_ptr<Slot>> slots_;  // each made when first used: T may be large
};

}  // namespace onejob::sim
