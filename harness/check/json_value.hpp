#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace onejob::check {

// `text` without the JSON whitespace (space, tab, line feed, carriage return) at its end. What
// follows a JSON value may only be such whitespace, so cutting it changes neither the value nor
// whether the text holds one; a body padded to the size limit is a megabyte of it.
std::string_view without_trailing_whitespace(std::string_view text);

// The JSON value `text` holds, as the checkers' own parser (nlohmann's, with its defaults) reads
// it, or a discarded value when it holds none.
nlohmann::json json_value(std::string_view text);
// Whether `text` holds a JSON value as json_value reads it (the same parser, building nothing).
bool holds_json_value(std::string_view text);

}  // namespace onejob::check
