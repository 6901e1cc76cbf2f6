#include "harness/cli/bench_command.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>

#include "system/ports/store.hpp"

#include "harness/bench/bench.hpp"
#include "harness/cli/exit_codes.hpp"
#include "harness/cli/flags.hpp"
#include "harness/cli/scenario_files.hpp"
#include "harness/cli/store_flag.hpp"
#include "harness/scenario/loader.hpp"

namespace onejob::cli {

int bench_command(const BenchFlags& flags) {
  keep_freed_memory();
  StoreChoice choice;
  if (auto problem = parse_store(flags.store, choice)) {
    return bad_input(*problem);
  }
  // Written so that NaN fails them too.
  if (!(flags.settings.seconds > 0 && flags.settings.seconds <= 3600) ||
      flags.settings.rounds < 1 || flags.settings.rounds > 1000) {
    return bad_input("bench: --seconds must be in (0, 3600] and --rounds from 1 to 1000");
  }
  if (!flags.only.empty() && flags.only != "simulator" && flags.only != "fuzzer" &&
      flags.only != "postgres" && flags.only != "serve") {
    return bad_input("bench: --only: expected simulator, fuzzer, postgres or serve, found \"",
                     flags.only, "\"");
  }
  auto wanted = [&flags](const char* section) {
    return flags.only.empty() || flags.only == section;
  };
  // The catalogue is read before anything is measured: an unreadable one is bad input.
  std::vector<scenario::ScenarioSpec> catalogue;
  if (wanted("simulator")) {
    try {
      auto specs = load_all(find_scenario_files({flags.scenarios}));
      if (!specs) return kExitBadInput;  // load_all has named each problem
      catalogue = std::move(*specs);
    } catch (const scenario::ScenarioError& error) {
      return bad_input("bench: --scenarios: ", error.what());
    }
  }
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::printf(
      "onejob bench%s, %s, %u hardware threads: every figure beside its baseline from "
      "this run\n\n",
      flags.settings.quick ? " --quick" : "", date, std::thread::hardware_concurrency());
  std::fflush(stdout);
  const bench::Settings& settings = flags.settings;
  if (wanted("simulator")) {
    bench::simulator(settings, catalogue);
    std::printf("\n");
    std::fflush(stdout);
  }
  if (wanted("fuzzer")) {
    bench::fuzzer(settings);
    std::printf("\n");
    std::fflush(stdout);
  }
  if (!wanted("postgres") && !wanted("serve")) return kExitPass;
  SharedSchema shared;
  std::optional<bench::PgTarget> target;
  if (choice.postgres) {
    try {
      shared = open_shared_schema(choice);
    } catch (const StoreError& error) {
      return bad_input("--store ", choice.describe(), ": ", error.what());
    }
    target = bench::PgTarget{.uri = choice.uri,
                             .schema = shared.schema,
                             .description = choice.describe(),
                             .connect = shared.connect};
  }
  if (wanted("postgres")) {
    if (target) {
      bench::postgres(*target, settings);
    } else {
      std::printf("postgres: not measured (give --store postgres or postgres=URI)\n");
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  if (wanted("serve")) bench::serve(settings, target ? &*target : nullptr);
  return kExitPass;
}

Command add_bench_command(CLI::App& app) {
  auto flags = std::make_shared<BenchFlags>();
  auto* bench = app.add_subcommand(
      "bench",
      "Measure the simulator, the fuzzer and (with --store postgres) PgStore, each figure "
      "beside its baseline from the same run (over interleaved rounds, printed as ratios). The "
      "full run takes several minutes; --quick is under a minute.");
  bench->add_flag("--quick", flags->settings.quick, "Smaller loads and fewer cases (CI smoke use)");
  bench->add_option("--store", flags->store, "postgres or postgres=URI to measure PgStore too")
      ->capture_default_str();
  bench->add_option("--scenarios", flags->scenarios, "The catalogue to time the loop on")
      ->capture_default_str()
      ->check(non_empty_path());
  bench->add_option("--only", flags->only, "One section: simulator, fuzzer, postgres or serve");
  bench
      ->add_option("--load", flags->settings.jobs,
                   "The simulator section's generated load: this many jobs instead of 1k, 10k "
                   "and 100k (the catalogue and the other sections still run; see --only)")
      ->check(integer_from_to(1, scenario::kMaxLoadJobs));
  bench
      ->add_option("--seconds", flags->settings.seconds,
                   "Each side's time in one PostgreSQL round (run in 50 ms slices)")
      ->capture_default_str();
  bench
      ->add_option("--rounds", flags->settings.rounds,
                   "Measurements per figure (each side; PostgreSQL adds a warm-up round)")
      ->capture_default_str();
  bench->footer(
      "Exit codes: 0 measured; 2 bad flags, an unreadable catalogue or an unreachable "
      "store; 3 a bug in onejob itself.");

  return {bench, [flags] { return bench_command(*flags); }};
}

}  // namespace onejob::cli
