#pragma once

#include "harness/cli/flags.hpp"

namespace onejob::cli {

// `onejob serve`: the reference system as a real HTTP service (system/app/service.hpp), set up
// by a YAML config file and flags for its common fields, until SIGTERM or SIGINT stops it
// gracefully. Exit 0 after a stop within the grace, 1 after one that had to cut work off, 2 on
// bad flags, config, tokens or store.
Command add_serve_command(CLI::App& app);

}  // namespace onejob::cli
