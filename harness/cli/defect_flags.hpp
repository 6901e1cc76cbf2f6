#pragma once

#include <optional>
#include <string>
#include <vector>

#include "system/service/defects.hpp"

namespace onejob::cli {

// `--defect NAME` (repeatable) into the switch object; the problem when a name is not a defect.
std::optional<std::string> parse_defects(const std::vector<std::string>& names, Defects& out);

// `onejob defects`: every defect, a line each.
int defects_command();

}  // namespace onejob::cli
