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
#include "harness/cli/flags.hpp"
#include "harness/cli/scenario_files.hpp"
#include "harness/fuzz/selftest.hpp"
#include "harness/report/report.hpp"
#include "harness/report/timeline.hpp"
#include "harness/scenario/loader.hpp"

namespace onejob::cli {

namespace fs = std::filesystem;

int selftest_command(const SelftestFlags& flags) {
  keep_freed_memory();
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
    catalogue = load_all(find_scenario_files({flags.run.scenarios}));
  } catch (const scenario::ScenarioError& error) {
    return bad_input(error.what());
  }
  if (!catalogue) return kExitBadInput;

  const fs::path dir = flags.report_dir;
  // Wall time is read here only, for the report: how long each search took.
  const auto started = std::chrono::steady_clock::now();
  fuzz::SelftestOptions options = flags.run;
  options.report_dir = dir;
  options.seconds = [started] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  try {
    fs::create_directories(dir);
    const auto reference = fuzz::selftest_row(*catalogue, options, std::nullopt);
    std::printf("reference system: %zu scenarios %s, %llu fuzz cases %s\n", catalogue->size(),
                reference.failed_scenarios.empty() ? "passed" : "FAILED",
                static_cast<unsigned long long>(reference.fuzz_cases),
                reference.fuzz ? "FAILED" : "passed");
    if (!reference.clean()) {
      std::printf("  failing: %s; fuzz: %s\n", fuzz::scenario_list(reference, 5).c_str(),
                  fuzz::fuzz_cell(reference).c_str());
    }
    std::fflush(stdout);
    std::vector<fuzz::SelftestRow> rows;
    for (const Defect defect : chosen) {
      rows.push_back(fuzz::selftest_row(*catalogue, options, defect));
      const auto& row = rows.back();
      std::printf("%-9s %s\n          scenarios (%zu): %s\n          fuzz: %s\n",
                  row.killed() ? "KILLED" : "SURVIVED", row.defect.c_str(),
                  row.failed_scenarios.size(), fuzz::scenario_list(row, 4).c_str(),
                  fuzz::fuzz_cell(row).c_str());
      std::fflush(stdout);
    }
    const auto summary = fuzz::selftest_json(options, catalogue->size(), reference, rows);
    report::write_file(
        dir / "selftest.json",
        summary.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
    report::write_file(dir / "selftest.md",
                       fuzz::selftest_markdown(options, catalogue->size(), reference, rows));
    const auto killed = summary["killed"].get<std::size_t>();
    std::printf("selftest: %zu/%zu defects killed; reference system %s\n", killed, rows.size(),
                reference.clean() ? "clean" : "FAILED");
    std::printf("reports: %s/selftest.json, selftest.md, repro/, html/\n", dir.string().c_str());
    return reference.clean() && killed == rows.size() ? kExitPass : kExitFail;
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
      ->add_option("--cases", flags->run.cases,
                   "Fuzz cases per defect (a campaign stops at its first failure)")
      ->check(positive64())
      ->capture_default_str();
  selftest->add_option("--seed", flags->run.seed, "The fuzz campaigns' seed")
      ->check(unsigned64())
      ->capture_default_str();
  selftest->add_option("--scenarios", flags->run.scenarios, "The scenario catalogue")
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
      "or the reference system failed; 2 bad input; 3 a bug in onejob itself.");

  return {selftest, [flags] { return selftest_command(*flags); }};
}

}  // namespace onejob::cli
