// `onejob run` and `onejob replay`: scenario files run in the simulated world, judged, reported.
#include "harness/cli/run_command.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/cli/defect_flags.hpp"
#include "harness/cli/exit_codes.hpp"
#include "harness/cli/flags.hpp"
#include "harness/cli/scenario_files.hpp"
#include "harness/cli/store_flag.hpp"
#include "harness/report/report.hpp"
#include "harness/report/timeline.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/scenario/runner.hpp"

namespace onejob::cli {
namespace {

namespace fs = std::filesystem;
using scenario::ScenarioError;
using scenario::ScenarioSpec;

struct RunFlags {
  std::vector<std::string> paths;  // none: default_catalogue()
  std::optional<std::uint64_t> seed;
  std::vector<std::string> defect_names;
  Defects defects;
  std::string report_dir = "reports/latest";
  bool check_determinism = false;
  std::string store_text = "memory";
  std::string pg_timeouts;
  StoreChoice store;
  bool compare_memory = false;
  bool html = false;
};

// Runs one scenario, twice when asked: a second run in the same process must reproduce the
// trace byte for byte, or the scenario fails with a "determinism" violation. With
// --compare-memory the second run is on the memory store, and its trace hash is returned.
scenario::RunResult run_one(const ScenarioSpec& spec, const RunFlags& flags,
                            std::string* memory_hash) {
  scenario::RunOptions options;
  options.seed = flags.seed;
  options.defects = flags.defects;
  options.make_store = store_factory(flags.store);
  // The trace is hashed as it is written (report::write_traces): rendered once, not twice.
  options.trace_text = false;
  auto result = scenario::run_scenario(spec, options);
  if (flags.check_determinism) {
    const auto again = scenario::run_scenario(spec, options);
    if (auto broken = scenario::compare_runs(result, again)) {
      result.violations.push_back(std::move(*broken));
    }
  }
  if (flags.compare_memory) {
    options.make_store = {};
    options.trace_text = true;
    const auto on_memory = scenario::run_scenario(spec, options);
    *memory_hash = on_memory.trace_hash;
    if (auto broken = scenario::compare_runs(result, on_memory)) {
      result.violations.push_back(check::violation("store-equivalence.traces_differ",
                                                   "on the memory store: " + broken->message,
                                                   broken->event_seq, broken->evidence));
    }
  }
  return result;
}

// --compare-memory: each scenario's trace hash on both stores, side by side.
void print_store_hashes(const std::vector<scenario::RunResult>& results,
                        const std::vector<std::string>& memory_hashes, const RunFlags& flags) {
  std::printf("trace hash by store (%s | memory):\n", flags.store.postgres ? "postgres" : "memory");
  int same = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const bool equal = results[i].trace_hash == memory_hashes[i];
    same += equal ? 1 : 0;
    std::printf("  %-16s  %-16s  %-9s  %s\n", results[i].trace_hash.c_str(),
                memory_hashes[i].c_str(), equal ? "identical" : "DIFFERENT",
                results[i].name.c_str());
  }
  std::printf("identical traces: %d/%zu\n", same, results.size());
}

int run_command(RunFlags flags) {
  keep_freed_memory();
  if (auto problem = parse_defects(flags.defect_names, flags.defects)) {
    return bad_input(*problem);
  }
  if (auto problem = parse_pg_timeouts(flags.pg_timeouts, flags.store)) {
    return bad_input(*problem);
  }
  if (auto problem = parse_store(flags.store_text, flags.store)) {
    return bad_input(*problem);
  }
  if (auto problem = store_defect_problem(flags.store, flags.defects)) {
    return bad_input(*problem);
  }
  const auto paths =
      flags.paths.empty() ? std::vector<std::string>{default_catalogue()} : flags.paths;
  const auto& report_dir = flags.report_dir;
  std::vector<std::string> files;
  try {
    files = find_scenario_files(paths);
  } catch (const ScenarioError& error) {
    return bad_input(error.what());
  }
  auto specs = load_all(files);
  if (!specs) return kExitBadInput;
  for (const auto& spec : *specs) {
    if (auto problem = store_defect_problem(flags.store, spec.defects)) {
      return bad_input(spec.file, ": defects: ", *problem);
    }
  }
  if (auto problem = check_store(flags.store)) {
    return bad_input(*problem);
  }

  std::vector<scenario::RunResult> results;
  std::vector<std::string> memory_hashes;
  // Wall time is measured here, outside the simulation, and only ever printed: it never
  // reaches a trace or a report file.
  const auto started = std::chrono::steady_clock::now();
  Duration simulated{0};
  for (const auto& spec : *specs) {
    results.push_back(run_one(spec, flags, &memory_hashes.emplace_back()));
    simulated += results.back().simulated;
  }
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - started;
  // The traces first: writing them works out their hashes, which the summary prints. If they
  // cannot be written, the hashes are worked out here and the summary is printed all the same.
  std::optional<std::string> unwritten;
  try {
    report::write_traces(report_dir, results);
  } catch (const std::exception& error) {
    unwritten = error.what();
    for (auto& result : results) result.trace_hash = sim::hash_jsonl(result.history);
  }
  std::cout << report::text_summary(results);
  if (flags.compare_memory) print_store_hashes(results, memory_hashes, flags);
  std::printf("simulated %.1f s in %.3f s of wall time on the %s store%s\n",
              std::chrono::duration<double>(simulated).count(), wall.count(),
              flags.store.describe().c_str(),
              flags.check_determinism || flags.compare_memory ? " (each scenario run twice)" : "");
  try {
    if (!unwritten) report::write_summaries(report_dir, results, flags.html);
  } catch (const std::exception& error) {
    unwritten = error.what();
  }
  if (unwritten) return bad_input("cannot write reports to ", report_dir, ": ", *unwritten);
  const bool all_passed = std::ranges::all_of(results, [](const auto& r) { return r.passed(); });
  std::cout << "reports: " << report_dir << "/summary.json, junit.xml, summary.txt, traces/"
            << (flags.html || !all_passed ? ", html/" : "") << "\n";
  return all_passed ? kExitPass : kExitFail;
}

struct ReplayFlags {
  std::string file;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> defect_names;
  bool trace = false;
  std::string diff;
  bool html = false;
  std::string report_dir = "reports/latest";
};

// Reruns one scenario; prints its trace for people, its hash, and its verdict, or where it
// departs from another run's trace.
int replay_command(const ReplayFlags& flags) {
  keep_freed_memory();
  Defects defects;
  if (auto problem = parse_defects(flags.defect_names, defects)) {
    return bad_input(*problem);
  }
  if (fs::is_directory(flags.file)) {
    return bad_input(flags.file, ": replay takes one scenario file, not a folder");
  }
  try {
    find_scenario_files({flags.file});  // a missing file, in the words `run` uses
  } catch (const ScenarioError& error) {
    return bad_input(error.what());
  }
  auto specs = load_all({flags.file});
  if (!specs) return kExitBadInput;
  std::string other;
  if (!flags.diff.empty()) {
    if (!fs::exists(flags.diff)) return bad_input(flags.diff, ": no such file or directory");
    if (!fs::is_regular_file(flags.diff)) {
      return bad_input(flags.diff, ": --diff takes a trace file (JSON Lines)");
    }
    std::ifstream in(flags.diff, std::ios::binary);
    if (!in) {
      return bad_input(flags.diff, ": cannot read the trace to compare with");
    }
    other.assign(std::istreambuf_iterator<char>(in), {});
    if (auto problem = report::trace_problem(other)) {
      return bad_input(flags.diff, ": not a onejob trace: ", *problem);
    }
  }
  scenario::RunOptions options;
  options.seed = flags.seed;
  options.defects = defects;
  const auto result = scenario::run_scenario(specs->front(), options);
  if (flags.trace) {
    for (const auto& event : result.history) std::cout << report::human_line(event) << "\n";
  }
  std::cout << report::text_summary({result});
  if (flags.html) {
    try {
      const auto path =
          report::write_timeline(flags.report_dir, result, report::replay_command(result));
      std::cout << "timeline: " << path.string() << "\n";
    } catch (const std::exception& error) {
      return bad_input("cannot write the timeline to ", flags.report_dir, ": ", error.what());
    }
  }
  if (!flags.diff.empty()) {
    if (auto difference = report::first_difference(sim::render_jsonl(result.history), other)) {
      std::cout << *difference << "\n";
      return kExitFail;
    }
    std::cout << "traces identical: " << flags.diff << "\n";
    return kExitPass;
  }
  return result.passed() ? kExitPass : kExitFail;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto flags = std::make_shared<RunFlags>();
  auto* run = app.add_subcommand(
      "run",
      "Run scenarios (on the embedded in-memory store unless --store says otherwise) and check "
      "every invariant.\n"
      "Prints one line per scenario (PASS/FAIL, name, seed, trace hash) and a total line;\n"
      "a failure lists its violations, the first offending event and the command that replays "
      "it.");
  run->add_option("paths", flags->paths,
                  "Scenario files (*.yaml) or folders searched recursively (default: ./scenarios, "
                  "or the catalogue installed with onejob when there is none here)")
      ->check(non_empty_path());
  run->add_option("--seed", flags->seed, "Override every scenario's seed (unsigned 64-bit)")
      ->check(unsigned64());
  add_report_dir_option(
      *run, flags->report_dir,
      "Where to write summary.txt, summary.json, junit.xml, traces/<name>.jsonl and "
      "html/<name>.html (the timeline of every failing scenario)");
  run->add_flag("--html", flags->html,
                "Write the HTML timeline of passing scenarios too (failing ones always get one)");
  add_defect_option(*run, flags->defect_names);
  run->add_flag("--check-determinism", flags->check_determinism,
                "Run every scenario twice in this process; differing traces fail the scenario");
  add_pg_timeouts_flag(*run, flags->pg_timeouts);
  run->add_option("--store", flags->store_text,
                  "memory, postgres or postgres=URI (libpq string or URI; plain 'postgres' uses "
                  "libpq's defaults and PG* variables). On PostgreSQL each scenario gets a fresh "
                  "schema, dropped afterwards")
      ->capture_default_str();
  run->add_flag("--compare-memory", flags->compare_memory,
                "Also run every scenario on the memory store and print both trace hashes; a "
                "scenario whose traces differ fails (store-equivalence)");
  run->footer(
      "Same build + scenario + seed gives a byte-identical trace and the same trace hash.\n"
      "Exit codes: 0 all passed; 1 a violation or failed expectation; 2 bad input\n"
      "(errors name file:line:col); 3 a bug in onejob itself.");

  return {run, [flags] { return run_command(*flags); }};
}

Command add_replay_command(CLI::App& app) {
  auto flags = std::make_shared<ReplayFlags>();
  auto* replay = app.add_subcommand(
      "replay",
      "Rerun one scenario: print its trace (one event per line: simulated time, node, kind, "
      "data; '!' marks an injected fault), its hash and its verdict.");
  replay->add_option("file", flags->file, "The scenario file")->required()->check(non_empty_path());
  replay->add_option("--seed", flags->seed, "Override the scenario's seed")->check(unsigned64());
  replay->add_flag("--trace", flags->trace, "Print every event of the run");
  replay->add_flag("--html", flags->html,
                   "Write the run's HTML timeline to REPORT_DIR/html/<name>.html");
  add_report_dir_option(*replay, flags->report_dir, "Where --html writes");
  add_defect_option(*replay, flags->defect_names);
  replay
      ->add_option("--diff", flags->diff,
                   "A trace (JSON Lines, e.g. reports/latest/traces/NAME.jsonl) to compare "
                   "with: prints the first event where the runs diverge (exit 1) or says they "
                   "are identical (exit 0)")
      ->check(non_empty_path());
  replay->footer(
      "The replay line a failing run prints (absolute paths) works pasted in any directory.\n"
      "Exit codes: 0 the scenario passed (with --diff: the traces are identical); 1 a violation\n"
      "or failed expectation (with --diff: the traces diverge); 2 bad input (errors name\n"
      "file:line:col); 3 a bug in onejob itself.");

  return {replay, [flags] { return replay_command(*flags); }};
}

}  // namespace onejob::cli
