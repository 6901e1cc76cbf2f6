#pragma once

// The sections of `onejob bench` (bench_command.cpp runs them in order).

#include <string>
#include <vector>

#include "harness/cli/bench_command.hpp"
#include "harness/cli/store_flag.hpp"
#include "harness/scenario/spec.hpp"

namespace onejob::cli {

double median(std::vector<double> values);

// The simulator against a bare priority-queue loop and the same loop through Asio, on the
// catalogue (loaded by the caller, which refuses an unreadable one) and on generated loads;
// each load runs in a child process, so its CPU time and peak memory are its own.
void bench_simulator(const BenchFlags& flags, const std::vector<scenario::ScenarioSpec>& catalogue);
// Fuzz cases per second in one process and in two, and the cases and seconds each named
// defect takes to be found.
void bench_fuzzer(const BenchFlags& flags);
// PgStore against raw statements doing the same work. Returns an exit code.
int bench_postgres(const StoreChoice& choice, const BenchFlags& flags);

}  // namespace onejob::cli
