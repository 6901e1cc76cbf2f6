#include "system/service/certifier.hpp"

#include <cctype>
#include <string_view>

#include <nlohmann/json.hpp>

#include "system/domain/text.hpp"
#include "system/events/certification_events.hpp"
#include "system/service/deadline.hpp"
#include "system/service/json_document.hpp"

namespace onejob {
namespace {

using nlohmann::json;

struct ContractCase {
  const char* operation;
  const char* input_json;
  // What the answer must mean, beyond the contract; nullopt when it does.
  std::optional<std::string> (*meaning)(const json& output);
};

std::optional<std::string> expect_label(const json& output, const char* label) {
  if (output["label"] == label) return std::nullopt;
  return "expected label \"" + std::string(label) + "\", got " + output["label"].dump();
}

std::optional<std::string> expect_contains(const json& output, const char* field,
                                           const char* needle) {
  const auto& value = output["fields"][field];
  if (value.is_string() && value.get_ref<const std::string&>().find(needle) != std::string::npos) {
    return std::nullopt;
  }
  return "expected field \"" + std::string(field) + "\" to contain \"" + needle + "\", got " +
         value.dump();
}

// A summary must carry the text's point: it names `subject` (ASCII letters, any case).
std::optional<std::string> expect_mention(const json& output, std::string_view subject) {
  const auto& summary = output["summary"];
  if (summary.is_string()) {
    std::string lower = summary.get<std::string>();
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find(subject) != std::string::npos) return std::nullopt;
  }
  return "expected the summary to mention \"" + std::string(subject) + "\", got " + summary.dump();
}

// Real-shaped samples with unambiguous answers; canonical JSON inputs.
const ContractCase kSuite[] = {
    {"classify", R"({"text":"I was charged twice for my March subscription"})",
     [](const json& out) { return expect_label(out, "billing"); }},
    {"classify", R"({"text":"The app crashes every time I upload a photo"})",
     [](const json& out) { return expect_label(out, "support"); }},
    {"summarize",
     R"({"text":"The quarterly report shows revenue grew 12 percent while costs stayed flat, driven mostly by the new enterprise plan; churn fell slightly and hiring will resume in the spring."})",
     [](const json& out) { return expect_mention(out, "revenue"); }},
    {"extract",
     R"({"fields":["total","due_date"],"text":"Invoice 2291: total 310.00 EUR, due 2026-12-01."})",
     [](const json& out) -> std::optional<std::string> {
       if (auto bad = expect_contains(out, "total", "310.00")) return bad;
       return expect_contains(out, "due_date", "2026-12-01");
     }},
};

// Sample `index`'s input as parse_canonical_json reads it, parsed once: the same constant text
// parses to the same document every time. Nothing when it does not parse (the contract then
// says why, as for any input).
const std::optional<json>& sample_input(std::size_t index) {
  static const auto inputs = [] {
    std::vector<std::optional<json>> out;
    for (const auto& sample : kSuite) {
      auto parsed = parse_canonical_json(sample.input_json);
      auto* document = std::get_if<ParsedJson>(&parsed);
      out.push_back(document != nullptr ? std::optional<json>(std::move(document->document))
                                        : std::nullopt);
    }
    return out;
  }();
  return inputs[index];
}

}  // namespace

Async<Certification> Certifier::certify(const ProviderProfile& profile) {
  std::vector<std::string> reasons;
  const Instant started = context_.clock.now();
  int number = 0;
  for (const auto& sample : kSuite) {
    ++number;
    const std::string label = "case " + std::to_string(number) + " (" + sample.operation + "): ";
    auto prompt = render_prompt(profile, sample.operation, sample.input_json);
    if (auto* rejected = std::get_if<PromptRejected>(&prompt)) {
      reasons.push_back(label + rejected->reason);
      continue;
    }
    const Duration timeout = context_.config.policy.attempt_deadline;
    ProviderCall call{.purpose = CallPurpose::certification,
                      .provider = profile.name,
                      .provider_key = "cert:" + profile.name + ":" +
                                      std::to_string(started.time_since_epoch().count()) + ":" +
                                      std::to_string(number),
                      .operation = sample.operation,
                      .prompt = std::get<RenderedPrompt>(prompt).text,
                      .input_json = sample.input_json,
                      .temperature = 0.0,
                      .deadline = context_.clock.now() + timeout};
    auto reply =
        co_await with_deadline(context_.providers.call(std::move(call)), context_.timer, timeout);
    if (!reply) {
      reasons.push_back(label + "no answer within the deadline");
    } else if (reply->kind == ProviderReply::Kind::rejected) {
      reasons.push_back(label + "provider refused: " + reply->reason);
    } else if (reply->kind == ProviderReply::Kind::maybe_delivered) {
      reasons.push_back(label + "transport failed: " + reply->reason);
    } else {
      const auto& input = sample_input(static_cast<std::size_t>(number - 1));
      json output;
      auto check = input
                       ? validate_output_document(sample.operation, *input, reply->output, &output)
                       : validate_output(sample.operation, sample.input_json, reply->output);
      if (auto* violation = std::get_if<ContractViolation>(&check)) {
        reasons.push_back(label + violation->reason);
      } else if (context_.config.defects.has(Defect::schema_only_contract)) {
        // The defect: the known answers are never compared.
      } else if (auto wrong = sample.meaning(output)) {
        reasons.push_back(label + *wrong);
      }
    }
  }
  // A reason may quote the provider (a refusal, a label): written down as storable text, so that
  // no answer of theirs can make the record fail on every try.
  for (auto& reason : reasons) reason = storable_text(reason);
  Certification certification{.provider = profile.name,
                              .passed = reasons.empty(),
                              .reasons = reasons,
                              .at = context_.clock.now()};
  co_await context_.store.record_certification(certification);
  std::string joined;
  for (const auto& reason : reasons) joined += (joined.empty() ? "" : "; ") + reason;
  events::emit(context_.events,
               events::CertificationRecorded{
                   .provider = profile.name, .passed = certification.passed, .reasons = joined});
  co_return certification;
}

}  // namespace onejob
