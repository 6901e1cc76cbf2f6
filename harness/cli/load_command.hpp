#pragma once

#include <string>

#include "harness/cli/flags.hpp"

namespace onejob::cli {

struct LoadFlags {
  std::string store = "memory";  // memory, postgres or postgres=URI (see store_flag.hpp)
  double seconds = 10;           // how long clients keep creating
  double drain_seconds = 10;     // how long workers go on after the clients stop
  int clients = 8;               // each with its own API node (and store connection)
  int workers = 2;               // each with its own store connection
  int keys = 20000;              // distinct idempotency keys the clients draw from
};

// `onejob load`: the reference system for real (real time, one io_context, every API node,
// worker and the reconciler on a connection of its own), driven by clients that double-click
// and reuse keys with other payloads, while whatever happens to the store happens (CI kills
// backends and restarts PostgreSQL under it). Then it checks, on a fresh connection, what its
// users were promised: every create was answered 201/200/422/503, no exception left the API,
// no worker or reconciler loop ended, and every acknowledged job is in the store under its
// key with the id the client was given. Exit 0 when all hold, 1 when one does not, 2 on bad
// flags.
int load_command(const LoadFlags& flags);

// `onejob load` on the command line.
Command add_load_command(CLI::App& app);

}  // namespace onejob::cli
