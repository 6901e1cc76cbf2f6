#pragma once

// The parsed side of canonical JSON, for the service's own .cpp files that read what they
// canonicalize: a body is parsed once, not once to canonicalize and again to read. Kept out of
// canonical_json.hpp and contract.hpp so their includers do not compile nlohmann::json.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "system/service/canonical_json.hpp"
#include "system/service/contract.hpp"

namespace onejob {

// `text` under canonicalize_json's rules (nesting depth, no repeated key), as a document and its
// canonical bytes (exactly canonicalize_json's).
struct ParsedJson {
  nlohmann::json document;
  std::string canonical;
};
std::variant<ParsedJson, JsonError> parse_canonical_json(std::string_view text);

// Reads `text` into `document` when it is plain JSON within kMaxJsonDepth: objects, arrays,
// strings of printable ASCII and one-character escapes, numbers (integers of at most 18 digits,
// doubles within range), true, false, null, no key repeated in an object. The document is then
// exactly nlohmann's, every number of nlohmann's kind. False for any other text (and `document`
// is then unspecified). parse_canonical_json tries it first and hands what it refuses to
// nlohmann's parser, so it is what makes the common text cheap.
bool read_plain_json(std::string_view text, nlohmann::json& document);

// The text `value.dump(-1, ' ', false, invalid)` gives, byte for byte (and the same type_error
// for a string that is not UTF-8 under the strict handler), written without nlohmann's
// serializer for what is plain: it reads every byte of a string through a UTF-8 decoder, and
// answers and canonical bodies are mostly printable ASCII. Numbers with a fraction or exponent,
// and strings with any other byte, are still written by the serializer.
std::string compact_json(const nlohmann::json& value, nlohmann::json::error_handler_t invalid =
                                                          nlohmann::json::error_handler_t::strict);

// A JSON object's compact text, written field by field without building a document first: the
// bytes compact_json gives for the same object. Fields must come in the byte order of their keys,
// the order nlohmann's object keeps them in (asserted); strings are written as compact_json writes
// them under `invalid`, so a string that is not UTF-8 throws the same type_error under strict.
class JsonObjectText {
 public:
  explicit JsonObjectText(
      nlohmann::json::error_handler_t invalid = nlohmann::json::error_handler_t::strict);
  JsonObjectText& integer(std::string_view key, std::int64_t value);
  JsonObjectText& boolean(std::string_view key, bool value);
  JsonObjectText& string(std::string_view key, std::string_view value);
  JsonObjectText& null(std::string_view key);
  // An array of strings.
  JsonObjectText& strings(std::string_view key, const std::vector<std::string>& values);
  // An array of values already written as compact JSON text (JsonObjectText's, for one).
  JsonObjectText& texts(std::string_view key, const std::vector<std::string>& json_texts);
  // A value already written as compact JSON text (compact_json's, or another JsonObjectText's).
  JsonObjectText& text(std::string_view key, std::string_view json_text);
  // The object's text, closed; the writer is spent.
  std::string done();

 private:
  void key(std::string_view key);
  template <typename Write>
  JsonObjectText& array(std::string_view key, const std::vector<std::string>& values, Write write);

  nlohmann::json::error_handler_t invalid_;
  std::string out_ = "{";
  std::string last_key_;
};

// validate_input on an input already parsed under those rules.
ContractCheck validate_input_document(std::string_view operation, const nlohmann::json& input);

// validate_output on an input already parsed under those rules (a certification sample's, parsed
// once); the output's document, when it passes, goes to `*output_document` (when not null).
ContractCheck validate_output_document(std::string_view operation, const nlohmann::json& input,
                                       const std::string& output, nlohmann::json* output_document);

}  // namespace onejob
