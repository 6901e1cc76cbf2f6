#include "system/service/canonical_json.hpp"

#include <set>
#include <vector>

#include <nlohmann/json.hpp>

namespace onejob {

std::variant<CanonicalJson, JsonError> canonicalize_json(std::string_view text) {
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
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text.begin(), text.end(), track_keys);
  } catch (const nlohmann::json::parse_error& error) {
    return JsonError{"invalid JSON at byte " + std::to_string(error.byte)};
  }
  if (!duplicate_key.empty()) return JsonError{"duplicate key \"" + duplicate_key + "\""};
  // nlohmann::json stores objects in a std::map, so dump() writes keys in sorted order.
  try {
    return CanonicalJson{document.dump()};
  } catch (const nlohmann::json::type_error&) {
    return JsonError{"string is not valid UTF-8"};
  }
}

}  // namespace onejob
