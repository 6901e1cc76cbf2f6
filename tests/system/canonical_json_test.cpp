#include "system/service/canonical_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>
#include <rapidcheck/boost_test.h>

#include "system/domain/check.hpp"
#include "system/domain/text.hpp"
#include "system/service/json_document.hpp"

#include "tests/support/repeated_keys.hpp"

namespace onejob {
namespace {

std::string canonical(std::string_view text) {
  auto result = canonicalize_json(text);
  BOOST_REQUIRE_MESSAGE(std::holds_alternative<CanonicalJson>(result), "rejected: " << text);
  return std::get<CanonicalJson>(result).bytes;
}

std::string rejection(std::string_view text) {
  auto result = canonicalize_json(text);
  BOOST_REQUIRE_MESSAGE(std::holds_alternative<JsonError>(result), "accepted: " << text);
  return std::get<JsonError>(result).message;
}

BOOST_AUTO_TEST_SUITE(canonical_json)

BOOST_AUTO_TEST_CASE(sorts_keys_at_every_depth_and_drops_whitespace) {
  BOOST_TEST(canonical(R"( {"b": {"y":1, "x":[2, {"d":0,"c":0}]}, "a": "s" } )") ==
             R"({"a":"s","b":{"x":[2,{"c":0,"d":0}],"y":1}})");
}

BOOST_AUTO_TEST_CASE(array_order_and_number_kind_are_significant) {
  BOOST_TEST(canonical("[1,2]") != canonical("[2,1]"));
  BOOST_TEST(canonical("1") != canonical("1.0"));
}

BOOST_AUTO_TEST_CASE(rejects_repeated_keys_at_any_depth) {
  BOOST_TEST(rejection(R"({"a":1,"a":1})") == R"(duplicate key "a")");
  BOOST_TEST(rejection(R"({"x":{"k":1,"k":2}})") == R"(duplicate key "k")");
  // The same key in sibling objects is not a repeat.
  BOOST_TEST(canonical(R"([{"k":1},{"k":2}])") == R"([{"k":1},{"k":2}])");
}

BOOST_AUTO_TEST_CASE(rejects_invalid_json_and_invalid_utf8) {
  BOOST_TEST(rejection("{").find("invalid JSON") == 0u);
  BOOST_TEST(rejection("").find("invalid JSON") == 0u);
  BOOST_TEST(rejection("\"\xff\"").empty() == false);
}

// Whitespace around the value (a body padded to the size limit) changes neither what is accepted
// nor the byte an error names.
BOOST_AUTO_TEST_CASE(surrounding_whitespace_changes_neither_the_bytes_nor_the_error) {
  BOOST_TEST(canonical("{\"a\" : [1, 2]} \t\r\n" + std::string(4096, ' ')) == R"({"a":[1,2]})");
  BOOST_TEST(canonical("7\n") == "7");
  BOOST_TEST(rejection(" \t\n ").find("invalid JSON at byte") == 0u);
  BOOST_TEST(rejection("{\"a\":1   ") == "invalid JSON at byte 10");
  BOOST_TEST(rejection("{\"a\":1} x  ") == "invalid JSON at byte 9");
  BOOST_TEST(rejection("{\"a\":1,\"a\":2}   ") == R"(duplicate key "a")");
  // Before the value too: the byte named is the text's, padding included.
  BOOST_TEST(canonical(" \r\n\t" + std::string(4096, ' ') + "[1]") == "[1]");
  BOOST_TEST(rejection("  {\"a\":1") == "invalid JSON at byte 9");
  BOOST_TEST(rejection("\n[1,]  ") == "invalid JSON at byte 5");
  BOOST_TEST(rejection("  {\"a\":1,\"a\":2}  ") == R"(duplicate key "a")");
  // A form feed is not JSON whitespace: not trimmed, and refused.
  BOOST_TEST(rejection("{}\f").find("invalid JSON at byte") == 0u);
}

// The document is built from the parser's events: for any valid text without a repeated key, the
// canonical bytes are exactly what nlohmann's own parser and dump() make of it.
BOOST_AUTO_TEST_CASE(builds_the_same_document_as_nlohmanns_own_parser) {
  for (const std::string text : {"null",
                                 "true",
                                 "-0",
                                 "18446744073709551615",
                                 "-9223372036854775808",
                                 "1e308",
                                 "0.1",
                                 "999999999999999999",
                                 "-999999999999999999",
                                 "9999999999999999999",
                                 "-9999999999999999999",
                                 "2.5e-3",
                                 "1E+2",
                                 "[false,12,-34]",
                                 "\"\\u00e9\\n\"",
                                 "[]",
                                 "{}",
                                 "[[],[[]],{}]",
                                 R"([1,{"a":[{"b":null}],"c":{}},[true,false]])",
                                 R"({"z":{"y":[1,2,{"x":"w"}]},"a":[[[]]],"m":-1.5e-3})"}) {
    BOOST_TEST(canonical(text) == nlohmann::json::parse(text).dump(), text);
  }
}

BOOST_AUTO_TEST_CASE(the_compact_writer_escapes_and_hands_on_as_dump_does) {
  const auto value = nlohmann::json::parse(
      R"({"b":[1,-2,18446744073709551615,2.5,1e300,null,true],"a":"q\"b\\s/\u007f","c":"\u00e9\n"})");
  BOOST_TEST(compact_json(value) ==
             "{\"a\":\"q\\\"b\\\\s/\x7F\",\"b\":[1,-2,18446744073709551615,2.5,1e+300,null,true],"
             "\"c\":\"\xC3\xA9\\n\"}");
  const nlohmann::json invalid = {{"k", "a\xFF"}};
  BOOST_CHECK_THROW(compact_json(invalid), nlohmann::json::type_error);
  BOOST_TEST(compact_json(invalid, nlohmann::json::error_handler_t::replace) ==
             "{\"k\":\"a\xEF\xBF\xBD\"}");
}

// 64 levels are read, 65 refused for their depth, whether the text is plain (read without
// nlohmann's lexer) or not (a code point's escape inside).
BOOST_AUTO_TEST_CASE(the_depth_limit_holds_for_plain_texts_and_others) {
  for (const std::string inner : {"1", "\"\\u0041\""}) {
    for (const std::size_t levels : {std::size_t{64}, std::size_t{65}}) {
      std::string arrays = std::string(levels, '[') + inner + std::string(levels, ']');
      std::string objects;
      for (std::size_t i = 0; i < levels; ++i) objects += "{\"k\":";
      objects += inner + std::string(levels, '}');
      for (const auto& text : {arrays, objects}) {
        if (levels == 64) {
          BOOST_TEST(!canonical(text).empty());
        } else {
          BOOST_TEST(rejection(text) == "nested deeper than 64 levels");
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(an_error_comes_before_a_repeated_key_and_the_first_repeat_is_named) {
  BOOST_TEST(rejection(R"({"a":1,"a":2,"b":1,"b":2})") == R"(duplicate key "a")");
  BOOST_TEST(rejection(R"({"a":{"b":1,"b":2},"a":3})") == R"(duplicate key "b")");
  BOOST_TEST(rejection(R"({"a":1,"a":2,)") == "invalid JSON at byte 14");
  // The first error stops the parse: what follows it is not read for another.
  BOOST_TEST(rejection("[1,]  x") == "invalid JSON at byte 4");
  BOOST_TEST(rejection("[1e400]") == "a number is out of range (beyond a double)");
  BOOST_TEST(rejection(R"({"a":1,"a":-1e999})") == "a number is out of range (beyond a double)");
}

BOOST_AUTO_TEST_SUITE_END()

const std::vector<std::string> kEdits = {"{",    "}",    "[",     "]",       ",",
                                         ":",    "\"",   "\\",    "\\u00e9", "\\ud83d\\ude00",
                                         "\\n",  "\\/",  "\\q",   "0",       "-",
                                         ".",    "e",    "1e400", "01",      "1234567890123456789",
                                         "-0",   " ",    "\t",    "\x01",    "\xC3\xA9",
                                         "\xFF", "true", "nul",   "\"k\":1", std::string(1, '\0')};

BOOST_AUTO_TEST_SUITE(canonical_json_reader)

// What canonicalize_json must make of a text, from nlohmann's own parser: refused when nlohmann
// refuses it, when an object repeats a key or when a string is not UTF-8; otherwise exactly
// nlohmann's document, each number of the kind nlohmann gives it.
RC_BOOST_PROP(documents_and_refusals_are_nlohmanns, ()) {
  const auto keys = *rc::gen::container<std::vector<std::string>>(
      rc::gen::elementOf(std::vector<std::string>{"a", "b", "k", "\xC3\xA9", "a\"b", "", "t\n"}));
  nlohmann::json document = nlohmann::json::object();
  for (const auto& key : keys) {
    document[key] = *rc::gen::elementOf(std::vector<nlohmann::json>{
        0, 1, -7, 123456789012345678, 1234567890123456789, 18446744073709551615u, 2.5, -0.0, 1e300,
        *rc::gen::arbitrary<double>(), "text", "\xC3\xA9\t\"", "q\"\\/\b\f\n\r\t", true, false,
        nullptr, nlohmann::json::array({1, "x", -2}),
        nlohmann::json::object({{"k", 1}, {"j", nlohmann::json::array()}})});
  }
  std::string text = document.dump(*rc::gen::inRange(-1, 3));
  const int edits = *rc::gen::inRange(0, 4);
  for (int i = 0; i < edits; ++i) {
    const auto at =
        static_cast<std::size_t>(*rc::gen::inRange<int>(0, static_cast<int>(text.size()) + 1));
    const std::string piece = *rc::gen::elementOf(kEdits);
    if (*rc::gen::arbitrary<bool>() || at == text.size()) {
      text.insert(at, piece);
    } else {
      text.replace(at, 1, piece);
    }
  }
  // JSON whitespace around the text, which the reader skips without parsing it.
  const auto padding = rc::gen::container<std::string>(rc::gen::elementOf(std::string(" \t\n\r")));
  text = *padding + text + *padding;
  test::RepeatedKeys keys_seen;
  const bool parses = nlohmann::json::sax_parse(text, &keys_seen);
  const auto parsed = parse_canonical_json(text);
  const auto* got = std::get_if<ParsedJson>(&parsed);
  if (!parses) {
    RC_ASSERT(got == nullptr);
    // The refusal names what nlohmann names, at the byte of the text as sent.
    try {
      const auto accepted = nlohmann::json::parse(text);
      RC_ASSERT(accepted.is_discarded());  // unreachable: nlohmann's DOM refuses what its SAX did
    } catch (const nlohmann::json::parse_error& error) {
      RC_ASSERT(std::get<JsonError>(parsed).message ==
                "invalid JSON at byte " + std::to_string(error.byte));
    } catch (const nlohmann::json::out_of_range&) {
      RC_ASSERT(std::get<JsonError>(parsed).message ==
                "a number is out of range (beyond a double)");
    }
    return;
  }
  if (keys_seen.repeated) {
    RC_ASSERT(got == nullptr);
    return;
  }
  const auto want = nlohmann::json::parse(text);
  std::string dumped;
  try {
    dumped = want.dump();
  } catch (const nlohmann::json::type_error&) {
    RC_ASSERT(got == nullptr);  // a string that is not UTF-8
    return;
  }
  RC_ASSERT(got != nullptr);
  RC_ASSERT(got->canonical == dumped);
  RC_ASSERT(test::same_json_document(got->document, want));
}

// A value at most `depth` levels deep: an array or an object of up to three values (a quarter
// of the time, below the last level), else a scalar from `scalar`; object keys from `key`.
nlohmann::json generated_value(int depth, const std::function<nlohmann::json()>& scalar,
                               const std::function<std::string()>& key) {
  switch (depth > 0 ? *rc::gen::inRange(0, 8) : 0) {
    case 6: {
      nlohmann::json array = nlohmann::json::array();
      const int size = *rc::gen::inRange(0, 4);
      for (int i = 0; i < size; ++i) array.push_back(generated_value(depth - 1, scalar, key));
      return array;
    }
    case 7: {
      nlohmann::json object = nlohmann::json::object();
      const int size = *rc::gen::inRange(0, 4);
      for (int i = 0; i < size; ++i) object[key()] = generated_value(depth - 1, scalar, key);
      return object;
    }
    default:
      return scalar();
  }
}

// A string of printable ASCII and the characters with a one-character escape.
std::string plain_string() {
  static const std::string kChars = std::string("a Z~/\"\\{}[]:,0\b\f\n\r\t");
  std::string out;
  const int length = *rc::gen::inRange(0, 6);
  for (int i = 0; i < length; ++i) {
    out += kChars[static_cast<std::size_t>(
        *rc::gen::inRange<int>(0, static_cast<int>(kChars.size())))];
  }
  return out;
}

// A scalar whose dump is plain JSON as read_plain_json reads it: integers under 10^18, normal
// doubles, plain strings.
nlohmann::json plain_scalar() {
  constexpr std::int64_t kBelow = 1'000'000'000'000'000'000;
  switch (*rc::gen::inRange(0, 6)) {
    case 0:
      return *rc::gen::element<nlohmann::json>(nullptr, true, false);
    case 1:
      return *rc::gen::inRange<std::int64_t>(-kBelow + 1, kBelow);
    case 2:
      return static_cast<std::uint64_t>(*rc::gen::inRange<std::int64_t>(0, kBelow));
    case 3: {
      const double value = *rc::gen::arbitrary<double>();
      return std::isnormal(value) ? value : 0.5;
    }
    default:
      return plain_string();
  }
}

// The plain reader reads every plain text itself, and nlohmann's document: what makes the common
// body cheap, and a reader that gave up on them would only lose that.
RC_BOOST_PROP(plain_texts_are_read_without_nlohmanns_parser, ()) {
  const std::string text =
      generated_value(3, plain_scalar, plain_string).dump(*rc::gen::inRange(-1, 3));
  nlohmann::json document;
  RC_ASSERT(read_plain_json(text, document));
  RC_ASSERT(test::same_json_document(document, nlohmann::json::parse(text)));
}

BOOST_AUTO_TEST_CASE(numbers_as_people_write_them_are_plain) {
  for (const std::string text : {"0", "-0", "0.5", "-0.0", "1e5", "1E+2", "2.5e-3", "-7E0",
                                 "[0,10,-10,1e5]", "{\"n\":0.25}"}) {
    nlohmann::json document;
    BOOST_TEST(read_plain_json(text, document), text);
    BOOST_TEST(test::same_json_document(document, nlohmann::json::parse(text)), text);
  }
}

// Empty objects and arrays, alone or nested, are plain too.
BOOST_AUTO_TEST_CASE(empty_containers_are_plain) {
  for (const std::string text : {"{}", "[]", "[[],{}]", "{\"a\":[],\"b\":{}}", " { } ", "[ ]"}) {
    nlohmann::json document;
    BOOST_TEST(read_plain_json(text, document), text);
    BOOST_TEST(test::same_json_document(document, nlohmann::json::parse(text)), text);
  }
}

BOOST_AUTO_TEST_CASE(other_texts_are_left_to_nlohmanns_parser) {
  for (const std::string& text : std::vector<std::string>{
           "\"\\u0041\"", "\"\xC3\xA9\"", "\"a\x01\"", "1234567890123456789", "1e400", "01", "[1,]",
           "{\"a\":1,\"a\":2}", "[1] [2]", "tru", std::string(65, '[') + std::string(65, ']'),
           "\"a\\", "[\"a\\",                // strings cut short after their backslash
           "\"abc", "[\"abc", "{\"a\":\"b",  // and before their closing quote
           "[\"a\t]", "{\"a\":\"b\n}"}) {    // a raw control byte is no closing quote
    nlohmann::json document;
    BOOST_TEST(!read_plain_json(text, document), text);
  }
}

// What dump(-1, ' ', false, invalid) gives for `value`: its text, or the type_error it throws.
std::string dumped_or_error(const nlohmann::json& value, nlohmann::json::error_handler_t invalid,
                            bool ours) {
  try {
    return ours ? compact_json(value, invalid) : value.dump(-1, ' ', false, invalid);
  } catch (const nlohmann::json::type_error& error) {
    return std::string("type_error: ") + error.what();
  }
}

// Pieces of strings: the first seven printable ASCII (with the two characters escaped in it and
// DEL), then control characters, UTF-8 and bytes that are not UTF-8.
const std::vector<std::string> kStringPieces = {"a",        "key",
                                                " ",        "\"",
                                                "\\",       "\x7F",
                                                "/",        "\n",
                                                "\t",       "\x01",
                                                "\x1F",     std::string(1, '\0'),
                                                "\xC3\xA9", "\xF0\x9F\x98\x80",
                                                "\xFF",     "\xC3",
                                                "\xE2\x82", "\xED\xA0\x80"};

// Half the strings printable ASCII only (what the writer writes itself), half of any pieces.
std::string arbitrary_string() {
  const int kinds = *rc::gen::arbitrary<bool>() ? 7 : static_cast<int>(kStringPieces.size());
  std::string text;
  const int pieces = *rc::gen::inRange(0, 7);
  for (int i = 0; i < pieces; ++i) {
    text += kStringPieces[static_cast<std::size_t>(*rc::gen::inRange(0, kinds))];
  }
  return text;
}

nlohmann::json arbitrary_scalar() {
  switch (*rc::gen::inRange(0, 6)) {
    case 0:
      return nullptr;
    case 1:
      return *rc::gen::arbitrary<bool>();
    case 2:
      return *rc::gen::arbitrary<std::int64_t>();
    case 3:
      return *rc::gen::arbitrary<std::uint64_t>();
    case 4:
      return *rc::gen::elementOf(std::vector<double>{0.0, -0.0, 2.5, 1e300, -1e-300, 0.1, 123.0});
    default:
      return arbitrary_string();
  }
}

nlohmann::json arbitrary_value(int depth) {
  return generated_value(depth, arbitrary_scalar, arbitrary_string);
}

// The compact writer's text is nlohmann's dump, byte for byte, under either handler, and where
// dump refuses a string that is not UTF-8 it refuses it with the same error.
RC_BOOST_PROP(the_compact_writer_writes_what_dump_writes, ()) {
  const auto value = arbitrary_value(3);
  for (const auto invalid :
       {nlohmann::json::error_handler_t::strict, nlohmann::json::error_handler_t::replace,
        nlohmann::json::error_handler_t::ignore}) {
    RC_ASSERT(dumped_or_error(value, invalid, true) == dumped_or_error(value, invalid, false));
  }
}

// An object written field by field (JsonObjectText) is the same object's document through
// compact_json, byte for byte, under either handler; where compact_json refuses a string that is
// not UTF-8, the writer refuses it with the same error.
RC_BOOST_PROP(an_object_written_field_by_field_is_its_documents_compact_text, ()) {
  std::vector<std::string> keys;
  const int count = *rc::gen::inRange(0, 6);
  for (int i = 0; i < count; ++i) keys.push_back(arbitrary_string());
  std::ranges::sort(keys);
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  // Each field's kind and value, drawn once and written both ways under each handler.
  struct Field {
    int kind;
    std::int64_t number;
    std::string text;
    std::vector<std::string> texts;
  };
  std::vector<Field> fields;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    Field field{*rc::gen::inRange(0, 6), *rc::gen::arbitrary<std::int64_t>(), arbitrary_string(),
                *rc::gen::container<std::vector<std::string>>(rc::gen::exec(arbitrary_string))};
    if (field.kind == 5) {
      field.text =
          arbitrary_value(2).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    fields.push_back(std::move(field));
  }
  for (const auto invalid :
       {nlohmann::json::error_handler_t::strict, nlohmann::json::error_handler_t::replace,
        nlohmann::json::error_handler_t::ignore}) {
    nlohmann::json document = nlohmann::json::object();
    std::string written;
    try {
      JsonObjectText writer(invalid);
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const Field& field = fields[i];
        switch (field.kind) {
          case 0:
            writer.integer(keys[i], field.number);
            break;
          case 1:
            writer.boolean(keys[i], field.number % 2 == 0);
            break;
          case 2:
            writer.null(keys[i]);
            break;
          case 3:
            writer.string(keys[i], field.text);
            break;
          case 4:
            writer.strings(keys[i], field.texts);
            break;
          default:
            writer.text(keys[i], field.text);
        }
      }
      written = writer.done();
    } catch (const nlohmann::json::type_error& error) {
      written = std::string("type_error: ") + error.what();
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const Field& field = fields[i];
      auto& value = document[keys[i]];
      switch (field.kind) {
        case 0:
          value = field.number;
          break;
        case 1:
          value = field.number % 2 == 0;
          break;
        case 2:
          value = nullptr;
          break;
        case 3:
          value = field.text;
          break;
        case 4:
          value = field.texts;
          break;
        default:
          value = nlohmann::json::parse(field.text);
      }
    }
    RC_ASSERT(written == dumped_or_error(document, invalid, false));
  }
}

BOOST_AUTO_TEST_CASE(an_object_writer_refuses_keys_out_of_order_or_twice) {
  JsonObjectText unordered;
  unordered.integer("b", 1);
  BOOST_CHECK_THROW(unordered.integer("a", 2), AssertionFailure);
  JsonObjectText twice;
  twice.string("a", "x");
  BOOST_CHECK_THROW(twice.null("a"), AssertionFailure);
  // Byte order, as nlohmann's object keeps its keys: a byte above 0x7F after every ASCII one.
  JsonObjectText bytes;
  bytes.integer("z", 1).integer("\xC3\xA9", 2);
  BOOST_TEST(bytes.done() == "{\"z\":1,\"\xC3\xA9\":2}");
  BOOST_TEST(JsonObjectText().done() == "{}");
}

BOOST_AUTO_TEST_SUITE_END()

// ---- storable text (system/domain/text.hpp) ----

const std::string kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD
using namespace std::string_literals;

BOOST_AUTO_TEST_SUITE(storable_values)

BOOST_AUTO_TEST_CASE(storable_is_utf8_without_nul) {
  BOOST_TEST(storable(""));
  BOOST_TEST(storable("plain ascii ~"));
  BOOST_TEST(storable("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));  // 2, 3 and 4 bytes
  BOOST_TEST(!storable("a\0b"s));
  BOOST_TEST(!storable("caf\xE9"));           // Latin-1
  BOOST_TEST(!storable("\xE2\x82"));          // cut short
  BOOST_TEST(!storable("\xC0\xAF"));          // overlong '/'
  BOOST_TEST(!storable("\xE0\x80\xAF"));      // overlong, three bytes
  BOOST_TEST(!storable("\xED\xA0\x80"));      // a surrogate
  BOOST_TEST(!storable("\xF4\x90\x80\x80"));  // past U+10FFFF
  BOOST_TEST(!storable("\x80"));              // a lone continuation byte
  BOOST_TEST(storable("\xF4\x8F\xBF\xBF"));   // U+10FFFF itself
  // Long ASCII is read eight bytes at a time: a bad byte anywhere in a word, or after it.
  const std::string ascii(40, 'a');
  BOOST_TEST(storable(ascii));
  for (const std::size_t at : {0u, 7u, 8u, 15u, 16u, 39u}) {
    for (const char bad : {'\0', '\xFF'}) {
      std::string text = ascii;
      text[at] = bad;
      BOOST_TEST(!storable(text), "a bad byte at " << at);
    }
  }
}

BOOST_AUTO_TEST_CASE(storable_text_replaces_each_bad_byte_and_keeps_the_rest) {
  BOOST_TEST(storable_text("caf\xC3\xA9") == "caf\xC3\xA9");
  BOOST_TEST(storable_text("a\0b"s) == "a" + kReplacementCharacter + "b");
  BOOST_TEST(storable_text("\xE2\x82\xFF!") ==
             kReplacementCharacter + kReplacementCharacter + kReplacementCharacter + "!");
  BOOST_TEST(storable_text("x\xE2\x82") == "x" + kReplacementCharacter + kReplacementCharacter);
  for (const std::string& hostile : {"a\0b"s, "\xE2\x82\xFF"s, "\xED\xA0\x80"s, "\xC0\xAF"s}) {
    const std::string made = storable_text(hostile);
    BOOST_TEST(storable(made));
    BOOST_TEST(storable_text(made) == made);  // already storable: unchanged
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
