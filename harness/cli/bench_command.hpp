#pragma once

#include <string>

namespace onejob::cli {

struct BenchFlags {
  std::string store = "memory";  // the PostgreSQL figures need postgres or postgres=URI
  double seconds = 1.0;          // per measurement
  int rounds = 7;                // measurements per figure, baseline and subject interleaved
};

// `onejob bench`: each figure beside its baseline, measured in the same run and interleaved
// (baseline, subject, baseline, subject, ...), printed as a ratio (the median over rounds).
// Today: PgStore's creates per second at 1 and 8 connections against a raw statement doing
// the same inserts on the same server.
int bench_command(const BenchFlags& flags);

}  // namespace onejob::cli
