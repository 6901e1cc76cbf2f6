#include "harness/cli/defect_flags.hpp"

#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace onejob::cli {

std::optional<std::string> parse_defects(const std::vector<std::string>& names, Defects& out) {
  for (const auto& name : names) {
    const auto defect = find_defect(name);
    if (!defect) {
      return "--defect: unknown defect \"" + name + "\" ('onejob defects' lists them)";
    }
    out.set(*defect);
  }
  return std::nullopt;
}

int defects_command() {
  std::printf(
      "Named defects: realistic bugs the reference system can run with (--defect NAME on run,\n"
      "replay, fuzz), so that 'onejob selftest' can show every one is caught.\n\n");
  for (const auto& info : all_defects()) {
    std::printf("  %.*s\n      %.*s\n", static_cast<int>(info.name.size()), info.name.data(),
                static_cast<int>(info.summary.size()), info.summary.data());
  }
  return 0;
}

Command add_defects_command(CLI::App& app) {
  auto* defects = app.add_subcommand(
      "defects", "List the named defects the system can run with (--defect NAME), a line each.");
  defects->footer("Exit codes: 0 listed; 2 bad flags; 3 a bug in onejob itself.");

  return {defects, [] { return defects_command(); }};
}

}  // namespace onejob::cli
