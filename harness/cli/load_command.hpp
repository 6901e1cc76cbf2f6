#pragma once

#include <string>

#include "harness/cli/flags.hpp"

namespace onejob::cli {

struct LoadFlags {
  std::string store = "memory";  // memory, postgres or postgres=URI (see store_flag.hpp)
  std::string pg_timeouts;       // --pg-timeouts, empty for the defaults
  double seconds = 10;           // how long clients keep creating
  // How long workers and the reconciler go on after the clients stop. The default covers the
  // slowest settling of the run's policy: a worker backing off the failing store up to its cap
  // (5 s) before it claims again, or a claim whose worker lost the store waiting out its lease
  // (4 s), then a reconcile period (1 s) to take it over and one to ask the provider.
  double drain_seconds = 60;
  int clients = 8;   // each with its own API node, thread and store connection
  int workers = 2;   // each with its own thread and store connection
  int keys = 20000;  // distinct idempotency keys the clients draw from
  // When above 0, also promised: every answer (a 503 included) came within this many seconds.
  double max_answer_seconds = 0;
  // When set, every 5xx body is written there, one per line, for whoever checks what clients
  // were told.
  std::string bodies_file;
};

// `onejob load`: the reference system for real (real time; every client with its API node,
// every worker and the reconciler on a thread of its own, with its own io_context, timer,
// randomness and store connection), driven by clients that double-click and reuse keys with
// other payloads, while whatever happens to the store happens (CI kills backends and restarts
// PostgreSQL under it). After the drain it checks, on a fresh connection, what its users were
// promised: every create was answered 201/200/422/503, no exception left the API, no loop
// ended on its own, every acknowledged job is in the store under its key with the id the
// client was given, and every one of them succeeded (the provider always answers, so a job
// still pending or failed is stranded). Exit 0 when all hold, 1 when one does not, 2 on bad
// flags.
int load_command(const LoadFlags& flags);

// `onejob load` on the command line.
Command add_load_command(CLI::App& app);

}  // namespace onejob::cli
