#include <charconv>
#include <string>

#include <nlohmann/json.hpp>

#include "system/domain/check.hpp"
#include "system/service/json_document.hpp"

namespace onejob {
namespace {

using json = nlohmann::json;

// Whether `c` is printable ASCII (DEL, 0x7F, included: nlohmann writes it as itself when not
// asked for ASCII-only output).
bool printable_ascii(unsigned char c) { return c >= 0x20 && c <= 0x7F; }

// `text` as a JSON string, quotes included. Only printable ASCII and the two escapes it needs
// are written here; a string with any other byte (a control character, UTF-8, an invalid byte)
// is handed whole to nlohmann's serializer, which then writes (or refuses) it as dump() would.
void append_string(std::string& out, std::string_view text, json::error_handler_t invalid) {
  const std::size_t start = out.size();
  out += '"';
  std::size_t run = 0;  // start of the bytes not yet written
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!printable_ascii(static_cast<unsigned char>(c))) {
      out.resize(start);
      out += json(std::string(text)).dump(-1, ' ', false, invalid);
      return;
    }
    if (c != '"' && c != '\\') continue;
    out.append(text.substr(run, i - run));
    out += '\\';
    out += c;
    run = i + 1;
  }
  out.append(text.substr(run));
  out += '"';
}

template <typename Integer>
void append_integer(std::string& out, Integer value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

void append_value(std::string& out, const json& value, json::error_handler_t invalid) {
  switch (value.type()) {
    case json::value_t::null:
      out += "null";
      return;
    case json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case json::value_t::number_integer:
      append_integer(out, value.get<json::number_integer_t>());
      return;
    case json::value_t::number_unsigned:
      append_integer(out, value.get<json::number_unsigned_t>());
      return;
    case json::value_t::string:
      append_string(out, value.get_ref<const json::string_t&>(), invalid);
      return;
    case json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& element : value.get_ref<const json::array_t&>()) {
        if (!first) out += ',';
        first = false;
        append_value(out, element, invalid);
      }
      out += ']';
      return;
    }
    case json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, element] : value.get_ref<const json::object_t&>()) {
        if (!first) out += ',';
        first = false;
        append_string(out, key, invalid);
        out += ':';
        append_value(out, element, invalid);
      }
      out += '}';
      return;
    }
    default:  // floating point (its shortest digits and exponent form), binary, discarded
      out += value.dump(-1, ' ', false, invalid);
      return;
  }
}

}  // namespace

std::string compact_json(const nlohmann::json& value, nlohmann::json::error_handler_t invalid) {
  std::string out;
  append_value(out, value, invalid);
  return out;
}

JsonObjectText::JsonObjectText(json::error_handler_t invalid) : invalid_(invalid) {}

void JsonObjectText::key(std::string_view key) {
  ONEJOB_ASSERT(out_.size() == 1 || last_key_ < key,
                "an object's fields are written in the byte order of their keys, each once");
  last_key_.assign(key);
  if (out_.size() > 1) out_ += ',';
  append_string(out_, key, invalid_);
  out_ += ':';
}

JsonObjectText& JsonObjectText::integer(std::string_view key, std::int64_t value) {
  this->key(key);
  append_integer(out_, value);
  return *this;
}

JsonObjectText& JsonObjectText::boolean(std::string_view key, bool value) {
  this->key(key);
  out_ += value ? "true" : "false";
  return *this;
}

JsonObjectText& JsonObjectText::string(std::string_view key, std::string_view value) {
  this->key(key);
  append_string(out_, value, invalid_);
  return *this;
}

JsonObjectText& JsonObjectText::null(std::string_view key) {
  this->key(key);
  out_ += "null";
  return *this;
}

template <typename Write>
JsonObjectText& JsonObjectText::array(std::string_view key, const std::vector<std::string>& values,
                                      Write write) {
  this->key(key);
  out_ += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out_ += ',';
    write(values[i]);
  }
  out_ += ']';
  return *this;
}

JsonObjectText& JsonObjectText::strings(std::string_view key,
                                        const std::vector<std::string>& values) {
  return array(key, values,
               [this](const std::string& value) { append_string(out_, value, invalid_); });
}

JsonObjectText& JsonObjectText::texts(std::string_view key,
                                      const std::vector<std::string>& json_texts) {
  return array(key, json_texts, [this](const std::string& text) { out_ += text; });
}

JsonObjectText& JsonObjectText::text(std::string_view key, std::string_view json_text) {
  this->key(key);
  out_ += json_text;
  return *this;
}

std::string JsonObjectText::done() {
  out_ += '}';
  return std::move(out_);
}

}  // namespace onejob
