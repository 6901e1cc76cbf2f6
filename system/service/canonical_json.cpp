#include "system/service/canonical_json.hpp"

#include <algorithm>
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

// The common body parsed without nlohmann's lexer: objects, arrays, strings of printable ASCII with
// the one-letter escapes, integers of at most 18 digits, literals and whitespace. It builds the
// document DocumentBuilder builds from the same text, or gives up (false) at the first thing
// outside that subset (a \u escape, a byte past ASCII, a fraction or exponent, a long integer, a
// repeated key, any error), which the full parser then reads from the start: so every refusal and
// its message, and every rarer document, come from one place.
class CommonBodyReader {
 public:
  using json = nlohmann::json;

  explicit CommonBodyReader(std::string_view text) : text_(text) {}

  bool read(json& root) {
    skip_space();
    if (!value(root)) return false;
    skip_space();
    return at_ == text_.size();
  }

 private:
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' || text_[at_] == '\t')) {
      ++at_;
    }
  }

  // Nesting is bounded by nesting_depth before this runs: recursion is shallow.
  bool value(json& out) {
    switch (peek()) {
      case '{':
        return object(out);
      case '[':
        return array(out);
      case '"': {
        std::string text;
        if (!string(text)) return false;
        out = std::move(text);
        return true;
      }
      case 't':
        return literal("true", out, json(true));
      case 'f':
        return literal("false", out, json(false));
      case 'n':
        return literal("null", out, json(nullptr));
      default:
        return integer(out);
    }
  }

  bool object(json& out) {
    ++at_;
    out = json::object();
    auto& members = out.get_ref<json::object_t&>();
    skip_space();
    if (peek() == '}') {
      ++at_;
      return true;
    }
    for (;;) {
      skip_space();
      std::string key;
      if (peek() != '"' || !string(key)) return false;
      skip_space();
      if (peek() != ':') return false;
      ++at_;
      skip_space();
      auto [slot, fresh] = members.emplace(std::move(key), nullptr);
      if (!fresh || !value(slot->second)) return false;
      skip_space();
      const char next = peek();
      ++at_;
      if (next == '}') return true;
      if (next != ',') return false;
    }
  }

  bool array(json& out) {
    ++at_;
    out = json::array();
    auto& elements = out.get_ref<json::array_t&>();
    skip_space();
    if (peek() == ']') {
      ++at_;
      return true;
    }
    for (;;) {
      skip_space();
      if (!value(elements.emplace_back())) return false;
      skip_space();
      const char next = peek();
      ++at_;
      if (next == ']') return true;
      if (next != ',') return false;
    }
  }

  bool string(std::string& out) {
    const std::size_t start = ++at_;
    std::size_t run = start;  // the bytes from here to at_ are not yet in `out`
    for (;; ++at_) {
      if (at_ >= text_.size()) return false;
      const auto c = static_cast<unsigned char>(text_[at_]);
      if (c == '"') {
        out.append(text_.substr(run, at_ - run));
        ++at_;
        return true;
      }
      if (c < 0x20 || c >= 0x80) return false;
      if (c != '\\') continue;
      out.append(text_.substr(run, at_ - run));
      if (++at_ >= text_.size()) return false;
      switch (text_[at_]) {
        case '"':
        case '\\':
        case '/':
          out += text_[at_];
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        default:
          return false;  // \u and anything else
      }
      run = at_ + 1;
    }
  }

  bool literal(std::string_view word, json& out, json value) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    out = std::move(value);
    return true;
  }

  // -?(0|[1-9][0-9]*) with at most 18 digits, as nlohmann types it: negative as a signed integer,
  // otherwise unsigned.
  bool integer(json& out) {
    const bool negative = peek() == '-';
    if (negative) ++at_;
    const std::size_t first = at_;
    std::int64_t value = 0;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
      value = value * 10 + (text_[at_] - '0');
      ++at_;
      if (at_ - first > 18) return false;
    }
    const std::size_t digits = at_ - first;
    if (digits == 0 || (digits > 1 && text_[first] == '0')) return false;
    const char next = peek();
    if (next == '.' || next == 'e' || next == 'E') return false;
    if (negative) {
      out = static_cast<json::number_integer_t>(-value);
    } else {
      out = static_cast<json::number_unsigned_t>(value);
    }
    return true;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

}  // namespace

std::variant<ParsedJson, JsonError> parse_canonical_json(std::string_view text) {
  if (nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return JsonError{"nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
  }
  ParsedJson parsed;
  if (!CommonBodyReader(text).read(parsed.document)) {
    parsed.document = nullptr;
    DocumentBuilder builder(parsed.document);
    nlohmann::json::sax_parse(text.begin(), text.end(), &builder);
    if (auto refused = builder.refusal()) return std::move(*refused);
  }
  // nlohmann::json stores objects in a std::map, so dump() writes keys in sorted order.
  try {
    parsed.canonical = parsed.document.dump();
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
