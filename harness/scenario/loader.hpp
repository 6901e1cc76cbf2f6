#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <yaml-cpp/node/node.h>

#include "harness/scenario/spec.hpp"

namespace onejob::scenario {

// Reads and validates a scenario file (format: scenarios/README.md).
// Throws ScenarioError for an unreadable file, invalid YAML or an invalid scenario.
ScenarioSpec load_scenario_file(const std::string& path);

// The most jobs a `load:` statement may generate. Its run takes minutes and gigabytes; the
// loader's fuzz target asks for a lower bound, so that every input stays within seconds.
inline constexpr std::uint64_t kMaxLoadJobs = 1'000'000;

// The same, from text; `file` only names the source in errors.
ScenarioSpec parse_scenario(const std::string& yaml_text, const std::string& file,
                            std::uint64_t max_load_jobs = kMaxLoadJobs);

// A YAML file's text, refusing what is not a regular file or is larger than a scenario may be.
std::string read_yaml_file(const std::string& path);

// One YAML document from text under the scenario loader's limits (size, parse memory, depth,
// value count), for the other YAML files onejob reads; `what` names the kind of file in errors.
YAML::Node parse_yaml_document(const std::string& yaml_text, const std::string& file,
                               std::string_view what);

}  // namespace onejob::scenario
