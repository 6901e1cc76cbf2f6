#include "system/domain/text.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace onejob {
namespace {

// The length of the well-formed UTF-8 sequence at text[at] other than a NUL, or 0 when none
// starts there.
std::size_t sequence_at(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[at + k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return lead == 0 ? 0 : 1;
  std::size_t length = 0;
  char32_t code = 0;
  char32_t least = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, code = lead & 0x1Fu, least = 0x80;
  } else if ((lead & 0xF0u) == 0xE0) {
    length = 3, code = lead & 0x0Fu, least = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, code = lead & 0x07u, least = 0x10000;
  } else {
    return 0;
  }
  if (text.size() - at < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xC0u) != 0x80) return 0;
    code = (code << 6) | (byte(k) & 0x3Fu);
  }
  if (code < least || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

// Where the leading run of ASCII without NUL ends, found eight bytes at a time: most text is
// only that.
std::size_t plain_ascii_prefix(std::string_view text) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  std::size_t at = 0;
  for (; at + sizeof(std::uint64_t) <= text.size(); at += sizeof(std::uint64_t)) {
    std::uint64_t bytes = 0;
    std::memcpy(&bytes, text.data() + at, sizeof bytes);
    // A byte of 0x80 or more, or (the classic test) a zero byte, ends the run.
    if ((bytes & kHighs) != 0 || ((bytes - kOnes) & ~bytes & kHighs) != 0) break;
  }
  return at;
}

}  // namespace

bool storable(std::string_view text) {
  for (std::size_t at = plain_ascii_prefix(text); at < text.size();) {
    const std::size_t length = sequence_at(text, at);
    if (length == 0) return false;
    at += length;
  }
  return true;
}

std::string storable_text(std::string_view text) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  if (storable(text)) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = sequence_at(text, at);
    if (length == 0) {
      out += kReplacement;
      ++at;
    } else {
      out.append(text, at, length);
      at += length;
    }
  }
  return out;
}

}  // namespace onejob
