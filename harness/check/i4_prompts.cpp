// I4, prompts: what a provider is sent, rendered by this checker from the run's provider profiles
// (run.provider) and the input the call is for, never by the system's renderer.
//
// A provider's template is text in which "{{operation}}" stands for the call's operation and
// "{{input}}" for its input as compact JSON (for an attempt, the "input" member of the job's
// stored body, written back by this layer's JSON library; for a certification, the input the call
// carried). A prompt of B bytes is ceil(B / bytes_per_token) tokens. Checks:
//   - an attempt moved to FAILED before any provider call had a reason to be: its provider is not
//     configured, its template has no {{input}}, or the prompt is over the provider's token limit
//     (failed_without_reason);
//   - no call is made with a prompt over the limit (prompt_over_limit);
//   - every call a provider executed, an attempt's or a certification's, carried the prompt this
//     checker renders for that provider: its length and its FNV-1a digest, as the provider
//     recorded them (prompt_misrendered). A certification vouches for a provider under its own
//     template; an attempt sent under another template, or with another job's input, is a call
//     no certification covered;
//   - every call is made at temperature 0, the temperature certifications are made at
//     (temperature_not_zero): a provider's answers at another temperature are not the answers its
//     certification judged.
// Does not check: calls whose execution did not record what it carried (hand-made histories), or
// an attempt's call whose job body has no input (refused at create; I13 judges that).
#include "harness/check/i4_prompts.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/check/json_value.hpp"
#include "harness/sim/rng.hpp"
#include "harness/sim/trace.hpp"

namespace onejob::check {
namespace {

// The prompt `provider`'s template renders for `operation` and `input` (compact JSON text), and
// its size in tokens against the provider's limit.
struct Prompt {
  std::string text;
  std::size_t tokens = 0;
  std::size_t limit = 0;
  bool has_input = false;  // the template has the {{input}} placeholder
};

Prompt render(const events::RunProvider& profile, std::string_view operation,
              std::string_view input) {
  constexpr std::string_view kOperation = "{{operation}}";
  constexpr std::string_view kInput = "{{input}}";
  Prompt prompt{
      {}, 0, static_cast<std::size_t>(std::max<std::int64_t>(profile.max_prompt_tokens, 0)), false};
  const std::string_view text = profile.prompt_template;
  prompt.text.reserve(text.size() + input.size());
  for (std::size_t at = 0; at < text.size();) {
    // Literal text up to the next "{{", copied as it stands.
    const std::size_t open = std::min(text.find("{{", at), text.size());
    prompt.text.append(text.substr(at, open - at));
    at = open;
    if (at == text.size()) break;
    const std::string_view rest = text.substr(at);
    if (rest.starts_with(kOperation)) {
      prompt.text += operation;
      at += kOperation.size();
    } else if (rest.starts_with(kInput)) {
      prompt.text += input;
      at += kInput.size();
      prompt.has_input = true;
    } else {
      prompt.text += text[at];  // a "{" that opens no placeholder
      ++at;
    }
  }
  const auto per_token =
      static_cast<std::size_t>(std::max<std::int64_t>(profile.bytes_per_token, 1));
  const std::size_t bytes = prompt.text.size();
  prompt.tokens = bytes / per_token + (bytes % per_token == 0 ? 0 : 1);
  return prompt;
}

// The prompt `provider` is sent for `job`, or nothing when the checker cannot render it (the
// provider is not configured, or the stored body has no input).
std::optional<Prompt> job_prompt(const HistoryModel& model, const JobRecord& job,
                                 std::string_view provider) {
  const auto profile = model.providers.find(provider);
  if (profile == model.providers.end()) return std::nullopt;
  const JsonValue held = json_value(model.payload_of(job));
  const nlohmann::json& payload = *held;
  if (!payload.is_object() || !payload.contains("input")) return std::nullopt;
  return render(profile->second, job.inserted.what.operation.str(), payload["input"].dump());
}

// Judges the prompt and temperature `executed` carried against `expected`; `what` names the call.
void judge_call(const events::ProviderExecuted& executed, const Execution& execution,
                const std::optional<Prompt>& expected, const std::string& what,
                std::vector<Violation>& out) {
  const std::uint64_t seq = execution.executed.seq;
  if (executed.temperature && *executed.temperature != "0") {
    out.push_back(violation("I4.temperature_not_zero",
                            execution.provider.str() + " was sent " + what + " at temperature " +
                                *executed.temperature +
                                ", not the temperature 0 every certification is made at",
                            seq, {}));
  }
  if (!expected || !executed.prompt_bytes || !executed.prompt_fnv) return;
  const auto bytes = static_cast<std::int64_t>(expected->text.size());
  const std::string digest = sim::fnv1a64_hex(expected->text);
  if (*executed.prompt_bytes == bytes && *executed.prompt_fnv == digest) return;
  out.push_back(violation("I4.prompt_misrendered",
                          execution.provider.str() + " was sent " + what + " with a prompt of " +
                              std::to_string(*executed.prompt_bytes) + " bytes (digest " +
                              *executed.prompt_fnv + "), not the " + std::to_string(bytes) +
                              " bytes (digest " + digest +
                              ") its template renders for the operation and input",
                          seq, {}));
}

}  // namespace

void check_prompts(const HistoryModel& model, std::vector<Violation>& out) {
  if (model.providers.empty()) return;  // a history that recorded no provider profiles
  for (const auto& [id, attempt] : model.attempts) {
    const JobRecord* job = model.job(attempt.job_id());
    if (job == nullptr) continue;
    const std::string& provider = attempt.inserted.what.provider;
    const auto prompt = job_prompt(model, *job, provider);
    const auto calls = model.calls.find(id);
    const bool called = calls != model.calls.end() && !calls->second.empty();
    if (called && prompt && prompt->tokens > prompt->limit) {
      out.push_back(violation("I4.prompt_over_limit",
                              provider + " was called for " + attempt_ref(id) +
                                  " with a prompt of " + std::to_string(prompt->tokens) +
                                  " tokens, over its limit of " + std::to_string(prompt->limit),
                              calls->second.front(), {}));
    }
    if (const Execution* execution = model.execution_of(id)) {
      const auto executed = model.executed_event(*execution);
      // The provider that executed it renders with its own template (I9 judges that it is the
      // attempt's).
      const auto sent = execution->provider.str() == provider
                            ? prompt
                            : job_prompt(model, *job, execution->provider.str());
      judge_call(executed, *execution, sent, attempt_ref(id) + " of " + job_ref(job->id()), out);
    }
    if (!prompt || !prompt->has_input || prompt->tokens > prompt->limit) continue;  // a reason
    const auto first_call = called ? calls->second.front() : ~std::uint64_t{0};
    for (const auto& step : attempt.steps) {
      if (step.what.to != AttemptState::failed || step.seq > first_call) continue;
      const auto* won = job->won();
      if (won != nullptr && won->seq < step.seq) break;  // failed_not_cancelled says it
      out.push_back(violation(
          "I4.failed_without_reason",
          "the store moved " + attempt_ref(id) + " to FAILED before any call to " + provider +
              ", but nothing stood in the way of one: the provider is configured and the prompt (" +
              std::to_string(prompt->tokens) + " tokens, limit " + std::to_string(prompt->limit) +
              ") fits",
          step.seq, {}));
      break;
    }
  }
  for (const auto& execution : model.certification_executions) {
    const auto executed = model.executed_event(execution);
    const auto profile = model.providers.find(execution.provider.str());
    std::optional<Prompt> expected;
    if (profile != model.providers.end() && executed.input) {
      expected = render(profile->second, executed.operation, *executed.input);
    }
    judge_call(executed, execution, expected,
               "certification call " + executed.provider_key + " (" + executed.operation + ")",
               out);
  }
}

}  // namespace onejob::check
