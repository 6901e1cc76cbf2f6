#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/cli/flags.hpp"
#include "harness/fuzz/selftest.hpp"

namespace onejob::cli {

struct SelftestFlags {
  fuzz::SelftestOptions run;         // --cases, --seed, --scenarios (and the report folder)
  std::vector<std::string> defects;  // empty: every defect
  std::string report_dir = "reports/selftest";
};

// `onejob selftest`: the reference system passes the catalogue and a fuzz campaign; every named
// defect fails both. Exit 0 when so, 1 when a defect survives or the reference fails, 2 on bad
// input.
int selftest_command(const SelftestFlags& flags);

// `onejob selftest` on the command line.
Command add_selftest_command(CLI::App& app);

}  // namespace onejob::cli
