// Token table: SHA-256 against published and sha256sum vectors, the token file format with the
// position of every problem, and the Authorization header forms authenticate accepts.
#include "system/service/tokens.hpp"

#include <string>
#include <variant>

#include <boost/test/unit_test.hpp>

namespace onejob {
namespace {

// sha256sum of "secret-token" and of "ops-token".
const std::string kAliceHash = "930bbdc51b6aed5c2a5678fd6e28dee7a05e8a4b643cfc0b4427c3efb86c0d94";
const std::string kOpsHash = "d9310c002af91822beb0b3487d8b04f85bf6bf1f8a5496bff7d35fc7c5a29def";
// "sha256:" is columns 1-7, the hex 8-71, then a space: a principal starts at column 73.
const std::string kAliceEntry = "sha256:" + kAliceHash + " alice";

TokenTable table_of(std::string_view text) {
  auto result = TokenTable::parse(text);
  // Boost.Test builds the message whether or not the check fails.
  const auto* problem = std::get_if<TokenTable::Problem>(&result);
  const std::string why = problem == nullptr
                              ? ""
                              : std::to_string(problem->line) + ":" +
                                    std::to_string(problem->column) + ": " + problem->message;
  BOOST_REQUIRE_MESSAGE(problem == nullptr, "rejected at " << why);
  return std::get<TokenTable>(std::move(result));
}

TokenTable::Problem problem_of(std::string_view text) {
  auto result = TokenTable::parse(text);
  BOOST_REQUIRE_MESSAGE(std::holds_alternative<TokenTable::Problem>(result), "accepted");
  return std::get<TokenTable::Problem>(std::move(result));
}

// The principal's name, or "(refused)".
std::string name_for(const TokenTable& table, std::string_view authorization) {
  const auto principal = table.authenticate(authorization);
  return principal ? principal->name : "(refused)";
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

BOOST_AUTO_TEST_SUITE(tokens)

// ---- sha256_hex ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(sha256_matches_the_fips_180_vectors) {
  BOOST_TEST(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  BOOST_TEST(sha256_hex("abc") ==
             "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  BOOST_TEST(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  BOOST_TEST(sha256_hex(std::string(1'000'000, 'a')) ==
             "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Padding needs a second block from 56 bytes past a block boundary; these straddle both edges.
// Expected values are sha256sum of that many 'a's.
BOOST_AUTO_TEST_CASE(sha256_pads_correctly_around_the_block_boundary) {
  const std::pair<std::size_t, std::string_view> vectors[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
  };
  for (const auto& [length, expected] : vectors) {
    BOOST_TEST_CONTEXT("length " << length) {
      BOOST_TEST(sha256_hex(std::string(length, 'a')) == expected);
    }
  }
}

// ---- parse -----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(parse_accepts_comments_blank_lines_crlf_tabs_and_operator) {
  const std::string text =
      "# tokens for the reference service\r\n"
      "\r\n"
      "   \t\n"
      "  # indented comment\n"
      "sha256:" +
      kAliceHash +
      " \t alice@example.com  \r\n"
      "\tsha256:" +
      kOpsHash + "\tops.bot_1-x operator\t";
  const TokenTable table = table_of(text);
  BOOST_TEST(table.size() == 2u);
  const auto alice = table.authenticate("Bearer secret-token");
  BOOST_REQUIRE(alice.has_value());
  BOOST_TEST(alice->name == "alice@example.com");
  BOOST_TEST(!alice->is_operator);
  const auto ops = table.authenticate("Bearer ops-token");
  BOOST_REQUIRE(ops.has_value());
  BOOST_TEST(ops->name == "ops.bot_1-x");
  BOOST_TEST(ops->is_operator);
}

BOOST_AUTO_TEST_CASE(parse_accepts_a_file_without_entries) {
  BOOST_TEST(table_of("").size() == 0u);
  BOOST_TEST(table_of("# nobody yet\n\n").size() == 0u);
}

BOOST_AUTO_TEST_CASE(parse_rejects_a_plain_text_token_without_echoing_it) {
  const auto problem = problem_of("# ok\n  secret-token alice\n");
  BOOST_TEST(problem.line == 2);
  BOOST_TEST(problem.column == 3);
  BOOST_TEST(contains(problem.message, "stored hashed"));
  BOOST_TEST(contains(problem.message, "printf %s TOKEN | sha256sum"));
  BOOST_TEST(!contains(problem.message, "secret-token"));
}

BOOST_AUTO_TEST_CASE(parse_rejects_a_hash_of_the_wrong_length) {
  const auto short_hash = problem_of("sha256:abc alice");
  BOOST_TEST(short_hash.line == 1);
  BOOST_TEST(short_hash.column == 8);
  BOOST_TEST(contains(short_hash.message, "3 hex digits, expected 64"));
  const auto long_hash = problem_of(kAliceEntry + "\nsha256:" + kOpsHash + "0 bob");
  BOOST_TEST(long_hash.line == 2);
  BOOST_TEST(long_hash.column == 8);
  BOOST_TEST(contains(long_hash.message, "65 hex digits, expected 64"));
  const auto no_hash = problem_of("sha256: alice");
  BOOST_TEST(no_hash.column == 8);
  BOOST_TEST(contains(no_hash.message, "0 hex digits"));
}

BOOST_AUTO_TEST_CASE(parse_rejects_a_hash_with_a_non_hex_character_at_that_character) {
  std::string upper = kAliceHash;
  upper[10] = 'B';
  const auto problem = problem_of("sha256:" + upper + " alice");
  BOOST_TEST(problem.line == 1);
  BOOST_TEST(problem.column == 18);
  BOOST_TEST(contains(problem.message, "\"B\""));
  BOOST_TEST(contains(problem.message, "lowercase hex"));
}

BOOST_AUTO_TEST_CASE(parse_rejects_the_hash_of_the_empty_string) {
  const auto problem =
      problem_of("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 x");
  BOOST_TEST(problem.column == 8);
  BOOST_TEST(contains(problem.message, "empty string"));
}

BOOST_AUTO_TEST_CASE(parse_rejects_a_missing_principal_just_past_the_hash) {
  const auto problem = problem_of("\n\nsha256:" + kAliceHash + " \t\r\n");
  BOOST_TEST(problem.line == 3);
  BOOST_TEST(problem.column == 72);
  BOOST_TEST(contains(problem.message, "missing principal"));
}

BOOST_AUTO_TEST_CASE(parse_rejects_a_principal_with_a_bad_character_at_that_character) {
  const auto problem = problem_of("sha256:" + kAliceHash + " ali!ce");
  BOOST_TEST(problem.line == 1);
  BOOST_TEST(problem.column == 76);
  BOOST_TEST(contains(problem.message, "\"!\""));
  BOOST_TEST(contains(problem.message, ". _ @ -"));
  const auto control = problem_of("sha256:" + kAliceHash + " al\x01ice");
  BOOST_TEST(control.column == 75);
  BOOST_TEST(contains(control.message, "\"\\x01\""));
}

BOOST_AUTO_TEST_CASE(parse_rejects_a_principal_longer_than_128) {
  BOOST_TEST(table_of("sha256:" + kAliceHash + " " + std::string(128, 'p')).size() == 1u);
  const auto problem = problem_of("sha256:" + kAliceHash + " " + std::string(129, 'p'));
  BOOST_TEST(problem.column == 73);
  BOOST_TEST(contains(problem.message, "129 characters long, expected 1 to 128"));
}

BOOST_AUTO_TEST_CASE(parse_rejects_an_unknown_flag) {
  const auto problem = problem_of(kAliceEntry + " admin");
  BOOST_TEST(problem.line == 1);
  BOOST_TEST(problem.column == 79);
  BOOST_TEST(contains(problem.message, "unknown flag \"admin\""));
  BOOST_TEST(contains(problem.message, "`operator`"));
  BOOST_TEST(problem_of(kAliceEntry + " Operator").column == 79);
}

BOOST_AUTO_TEST_CASE(parse_rejects_extra_fields) {
  const auto problem = problem_of(kAliceEntry + " operator # note");
  BOOST_TEST(problem.line == 1);
  BOOST_TEST(problem.column == 88);
  BOOST_TEST(contains(problem.message, "unexpected field \"#\""));
}

BOOST_AUTO_TEST_CASE(parse_rejects_the_same_hash_twice_naming_the_first_line) {
  const auto problem =
      problem_of(kAliceEntry + "\n# rotated\n\tsha256:" + kAliceHash + " bob operator\n");
  BOOST_TEST(problem.line == 3);
  BOOST_TEST(problem.column == 2);
  BOOST_TEST(contains(problem.message, "already on line 1"));
}

BOOST_AUTO_TEST_CASE(parse_rejects_a_nul_byte_at_its_column) {
  using namespace std::string_literals;
  const auto problem = problem_of(kAliceEntry + "\n# ok\nab\0c\n"s);
  BOOST_TEST(problem.line == 3);
  BOOST_TEST(problem.column == 3);
  BOOST_TEST(contains(problem.message, "NUL"));
}

BOOST_AUTO_TEST_CASE(parse_rejects_a_line_over_1024_bytes_but_not_its_crlf) {
  // Built by appending: g++ 12 warns (-Wrestrict) about "literal" + std::string temporaries.
  std::string longest(1023, 'c');
  longest.insert(longest.begin(), '#');
  BOOST_TEST(table_of(longest + "\r\n").size() == 0u);
  std::string over(1024, 'c');
  over.insert(0, "\n#");
  const auto problem = problem_of(over + "\n");
  BOOST_TEST(problem.line == 2);
  BOOST_TEST(problem.column == 1025);
  BOOST_TEST(contains(problem.message, "1025 bytes long, expected at most 1024"));
}

BOOST_AUTO_TEST_CASE(parse_quotes_at_most_40_bytes_of_a_field) {
  const auto problem = problem_of(kAliceEntry + " " + std::string(500, 'z'));
  BOOST_TEST(contains(problem.message, "\"" + std::string(40, 'z') + "...\""));
  BOOST_TEST(!contains(problem.message, std::string(41, 'z')));
}

// ---- authenticate ----------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(authenticate_accepts_only_a_well_formed_bearer_with_a_known_token) {
  const TokenTable table = table_of(kAliceEntry + "\nsha256:" + kOpsHash + " ops operator\n");
  BOOST_TEST(name_for(table, "Bearer secret-token") == "alice");
  BOOST_TEST(name_for(table, "bearer secret-token") == "alice");
  BOOST_TEST(name_for(table, "BEARER    secret-token") == "alice");
  BOOST_TEST(!table.authenticate("Bearer secret-token").value_or(Principal{"", true}).is_operator);
  BOOST_TEST(name_for(table, "Bearer ops-token") == "ops");
  BOOST_TEST(table.authenticate("Bearer ops-token").value_or(Principal{}).is_operator);

  const std::string refused[] = {
      "Bearer wrong-token",
      "secret-token",
      "Basic c2VjcmV0LXRva2Vu",
      "Bearer",
      "Bearer ",
      "Bearersecret-token",
      "Bearer\tsecret-token",
      " Bearer secret-token",
      "Bearer secret-token ",
      "Bearer secret token",
      "Bearer secret-token\x01",
      "Bearer secret-token\x7f",
      "Bearer sha256:" + kAliceHash,  // the stored hash is not a credential
      "",
  };
  for (const std::string& header : refused) {
    BOOST_TEST_CONTEXT("Authorization: " << header) {
      BOOST_TEST(!table.authenticate(header).has_value());
    }
  }
}

BOOST_AUTO_TEST_CASE(authenticate_bounds_the_token_at_4096_bytes) {
  const std::string longest(4096, 't');
  const TokenTable table = table_of("sha256:" + sha256_hex(longest) +
                                    " long\nsha256:" + sha256_hex(longest + "t") + " longer\n");
  BOOST_TEST(name_for(table, "Bearer " + longest) == "long");
  BOOST_TEST(!table.authenticate("Bearer " + longest + "t").has_value());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
