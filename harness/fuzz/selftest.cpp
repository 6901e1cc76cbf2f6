#include "harness/fuzz/selftest.hpp"

#include <cstdio>

#include "harness/fuzz/campaign.hpp"
#include "harness/report/report.hpp"
#include "harness/report/timeline.hpp"
#include "harness/scenario/runner.hpp"

namespace onejob::fuzz {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

SelftestRow selftest_row(const std::vector<scenario::ScenarioSpec>& catalogue,
                         const SelftestOptions& flags, std::optional<Defect> defect) {
  const fs::path& dir = flags.report_dir;
  SelftestRow row;
  Defects defects;
  if (defect) {
    defects.set(*defect);
    row.defect = std::string(name_of(*defect));
  }
  for (const auto& spec : catalogue) {
    scenario::RunOptions options;
    options.defects = defects;
    const auto result = scenario::run_scenario(spec, options);
    if (!result.passed()) {
      row.failed_scenarios.emplace_back(spec.name, result.violations.front().rule);
    }
  }
  CampaignOptions options;
  options.seed = flags.seed;
  options.cases = flags.cases;
  options.defects = defects;
  // Wall time is measured for the report only; it decides nothing.
  const double started = flags.seconds ? flags.seconds() : 0.0;
  auto campaign = run_campaign(options);
  const double seconds = flags.seconds ? flags.seconds() - started : 0.0;
  row.fuzz_cases = campaign.cases_run;
  if (!campaign.failures.empty()) {
    auto& failure = campaign.failures.front();
    const std::string name = row.defect.empty() ? "reference" : row.defect;
    const fs::path repro = dir / "repro" / (name + ".yaml");
    fs::create_directories(repro.parent_path());
    report::write_file(repro, repro_yaml(failure, flags.seed, repro.string(), defects));
    failure.shrunk_run.name = name;  // its timeline is named after the defect, as the repro is
    report::write_timeline(dir, failure.shrunk_run,
                           report::repro_replay_command(repro.string(), defects));
    row.fuzz = FuzzKill{campaign.cases_run,
                        seconds,
                        failure.rule,
                        failure.message,
                        size_of(failure.shrunk),
                        repro.string(),
                        to_string({flags.seed, failure.case_index, failure.shrink_path})};
  }
  return row;
}

std::string scenario_list(const SelftestRow& row, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < row.failed_scenarios.size() && i < most; ++i) {
    if (!out.empty()) out += ", ";
    out += row.failed_scenarios[i].first + " [" + row.failed_scenarios[i].second + "]";
  }
  if (row.failed_scenarios.size() > most) {
    out += ", +" + std::to_string(row.failed_scenarios.size() - most) + " more";
  }
  return out.empty() ? "none" : out;
}

std::string fuzz_cell(const SelftestRow& row) {
  if (!row.fuzz) return "none in " + std::to_string(row.fuzz_cases) + " cases";
  const auto& kill = *row.fuzz;
  char time[32];
  std::snprintf(time, sizeof time, "%.2f s", kill.seconds);
  return "case " + std::to_string(kill.cases) + " [" + kill.rule + "], " + time + ", shrunk to " +
         std::to_string(kill.shrunk.steps) + " steps/" + std::to_string(kill.shrunk.nodes) +
         " nodes/" + std::to_string(kill.shrunk.faults) + " faults";
}

namespace {

ordered_json row_json(const SelftestRow& row) {
  ordered_json scenarios = ordered_json::array();
  for (const auto& [name, rule] : row.failed_scenarios) {
    scenarios.push_back({{"scenario", name}, {"rule", rule}});
  }
  ordered_json out;
  out["defect"] = row.defect.empty() ? ordered_json(nullptr) : ordered_json(row.defect);
  out["failed_scenarios"] = scenarios;
  out["fuzz_cases_run"] = row.fuzz_cases;
  if (row.fuzz) {
    out["fuzz"] = {{"cases_to_failure", row.fuzz->cases},
                   {"seconds", row.fuzz->seconds},
                   {"rule", row.fuzz->rule},
                   {"message", row.fuzz->message},
                   {"shrunk",
                    {{"steps", row.fuzz->shrunk.steps},
                     {"nodes", row.fuzz->shrunk.nodes},
                     {"faults", row.fuzz->shrunk.faults}}},
                   {"repro", row.fuzz->repro},
                   {"reproduce", row.fuzz->reproduce}};
  } else {
    out["fuzz"] = nullptr;
  }
  if (!row.defect.empty()) out["killed"] = row.killed();
  return out;
}

}  // namespace

std::string selftest_markdown(const SelftestOptions& flags, std::size_t catalogue,
                              const SelftestRow& reference, const std::vector<SelftestRow>& rows) {
  std::string out = "# onejob selftest\n\n";
  out += "Catalogue: " + std::to_string(catalogue) + " scenarios from `" + flags.scenarios +
         "`; fuzz: up to " + std::to_string(flags.cases) + " cases per defect, seed " +
         std::to_string(flags.seed) + ".\n\n";
  out += "Reference system (no defect): " +
         std::string(reference.failed_scenarios.empty() && !reference.fuzz ? "clean" : "FAILED") +
         ".\n\n";
  out += "| defect | verdict | scenarios that failed | fuzzer |\n|---|---|---|---|\n";
  for (const auto& row : rows) {
    out += "| `" + row.defect + "` | " + (row.killed() ? "killed" : "**SURVIVED**") + " | " +
           std::to_string(row.failed_scenarios.size()) + ": " + scenario_list(row, 100) + " | " +
           fuzz_cell(row) + " |\n";
  }
  return out;
}

ordered_json selftest_json(const SelftestOptions& options, std::size_t catalogue,
                           const SelftestRow& reference, const std::vector<SelftestRow>& rows) {
  std::size_t killed = 0;
  for (const auto& row : rows) killed += row.killed() ? 1 : 0;
  ordered_json summary;
  summary["seed"] = options.seed;
  summary["cases_per_defect"] = options.cases;
  summary["scenarios"] = catalogue;
  summary["reference"] = row_json(reference);
  summary["defects"] = ordered_json::array();
  for (const auto& row : rows) summary["defects"].push_back(row_json(row));
  summary["killed"] = killed;
  summary["survived"] = rows.size() - killed;
  return summary;
}

}  // namespace onejob::fuzz
