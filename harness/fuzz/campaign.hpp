#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/check/marks.hpp"
#include "harness/fuzz/case_gen.hpp"
#include "harness/scenario/runner.hpp"

namespace onejob::fuzz {

// A campaign: cases 0, 1, 2, ... each generated from (seed, case index) alone, run in the
// simulated world, and judged by every invariant and by availability after the quiet phase.
// Shards split one campaign with no overlap: shard i of n runs the cases whose index is i - 1
// modulo n.
// A case, exactly: case `index` of the campaign with `seed`, then the shrinker's choices (the
// position of the adopted candidate among each step's candidates). Written "S:K" or "S:K:p.p.p",
// RapidCheck's reproduce string for this generator: it rebuilds a shrunk case without searching.
struct CaseId {
  std::uint64_t seed = 1;
  std::uint64_t index = 0;
  std::vector<std::size_t> shrink_path{};
};
std::string to_string(const CaseId& id);
// The CaseId written in `text`, or the problem with it.
std::optional<CaseId> parse_case_id(std::string_view text, std::string& problem);

struct CampaignOptions {
  std::uint64_t seed = 1;
  std::uint64_t cases = 1000;
  std::uint64_t shard = 1;  // 1-based
  std::uint64_t shards = 1;
  std::optional<std::uint64_t> only_case{};  // run just this case index
  std::optional<CaseId> exact{};             // run just this case as it is: no shrinking
  int shrink_runs_max = 2000;                // runs the shrinker may spend on a failure
  Defects defects{};                         // the named defects the system runs with
  // The store each case runs on (a fresh one per case); MemoryStore when empty.
  std::function<std::unique_ptr<Store>()> make_store{};
  // Asked before each case; true ends the campaign early (the CLI's wall-clock budget: the
  // campaign itself never reads a clock).
  std::function<bool()> should_stop{};
  // Called after each case with the cases run so far, the distinct marks reached and the
  // failures found.
  std::function<void(std::uint64_t cases, std::size_t marks, std::size_t failures)> on_progress{};
};

struct CampaignFailure {
  std::uint64_t case_index = 0;
  std::vector<std::size_t> shrink_path;  // how the shrunk case was reached
  std::string rule;                      // the violated rule of the first violation
  std::string message;                   // its headline, on the shrunk case
  scenario::ScenarioSpec original;
  scenario::ScenarioSpec shrunk;
  scenario::RunResult shrunk_run;
  int shrink_steps = 0;  // smaller cases adopted
  int shrink_runs = 0;   // cases run while shrinking
  bool rebuilt = false;  // CampaignOptions::exact: rebuilt from its shrink path, not searched
};

// `spec` as the campaign runs it: with the campaign's defects, ending once nothing is left to
// happen. What a repro and `fuzz --show` write, so that running the file alone is the same run.
scenario::ScenarioSpec as_campaign_runs(scenario::ScenarioSpec spec, const Defects& defects);

// How the failure's case came to be, for people: "shrunk in 4 steps (31 runs) from 9 steps,
// 3 nodes, 2 faults to 3 steps, 2 nodes, 1 faults", or how an exact case was rebuilt.
std::string shrink_story(const CampaignFailure& failure);

struct CampaignResult {
  std::uint64_t cases_run = 0;
  std::uint64_t determinism_checks = 0;   // cases run twice to compare traces
  check::MarkCounts marks;                // summed over the cases
  std::vector<CampaignFailure> failures;  // the campaign stops at its first failure
};

CampaignResult run_campaign(const CampaignOptions& options);

// The scenario of a case, as the campaign runs it; nullopt when the shrink path leads nowhere.
std::optional<scenario::ScenarioSpec> generate_case(const CaseId& id);

// The name a case's scenario gets: fuzz-<seed>-<case>.
std::string case_name(std::uint64_t seed, std::uint64_t case_index);

// The repro file for a failure: a readable scenario, commented with the violated rule, how it
// was found and how to rerun it.
std::string repro_yaml(const CampaignFailure& failure, std::uint64_t seed, const std::string& path,
                       const Defects& defects = {});

}  // namespace onejob::fuzz
