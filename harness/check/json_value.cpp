#include "harness/check/json_value.hpp"

namespace onejob::check {

std::string_view without_trailing_whitespace(std::string_view text) {
  std::size_t size = text.size();
  while (size > 0 && (text[size - 1] == ' ' || text[size - 1] == '\n' || text[size - 1] == '\t' ||
                      text[size - 1] == '\r')) {
    --size;
  }
  return text.substr(0, size);
}

nlohmann::json json_value(std::string_view text) {
  return nlohmann::json::parse(without_trailing_whitespace(text), nullptr, false);
}

bool holds_json_value(std::string_view text) {
  return nlohmann::json::accept(without_trailing_whitespace(text));
}

}  // namespace onejob::check
