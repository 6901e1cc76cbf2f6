#pragma once

#include <optional>
#include <string>
#include <vector>

#include "system/service/defects.hpp"

#include "harness/cli/flags.hpp"

namespace onejob::cli {

// `--defect NAME` (repeatable) into the switch object; the problem when a name is not a defect.
std::optional<std::string> parse_defects(const std::vector<std::string>& names, Defects& out);

// `onejob defects`: every defect, a line each.
int defects_command();

// `onejob defects` on the command line.
Command add_defects_command(CLI::App& app);

}  // namespace onejob::cli
