#pragma once

#include <string>
#include <string_view>

#include "harness/scenario/spec.hpp"

namespace onejob::scenario {

// Reads and validates a scenario file (format: scenarios/README.md).
// Throws ScenarioError for an unreadable file, invalid YAML or an invalid scenario.
ScenarioSpec load_scenario_file(const std::string& path);

// The same, from text; `file` only names the source in errors.
ScenarioSpec parse_scenario(const std::string& yaml_text, const std::string& file);

}  // namespace onejob::scenario
