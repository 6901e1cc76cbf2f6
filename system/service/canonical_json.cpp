#include "system/service/canonical_json.hpp"

#include <algorithm>
#include <optional>
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

// Builds the document from nlohmann's SAX events, as its own DOM parser does, and refuses a key
// repeated in one object (which nlohmann would keep silently, the last one winning). A parse error
// is kept, not thrown: a refused body costs no unwinding.
class DocumentBuilder {
 public:
  using json = nlohmann::json;

  explicit DocumentBuilder(json& root) : root_(root) {}

  bool null() { return add(nullptr); }
  bool boolean(bool value) { return add(value); }
  bool number_integer(json::number_integer_t value) { return add(value); }
  bool number_unsigned(json::number_unsigned_t value) { return add(value); }
  bool number_float(json::number_float_t value, const json::string_t& /*text*/) {
    return add(value);
  }
  bool string(json::string_t& value) { return add(std::move(value)); }
  bool binary(json::binary_t& value) { return add(std::move(value)); }
  bool start_object(std::size_t /*elements*/) {
    open_.push_back(place(json::object()));
    return true;
  }
  bool key(json::string_t& name) {
    auto [slot, fresh] = open_.back()->get_ref<json::object_t&>().emplace(std::move(name), nullptr);
    if (!fresh && duplicate_.empty()) duplicate_ = slot->first;
    member_ = &slot->second;
    return true;
  }
  bool end_object() {
    open_.pop_back();
    return true;
  }
  bool start_array(std::size_t /*elements*/) {
    open_.push_back(place(json::array()));
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::parse_error& error) {
    error_ = "invalid JSON at byte " + std::to_string(error.byte);
    return false;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::out_of_range& /*error*/) {
    error_ = "a number is out of range (beyond a double)";
    return false;
  }

  // nlohmann's SAX interface requires this overload; JSON text gives only the two above.
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& error) {
    error_ = std::string("invalid JSON: ") + error.what();
    return false;
  }

  // The first thing wrong with the text, or nothing: an error first, then a repeated key.
  std::optional<JsonError> refusal() const {
    if (!error_.empty()) return JsonError{error_};
    if (!duplicate_.empty()) return JsonError{"duplicate key \"" + duplicate_ + "\""};
    return std::nullopt;
  }

 private:
  bool add(json value) {
    place(std::move(value));
    return true;
  }
  // Puts `value` where the document is at: the root, the next element of the open array, or the
  // member the last key named.
  json* place(json value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    if (open_.back()->is_array()) {
      auto& elements = open_.back()->get_ref<json::array_t&>();
      elements.push_back(std::move(value));
      return &elements.back();
    }
    *member_ = std::move(value);
    return member_;
  }

  json& root_;
  std::vector<json*> open_;  // the arrays and objects not yet closed, outermost first
  json* member_ = nullptr;   // in the innermost open object, the member the last key named
  std::string duplicate_;    // the first key repeated in an object
  std::string error_;
};

bool is_json_whitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// `text` without the JSON whitespace before and after it. Whitespace outside a value changes
// neither the document nor the nesting depth, and the parser reads it a byte at a time: a body
// padded with a megabyte of spaces costs a scan, not a parse.
std::string_view without_surrounding_whitespace(std::string_view text) {
  while (!text.empty() && is_json_whitespace(text.back())) text.remove_suffix(1);
  while (!text.empty() && is_json_whitespace(text.front())) text.remove_prefix(1);
  return text;
}

// Parses `text` into `document`, or says why not.
std::optional<JsonError> parse_into(std::string_view text, nlohmann::json& document) {
  DocumentBuilder builder(document);
  nlohmann::json::sax_parse(text.begin(), text.end(), &builder);
  return builder.refusal();
}

}  // namespace

std::variant<ParsedJson, JsonError> parse_canonical_json(std::string_view text) {
  const std::string_view value = without_surrounding_whitespace(text);
  if (nesting_depth(value, kMaxJsonDepth) > kMaxJsonDepth) {
    return JsonError{"nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
  }
  ParsedJson parsed;
  auto refused = parse_into(value, parsed.document);
  if (refused && value.size() != text.size()) {
    // A refusal names a byte of the text as sent: parse it again whole.
    parsed = ParsedJson{};
    refused = parse_into(text, parsed.document);
  }
  if (refused) return std::move(*refused);
  // nlohmann::json stores objects in a std::map, so the compact text has its keys in sorted order.
  try {
    parsed.canonical = compact_json(parsed.document);
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
