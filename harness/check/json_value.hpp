#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace onejob::check {

// `text` without the JSON whitespace (space, tab, line feed, carriage return) at its end. What
// follows a JSON value may only be such whitespace, so cutting it changes neither the value nor
// whether the text holds one; a body padded to the size limit is a megabyte of it.
std::string_view without_trailing_whitespace(std::string_view text);

// What `nlohmann::json::parse(text, nullptr, false)` gives (the value, or a discarded value), the
// same document with every number of the same kind. A text of only objects, arrays, strings of
// printable ASCII and one-character escapes, numbers (integers of up to 18 digits), true, false
// and null is read here without nlohmann's lexer, which copies every byte into two buffers; any
// other text is nlohmann's to read.
nlohmann::json parse_json(std::string_view text);

// A parsed JSON value, shared: the same text asked for again is not parsed again.
using JsonValue = std::shared_ptr<const nlohmann::json>;

// The JSON value `text` holds, as the checkers' own parser (nlohmann's, with its defaults) reads
// it, or a discarded value when it holds none. The rules ask about the same few bodies many times
// over (each job's payload by several rules, a double click's twice, a load's variants by every
// job), so the values of the texts asked for lately are kept (in 4,096 slots, one text each, up to
// 16 MiB of them, then forgotten all at once) and a text seen before is not parsed again. Per
// thread; the value is what parsing the text gives, whether it was kept or not.
JsonValue json_value(std::string_view text);
// Whether a result is another JSON value than a provider's output. Equal bytes are an equal value
// (or, neither being JSON, there is no value to compare), so only results whose bytes differ, which
// is rare, are parsed. Bytes that differ where either holds no JSON value differ: an empty result
// is not the output it stands for. (nlohmann compares a discarded value unequal to nothing, not
// even with !=, so that case is decided here, before the values are compared.)
inline bool differs_as_json(const std::string& result, const std::string& output) {
  if (result == output) return false;
  const JsonValue one = json_value(result);
  const JsonValue other = json_value(output);
  return one->is_discarded() || other->is_discarded() || *one != *other;
}
// Whether `text` holds a JSON value as json_value reads it (scan_json_text, which reads what
// nlohmann's parser reads, building nothing).
bool holds_json_value(std::string_view text);

// The digest a client records of a JSON value and a rule compares: its compact text (keys in
// order, invalid UTF-8 replaced), FNV-1a 64 in hex. One definition, so the two always agree.
std::string digest_of(const nlohmann::json& value);

// Calls `visit` with `value` when it is an object and with every object within it, also inside a
// text that holds one (a string whose first non-blank character is '{'): where a result shown
// where it must not be hides in an answer. Nesting past 64 levels is not followed.
void for_each_object(const nlohmann::json& value,
                     const std::function<void(const nlohmann::json&)>& visit);

}  // namespace onejob::check
