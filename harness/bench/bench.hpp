#pragma once

// `onejob bench`'s measurements: each figure beside its baseline, measured in the same run and
// interleaved (baseline, subject, baseline, subject, ...), printed as a ratio (the median over
// rounds; the geometric mean for PostgreSQL, see bench_pg.cpp). The command line
// (harness/cli/bench_command.cpp) checks the flags, loads the catalogue, opens the store and calls
// these in order.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "system/ports/store.hpp"

#include "harness/scenario/spec.hpp"

namespace onejob::bench {

struct Settings {
  double seconds = 1.5;  // each side's time in one PostgreSQL round
  int rounds = 7;        // measurements per figure, baseline and subject interleaved
  bool quick = false;    // smaller loads and fewer cases: under a minute, for CI
  int jobs = 0;          // when set, the one generated load to measure
};

double median(std::vector<double> values);

// The simulator against a bare priority-queue loop and the same loop through Asio, on the
// catalogue and on generated loads; each load runs in a child process, so its CPU time and peak
// memory are its own.
void simulator(const Settings& settings, const std::vector<scenario::ScenarioSpec>& catalogue);
// Fuzz cases per second in one process and in two, and the cases and seconds each named
// defect takes to be found.
void fuzzer(const Settings& settings);

// Where the PostgreSQL figures run: a fresh schema that the caller created, migrated and keeps
// alive, `connect` opening another PgStore on it, and the libpq URI for the baselines.
struct PgTarget {
  std::string uri;
  std::string schema;
  std::string description;  // for the heading, e.g. "postgres (PGHOST=...)"
  std::function<std::unique_ptr<Store>()> connect;
};
// PgStore against its own statements through libpqxx (the adapter's overhead) and against plain
// hand-written SQL doing the same work (the SQL's), each figure in interleaved rounds.
void postgres(const PgTarget& target, const Settings& settings);

// HTTP creates through `onejob serve`'s service against a server answering a fixed 201 over the
// same HTTP stack, at 1, 8 and 64 keep-alive connections, with p50/p99 latency: on the memory
// store, and with `pg` also on PostgreSQL beside PgStore's create called directly.
void serve(const Settings& settings, const PgTarget* pg);

}  // namespace onejob::bench
