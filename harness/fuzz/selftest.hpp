#pragma once

// `onejob selftest`'s kill matrix: the reference system runs the catalogue and a fuzz campaign and
// must pass both; each named defect must fail at least one scenario and be found by the fuzzer.
// A row is one system (the reference, or one defect on) with what failed and the fuzzer's first
// failure, its repro written under the report folder.

#include <utility>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "system/service/defects.hpp"

#include "harness/fuzz/case_gen.hpp"
#include "harness/scenario/spec.hpp"

namespace onejob::fuzz {

struct SelftestOptions {
  std::uint64_t cases = 2000;  // fuzz cases per row (a campaign stops at its first failure)
  std::uint64_t seed = 1;
  std::string scenarios = "scenarios";  // where the catalogue came from
  std::filesystem::path report_dir;
  // Seconds since some start: the wall time a row's search took is measured with it, for the
  // report only (the library reads no clock).
  std::function<double()> seconds;
};

struct FuzzKill {
  std::uint64_t cases = 0;  // cases run, the failing one included
  double seconds = 0;       // wall time to the failure, shrinking included
  std::string rule;
  std::string message;
  CaseSize shrunk;
  std::string repro;  // path of the repro file
  std::string reproduce;
};

struct SelftestRow {
  std::string defect;                                                 // empty: the reference system
  std::vector<std::pair<std::string, std::string>> failed_scenarios;  // name, first rule
  std::uint64_t fuzz_cases = 0;
  std::optional<FuzzKill> fuzz;
  bool killed() const { return !failed_scenarios.empty() && fuzz.has_value(); }
  bool clean() const { return failed_scenarios.empty() && !fuzz.has_value(); }
};

// One row: the catalogue and a campaign with `defect` on (none: the reference system). A fuzz
// failure's repro and timeline go under options.report_dir (repro/, html/), named after the
// defect. Throws std::exception when it cannot write them.
SelftestRow selftest_row(const std::vector<scenario::ScenarioSpec>& catalogue,
                         const SelftestOptions& options, std::optional<Defect> defect);

// The failed scenarios, at most `most` of them ("name [rule], ...", "none").
std::string scenario_list(const SelftestRow& row, std::size_t most);
// The fuzzer's part of a row ("case 76 [I1], 0.28 s, shrunk to ...", "none in N cases").
std::string fuzz_cell(const SelftestRow& row);

// selftest.json and selftest.md of a whole run.
nlohmann::ordered_json selftest_json(const SelftestOptions& options, std::size_t catalogue,
                                     const SelftestRow& reference,
                                     const std::vector<SelftestRow>& rows);
std::string selftest_markdown(const SelftestOptions& options, std::size_t catalogue,
                              const SelftestRow& reference, const std::vector<SelftestRow>& rows);

}  // namespace onejob::fuzz
