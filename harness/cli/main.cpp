// The onejob command line: the one place that wires adapters to the harness. Each command adds
// its own flags and says what runs it (harness/cli/*_command.cpp); this only dispatches.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "system/domain/check.hpp"

#include "harness/cli/bench_command.hpp"
#include "harness/cli/check_command.hpp"
#include "harness/cli/defect_flags.hpp"
#include "harness/cli/exit_codes.hpp"
#include "harness/cli/flags.hpp"
#include "harness/cli/fuzz_command.hpp"
#include "harness/cli/load_command.hpp"
#include "harness/cli/probe_command.hpp"
#include "harness/cli/run_command.hpp"
#include "harness/cli/selftest_command.hpp"
#include "harness/cli/serve_command.hpp"
#include "harness/cli/version.hpp"
#include "harness/report/report.hpp"

int main(int argc, char** argv) {
  onejob::report::set_program(argc > 0 ? argv[0] : "onejob");
  CLI::App app{
      "onejob: a deterministic fault-injection harness around a reference job/attempt system.\n"
      "One user click must never become two jobs, two charges or two results."};
  app.footer(
      "Exit codes: 0 all scenarios passed; 1 an invariant was violated or an expectation\n"
      "failed; 2 bad input (unreadable or invalid scenario, bad flags); 3 a bug in onejob\n"
      "itself (an always-on assertion failed outside a scenario run).\n"
      "Run 'onejob COMMAND --help' for each command (run, replay, fuzz, merge, defects, "
      "selftest, load, bench, serve, check, probe).");
  app.set_version_flag("--version", std::string{"onejob "} + onejob::cli::version(),
                       "Print onejob's version (and the git commit it was built from) and exit");
  app.require_subcommand(1);

  using namespace onejob::cli;
  const std::vector<Command> commands = {
      add_run_command(app),   add_replay_command(app),  add_fuzz_command(app),
      add_merge_command(app), add_defects_command(app), add_selftest_command(app),
      add_load_command(app),  add_bench_command(app),   add_serve_command(app),
      add_check_command(app), add_probe_command(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? kExitPass : kExitBadInput;
  }
  try {
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
  } catch (const onejob::AssertionFailure& failure) {
    // Outside a scenario run (a run records it as a `run` violation): onejob's own bug.
    std::fprintf(stderr, "onejob: internal error, please report it: %s\n", failure.what().c_str());
    return kExitBug;
  }
  return kExitBadInput;
}
