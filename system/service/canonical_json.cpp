#include "system/service/canonical_json.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
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

// Reads the JSON most bodies are written in: objects, arrays, strings of printable ASCII and
// one-character escapes, numbers (integers of at most 18 digits), true, false, null and JSON
// whitespace between them. It builds exactly what nlohmann's parser builds from such a text (an
// integer with a '-' signed, one without unsigned, a fraction or exponent a double) and gives up at
// anything else: a code point's escape (backslash u) or a byte that is not printable ASCII in a
// string, a longer integer, a number beyond a double, a repeated key, anything invalid. nlohmann's
// lexer then reads the text instead, with its own errors and byte positions. It also gives up
// deeper than kMaxJsonDepth, which bounds its recursion.
class PlainReader {
 public:
  using json = nlohmann::json;

  explicit PlainReader(std::string_view text) : at_(text.data()), end_(text.data() + text.size()) {}

  // The whole text as one value, or false (and `out` is then unspecified).
  bool read(json& out) {
    skip_whitespace();
    if (!value(out)) return false;
    skip_whitespace();
    return at_ == end_;
  }

 private:
  bool value(json& out) {
    if (at_ == end_) return false;
    switch (*at_) {
      case '{':
      case '[': {
        // Deeper than the limit is nlohmann's to refuse, after nesting_depth names it.
        if (depth_ == kMaxJsonDepth) return false;
        ++depth_;
        const bool read = container(out);
        --depth_;
        return read;
      }
      case '"': {
        std::string text;
        if (!string(text)) return false;
        out = std::move(text);
        return true;
      }
      case 't':
        return literal("true", out, true);
      case 'f':
        return literal("false", out, false);
      case 'n':
        return literal("null", out, nullptr);
      default:
        return number(out);
    }
  }

  // An object or an array, from its opening bracket: its members or elements, each followed by a
  // ',' or by the bracket that closes it.
  bool container(json& out) {
    const bool object = *at_++ == '{';
    const char close = object ? '}' : ']';
    out = object ? json::object() : json::array();
    skip_whitespace();
    if (at_ != end_ && *at_ == close) {
      ++at_;
      return true;
    }
    for (;;) {
      json* slot = object ? member(out) : &out.get_ref<json::array_t&>().emplace_back();
      if (slot == nullptr || !value(*slot)) return false;
      skip_whitespace();
      if (at_ == end_) return false;
      if (*at_ == close) {
        ++at_;
        return true;
      }
      if (*at_ != ',') return false;
      ++at_;
      skip_whitespace();
    }
  }

  // The place of an object's next member: its key (a new one) and the colon after it.
  json* member(json& object) {
    std::string key;
    if (at_ == end_ || *at_ != '"' || !string(key)) return nullptr;
    skip_whitespace();
    if (at_ == end_ || *at_ != ':') return nullptr;
    ++at_;
    skip_whitespace();
    auto [slot, fresh] = object.get_ref<json::object_t&>().emplace(std::move(key), nullptr);
    return fresh ? &slot->second : nullptr;
  }

  // A string of printable ASCII and the escapes of one character (a backslash and one of
  // " \\ / b f n r t), from its opening quote; not a code point's escape, nor any other byte.
  bool string(std::string& out) {
    const char* run = ++at_;  // the bytes since the last escape, copied as they are
    while (at_ != end_) {
      const char c = *at_;
      if (c == '"') {
        out.append(run, at_);
        ++at_;
        return true;
      }
      if (c == '\\') {
        out.append(run, at_);
        if (++at_ == end_) return false;
        const char decoded = unescaped(*at_);
        if (decoded == 0) return false;
        out.push_back(decoded);
        run = ++at_;
        continue;
      }
      if (c < 0x20 || c > 0x7E) return false;
      ++at_;
    }
    return false;
  }

  // The character a backslash and `escape` stand for, or 0 for a code point's escape ('u') and
  // what is not an escape.
  static char unescaped(char escape) {
    switch (escape) {
      case '"':
      case '\\':
      case '/':
        return escape;
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      default:
        return 0;
    }
  }

  template <typename Value>
  bool literal(std::string_view word, json& out, Value meaning) {
    if (static_cast<std::size_t>(end_ - at_) < word.size() ||
        std::string_view(at_, word.size()) != word) {
      return false;
    }
    at_ += word.size();
    out = meaning;
    return true;
  }

  // '-'? ('0' | [1-9][0-9]*) ('.' [0-9]+)? ([eE] [+-]? [0-9]+)?, as nlohmann reads it: without a
  // fraction or an exponent an integer (of at most 18 digits here, so that it fits), with one a
  // double, rounded as strtod rounds it (from_chars; beyond a double's range it gives up).
  bool number(json& out) {
    const char* start = at_;
    const bool negative = *at_ == '-';
    if (negative) ++at_;
    const char* first = at_;
    std::uint64_t magnitude = 0;
    for (; at_ != end_ && is_digit(*at_); ++at_) {
      magnitude = magnitude * 10 + static_cast<std::uint64_t>(*at_ - '0');
    }
    const auto digits = at_ - first;
    if (digits == 0 || (*first == '0' && digits > 1)) return false;
    bool integral = true;
    if (at_ != end_ && *at_ == '.') {
      ++at_;
      if (!skip_digits()) return false;
      integral = false;
    }
    if (at_ != end_ && (*at_ == 'e' || *at_ == 'E')) {
      ++at_;
      if (at_ != end_ && (*at_ == '+' || *at_ == '-')) ++at_;
      if (!skip_digits()) return false;
      integral = false;
    }
    if (!integral) {
      json::number_float_t value = 0;
      const auto [past, error] = std::from_chars(start, at_, value);
      if (error != std::errc() || past != at_) return false;
      out = value;
    } else if (digits > 18) {
      return false;
    } else if (negative) {
      out = -static_cast<json::number_integer_t>(magnitude);
    } else {
      out = static_cast<json::number_unsigned_t>(magnitude);
    }
    return true;
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  // One digit or more (false when there is none).
  bool skip_digits() {
    const char* first = at_;
    while (at_ != end_ && is_digit(*at_)) ++at_;
    return at_ != first;
  }

  void skip_whitespace() {
    while (at_ != end_ && is_json_whitespace(*at_)) ++at_;
  }

  const char* at_;
  const char* end_;
  std::size_t depth_ = 0;  // the arrays and objects open where the reader is
};

// Parses `text` into `document` with nlohmann's parser, or says why not.
std::optional<JsonError> parse_into(std::string_view text, nlohmann::json& document) {
  DocumentBuilder builder(document);
  nlohmann::json::sax_parse(text.begin(), text.end(), &builder);
  return builder.refusal();
}

}  // namespace

bool read_plain_json(std::string_view text, nlohmann::json& document) {
  return PlainReader(text).read(document);
}

std::variant<ParsedJson, JsonError> parse_canonical_json(std::string_view text) {
  const std::string_view value = without_surrounding_whitespace(text);
  ParsedJson parsed;
  // A plain text within the depth limit needs neither the depth scan nor nlohmann's parser.
  if (!read_plain_json(value, parsed.document)) {
    if (nesting_depth(value, kMaxJsonDepth) > kMaxJsonDepth) {
      return JsonError{"nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
    }
    parsed.document = nlohmann::json();
    auto refused = parse_into(value, parsed.document);
    if (refused && value.size() != text.size()) {
      // A refusal names a byte of the text as sent: parse it again whole.
      parsed = ParsedJson{};
      refused = parse_into(text, parsed.document);
    }
    if (refused) return std::move(*refused);
  }
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
