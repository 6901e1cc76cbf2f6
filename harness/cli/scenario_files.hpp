#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/scenario/spec.hpp"

namespace onejob::cli {

// The catalogue `onejob run` runs when given no path: ./scenarios when it exists, else the one
// installed beside the binary (<prefix>/share/onejob/scenarios for <prefix>/bin/onejob), else
// "scenarios" (which then fails as a missing path).
std::string default_catalogue();

// The scenario files named by `paths`: files as given, folders searched recursively, each
// folder's files in sorted order so a run never depends on directory order. Throws
// scenario::ScenarioError for a path that does not exist or a folder without scenarios.
std::vector<std::string> find_scenario_files(const std::vector<std::string>& paths);

// Loads every file before running any, so bad input is reported whole and up front (on stderr);
// nullopt when any file is bad. Scenario names must be unique.
std::optional<std::vector<scenario::ScenarioSpec>> load_all(const std::vector<std::string>& files);

}  // namespace onejob::cli
