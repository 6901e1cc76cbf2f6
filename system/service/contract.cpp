#include "system/service/contract.hpp"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "system/service/canonical_json.hpp"
#include "system/service/json_document.hpp"

namespace onejob {
namespace {

using nlohmann::json;

constexpr std::string_view kLabels[] = {"billing", "support", "sales", "other"};

// Parses `text` as one JSON object, refusing repeated keys (canonicalize_json's rule), with its
// canonical bytes.
std::variant<ParsedJson, ContractViolation> parse_object(const std::string& text,
                                                         std::string_view what) {
  auto parsed = parse_canonical_json(text);
  if (auto* error = std::get_if<JsonError>(&parsed)) {
    return ContractViolation{std::string(what) + " is not JSON: " + error->message};
  }
  if (!std::get<ParsedJson>(parsed).document.is_object()) {
    return ContractViolation{std::string(what) + " must be a JSON object"};
  }
  return std::move(std::get<ParsedJson>(parsed));
}

// Refuses any top-level key outside `allowed` and any missing one.
std::optional<ContractViolation> exact_keys(const json& object,
                                            std::initializer_list<std::string_view> allowed,
                                            std::string_view what) {
  for (const auto& [key, value] : object.items()) {
    if (std::ranges::find(allowed, key) == allowed.end()) {
      return ContractViolation{"unexpected top-level key \"" + key + "\" in " + std::string(what)};
    }
  }
  for (auto key : allowed) {
    if (!object.contains(key)) {
      return ContractViolation{std::string(what) + " lacks required key \"" + std::string(key) +
                               "\""};
    }
  }
  return std::nullopt;
}

std::optional<ContractViolation> check_input(std::string_view operation, const json& input) {
  const bool extract = operation == "extract";
  if (extract) {
    if (auto bad = exact_keys(input, {"text", "fields"}, "input")) return bad;
  } else if (auto bad = exact_keys(input, {"text"}, "input")) {
    return bad;
  }
  if (!input["text"].is_string() || input["text"].get_ref<const std::string&>().empty()) {
    return ContractViolation{"input \"text\" must be a non-empty string"};
  }
  if (extract) {
    const auto& fields = input["fields"];
    if (!fields.is_array() || fields.empty()) {
      return ContractViolation{"input \"fields\" must be a non-empty list of names"};
    }
    std::set<std::string> seen;
    for (const auto& field : fields) {
      if (!field.is_string() || field.get_ref<const std::string&>().empty()) {
        return ContractViolation{"input \"fields\" must hold non-empty strings"};
      }
      if (!seen.insert(field.get<std::string>()).second) {
        return ContractViolation{"input \"fields\" names \"" + field.get<std::string>() +
                                 "\" twice"};
      }
    }
  }
  return std::nullopt;
}

std::optional<ContractViolation> check_classify(const json& output) {
  if (auto bad = exact_keys(output, {"label", "confidence"}, "classify output")) return bad;
  const auto& label = output["label"];
  if (!label.is_string()) return ContractViolation{"\"label\" must be a string"};
  if (std::ranges::find(kLabels, label.get_ref<const std::string&>()) == std::end(kLabels)) {
    return ContractViolation{"\"label\" \"" + label.get<std::string>() +
                             "\" is not one of billing, support, sales, other"};
  }
  const auto& confidence = output["confidence"];
  if (!confidence.is_number()) return ContractViolation{"\"confidence\" must be a number"};
  const double value = confidence.get<double>();
  if (!(value >= 0.0 && value <= 1.0)) {
    return ContractViolation{"\"confidence\" must be between 0 and 1"};
  }
  return std::nullopt;
}

std::optional<ContractViolation> check_summarize(const json& input, const json& output) {
  if (auto bad = exact_keys(output, {"summary"}, "summarize output")) return bad;
  const auto& summary = output["summary"];
  if (!summary.is_string()) return ContractViolation{"\"summary\" must be a string"};
  const auto& text = summary.get_ref<const std::string&>();
  if (text.empty()) return ContractViolation{"\"summary\" is empty"};
  // Business meaning: a summary that is not shorter than its input did some other operation
  // (an echo, a rewrite, a translation), however well-formed.
  if (text.size() >= input["text"].get_ref<const std::string&>().size()) {
    return ContractViolation{"\"summary\" is not shorter than the input: not a summary"};
  }
  return std::nullopt;
}

std::optional<ContractViolation> check_extract(const json& input, const json& output) {
  if (auto bad = exact_keys(output, {"fields"}, "extract output")) return bad;
  const auto& fields = output["fields"];
  if (!fields.is_object()) return ContractViolation{"\"fields\" must be an object"};
  std::set<std::string> asked;
  for (const auto& name : input["fields"]) asked.insert(name.get<std::string>());
  for (const auto& [name, value] : fields.items()) {
    if (!asked.contains(name)) {
      return ContractViolation{"extracted field \"" + name + "\" was not asked for"};
    }
    if (!value.is_string() && !value.is_null()) {
      return ContractViolation{"extracted field \"" + name + "\" must be a string or null"};
    }
  }
  for (const auto& name : asked) {
    if (!fields.contains(name)) {
      return ContractViolation{"asked-for field \"" + name + "\" is missing"};
    }
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::string_view>& known_operations() {
  static const std::vector<std::string_view> operations = {"classify", "summarize", "extract"};
  return operations;
}

bool is_known_operation(std::string_view operation) {
  return std::ranges::find(known_operations(), operation) != known_operations().end();
}

namespace {

std::optional<ContractViolation> unknown_operation(std::string_view operation) {
  if (is_known_operation(operation)) return std::nullopt;
  return ContractViolation{"unknown operation \"" + std::string(operation) + "\""};
}

}  // namespace

ContractCheck validate_input(std::string_view operation, const std::string& input_json) {
  if (auto bad = unknown_operation(operation)) return *bad;
  auto parsed = parse_object(input_json, "input");
  if (auto* bad = std::get_if<ContractViolation>(&parsed)) return *bad;
  auto& input = std::get<ParsedJson>(parsed);
  if (auto bad = check_input(operation, input.document)) return *bad;
  return ContractOk{std::move(input.canonical)};
}

ContractCheck validate_input_document(std::string_view operation, const json& input) {
  if (auto bad = unknown_operation(operation)) return *bad;
  if (!input.is_object()) return ContractViolation{"input must be a JSON object"};
  if (auto bad = check_input(operation, input)) return *bad;
  return ContractOk{compact_json(input)};
}

namespace {

ContractViolation invalid_input(const ContractViolation& bad) {
  return ContractViolation{"cannot judge an output for an invalid input: " + bad.reason};
}

// An output for `operation` on `input`, a parsed JSON object not yet checked against its contract.
ContractCheck judge_output(std::string_view operation, const json& input, const std::string& output,
                           json* output_document) {
  if (auto bad = check_input(operation, input)) return invalid_input(*bad);
  auto parsed = parse_object(output, "output");
  if (auto* bad = std::get_if<ContractViolation>(&parsed)) return *bad;
  auto& document = std::get<ParsedJson>(parsed);
  std::optional<ContractViolation> bad;
  if (operation == "classify") {
    bad = check_classify(document.document);
  } else if (operation == "summarize") {
    bad = check_summarize(input, document.document);
  } else {
    bad = check_extract(input, document.document);
  }
  if (bad) return *bad;
  if (output_document != nullptr) *output_document = std::move(document.document);
  return ContractOk{std::move(document.canonical)};
}

}  // namespace

ContractCheck validate_output(std::string_view operation, const std::string& input_json,
                              const std::string& output) {
  if (auto bad = unknown_operation(operation)) return invalid_input(*bad);
  auto input_parsed = parse_object(input_json, "input");
  if (auto* bad = std::get_if<ContractViolation>(&input_parsed)) return invalid_input(*bad);
  return judge_output(operation, std::get<ParsedJson>(input_parsed).document, output, nullptr);
}

ContractCheck validate_output_document(std::string_view operation, const json& input,
                                       const std::string& output, json* output_document) {
  if (auto bad = unknown_operation(operation)) return invalid_input(*bad);
  if (!input.is_object()) return invalid_input(ContractViolation{"input must be a JSON object"});
  return judge_output(operation, input, output, output_document);
}

std::variant<RenderedPrompt, PromptRejected> render_prompt(const ProviderProfile& profile,
                                                           std::string_view operation,
                                                           const std::string& input_json) {
  constexpr std::string_view kOperation = "{{operation}}";
  constexpr std::string_view kInput = "{{input}}";
  if (profile.prompt_template.find(kInput) == std::string::npos) {
    return PromptRejected{profile.name + "'s prompt template has no {{input}} placeholder"};
  }
  std::string text;
  std::string_view rest = profile.prompt_template;
  while (!rest.empty()) {
    if (rest.starts_with(kOperation)) {
      text += operation;
      rest.remove_prefix(kOperation.size());
    } else if (rest.starts_with(kInput)) {
      text += input_json;
      rest.remove_prefix(kInput.size());
    } else {
      text += rest.front();
      rest.remove_prefix(1);
    }
  }
  const std::size_t per_token = std::max<std::size_t>(profile.bytes_per_token, 1);
  const std::size_t tokens = (text.size() + per_token - 1) / per_token;
  if (tokens > profile.max_prompt_tokens) {
    return PromptRejected{"prompt is " + std::to_string(tokens) + " tokens, over " + profile.name +
                          "'s limit of " + std::to_string(profile.max_prompt_tokens)};
  }
  return RenderedPrompt{std::move(text), tokens};
}

}  // namespace onejob
