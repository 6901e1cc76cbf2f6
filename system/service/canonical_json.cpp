#include "system/service/canonical_json.hpp"

#include <algorithm>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "system/service/json_document.hpp"

namespace onejob {
namespace {

// The deepest nesting of arrays and objects in `text`, looking no further than `limit` + 1
// (strings skipped, escapes included): checked before parsing, so depth costs nothing.
std::size_t nesting_depth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size() && deepest <= limit; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

std::variant<ParsedJson, JsonError> parse_canonical_json(std::string_view text) {
  if (nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return JsonError{"nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
  }
  // nlohmann keeps the last of repeated keys silently; a request whose meaning depends on that
  // is refused instead. One set of seen keys per open object.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate_key;
  auto track_keys = [&](int /*depth*/, nlohmann::json::parse_event_t event,
                        nlohmann::json& parsed) {
    using Ev = nlohmann::json::parse_event_t;
    if (event == Ev::object_start) {
      open_objects.emplace_back();
    } else if (event == Ev::object_end) {
      open_objects.pop_back();
    } else if (event == Ev::key) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (!open_objects.back().insert(key).second && duplicate_key.empty()) duplicate_key = key;
    }
    return true;
  };
  ParsedJson parsed;
  try {
    parsed.document = nlohmann::json::parse(text.begin(), text.end(), track_keys);
  } catch (const nlohmann::json::parse_error& error) {
    return JsonError{"invalid JSON at byte " + std::to_string(error.byte)};
  } catch (const nlohmann::json::out_of_range&) {
    return JsonError{"a number is out of range (beyond a double)"};
  } catch (const nlohmann::json::exception& error) {
    return JsonError{std::string("invalid JSON: ") + error.what()};
  }
  if (!duplicate_key.empty()) return JsonError{"duplicate key \"" + duplicate_key + "\""};
  // nlohmann::json stores objects in a std::map, so dump() writes keys in sorted order.
  try {
    parsed.canonical = parsed.document.dump();
  } catch (const nlohmann::json::type_error&) {
    return JsonError{"string is not valid UTF-8"};
  }
  return parsed;
}

std::variant<CanonicalJson, JsonError> canonicalize_json(std::string_view text) {
  auto parsed = parse_canonical_json(text);
  if (auto* error = std::get_if<JsonError>(&parsed)) return std::move(*error);
  return CanonicalJson{std::move(std::get<ParsedJson>(parsed).canonical)};
}

}  // namespace onejob
