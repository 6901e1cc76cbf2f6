// `onejob selftest`: the kill matrix of the named defects against the catalogue and the fuzzer.
#include "harness/cli/selftest_command.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "system/service/defects.hpp"

#include "harness/cli/defect_flags.hpp"
#include "harness/cli/exit_codes.hpp"
#include "harness/cli/scenario_files.hpp"
#include "harness/fuzz/campaign.hpp"
#include "harness/report/report.hpp"
#include "harness/report/timeline.hpp"
#include "harness/scenario/loader.hpp"

namespace onejob::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct FuzzKill {
  std::uint64_t cases = 0;  // cases run, the failing one included
  double seconds = 0;       // wall time to the failure, shrinking included
  std::string rule;
  std::string message;
  fuzz::CaseSize shrunk;
  std::string repro;  // path of the repro file
  std::string reproduce;
};

struct Row {
  std::string defect;                                                 // empty: the reference system
  std::vector<std::pair<std::string, std::string>> failed_scenarios;  // name, first rule
  std::uint64_t fuzz_cases = 0;
  std::optional<FuzzKill> fuzz;
  bool killed() const { return !failed_scenarios.empty() && fuzz.has_value(); }
};

Row run_row(const std::vector<scenario::ScenarioSpec>& catalogue, const SelftestFlags& flags,
            std::optional<Defect> defect, const fs::path& dir) {
  Row row;
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
  fuzz::CampaignOptions options;
  options.seed = flags.seed;
  options.cases = flags.cases;
  options.defects = defects;
  // Wall time is measured for the report only; it decides nothing.
  const auto started = std::chrono::steady_clock::now();
  auto campaign = fuzz::run_campaign(options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  row.fuzz_cases = campaign.cases_run;
  if (!campaign.failures.empty()) {
    auto& failure = campaign.failures.front();
    const std::string name = row.defect.empty() ? "reference" : row.defect;
    const fs::path repro = dir / "repro" / (name + ".yaml");
    fs::create_directories(repro.parent_path());
    report::write_file(repro, fuzz::repro_yaml(failure, flags.seed, repro.string(), defects));
    failure.shrunk_run.name = name;  // its timeline is named after the defect, as the repro is
    report::write_timeline(dir, failure.shrunk_run,
                           report::repro_replay_command(repro.string(), defects));
    row.fuzz = FuzzKill{campaign.cases_run,
                        seconds,
                        failure.rule,
                        failure.message,
                        fuzz::size_of(failure.shrunk),
                        repro.string(),
                        fuzz::to_string({flags.seed, failure.case_index, failure.shrink_path})};
  }
  return row;
}

std::string scenario_list(const Row& row, std::size_t most) {
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

std::string fuzz_cell(const Row& row) {
  if (!row.fuzz) return "none in " + std::to_string(row.fuzz_cases) + " cases";
  const auto& kill = *row.fuzz;
  char time[32];
  std::snprintf(time, sizeof time, "%.2f s", kill.seconds);
  return "case " + std::to_string(kill.cases) + " [" + kill.rule + "], " + time + ", shrunk to " +
         std::to_string(kill.shrunk.steps) + " steps/" + std::to_string(kill.shrunk.nodes) +
         " nodes/" + std::to_string(kill.shrunk.faults) + " faults";
}

ordered_json row_json(const Row& row) {
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

std::string markdown(const Row& reference, const std::vector<Row>& rows, std::size_t catalogue,
                     const SelftestFlags& flags) {
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

}  // namespace

int selftest_command(const SelftestFlags& flags) {
  if (flags.report_dir.empty()) {
    return bad_input("--report-dir: expected a folder, found an empty path");
  }
  Defects asked;
  if (auto problem = parse_defects(flags.defects, asked)) {
    return bad_input(*problem);
  }
  std::vector<Defect> chosen;
  for (const auto& info : all_defects()) {
    if (flags.defects.empty() || asked.has(info.defect)) chosen.push_back(info.defect);
  }
  std::optional<std::vector<scenario::ScenarioSpec>> catalogue;
  try {
    catalogue = load_all(find_scenario_files({flags.scenarios}));
  } catch (const scenario::ScenarioError& error) {
    return bad_input(error.what());
  }
  if (!catalogue) return kExitBadInput;

  const fs::path dir = flags.report_dir;
  try {
    fs::create_directories(dir);
    const Row reference = run_row(*catalogue, flags, std::nullopt, dir);
    const bool clean = reference.failed_scenarios.empty() && !reference.fuzz;
    std::printf("reference system: %zu scenarios %s, %llu fuzz cases %s\n", catalogue->size(),
                reference.failed_scenarios.empty() ? "passed" : "FAILED",
                static_cast<unsigned long long>(reference.fuzz_cases),
                reference.fuzz ? "FAILED" : "passed");
    if (!clean) {
      std::printf("  failing: %s; fuzz: %s\n", scenario_list(reference, 5).c_str(),
                  fuzz_cell(reference).c_str());
    }
    std::fflush(stdout);
    std::vector<Row> rows;
    for (const Defect defect : chosen) {
      rows.push_back(run_row(*catalogue, flags, defect, dir));
      const Row& row = rows.back();
      std::printf("%-9s %s\n          scenarios (%zu): %s\n          fuzz: %s\n",
                  row.killed() ? "KILLED" : "SURVIVED", row.defect.c_str(),
                  row.failed_scenarios.size(), scenario_list(row, 4).c_str(),
                  fuzz_cell(row).c_str());
      std::fflush(stdout);
    }
    std::size_t killed = 0;
    for (const auto& row : rows) killed += row.killed() ? 1 : 0;
    ordered_json summary;
    summary["seed"] = flags.seed;
    summary["cases_per_defect"] = flags.cases;
    summary["scenarios"] = catalogue->size();
    summary["reference"] = row_json(reference);
    summary["defects"] = ordered_json::array();
    for (const auto& row : rows) summary["defects"].push_back(row_json(row));
    summary["killed"] = killed;
    summary["survived"] = rows.size() - killed;
    report::write_file(dir / "selftest.json",
                       summary.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n");
    report::write_file(dir / "selftest.md", markdown(reference, rows, catalogue->size(), flags));
    std::printf("selftest: %zu/%zu defects killed; reference system %s\n", killed, rows.size(),
                clean ? "clean" : "FAILED");
    std::printf("reports: %s/selftest.json, selftest.md, repro/, html/\n", dir.string().c_str());
    return clean && killed == rows.size() ? kExitPass : kExitFail;
  } catch (const std::exception& error) {
    return bad_input("cannot write reports to ", dir.string(), ": ", error.what());
  }
}

Command add_selftest_command(CLI::App& app) {
  auto flags = std::make_shared<SelftestFlags>();
  auto* selftest = app.add_subcommand(
      "selftest",
      "Prove the gate has teeth: with no defect the catalogue and a fuzz campaign pass; then, for "
      "each named defect, the catalogue and a bounded fuzz campaign run with it on. Prints and "
      "writes (REPORT_DIR/selftest.json, selftest.md) a kill matrix: which scenarios failed, "
      "cases to the fuzzer's first failure, the shrunk repro's size.");
  selftest
      ->add_option("--cases", flags->cases,
                   "Fuzz cases per defect (a campaign stops at its first failure)")
      ->check(positive64())
      ->capture_default_str();
  selftest->add_option("--seed", flags->seed, "The fuzz campaigns' seed")
      ->check(unsigned64())
      ->capture_default_str();
  selftest->add_option("--scenarios", flags->scenarios, "The scenario catalogue")
      ->capture_default_str()
      ->check(non_empty_path());
  selftest->add_option("--defect", flags->defects,
                       "Only these defects (repeatable; default: every one)");
  add_report_dir_option(*selftest, flags->report_dir,
                        "Where to write selftest.json, selftest.md and the repros");
  selftest->footer(
      "A defect is killed when at least one scenario of the catalogue fails with it on and the "
      "fuzzer finds a violation with it on.\n"
      "Exit codes: 0 every defect killed and the reference system clean; 1 a defect survived "
      "or the reference system failed; 2 bad input.");

  return {selftest, [flags] { return selftest_command(*flags); }};
}

}  // namespace onejob::cli
