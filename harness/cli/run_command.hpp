#pragma once

#include "harness/cli/flags.hpp"

namespace onejob::cli {

// `onejob run [PATH...]`: every scenario found, each run and judged; reports written.
Command add_run_command(CLI::App& app);
// `onejob replay FILE`: one scenario again, its trace for people, or where it departs from
// another run's trace.
Command add_replay_command(CLI::App& app);

}  // namespace onejob::cli
