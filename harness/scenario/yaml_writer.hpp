#pragma once

#include <string>
#include <string_view>

#include "harness/scenario/spec.hpp"

namespace onejob::scenario {

// The scenario as a YAML file the loader reads back into the same spec (same run, same trace):
// every value written explicitly, bodies as raw_body so their bytes (key order included) survive.
// `comment` opens the file as '#' lines. Expectations are not written (a generated case has
// none: its rules are the invariants, all of them, and availability after its quiet phase).
std::string to_yaml(const ScenarioSpec& spec, std::string_view comment = {});

}  // namespace onejob::scenario
