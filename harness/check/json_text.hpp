#pragma once

#include <cstddef>
#include <string_view>

namespace onejob::check {

// JSON's whitespace: space, tab, line feed, carriage return.
inline bool is_json_whitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The JSON number token `text` starts with, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?: its
// length (0 when `text` does not start with one), and whether it is an integer (no fraction, no
// exponent). After a leading 0 the token ends: "01" is the token "0" and a stray "1".
struct JsonNumberToken {
  std::size_t length = 0;
  bool integral = true;
};
JsonNumberToken json_number_token(std::string_view text);

// What reading `text` as JSON finds, without building anything: whether it is one JSON value
// (RFC 8259 as nlohmann's parser reads it: whitespace around it, a UTF-8 byte-order mark before
// it, strings of well-formed UTF-8 with paired surrogate escapes, no number beyond a double, and
// nothing read after a NUL byte that follows the value),
// and whether some object in it names one key twice (keys compared as their escapes decode).
// The rules ask this of every body they judge, so it is one pass over the bytes; a unit test
// keeps it equal to nlohmann's reading of generated texts.
struct JsonTextScan {
  bool valid = false;
  bool repeated_key = false;  // meaningful only when valid
};
JsonTextScan scan_json_text(std::string_view text);

}  // namespace onejob::check
