#pragma once

#include <string>

#include "harness/bench/bench.hpp"
#include "harness/cli/flags.hpp"

namespace onejob::cli {

struct BenchFlags {
  std::string store = "memory";         // the PostgreSQL figures need postgres or postgres=URI
  std::string scenarios = "scenarios";  // the catalogue the simulator is timed on
  std::string only;                     // empty: every section; else simulator, fuzzer or postgres
  bench::Settings settings;             // --seconds, --rounds, --quick, --load
};

// `onejob bench`: each figure beside its baseline, measured in the same run and interleaved
// (baseline, subject, baseline, subject, ...), printed as a ratio over rounds.
// The simulator (loop events/s on the catalogue and on generated loads of 1k, 10k and 100k
// jobs against a bare priority-queue loop and the same loop through Asio; CPU, peak memory and
// growth exponents), the fuzzer (cases/s in one and two processes; cases and seconds to find
// each named defect) and, given a PostgreSQL store, PgStore against its own statements through
// libpqxx and against plain hand-written SQL, uncontended and with 8 threads on the same rows.
int bench_command(const BenchFlags& flags);

// `onejob bench` on the command line.
Command add_bench_command(CLI::App& app);

}  // namespace onejob::cli
