#include "harness/scenario/spec.hpp"

#include <algorithm>

namespace onejob::scenario {

ScenarioError::ScenarioError(const std::string& file, SourceMark mark, const std::string& message)
    : std::runtime_error(mark.line > 0 ? file + ":" + std::to_string(mark.line) + ":" +
                                             std::to_string(mark.column) + ": " + message
                                       : file + ": " + message),
      file_(file),
      mark_(mark),
      message_(message) {}

namespace {

constexpr std::pair<ProviderOutcome, std::string_view> kOutcomeNames[] = {
    {ProviderOutcome::ok, "ok"},
    {ProviderOutcome::error, "error"},
    {ProviderOutcome::malformed, "malformed"},
    {ProviderOutcome::hallucinated_key, "hallucinated_key"},
    {ProviderOutcome::wrong_operation, "wrong_operation"},
    {ProviderOutcome::hang, "hang"},
    {ProviderOutcome::plausible, "plausible"},
};

}  // namespace

std::string_view to_string(ProviderOutcome outcome) {
  for (const auto& [value, name] : kOutcomeNames) {
    if (value == outcome) return name;
  }
  return "invalid";
}

std::optional<ProviderOutcome> parse_provider_outcome(std::string_view text) {
  for (const auto& [value, name] : kOutcomeNames) {
    if (name == text) return value;
  }
  return std::nullopt;
}

Duration last_action(const ScenarioSpec& spec) {
  Duration last{0};
  for (const auto& entry : spec.timeline) last = std::max(last, entry.at);
  for (const auto& fault : spec.node_faults) last = std::max(last, fault.at);
  for (const auto& partition : spec.partitions) last = std::max(last, partition.until);
  for (const auto& pause : spec.pauses) last = std::max(last, pause.until);
  return last;
}

Duration faults_end(const ScenarioSpec& spec) {
  if (!spec.quiet) return last_action(spec);
  return spec.duration.value_or(last_action(spec) + kStormSettleTime);
}

Duration run_end(const ScenarioSpec& spec) {
  if (spec.quiet) return faults_end(spec) + *spec.quiet;
  return spec.duration.value_or(last_action(spec) + kSettleTime);
}

}  // namespace onejob::scenario
