#include "harness/check/json_value.hpp"

#include <cstring>
#include <map>
#include <string>

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
  while (size > 0 && (text[size - 1] == ' ' || text[size - 1] == '\n' || text[size - 1] == '\t' ||
                      text[size - 1] == '\r')) {
    --size;
  }
  return text.substr(0, size);
}

JsonValue json_value(std::string_view text) {
  constexpr std::size_t kTexts = 4096;
  constexpr std::size_t kBytes = std::size_t{16} << 20;
  struct Kept {
    std::map<std::string, JsonValue, std::less<>> values;
    std::size_t bytes = 0;
  };
  thread_local Kept kept;
  text = without_trailing_whitespace(text);
  if (const auto found = kept.values.find(text); found != kept.values.end()) return found->second;
  auto value = std::make_shared<const nlohmann::json>(nlohmann::json::parse(text, nullptr, false));
  if (kept.values.size() >= kTexts || kept.bytes + text.size() > kBytes) {
    kept.values.clear();
    kept.bytes = 0;
  }
  if (text.size() <= kBytes) {
    kept.values.emplace(std::string(text), value);
    kept.bytes += text.size();
  }
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
    const auto inner = nlohmann::json::parse(text, nullptr, false);
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
