#include "harness/check/i13_bodies.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/check/api_routes.hpp"
#include "harness/check/json_text.hpp"
#include "harness/check/json_value.hpp"

namespace onejob::check::i13 {

std::size_t depth_of(std::string_view text) {
  // Whitespace after the value holds no bracket (a body padded to the size limit is a megabyte of
  // it), and inside an unclosed string it changes nothing either.
  text = without_trailing_whitespace(text);
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
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

bool readable_json(std::string_view text) {
  // JSON allows whitespace after a value, and a text that ends inside a string or a value is
  // unreadable with it or without it: the padding of a body at the size limit is not read.
  const JsonTextScan scan = scan_json_text(without_trailing_whitespace(text));
  return scan.valid && !scan.repeated_key;
}

std::optional<std::string> retry_body_provider(const std::string& body) {
  const JsonValue held = json_value(body);
  const nlohmann::json& parsed = *held;
  if (!parsed.is_object() || parsed.size() != 1 || !parsed.contains("provider") ||
      !parsed["provider"].is_string()) {
    return std::nullopt;
  }
  return parsed["provider"].get<std::string>();
}

bool create_input_ok(const std::string& body) {
  const JsonValue held = json_value(body);
  const nlohmann::json& parsed = *held;
  if (!parsed.is_object() || !parsed.contains("input")) return true;
  const auto& input = parsed["input"];
  if (!input.is_object()) return false;
  for (const auto& [name, value] : input.items()) {
    if (name != "text" && name != "fields") return false;
  }
  if (!input.contains("text") || !input["text"].is_string() ||
      input["text"].get<std::string>().empty()) {
    return false;
  }
  const bool extract = parsed.contains("operation") && parsed["operation"] == "extract";
  if (!extract) return !input.contains("fields");
  if (!input.contains("fields")) return false;
  const auto& fields = input["fields"];
  if (!fields.is_array() || fields.empty()) return false;
  std::set<std::string> names;
  for (const auto& name : fields) {
    if (!name.is_string() || name.get<std::string>().empty()) return false;
    if (!names.insert(name.get<std::string>()).second) return false;
  }
  return true;
}

bool create_names_ok(const std::string& body, const std::set<std::string, std::less<>>& providers) {
  const JsonValue held = json_value(body);
  const nlohmann::json& parsed = *held;
  if (!parsed.is_object()) return true;
  const auto named = [&](const nlohmann::json& value) {
    return value.is_string() && providers.contains(value.get_ref<const std::string&>());
  };
  const auto operation = parsed.find("operation");
  if (operation == parsed.end() || !operation->is_string()) return false;
  const auto& op = operation->get_ref<const std::string&>();
  if (std::ranges::find(kOperations, op) == std::end(kOperations)) return false;
  const auto provider = parsed.find("provider");
  if (provider == parsed.end() || !named(*provider)) return false;
  const auto failover = parsed.find("failover");
  if (failover == parsed.end()) return true;
  if (!failover->is_array()) return false;
  std::set<std::string> seen{provider->get<std::string>()};
  for (const auto& name : *failover) {
    if (!named(name) || !seen.insert(name.get<std::string>()).second) return false;
  }
  return true;
}

}  // namespace onejob::check::i13
