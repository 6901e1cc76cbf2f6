// The onejob command line: the one place that wires adapters to the harness.
#include <charconv>
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

#include "system/domain/check.hpp"

#include "harness/cli/bench_command.hpp"
#include "harness/cli/defect_flags.hpp"
#include "harness/cli/exit_codes.hpp"
#include "harness/cli/fuzz_command.hpp"
#include "harness/cli/load_command.hpp"
#include "harness/cli/scenario_files.hpp"
#include "harness/cli/selftest_command.hpp"
#include "harness/cli/store_flag.hpp"
#include "harness/report/report.hpp"
#include "harness/report/timeline.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/scenario/runner.hpp"

namespace {

namespace fs = std::filesystem;
using onejob::Duration;
using onejob::cli::kExitBadInput;
using onejob::cli::kExitFail;
using onejob::cli::kExitPass;
using onejob::scenario::ScenarioError;
using onejob::scenario::ScenarioSpec;

struct RunFlags {
  std::vector<std::string> paths{"scenarios"};
  std::optional<std::uint64_t> seed;
  std::vector<std::string> defect_names;
  onejob::Defects defects;
  std::string report_dir = "reports/latest";
  bool check_determinism = false;
  std::string store_text = "memory";
  onejob::cli::StoreChoice store;
  bool compare_memory = false;
  bool html = false;
};

// Runs one scenario, twice when asked: a second run in the same process must reproduce the
// trace byte for byte, or the scenario fails with a "determinism" violation. With
// --compare-memory the second run is on the memory store, and its trace hash is returned.
onejob::scenario::RunResult run_one(const ScenarioSpec& spec, const RunFlags& flags,
                                    std::string* memory_hash) {
  onejob::scenario::RunOptions options;
  options.seed = flags.seed;
  options.defects = flags.defects;
  options.make_store = onejob::cli::store_factory(flags.store);
  auto result = onejob::scenario::run_scenario(spec, options);
  if (flags.check_determinism) {
    const auto again = onejob::scenario::run_scenario(spec, options);
    if (auto broken = onejob::scenario::compare_runs(result, again)) {
      result.violations.push_back(std::move(*broken));
    }
  }
  if (flags.compare_memory) {
    options.make_store = {};
    const auto on_memory = onejob::scenario::run_scenario(spec, options);
    *memory_hash = on_memory.trace_hash;
    if (auto broken = onejob::scenario::compare_runs(result, on_memory)) {
      result.violations.push_back(onejob::check::violation(
          "store-equivalence.traces_differ", "on the memory store: " + broken->message,
          broken->event_seq, broken->evidence));
    }
  }
  return result;
}

// --compare-memory: each scenario's trace hash on both stores, side by side.
void print_store_hashes(const std::vector<onejob::scenario::RunResult>& results,
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
  if (auto problem = onejob::cli::parse_defects(flags.defect_names, flags.defects)) {
    std::cerr << "onejob: " << *problem << "\n";
    return kExitBadInput;
  }
  if (auto problem = onejob::cli::parse_store(flags.store_text, flags.store)) {
    std::cerr << "onejob: " << *problem << "\n";
    return kExitBadInput;
  }
  if (auto problem = onejob::cli::store_defect_problem(flags.store, flags.defects)) {
    std::cerr << "onejob: " << *problem << "\n";
    return kExitBadInput;
  }
  const auto& paths = flags.paths;
  const auto& report_dir = flags.report_dir;
  std::vector<std::string> files;
  try {
    files = onejob::cli::find_scenario_files(paths);
  } catch (const ScenarioError& error) {
    std::cerr << "onejob: " << error.what() << "\n";
    return kExitBadInput;
  }
  auto specs = onejob::cli::load_all(files);
  if (!specs) return kExitBadInput;
  if (auto problem = onejob::cli::check_store(flags.store)) {
    std::cerr << "onejob: " << *problem << "\n";
    return kExitBadInput;
  }

  std::vector<onejob::scenario::RunResult> results;
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
  std::cout << onejob::report::text_summary(results);
  if (flags.compare_memory) print_store_hashes(results, memory_hashes, flags);
  std::printf("simulated %.1f s in %.3f s of wall time on the %s store%s\n",
              std::chrono::duration<double>(simulated).count(), wall.count(),
              flags.store.describe().c_str(),
              flags.check_determinism || flags.compare_memory ? " (each scenario run twice)" : "");
  try {
    onejob::report::write_reports(report_dir, results, flags.html);
  } catch (const std::exception& error) {
    std::cerr << "onejob: cannot write reports to " << report_dir << ": " << error.what() << "\n";
    return kExitBadInput;
  }
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
  onejob::Defects defects;
  if (auto problem = onejob::cli::parse_defects(flags.defect_names, defects)) {
    std::cerr << "onejob: " << *problem << "\n";
    return kExitBadInput;
  }
  if (!fs::is_regular_file(flags.file)) {
    std::cerr << "onejob: " << flags.file << ": replay takes one scenario file\n";
    return kExitBadInput;
  }
  auto specs = onejob::cli::load_all({flags.file});
  if (!specs) return kExitBadInput;
  std::string other;
  if (!flags.diff.empty()) {
    if (!fs::is_regular_file(flags.diff)) {
      std::cerr << "onejob: " << flags.diff << ": --diff takes a trace file (JSON Lines)\n";
      return kExitBadInput;
    }
    std::ifstream in(flags.diff, std::ios::binary);
    if (!in) {
      std::cerr << "onejob: " << flags.diff << ": cannot read the trace to compare with\n";
      return kExitBadInput;
    }
    other.assign(std::istreambuf_iterator<char>(in), {});
    if (auto problem = onejob::report::trace_problem(other)) {
      std::cerr << "onejob: " << flags.diff << ": not a onejob trace: " << *problem << "\n";
      return kExitBadInput;
    }
  }
  onejob::scenario::RunOptions options;
  options.seed = flags.seed;
  options.defects = defects;
  const auto result = onejob::scenario::run_scenario(specs->front(), options);
  if (flags.trace) {
    for (const auto& event : result.history) std::cout << onejob::report::human_line(event) << "\n";
  }
  std::cout << onejob::report::text_summary({result});
  if (flags.html) {
    try {
      const auto path = onejob::report::write_timeline(flags.report_dir, result,
                                                       onejob::report::replay_command(result));
      std::cout << "timeline: " << path.string() << "\n";
    } catch (const std::exception& error) {
      std::cerr << "onejob: cannot write the timeline to " << flags.report_dir << ": "
                << error.what() << "\n";
      return kExitBadInput;
    }
  }
  if (!flags.diff.empty()) {
    if (auto difference =
            onejob::report::first_difference(onejob::sim::render_jsonl(result.history), other)) {
      std::cout << *difference << "\n";
      return kExitFail;
    }
    std::cout << "traces identical: " << flags.diff << "\n";
    return kExitPass;
  }
  return result.passed() ? kExitPass : kExitFail;
}

// Unsigned 64-bit numbers exactly as written: no sign, no overflow clamped to the maximum.
std::string unsigned64_problem(const std::string& text, std::uint64_t least) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || value < least) {
    return "expected an integer from " + std::to_string(least) +
           " to 18446744073709551615, found \"" + text + "\"";
  }
  return {};
}
const CLI::Validator kUnsigned64([](std::string& text) { return unsigned64_problem(text, 0); },
                                 "UINT64");
const CLI::Validator kPositive64([](std::string& text) { return unsigned64_problem(text, 1); },
                                 "UINT64 > 0");
const CLI::Validator kNonEmpty(
    [](std::string& text) -> std::string {
      return text.empty() ? std::string("expected a path, found an empty one") : std::string();
    },
    "PATH");

// --defect NAME on the commands that run the system (run, replay, fuzz).
void add_defect_option(CLI::App& command, std::vector<std::string>& names) {
  command.add_option(
      "--defect", names,
      "Run the system with this named defect (repeatable; 'onejob defects' lists them)");
}

}  // namespace

int main(int argc, char** argv) {
  onejob::report::set_program(
      argc > 0 && std::string_view(argv[0]).find('/') != std::string_view::npos ? argv[0]
                                                                                : "onejob");
  CLI::App app{
      "onejob: a deterministic fault-injection harness around a reference job/attempt system.\n"
      "One user click must never become two jobs, two charges or two results."};
  app.footer(
      "Exit codes: 0 all scenarios passed; 1 an invariant was violated or an expectation\n"
      "failed; 2 bad input (unreadable or invalid scenario, bad flags).\n"
      "Run 'onejob COMMAND --help' for each command (run, replay, fuzz, merge, defects, "
      "selftest, load, bench).");
  app.require_subcommand(1);

  RunFlags flags;
  auto* run = app.add_subcommand(
      "run",
      "Run scenarios (on the embedded in-memory store unless --store says otherwise) and check "
      "every invariant.\n"
      "Prints one line per scenario (PASS/FAIL, name, seed, trace hash) and a total line;\n"
      "a failure lists its violations, the first offending event and the command that replays "
      "it.");
  run->add_option("paths", flags.paths, "Scenario files (*.yaml) or folders searched recursively")
      ->check(kNonEmpty)
      ->capture_default_str();
  run->add_option("--seed", flags.seed, "Override every scenario's seed (unsigned 64-bit)")
      ->check(kUnsigned64);
  run->add_option("--report-dir", flags.report_dir,
                  "Where to write summary.txt, summary.json, junit.xml, traces/<name>.jsonl and "
                  "html/<name>.html (the timeline of every failing scenario)")
      ->capture_default_str()
      ->check(kNonEmpty);
  run->add_flag("--html", flags.html,
                "Write the HTML timeline of passing scenarios too (failing ones always get one)");
  add_defect_option(*run, flags.defect_names);
  run->add_flag("--check-determinism", flags.check_determinism,
                "Run every scenario twice in this process; differing traces fail the scenario");
  run->add_option("--store", flags.store_text,
                  "memory, postgres or postgres=URI (libpq string or URI; plain 'postgres' uses "
                  "libpq's defaults and PG* variables). On PostgreSQL each scenario gets a fresh "
                  "schema, dropped afterwards")
      ->capture_default_str();
  run->add_flag("--compare-memory", flags.compare_memory,
                "Also run every scenario on the memory store and print both trace hashes; a "
                "scenario whose traces differ fails (store-equivalence)");
  run->footer(
      "Same build + scenario + seed gives a byte-identical trace and the same trace hash.\n"
      "Exit codes: 0 all passed; 1 a violation or failed expectation; 2 bad input\n"
      "(errors name file:line:col).");

  ReplayFlags replay_flags;
  auto* replay = app.add_subcommand(
      "replay",
      "Rerun one scenario: print its trace (one event per line: simulated time, node, kind, "
      "data; '!' marks an injected fault), its hash and its verdict.");
  replay->add_option("file", replay_flags.file, "The scenario file")->required()->check(kNonEmpty);
  replay->add_option("--seed", replay_flags.seed, "Override the scenario's seed")
      ->check(kUnsigned64);
  replay->add_flag("--trace", replay_flags.trace, "Print every event of the run");
  replay->add_flag("--html", replay_flags.html,
                   "Write the run's HTML timeline to REPORT_DIR/html/<name>.html");
  replay->add_option("--report-dir", replay_flags.report_dir, "Where --html writes")
      ->capture_default_str()
      ->check(kNonEmpty);
  add_defect_option(*replay, replay_flags.defect_names);
  replay
      ->add_option("--diff", replay_flags.diff,
                   "A trace (JSON Lines, e.g. reports/latest/traces/NAME.jsonl) to compare "
                   "with: prints the first event where the runs diverge (exit 1) or says they "
                   "are identical (exit 0)")
      ->check(kNonEmpty);

  onejob::cli::FuzzFlags fuzz_flags;
  auto* fuzz = app.add_subcommand(
      "fuzz",
      "Generate whole scenarios (topology, clients, keys and bodies, provider scripts, operator "
      "actions, faults, then a quiet phase), run them, and check every invariant and that every "
      "request is answered after the quiet phase. The first failing case is shrunk to the "
      "smallest story that still breaks the same rule and written as REPORT_DIR/repro/NAME.yaml, "
      "which 'onejob run' and 'onejob replay' reproduce.");
  fuzz->add_option("--cases", fuzz_flags.cases, "How many cases the campaign has")
      ->check(kPositive64)
      ->capture_default_str();
  fuzz->add_option("--seed", fuzz_flags.seed, "The campaign's seed (unsigned 64-bit)")
      ->check(kUnsigned64)
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
      ->check(kUnsigned64);
  fuzz->add_option("--reproduce", fuzz_flags.reproduce,
                   "Run exactly the case with this id (SEED:CASE[:P.P.P], printed with every "
                   "failure: the shrunk case, rebuilt without searching)");
  fuzz->add_flag("--show", fuzz_flags.show,
                 "With --case or --reproduce: print that case as a scenario file (YAML) instead "
                 "of running it");
  add_defect_option(*fuzz, fuzz_flags.defects);
  fuzz->add_option("--store", fuzz_flags.store,
                   "memory, postgres or postgres=URI: the store every case runs on (on "
                   "PostgreSQL a fresh schema per case)")
      ->capture_default_str();
  fuzz->add_option("--report-dir", fuzz_flags.report_dir,
                   "Where to write summary.json, junit.xml, repro/ and traces/")
      ->capture_default_str()
      ->check(kNonEmpty);
  fuzz->footer(
      "Progress goes to stderr every second (cases/s, marks reached, violations).\n"
      "Exit codes: 0 no violation; 1 a violation (its repro path is printed); 2 bad input.");

  onejob::cli::MergeFlags merge_flags;
  auto* merge = app.add_subcommand(
      "merge", "Combine the summaries of several fuzz campaigns (e.g. shards) into one.");
  merge->add_option("dirs", merge_flags.dirs, "Report folders of 'onejob fuzz' runs")
      ->required()
      ->check(kNonEmpty);
  merge
      ->add_option("--report-dir", merge_flags.report_dir, "Where to write the merged summary.json")
      ->capture_default_str()
      ->check(kNonEmpty);

  auto* defects = app.add_subcommand(
      "defects", "List the named defects the system can run with (--defect NAME), a line each.");

  onejob::cli::SelftestFlags selftest_flags;
  auto* selftest = app.add_subcommand(
      "selftest",
      "Prove the gate has teeth: with no defect the catalogue and a fuzz campaign pass; then, for "
      "each named defect, the catalogue and a bounded fuzz campaign run with it on. Prints and "
      "writes (REPORT_DIR/selftest.json, selftest.md) a kill matrix: which scenarios failed, "
      "cases to the fuzzer's first failure, the shrunk repro's size.");
  selftest
      ->add_option("--cases", selftest_flags.cases,
                   "Fuzz cases per defect (a campaign stops at its first failure)")
      ->check(kPositive64)
      ->capture_default_str();
  selftest->add_option("--seed", selftest_flags.seed, "The fuzz campaigns' seed")
      ->check(kUnsigned64)
      ->capture_default_str();
  selftest->add_option("--scenarios", selftest_flags.scenarios, "The scenario catalogue")
      ->capture_default_str()
      ->check(kNonEmpty);
  selftest->add_option("--defect", selftest_flags.defects,
                       "Only these defects (repeatable; default: every one)");
  selftest
      ->add_option("--report-dir", selftest_flags.report_dir,
                   "Where to write selftest.json, selftest.md and the repros")
      ->capture_default_str()
      ->check(kNonEmpty);
  selftest->footer(
      "A defect is killed when at least one scenario of the catalogue fails with it on and the "
      "fuzzer finds a violation with it on.\n"
      "Exit codes: 0 every defect killed and the reference system clean; 1 a defect survived "
      "or the reference system failed; 2 bad input.");

  onejob::cli::LoadFlags load_flags;
  auto* load = app.add_subcommand(
      "load",
      "Run the reference system for real (real time; every API node, worker and the "
      "reconciler on a store connection of its own) under clients that double-click and reuse "
      "keys, then check on a fresh connection that every create was answered "
      "201/200/422/503, no exception left the API, no worker or reconciler loop ended, and no "
      "acknowledged job was lost. Meant to run while the database is being broken (CI kills "
      "backends and restarts PostgreSQL during it).");
  load->add_option("--store", load_flags.store, "memory, postgres or postgres=URI")
      ->capture_default_str();
  load->add_option("--seconds", load_flags.seconds, "How long the clients keep creating")
      ->capture_default_str();
  load->add_option("--drain", load_flags.drain_seconds,
                   "Seconds the workers go on after the clients stop")
      ->capture_default_str();
  load->add_option("--clients", load_flags.clients, "Clients, each with its own API node")
      ->capture_default_str();
  load->add_option("--workers", load_flags.workers, "Workers")->capture_default_str();
  load->add_option("--keys", load_flags.keys, "Distinct idempotency keys the clients draw from")
      ->capture_default_str();
  load->footer("Exit codes: 0 every promise held; 1 one was broken; 2 bad flags or store.");

  onejob::cli::BenchFlags bench_flags;
  auto* bench = app.add_subcommand(
      "bench",
      "Measure the simulator, the fuzzer and (with --store postgres) PgStore, each figure "
      "beside its baseline from the same run (medians over interleaved rounds, printed as "
      "ratios). The full run takes several minutes; --quick is under a minute.");
  bench->add_flag("--quick", bench_flags.quick, "Smaller loads and fewer cases (CI smoke use)");
  bench->add_option("--store", bench_flags.store, "postgres or postgres=URI to measure PgStore too")
      ->capture_default_str();
  bench->add_option("--scenarios", bench_flags.scenarios, "The catalogue to time the loop on")
      ->capture_default_str()
      ->check(kNonEmpty);
  bench->add_option("--only", bench_flags.only, "One section: simulator, fuzzer or postgres");
  bench->add_option("--load", bench_flags.jobs,
                    "The simulator section's generated load: this many jobs instead of 1k, 10k "
                    "and 100k (the catalogue and the other sections still run; see --only)");
  bench->add_option("--seconds", bench_flags.seconds, "Length of one PostgreSQL measurement")
      ->capture_default_str();
  bench->add_option("--rounds", bench_flags.rounds, "Measurements per figure (each side)")
      ->capture_default_str();
  bench->footer(
      "Exit codes: 0 measured; 2 bad flags, an unreadable catalogue or an unreachable "
      "store.");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? kExitPass : kExitBadInput;
  }
  try {
    if (run->parsed()) return run_command(flags);
    if (replay->parsed()) return replay_command(replay_flags);
    if (fuzz->parsed()) return onejob::cli::fuzz_command(fuzz_flags);
    if (merge->parsed()) return onejob::cli::merge_command(merge_flags);
    if (defects->parsed()) return onejob::cli::defects_command();
    if (selftest->parsed()) return onejob::cli::selftest_command(selftest_flags);
    if (load->parsed()) return onejob::cli::load_command(load_flags);
    if (bench->parsed()) return onejob::cli::bench_command(bench_flags);
  } catch (const onejob::AssertionFailure& failure) {
    // Outside a scenario run (a run records it as a `run` violation): onejob's own bug.
    std::fprintf(stderr, "onejob: internal error, please report it: %s\n", failure.what().c_str());
    return onejob::cli::kExitBug;
  }
  return kExitBadInput;
}
