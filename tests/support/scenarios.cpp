#include "tests/support/scenarios.hpp"

#include "harness/check/invariant.hpp"

namespace onejob::test {

std::string classify_body(const std::string& text) {
  return R"({"operation":"classify","provider":"alpha","input":{"text":")" + text + R"("}})";
}

scenario::ScenarioSpec double_click_spec(int requests, std::uint64_t seed) {
  scenario::ScenarioSpec spec;
  spec.file = "generated.yaml";
  spec.name = "generated";
  spec.seed = seed;
  scenario::ProviderSpec alpha;
  alpha.name = "alpha";
  spec.providers = {alpha};
  spec.clients = {{"browser", "alice"}};
  spec.network.client_lb.latency = {std::chrono::milliseconds(5), std::chrono::milliseconds(5)};
  for (int i = 1; i <= requests; ++i) {
    scenario::TimelineEntry entry;
    entry.at = Duration(0);
    entry.client = "browser";
    entry.create_job = {"browser", "click-1", classify_body("hello")};
    entry.request = i;
    spec.timeline.push_back(entry);
  }
  for (const auto& invariant : check::all_invariants()) spec.invariants.emplace_back(invariant.id);
  return spec;
}

}  // namespace onejob::test
