#pragma once

#include <cstdint>
#include <string>

#include "harness/scenario/spec.hpp"

namespace onejob::bench {

// A scenario of `jobs` creates for measuring the simulator at scale, written with the scenario
// language's `load:` statement: ten clients sending 50 creates per simulated second, every
// fifth one double-clicked (the same key again 200 ms later), two providers answering in
// 50-500 ms, two API nodes and four workers. With `faults`, every link drops, duplicates and
// reorders 1% of its messages and the store loses 0.5% of its commit replies. The run ends two
// minutes after the last create. Every invariant is checked.
std::string generated_load_yaml(std::uint64_t jobs, bool faults);
scenario::ScenarioSpec generated_load(std::uint64_t jobs, bool faults);

}  // namespace onejob::bench
