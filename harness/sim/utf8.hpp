#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace onejob::sim {

// The code point of the UTF-8 sequence at text[i] and its length, or nullopt (and length 1) for
// a byte that starts no valid sequence: overlong forms, surrogates and values past U+10FFFF are
// invalid.
inline std::optional<char32_t> decode_utf8(std::string_view text, std::size_t i,
                                           std::size_t& length) {
  length = 1;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return lead;
  std::size_t count = 0;
  char32_t value = 0;
  char32_t least = 0;
  if ((lead & 0xE0) == 0xC0) {
    count = 2, value = lead & 0x1F, least = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    count = 3, value = lead & 0x0F, least = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    count = 4, value = lead & 0x07, least = 0x10000;
  } else {
    return std::nullopt;
  }
  if (i + count > text.size()) return std::nullopt;
  for (std::size_t k = 1; k < count; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return std::nullopt;
    value = (value << 6) | (byte(k) & 0x3F);
  }
  if (value < least || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
    return std::nullopt;
  }
  length = count;
  return value;
}

// What a PostgreSQL text column holds, by the harness's own reading (never the system's):
// well-formed UTF-8 without a NUL byte.
inline bool text_column_holds(std::string_view text) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  std::size_t length = 1;
  for (std::size_t i = 0; i < text.size(); i += length) {
    length = 1;
    // Eight bytes of ASCII without a NUL (no high bit, no zero byte) are passed at once.
    if (text.size() - i >= sizeof(std::uint64_t)) {
      std::uint64_t word = 0;
      std::memcpy(&word, text.data() + i, sizeof word);
      if (((word | ((word - kOnes) & ~word)) & kHighs) == 0) {
        length = sizeof word;
        continue;
      }
    }
    if (text[i] == '\0') return false;
    if (static_cast<unsigned char>(text[i]) < 0x80) continue;
    if (!decode_utf8(text, i, length)) return false;
  }
  return true;
}

}  // namespace onejob::sim
