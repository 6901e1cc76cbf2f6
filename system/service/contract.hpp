#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace onejob {

// The reference operations and their contracts. Inputs (canonical JSON):
//   classify   {"text": string}                       -> {"label": "billing"|"support"|"sales"|
//                                                          "other", "confidence": number 0..1}
//   summarize  {"text": string}                       -> {"summary": string, non-empty and
//                                                          shorter than the input text}
//   extract    {"text": string, "fields": [string,..]} -> {"fields": {name: string|null, ...}}
//                                                          with exactly the requested names
// An output must be one JSON object with no top-level key beyond its contract's (a
// hallucinated key is a violation, not noise to ignore), every required field, the right types
// and enum values, and the business rules above: the answer must do the operation that was
// asked, on the input that was given.
bool is_known_operation(std::string_view operation);
const std::vector<std::string_view>& known_operations();

struct ContractOk {
  std::string canonical;  // canonical JSON of the validated document
};
struct ContractViolation {
  std::string reason;  // what broke, naming the field, e.g. "unexpected top-level key \"notes\""
};
using ContractCheck = std::variant<ContractOk, ContractViolation>;

// The job's input for `operation` (the "input" member of POST /jobs).
ContractCheck validate_input(std::string_view operation, const std::string& input_json);

// A provider's raw output for `operation` on `input_json` (already valid input). Prose, broken
// JSON, extra keys, wrong types and wrong operations are all violations; never throws.
ContractCheck validate_output(std::string_view operation, const std::string& input_json,
                              const std::string& output);

// How one provider is prompted: its own template and its own limits.
struct ProviderProfile {
  std::string name;
  // "{{operation}}" and "{{input}}" are replaced by the operation name and the input JSON.
  std::string prompt_template = "Operation: {{operation}}\nInput: {{input}}\nReply with JSON only.";
  std::size_t max_prompt_tokens = 4096;
  // The provider's tokenizer, approximated: one token per this many bytes, rounded up.
  std::size_t bytes_per_token = 4;
};

struct RenderedPrompt {
  std::string text;
  std::size_t tokens = 0;
};
struct PromptRejected {
  std::string reason;  // e.g. "prompt is 913 tokens, over alpha's limit of 512"
};

// Renders the prompt through the provider's template and checks it against its limit. A
// template without "{{input}}" is rejected: the provider would never see the input.
std::variant<RenderedPrompt, PromptRejected> render_prompt(const ProviderProfile& profile,
                                                           std::string_view operation,
                                                           const std::string& input_json);

}  // namespace onejob
