#include "system/service/contract.hpp"

#include <variant>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "system/service/json_document.hpp"

namespace onejob {
namespace {

const std::string kClassifyInput = R"({"text":"I was charged twice"})";
const std::string kSummarizeInput = R"({"text":"A long enough text to be summarised into less."})";
const std::string kExtractInput = R"({"fields":["total","due_date"],"text":"Invoice 7"})";

// "" when the output is valid; the violation otherwise.
std::string verdict(std::string_view operation, const std::string& input,
                    const std::string& output) {
  auto check = validate_output(operation, input, output);
  if (auto* violation = std::get_if<ContractViolation>(&check)) return violation->reason;
  return "";
}

BOOST_AUTO_TEST_SUITE(contract)

BOOST_AUTO_TEST_CASE(valid_outputs_pass_and_come_back_canonical) {
  auto check =
      validate_output("classify", kClassifyInput, R"( {"confidence": 0.5, "label": "billing"} )");
  BOOST_REQUIRE(std::holds_alternative<ContractOk>(check));
  BOOST_TEST(std::get<ContractOk>(check).canonical == R"({"confidence":0.5,"label":"billing"})");
  BOOST_TEST(verdict("summarize", kSummarizeInput, R"({"summary":"A text."})") == "");
  BOOST_TEST(verdict("extract", kExtractInput, R"({"fields":{"total":"7","due_date":null}})") ==
             "");
}

BOOST_AUTO_TEST_CASE(a_hallucinated_top_level_key_is_a_violation) {
  BOOST_TEST(verdict("classify", kClassifyInput,
                     R"({"label":"billing","confidence":0.9,"reasoning":"because"})") ==
             R"(unexpected top-level key "reasoning" in classify output)");
}

BOOST_AUTO_TEST_CASE(prose_instead_of_json_is_a_violation) {
  BOOST_TEST(verdict("classify", kClassifyInput, "Sure! The label is billing.")
                 .starts_with("output is not JSON"));
  BOOST_TEST(verdict("classify", kClassifyInput, R"("billing")") == "output must be a JSON object");
  BOOST_TEST(verdict("classify", kClassifyInput, "").starts_with("output is not JSON"));
}

BOOST_AUTO_TEST_CASE(valid_json_doing_the_wrong_operation_is_a_violation) {
  // Asked to classify, it summarised.
  BOOST_TEST(verdict("classify", kClassifyInput, R"({"summary":"charged twice"})") ==
             R"(unexpected top-level key "summary" in classify output)");
  // Asked to summarise, it echoed (or rewrote) the input: well-formed, but not a summary.
  BOOST_TEST(verdict("summarize", kSummarizeInput,
                     R"({"summary":"A long enough text to be summarised into less."})") ==
             R"("summary" is not shorter than the input: not a summary)");
  // Asked to extract two fields, it extracted others.
  BOOST_TEST(verdict("extract", kExtractInput, R"({"fields":{"total":"7","vendor":"ACME"}})") ==
             R"(extracted field "vendor" was not asked for)");
  BOOST_TEST(verdict("extract", kExtractInput, R"({"fields":{"total":"7"}})") ==
             R"(asked-for field "due_date" is missing)");
}

BOOST_AUTO_TEST_CASE(types_enums_ranges_and_required_fields) {
  BOOST_TEST(verdict("classify", kClassifyInput, R"({"label":"billing"})") ==
             R"(classify output lacks required key "confidence")");
  BOOST_TEST(verdict("classify", kClassifyInput, R"({"label":"refund","confidence":0.5})") ==
             R"("label" "refund" is not one of billing, support, sales, other)");
  BOOST_TEST(verdict("classify", kClassifyInput, R"({"label":"billing","confidence":1.5})") ==
             R"("confidence" must be between 0 and 1)");
  BOOST_TEST(verdict("classify", kClassifyInput, R"({"label":"billing","confidence":"high"})") ==
             R"("confidence" must be a number)");
  BOOST_TEST(verdict("summarize", kSummarizeInput, R"({"summary":""})") == R"("summary" is empty)");
  BOOST_TEST(verdict("extract", kExtractInput, R"({"fields":{"total":7,"due_date":null}})") ==
             R"(extracted field "total" must be a string or null)");
  BOOST_TEST(
      verdict("classify", kClassifyInput, R"({"label":"billing","label":"sales","confidence":1})")
          .starts_with("output is not JSON: duplicate key"));
}

BOOST_AUTO_TEST_CASE(inputs_are_validated_per_operation) {
  auto reason = [](std::string_view op, const std::string& input) {
    auto check = validate_input(op, input);
    return std::holds_alternative<ContractOk>(check) ? std::string()
                                                     : std::get<ContractViolation>(check).reason;
  };
  BOOST_TEST(reason("classify", R"({"text":"x"})") == "");
  BOOST_TEST(reason("classify", R"({"text":"x","fields":["a"]})") ==
             R"(unexpected top-level key "fields" in input)");
  BOOST_TEST(reason("extract", R"({"text":"x","fields":["a","a"]})") ==
             R"(input "fields" names "a" twice)");
  BOOST_TEST(reason("extract", R"({"text":"x","fields":[1]})") ==
             R"(input "fields" must hold non-empty strings)");
  BOOST_TEST(reason("translate", R"({"text":"x"})") == R"(unknown operation "translate")");
  BOOST_TEST(reason("summarize", R"([])") == "input must be a JSON object");
}

BOOST_AUTO_TEST_CASE(an_output_judged_against_a_parsed_input_gets_the_same_verdict) {
  struct Case {
    std::string operation;
    std::string input;
    std::string output;
  };
  const std::vector<Case> cases = {
      {"classify", kClassifyInput, R"( {"confidence": 0.5, "label": "billing"} )"},
      {"classify", kClassifyInput, R"({"label":"billing","confidence":0.9,"reasoning":"x"})"},
      {"classify", kClassifyInput, "Sure! It is billing."},
      {"summarize", kSummarizeInput, R"({"summary":"A text."})"},
      {"summarize", kSummarizeInput, R"({"summary":""})"},
      {"extract", kExtractInput, R"({"fields":{"total":"7","due_date":null}})"},
      {"extract", kExtractInput, R"({"fields":{"total":"7"}})"},
      {"classify", R"({"text":7})", R"({"confidence":0.5,"label":"billing"})"},
      {"classify", R"(["text"])", R"({"confidence":0.5,"label":"billing"})"},
      {"translate", kClassifyInput, R"({"confidence":0.5,"label":"billing"})"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.operation << " " << c.input << " -> " << c.output) {
      const auto expected = validate_output(c.operation, c.input, c.output);
      auto input = parse_canonical_json(c.input);
      BOOST_TEST_REQUIRE(std::holds_alternative<ParsedJson>(input));
      nlohmann::json document = "untouched";
      const auto got = validate_output_document(c.operation, std::get<ParsedJson>(input).document,
                                                c.output, &document);
      BOOST_TEST_REQUIRE(got.index() == expected.index());
      if (const auto* ok = std::get_if<ContractOk>(&expected)) {
        BOOST_TEST(std::get<ContractOk>(got).canonical == ok->canonical);
        BOOST_TEST(document.dump() == ok->canonical);
      } else {
        BOOST_TEST(std::get<ContractViolation>(got).reason ==
                   std::get<ContractViolation>(expected).reason);
        BOOST_TEST(document == "untouched");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(prompts_render_through_the_providers_template_within_its_limit) {
  ProviderProfile profile{.name = "beta",
                          .prompt_template = "<op>{{operation}}</op><in>{{input}}</in>",
                          .max_prompt_tokens = 100,
                          .bytes_per_token = 4};
  auto prompt = render_prompt(profile, "classify", R"({"text":"x"})");
  BOOST_REQUIRE(std::holds_alternative<RenderedPrompt>(prompt));
  const auto& rendered = std::get<RenderedPrompt>(prompt);
  BOOST_TEST(rendered.text == R"(<op>classify</op><in>{"text":"x"}</in>)");
  BOOST_TEST(rendered.tokens == (rendered.text.size() + 3) / 4);

  profile.max_prompt_tokens = 5;
  auto over = render_prompt(profile, "classify", R"({"text":"x"})");
  BOOST_REQUIRE(std::holds_alternative<PromptRejected>(over));
  BOOST_TEST(std::get<PromptRejected>(over).reason ==
             "prompt is 10 tokens, over beta's limit of 5");

  profile.prompt_template = "Classify this.";
  auto blind = render_prompt(profile, "classify", R"({"text":"x"})");
  BOOST_REQUIRE(std::holds_alternative<PromptRejected>(blind));
  BOOST_TEST(std::get<PromptRejected>(blind).reason.find("no {{input}}") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
