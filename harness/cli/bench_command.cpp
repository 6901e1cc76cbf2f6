#include "harness/cli/bench_command.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <thread>

#include "system/ports/store.hpp"

#include "harness/bench/bench.hpp"
#include "harness/cli/exit_codes.hpp"
#include "harness/cli/scenario_files.hpp"
#include "harness/cli/store_flag.hpp"

namespace onejob::cli {

int bench_command(const BenchFlags& flags) {
  StoreChoice choice;
  if (auto problem = parse_store(flags.store, choice)) {
    std::cerr << "onejob: " << *problem << "\n";
    return kExitBadInput;
  }
  // Written so that NaN fails them too.
  if (!(flags.seconds > 0 && flags.seconds <= 3600) || flags.rounds < 1 || flags.rounds > 1000) {
    std::cerr << "onejob: bench: --seconds must be in (0, 3600] and --rounds from 1 to 1000\n";
    return kExitBadInput;
  }
  if (!flags.only.empty() && flags.only != "simulator" && flags.only != "fuzzer" &&
      flags.only != "postgres") {
    std::cerr << "onejob: bench: --only: expected simulator, fuzzer or postgres, found \""
              << flags.only << "\"\n";
    return kExitBadInput;
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
      std::cerr << "onejob: bench: --scenarios: " << error.what() << "\n";
      return kExitBadInput;
    }
  }
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::printf(
      "onejob bench%s, %s, %u hardware threads: every figure beside its baseline from "
      "this run\n\n",
      flags.quick ? " --quick" : "", date, std::thread::hardware_concurrency());
  std::fflush(stdout);
  const bench::Settings settings{
      .seconds = flags.seconds, .rounds = flags.rounds, .quick = flags.quick, .jobs = flags.jobs};
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
  if (!wanted("postgres")) return kExitPass;
  if (!choice.postgres) {
    std::printf("postgres: not measured (give --store postgres or postgres=URI)\n");
    return kExitPass;
  }
  SharedSchema shared;
  try {
    shared = open_shared_schema(choice);
  } catch (const StoreError& error) {
    std::cerr << "onejob: --store " << choice.describe() << ": " << error.what() << "\n";
    return kExitBadInput;
  }
  bench::postgres({.uri = choice.uri,
                   .schema = shared.schema,
                   .description = choice.describe(),
                   .connect = shared.connect},
                  settings);
  return kExitPass;
}

}  // namespace onejob::cli
