#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

namespace onejob {

struct CanonicalJson {
  std::string bytes;  // compact, object keys sorted, no insignificant whitespace
};

struct JsonError {
  std::string message;  // what is wrong and where, e.g. "duplicate key \"a\""
};

// Limits every JSON document the system parses obeys (request bodies, provider outputs): the
// parse and everything after it (dump, destruction) recurse once per level.
constexpr std::size_t kMaxJsonDepth = 64;

// Parses `text` and returns its canonical form: two documents that differ only in key order or
// whitespace canonicalise to the same bytes. Rejects invalid JSON and objects with a repeated
// key (whose meaning would depend on the parser), nesting deeper than kMaxJsonDepth, and
// numbers outside the double range (1e400). Numbers keep their written kind: 1 and 1.0 are
// different requests. Never throws.
std::variant<CanonicalJson, JsonError> canonicalize_json(std::string_view text);

}  // namespace onejob
