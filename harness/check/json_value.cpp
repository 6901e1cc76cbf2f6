#include "harness/check/json_value.hpp"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "harness/check/json_text.hpp"
#include "harness/sim/rng.hpp"
#include "harness/sim/trace.hpp"

namespace onejob::check {

std::string_view without_trailing_whitespace(std::string_view text) {
  std::size_t size = text.size();
  // Padding is mostly spaces: eight of them are passed over at a time, the rest one by one.
  constexpr std::string_view kEightSpaces = "        ";
  while (size >= kEightSpaces.size() &&
         std::memcmp(text.data() + size - kEightSpaces.size(), kEightSpaces.data(),
                     kEightSpaces.size()) == 0) {
    size -= kEightSpaces.size();
  }
  while (size > 0 && is_json_whitespace(text[size - 1])) --size;
  return text.substr(0, size);
}

namespace {

using json = nlohmann::json;

// The plain text's reader: one loop over the bytes with the open arrays and objects on a stack,
// so nesting costs no recursion. Each step reads a value into `target`, then closes what the text
// closes and finds where the next value goes. Any byte outside the plain subset, a repeated key
// or a syntax error ends it with false.
class PlainText {
 public:
  explicit PlainText(std::string_view text) : at_(text.data()), end_(text.data() + text.size()) {}

  bool read_into(json& root) {
    json* target = &root;
    for (;;) {
      skip_blanks();
      if (at_ == end_) return false;
      if (*at_ == '{' || *at_ == '[') {
        const bool object = *at_++ == '{';
        *target = object ? json::object() : json::array();
        open_.push_back(target);
        skip_blanks();
        if (at_ != end_ && *at_ == (object ? '}' : ']')) {
          ++at_;
          open_.pop_back();
        } else if ((target = slot_in(*target)) == nullptr) {
          return false;
        } else {
          continue;
        }
      } else if (!scalar(*target)) {
        return false;
      }
      // A value is complete: close what closes after it, then find the next value's place.
      for (;;) {
        skip_blanks();
        if (open_.empty()) return at_ == end_;
        if (at_ == end_) return false;
        json& container = *open_.back();
        if (*at_ == (container.is_object() ? '}' : ']')) {
          ++at_;
          open_.pop_back();
          continue;
        }
        if (*at_ != ',') return false;
        ++at_;
        skip_blanks();
        target = slot_in(container);
        if (target == nullptr) return false;
        break;
      }
    }
  }

 private:
  // Where the next value in `container` goes: a new element of an array, or the member an
  // object's next key names (read here with its colon; a key seen before in it ends the read).
  json* slot_in(json& container) {
    if (container.is_array()) return &container.get_ref<json::array_t&>().emplace_back();
    std::string key;
    if (!plain_string(key)) return nullptr;
    skip_blanks();
    if (at_ == end_ || *at_ != ':') return nullptr;
    ++at_;
    auto [member, fresh] = container.get_ref<json::object_t&>().emplace(std::move(key), nullptr);
    return fresh ? &member->second : nullptr;
  }

  // A string, true, false, null or a number.
  bool scalar(json& out) {
    if (*at_ == '"') {
      std::string text;
      if (!plain_string(text)) return false;
      out = std::move(text);
      return true;
    }
    if (word("true")) {
      out = true;
    } else if (word("false")) {
      out = false;
    } else if (word("null")) {
      out = nullptr;
    } else {
      return number(out);
    }
    return true;
  }

  // Whether the text goes on with `literal` (then read past it).
  bool word(std::string_view literal) {
    if (!std::string_view(at_, static_cast<std::size_t>(end_ - at_)).starts_with(literal)) {
      return false;
    }
    at_ += literal.size();
    return true;
  }

  // From an opening quote to the closing one: printable ASCII, and escapes of one character (a
  // backslash and one of " \\ / b f n r t). A code point's escape or any other byte ends the read.
  bool plain_string(std::string& out) {
    static constexpr std::string_view kEscapes = "\"\\/bfnrt";
    static constexpr std::string_view kMeanings = "\"\\/\b\f\n\r\t";
    if (at_ == end_ || *at_ != '"') return false;
    const char* c = at_ + 1;
    while (c != end_) {
      const char* run = c;
      while (c != end_ && *c != '"' && *c != '\\' && static_cast<unsigned char>(*c) >= 0x20 &&
             static_cast<unsigned char>(*c) <= 0x7E) {
        ++c;
      }
      out.append(run, c);
      if (c == end_) return false;
      if (*c == '"') {
        at_ = c + 1;
        return true;
      }
      if (*c != '\\' || ++c == end_) return false;
      const auto which = kEscapes.find(*c);
      if (which == std::string_view::npos) return false;
      out.push_back(kMeanings[which]);
      ++c;
    }
    return false;
  }

  // A number token (json_number_token) in nlohmann's kinds: an integer unsigned, or signed after
  // a '-' (at most 18 digits here, so it fits either); with a fraction or an exponent a double,
  // rounded as strtod rounds it (from_chars). A longer integer, or a double out of range, ends the
  // read.
  bool number(json& out) {
    const auto token =
        json_number_token(std::string_view(at_, static_cast<std::size_t>(end_ - at_)));
    if (token.length == 0) return false;
    const char* past = at_ + token.length;
    if (token.integral) {
      const bool negative = *at_ == '-';
      if (token.length - (negative ? 1 : 0) > 18) return false;
      std::uint64_t value = 0;
      for (const char* digit = at_ + (negative ? 1 : 0); digit != past; ++digit) {
        value = value * 10 + static_cast<std::uint64_t>(*digit - '0');
      }
      if (negative) {
        out = -static_cast<json::number_integer_t>(value);
      } else {
        out = static_cast<json::number_unsigned_t>(value);
      }
    } else {
      json::number_float_t value = 0;
      const auto [end, error] = std::from_chars(at_, past, value);
      if (error != std::errc() || end != past) return false;
      out = value;
    }
    at_ = past;
    return true;
  }

  void skip_blanks() {
    while (at_ != end_ && is_json_whitespace(*at_)) ++at_;
  }

  const char* at_;
  const char* end_;
  std::vector<json*> open_;  // the arrays and objects not yet closed, outermost first
};

}  // namespace

nlohmann::json parse_json(std::string_view text) {
  json value;
  if (PlainText(text).read_into(value)) return value;
  return json::parse(text, nullptr, false);
}

JsonValue json_value(std::string_view text) {
  // A text's slot is chosen by a digest of its length, its first 256 bytes and its last 64 (cheap
  // for a body padded to a megabyte); a slot holds one text, compared whole before its value is
  // used, so texts that share a slot only push each other out.
  constexpr std::size_t kSlots = 4096;
  constexpr std::size_t kBytes = std::size_t{16} << 20;
  constexpr std::size_t kHead = 256;
  constexpr std::size_t kTail = 64;
  struct Slot {
    std::string text;
    JsonValue value;
  };
  struct Kept {
    std::vector<Slot> slots = std::vector<Slot>(kSlots);
    std::size_t bytes = 0;
  };
  thread_local Kept kept;
  text = without_trailing_whitespace(text);
  std::uint64_t digest = sim::fnv1a64(text.substr(0, kHead), text.size());
  if (text.size() > kHead) digest = sim::fnv1a64(text.substr(text.size() - kTail), digest);
  Slot& slot = kept.slots[digest % kSlots];
  if (slot.value && slot.text == text) return slot.value;
  auto value = std::make_shared<const nlohmann::json>(parse_json(text));
  if (text.size() > kBytes) return value;
  kept.bytes -= slot.text.size();
  if (kept.bytes + text.size() > kBytes) {
    for (Slot& each : kept.slots) each = Slot{};
    kept.bytes = 0;
  }
  slot.text.assign(text);
  slot.value = value;
  kept.bytes += text.size();
  return value;
}

bool holds_json_value(std::string_view text) { return scan_json_text(text).valid; }

namespace {

void objects_within(const nlohmann::json& value, int depth,
                    const std::function<void(const nlohmann::json&)>& visit) {
  constexpr int kMaxDepth = 64;
  if (depth > kMaxDepth) return;
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '{') return;
    const auto inner = parse_json(text);
    if (inner.is_object()) objects_within(inner, depth + 1, visit);
    return;
  }
  if (value.is_object()) visit(value);
  if (value.is_structured()) {
    for (const auto& item : value) objects_within(item, depth + 1, visit);
  }
}

}  // namespace

std::string digest_of(const nlohmann::json& value) {
  return sim::hex64(
      sim::fnv1a64(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

void for_each_object(const nlohmann::json& value,
                     const std::function<void(const nlohmann::json&)>& visit) {
  objects_within(value, 0, visit);
}

}  // namespace onejob::check
