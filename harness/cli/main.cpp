// The onejob command line: the one place that wires adapters to the harness.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/cli/fuzz_command.hpp"
#include "harness/report/report.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/scenario/runner.hpp"

namespace {

namespace fs = std::filesystem;
using onejob::Duration;
using onejob::scenario::ScenarioError;
using onejob::scenario::ScenarioSpec;

constexpr int kExitPass = 0;
constexpr int kExitFail = 1;
constexpr int kExitBadInput = 2;

bool is_scenario_file(const fs::path& path) {
  return path.extension() == ".yaml" || path.extension() == ".yml";
}

// The scenario files named by `paths`: files as given, folders searched recursively, each
// folder's files in sorted order so a run never depends on directory order.
std::vector<std::string> find_scenario_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code error;
    const auto status = fs::status(path, error);
    if (fs::is_directory(status)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        if (entry.is_regular_file() && is_scenario_file(entry.path())) {
          found.push_back(entry.path().lexically_normal().string());
        }
      }
      std::ranges::sort(found);
      if (found.empty()) throw ScenarioError(path, {}, "no *.yaml or *.yml scenario files here");
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(status)) {
      files.push_back(fs::path(path).lexically_normal().string());
    } else {
      throw ScenarioError(path, {}, "no such file or directory");
    }
  }
  return files;
}

// Loads every file before running any, so bad input is reported whole and up front.
std::optional<std::vector<ScenarioSpec>> load_all(const std::vector<std::string>& files) {
  std::vector<ScenarioSpec> specs;
  std::map<std::string, std::string> file_by_name;
  bool ok = true;
  for (const auto& file : files) {
    try {
      auto spec = onejob::scenario::load_scenario_file(file);
      auto [it, fresh] = file_by_name.emplace(spec.name, file);
      if (!fresh) {
        throw ScenarioError(file, spec.name_mark,
                            "scenario name \"" + spec.name + "\" is already used by " + it->second);
      }
      specs.push_back(std::move(spec));
    } catch (const ScenarioError& error) {
      std::cerr << error.what() << "\n";
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return specs;
}

struct RunFlags {
  std::vector<std::string> paths{"scenarios"};
  std::optional<std::uint64_t> seed;
  std::string report_dir = "reports/latest";
  bool check_determinism = false;
};

// Runs one scenario, twice when asked: a second run in the same process must reproduce the
// trace byte for byte, or the scenario fails with a "determinism" violation.
onejob::scenario::RunResult run_one(const ScenarioSpec& spec, const RunFlags& flags) {
  auto result = onejob::scenario::run_scenario(spec, {.seed = flags.seed, .make_store = {}});
  if (flags.check_determinism) {
    const auto again = onejob::scenario::run_scenario(spec, {.seed = flags.seed, .make_store = {}});
    if (auto broken = onejob::scenario::compare_runs(result, again)) {
      result.violations.push_back(std::move(*broken));
    }
  }
  return result;
}

int run_command(const RunFlags& flags) {
  const auto& paths = flags.paths;
  const auto& report_dir = flags.report_dir;
  std::vector<std::string> files;
  try {
    files = find_scenario_files(paths);
  } catch (const ScenarioError& error) {
    std::cerr << "onejob: " << error.what() << "\n";
    return kExitBadInput;
  }
  auto specs = load_all(files);
  if (!specs) return kExitBadInput;

  std::vector<onejob::scenario::RunResult> results;
  // Wall time is measured here, outside the simulation, and only ever printed: it never
  // reaches a trace or a report file.
  const auto started = std::chrono::steady_clock::now();
  Duration simulated{0};
  for (const auto& spec : *specs) {
    results.push_back(run_one(spec, flags));
    simulated += results.back().simulated;
  }
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - started;
  std::cout << onejob::report::text_summary(results);
  std::printf("simulated %.1f s in %.3f s of wall time%s\n",
              std::chrono::duration<double>(simulated).count(), wall.count(),
              flags.check_determinism ? " (each scenario run twice)" : "");
  try {
    onejob::report::write_reports(report_dir, results);
  } catch (const std::exception& error) {
    std::cerr << "onejob: cannot write reports to " << report_dir << ": " << error.what() << "\n";
    return kExitBadInput;
  }
  std::cout << "reports: " << report_dir << "/summary.json, junit.xml, summary.txt, traces/\n";
  const bool all_passed = std::ranges::all_of(results, [](const auto& r) { return r.passed(); });
  return all_passed ? kExitPass : kExitFail;
}

struct ReplayFlags {
  std::string file;
  std::optional<std::uint64_t> seed;
  bool trace = false;
  std::string diff;
};

// Reruns one scenario; prints its trace for people, its hash, and its verdict, or where it
// departs from another run's trace.
int replay_command(const ReplayFlags& flags) {
  if (!fs::is_regular_file(flags.file)) {
    std::cerr << "onejob: " << flags.file << ": replay takes one scenario file\n";
    return kExitBadInput;
  }
  auto specs = load_all({flags.file});
  if (!specs) return kExitBadInput;
  std::string other;
  if (!flags.diff.empty()) {
    std::ifstream in(flags.diff, std::ios::binary);
    if (!in) {
      std::cerr << "onejob: " << flags.diff << ": cannot read the trace to compare with\n";
      return kExitBadInput;
    }
    other.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto result =
      onejob::scenario::run_scenario(specs->front(), {.seed = flags.seed, .make_store = {}});
  if (flags.trace) {
    for (const auto& event : result.history) std::cout << onejob::report::human_line(event) << "\n";
  }
  std::cout << onejob::report::text_summary({result});
  if (!flags.diff.empty()) {
    if (auto difference = onejob::report::first_difference(result.trace_jsonl, other)) {
      std::cout << *difference << "\n";
      return kExitFail;
    }
    std::cout << "traces identical: " << flags.diff << "\n";
    return kExitPass;
  }
  return result.passed() ? kExitPass : kExitFail;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "onejob: a deterministic fault-injection harness around a reference job/attempt system.\n"
      "One user click must never become two jobs, two charges or two results."};
  app.footer(
      "Exit codes: 0 all scenarios passed; 1 an invariant was violated or an expectation\n"
      "failed; 2 bad input (unreadable or invalid scenario, bad flags).\n"
      "Run 'onejob COMMAND --help' for each command (run, replay, fuzz, merge).");
  app.require_subcommand(1);

  RunFlags flags;
  auto* run = app.add_subcommand(
      "run",
      "Run scenarios on the embedded in-memory store and check every invariant.\n"
      "Prints one line per scenario (PASS/FAIL, name, seed, trace hash) and a total line;\n"
      "a failure lists its violations, the first offending event and the command that replays "
      "it.");
  run->add_option("paths", flags.paths, "Scenario files (*.yaml) or folders searched recursively")
      ->capture_default_str();
  run->add_option("--seed", flags.seed, "Override every scenario's seed (unsigned 64-bit)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--report-dir", flags.report_dir,
                  "Where to write summary.txt, summary.json, junit.xml and traces/<name>.jsonl")
      ->capture_default_str();
  run->add_flag("--check-determinism", flags.check_determinism,
                "Run every scenario twice in this process; differing traces fail the scenario");
  run->footer(
      "Same build + scenario + seed gives a byte-identical trace and the same trace hash.\n"
      "Exit codes: 0 all passed; 1 a violation or failed expectation; 2 bad input\n"
      "(errors name file:line:col).");

  ReplayFlags replay_flags;
  auto* replay = app.add_subcommand(
      "replay",
      "Rerun one scenario: print its trace (one event per line: simulated time, node, kind, "
      "data; '!' marks an injected fault), its hash and its verdict.");
  replay->add_option("file", replay_flags.file, "The scenario file")->required();
  replay->add_option("--seed", replay_flags.seed, "Override the scenario's seed")
      ->check(CLI::NonNegativeNumber);
  replay->add_flag("--trace", replay_flags.trace, "Print every event of the run");
  replay->add_option("--diff", replay_flags.diff,
                     "A trace (JSON Lines, e.g. reports/latest/traces/NAME.jsonl) to compare "
                     "with: prints the first event where the runs diverge (exit 1) or says they "
                     "are identical (exit 0)");

  onejob::cli::FuzzFlags fuzz_flags;
  auto* fuzz = app.add_subcommand(
      "fuzz",
      "Generate whole scenarios (topology, clients, keys and bodies, provider scripts, operator "
      "actions, faults, then a quiet phase), run them, and check every invariant and that every "
      "request is answered after the quiet phase. The first failing case is shrunk to the "
      "smallest story that still breaks the same rule and written as REPORT_DIR/repro/NAME.yaml, "
      "which 'onejob run' and 'onejob replay' reproduce.");
  fuzz->add_option("--cases", fuzz_flags.cases, "How many cases the campaign has")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  fuzz->add_option("--seed", fuzz_flags.seed, "The campaign's seed (unsigned 64-bit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  fuzz->add_option("--time-budget", fuzz_flags.time_budget,
                   "Stop after this much wall time, e.g. 90s, 10m, 2h (default: no limit)");
  fuzz->add_option("--shard", fuzz_flags.shard,
                   "Run shard i of n: the cases whose index is i-1 modulo n (case k depends only "
                   "on the build, the seed and k, so shards never overlap)")
      ->capture_default_str();
  fuzz->add_option("--jobs", fuzz_flags.jobs,
                   "Processes to run the cases in (each takes every N-th case; one merged report)")
      ->capture_default_str();
  fuzz->add_option("--case", fuzz_flags.only_case, "Run (and shrink) only this case index")
      ->check(CLI::NonNegativeNumber);
  fuzz->add_option("--reproduce", fuzz_flags.reproduce,
                   "Run exactly the case with this id (SEED:CASE[:P.P.P], printed with every "
                   "failure: the shrunk case, rebuilt without searching)");
  fuzz->add_flag("--show", fuzz_flags.show,
                 "With --case or --reproduce: print that case as a scenario file (YAML) instead "
                 "of running it");
  fuzz->add_option("--report-dir", fuzz_flags.report_dir,
                   "Where to write summary.json, junit.xml, repro/ and traces/")
      ->capture_default_str();
  fuzz->footer(
      "Progress goes to stderr every second (cases/s, marks reached, violations).\n"
      "Exit codes: 0 no violation; 1 a violation (its repro path is printed); 2 bad input.");

  onejob::cli::MergeFlags merge_flags;
  auto* merge = app.add_subcommand(
      "merge", "Combine the summaries of several fuzz campaigns (e.g. shards) into one.");
  merge->add_option("dirs", merge_flags.dirs, "Report folders of 'onejob fuzz' runs")->required();
  merge
      ->add_option("--report-dir", merge_flags.report_dir, "Where to write the merged summary.json")
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? kExitPass : kExitBadInput;
  }
  if (run->parsed()) return run_command(flags);
  if (replay->parsed()) return replay_command(replay_flags);
  if (fuzz->parsed()) return onejob::cli::fuzz_command(fuzz_flags);
  if (merge->parsed()) return onejob::cli::merge_command(merge_flags);
  return kExitBadInput;
}
