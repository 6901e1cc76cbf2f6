// The checkers' JSON reading against nlohmann's parser, the reader it stands in for: the scan's
// verdict and parse_json's document on fixed texts at every edge of the grammar and on generated
// ones (fragments of JSON, valid documents with bytes edited). CI runs a few hundred generated
// cases; long runs: RC_PARAMS="max_success=200000" onejob_tests --run_test=json_text_scan.
#include "harness/check/json_text.hpp"

#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>
#include <rapidcheck/boost_test.h>

#include "harness/check/json_value.hpp"

#include "tests/support/repeated_keys.hpp"

namespace onejob::check {
namespace {

struct Verdict {
  bool valid;
  bool repeated;
  friend bool operator==(const Verdict&, const Verdict&) = default;
};

Verdict reference(const std::string& text) {
  test::RepeatedKeys reader;
  const bool valid = nlohmann::json::sax_parse(text, &reader);
  return {valid, valid && reader.repeated};
}

Verdict scanned(const std::string& text) {
  const JsonTextScan scan = scan_json_text(text);
  return {scan.valid, scan.valid && scan.repeated_key};
}

std::string shown(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

const std::vector<std::string> kFragments = {"{",
                                             "}",
                                             "[",
                                             "]",
                                             ",",
                                             ":",
                                             "\"",
                                             "\\",
                                             "u",
                                             "\\u",
                                             "D800",
                                             "dbff",
                                             "DC00",
                                             "0041",
                                             "00e9",
                                             "\\n",
                                             "\\/",
                                             "\\x",
                                             "a",
                                             "k",
                                             "\"k\"",
                                             "\"k\":",
                                             "\"\\u006b\"",
                                             "0",
                                             "1",
                                             "-",
                                             "-0",
                                             ".",
                                             "5",
                                             "e",
                                             "E",
                                             "+",
                                             "1e400",
                                             "-1e400",
                                             "1e-400",
                                             "18446744073709551616",
                                             "123456789012345678901234567890",
                                             "true",
                                             "tru",
                                             "false",
                                             "null",
                                             "nul",
                                             " ",
                                             "\n",
                                             "\t",
                                             "\r",
                                             "\x01",
                                             std::string(1, '\0'),
                                             "\x7f",
                                             "\xC3\xA9",
                                             "\xC3",
                                             "\xC0\x80",
                                             "\xE0\x80\x80",
                                             "\xE2\x82\xAC",
                                             "\xED\xA0\x80",
                                             "\xED\x9F\xBF",
                                             "\xF0\x9F\x98\x80",
                                             "\xF4\x90\x80\x80",
                                             "\xF5",
                                             "\xFF",
                                             "\xEF\xBB\xBF",
                                             "\xEF\xBB"};

bool parses_as_nlohmann(const std::string& text) {
  return test::same_json_document(parse_json(text), nlohmann::json::parse(text, nullptr, false));
}

BOOST_AUTO_TEST_SUITE(json_text_scan)

BOOST_AUTO_TEST_CASE(edges_of_the_grammar_read_as_nlohmann_reads_them) {
  std::vector<std::string> texts = {"",
                                    " ",
                                    "{}",
                                    "[]",
                                    " [ ] ",
                                    "{\"a\":1}",
                                    "{\"a\":1,\"a\":2}",
                                    "{\"a\":1,\"\\u0061\":2}",
                                    "{\"a\":{\"b\":1},\"b\":2}",
                                    "[{\"a\":1},{\"a\":1}]",
                                    "{\"a\":[{\"x\":1,\"x\":1}]}",
                                    "{\"a\" : 1 , \"b\" : [ true , false , null ] }",
                                    "{,}",
                                    "{\"a\":1,}",
                                    "[1,]",
                                    "[,1]",
                                    "{\"a\"}",
                                    "{\"a\":}",
                                    "{1:2}",
                                    "[1 2]",
                                    "01",
                                    "-",
                                    "-01",
                                    "1.",
                                    ".5",
                                    "1e",
                                    "1e+",
                                    "1E-2",
                                    "-0.0e0",
                                    "1e400",
                                    "-1e400",
                                    "1e-400",
                                    "18446744073709551615",
                                    "18446744073709551616",
                                    "-9223372036854775809",
                                    "-0.0",
                                    "1.0",
                                    " 7 ",
                                    "nulls",
                                    "{\"a\" 1}",
                                    "[1,-1,{\"a\":2}]",
                                    "{\"a\":{\"b\":1},\"a\":3}",
                                    "0.1",
                                    "1E5",
                                    "1e+5",
                                    "2.5e-3",
                                    "1.",
                                    "1.e5",
                                    ".5",
                                    "1e",
                                    "1e400",
                                    "1e-400",
                                    "4.9e-324",
                                    "\"a\\\"b\\n\\/\"",
                                    "\"\\x\"",
                                    "\"\\",
                                    "\"\\uD83D\\uDE00\"",
                                    "\"\\uD83D\"",
                                    "\"\\uDE00\"",
                                    "\"\\uD83Dx\"",
                                    "\"\\uD83D\\u0041\"",
                                    "\"\\u00\"",
                                    "\"\\uZZZZ\"",
                                    "\"\\a\"",
                                    "\"a\nb\"",
                                    "\"a\x7f\"",
                                    "\"\xC3\xA9\"",
                                    "\"\xC3\"",
                                    "\"\xC0\xAF\"",
                                    "\"\xED\xA0\x80\"",
                                    "\"\xF4\x8F\xBF\xBF\"",
                                    "\"\xF4\x90\x80\x80\"",
                                    "\xEF\xBB\xBF{}",
                                    "\xEF\xBB{}",
                                    " \xEF\xBB\xBF{}",
                                    "\xEF\xBB\xBF",
                                    "true",
                                    "true false",
                                    "nulll",
                                    "[\"unterminated",
                                    std::string("\"a\0b\"", 5),
                                    std::string("[1]\0", 4),
                                    "{\"\":1,\"\":2}"};
  // Each lead byte's bounds on the byte after it, just inside and just outside, and cut short.
  for (const std::string sequence : {"\xC1\xBF",
                                     "\xC2\x80",
                                     "\xDF\xBF",
                                     "\xDF\xC0",
                                     "\xE0\x9F\xBF",
                                     "\xE0\xA0\x80",
                                     "\xE1\x80\x80",
                                     "\xEC\xBF\xBF",
                                     "\xED\x9F\xBF",
                                     "\xED\xA0\x80",
                                     "\xEE\x80\x80",
                                     "\xEF\xBF\xBF",
                                     "\xEF\xBF\xC0",
                                     "\xF0\x8F\xBF\xBF",
                                     "\xF0\x90\x80\x80",
                                     "\xF3\xBF\xBF\xBF",
                                     "\xF4\x8F\xBF\xBF",
                                     "\xF4\x90\x80\x80",
                                     "\xF5\x80\x80\x80",
                                     "\xE1\x80",
                                     "\xF1\x80\x80",
                                     "\x80",
                                     "\xBF"}) {
    texts.push_back("\"" + sequence + "\"");
    texts.push_back("[\"" + sequence);
  }
  for (const auto& text : texts) {
    BOOST_TEST_INFO("text: " << shown(text));
    const Verdict want = reference(text);
    const Verdict got = scanned(text);
    BOOST_TEST(got.valid == want.valid);
    BOOST_TEST(got.repeated == want.repeated);
    BOOST_TEST(parses_as_nlohmann(text));
  }
}

BOOST_AUTO_TEST_CASE(a_deep_nest_is_read_without_recursion) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  BOOST_TEST(scan_json_text(deep).valid);
  BOOST_TEST(!scan_json_text(deep.substr(1)).valid);
}

std::string fragments() {
  const auto pieces = *rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(kFragments));
  std::string text;
  for (const auto& piece : pieces) text += piece;
  return text;
}

// A valid document from generated parts, then a few bytes replaced, inserted or deleted. Half the
// documents hold only what parse_json reads itself (printable ASCII with one-character escapes,
// numbers, literals).
std::string edited_document() {
  const bool plain = *rc::gen::arbitrary<bool>();
  std::vector<std::string> key_set = {"a", "b", "k", "", "a\"b"};
  std::vector<nlohmann::json> value_set = {
      1,
      -7,
      0,
      123456789012345678,
      2.5,
      -0.0,
      1e300,
      *rc::gen::arbitrary<double>(),
      "text",
      "t\\/\b\f\n\r\t\"",
      true,
      false,
      nullptr,
      nlohmann::json::array({1, "x"}),
      nlohmann::json::object({{"k", 1}, {"j", nlohmann::json::array()}})};
  if (!plain) {
    key_set.insert(key_set.end(), {"\xC3\xA9", "\x01"});
    value_set.insert(value_set.end(), {1234567890123456789, "\xC3\xA9\t", "\x1F"});
  }
  const auto keys = *rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(key_set));
  nlohmann::json document = nlohmann::json::object();
  for (const auto& key : keys) document[key] = *rc::gen::elementOf(value_set);
  std::string text = document.dump(*rc::gen::inRange(-1, 2));
  const int edits = *rc::gen::inRange(0, 4);
  for (int i = 0; i < edits && !text.empty(); ++i) {
    const auto at =
        static_cast<std::size_t>(*rc::gen::inRange<int>(0, static_cast<int>(text.size())));
    const std::string piece = *rc::gen::elementOf(kFragments);
    switch (*rc::gen::inRange(0, 3)) {
      case 0:
        text.insert(at, piece);
        break;
      case 1:
        text.erase(at, 1);
        break;
      default:
        text.replace(at, 1, piece);
        break;
    }
  }
  return text;
}

RC_BOOST_PROP(fragments_read_as_nlohmann_reads_them, ()) {
  const std::string text = fragments();
  RC_ASSERT(scanned(text) == reference(text));
}

RC_BOOST_PROP(edited_documents_read_as_nlohmann_reads_them, ()) {
  const std::string text = edited_document();
  RC_ASSERT(scanned(text) == reference(text));
}

// parse_json against nlohmann::json::parse(text, nullptr, false), the parse it stands in for (the
// edges above are parsed too).
BOOST_AUTO_TEST_CASE(numbers_keep_nlohmanns_kinds_and_a_repeated_key_its_last_value) {
  BOOST_TEST(parse_json("5").is_number_unsigned());
  BOOST_TEST(parse_json("-5").is_number_integer());
  BOOST_TEST(!parse_json("-5").is_number_unsigned());
  BOOST_TEST(parse_json("{\"a\":1,\"a\":2}")["a"] == 2);
  BOOST_TEST(parse_json("[1,]").is_discarded());
}

BOOST_AUTO_TEST_CASE(a_deep_nest_is_parsed_without_recursion) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  BOOST_TEST(!parse_json(deep).is_discarded());
  BOOST_TEST(parse_json(deep.substr(1)).is_discarded());
}

RC_BOOST_PROP(fragments_parse_as_nlohmann_parses_them, ()) {
  RC_ASSERT(parses_as_nlohmann(fragments()));
}

RC_BOOST_PROP(edited_documents_parse_as_nlohmann_parses_them, ()) {
  RC_ASSERT(parses_as_nlohmann(edited_document()));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
