#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/cli/flags.hpp"

namespace onejob::cli {

struct FuzzFlags {
  std::uint64_t cases = 1000;
  std::uint64_t seed = 1;
  std::string time_budget;  // empty: no budget
  std::string shard = "1/1";
  std::optional<std::uint64_t> only_case;
  std::string reproduce;  // a case id "S:K[:P.P.P]": run that exact case
  bool show = false;      // with only_case or reproduce: print the case as YAML, do not run it
  std::string report_dir = "reports/fuzz";
  int jobs = 1;                      // processes; each runs an equal share of the cases
  std::vector<std::string> defects;  // named defects the system runs with
  std::string store = "memory";      // memory, postgres or postgres=URI (see store_flag.hpp)
  std::string pg_timeouts;           // --pg-timeouts, empty for the defaults
  // Set in a job's own process: prefix its progress lines, print no final report.
  std::optional<int> job_number;
};

struct MergeFlags {
  std::vector<std::string> dirs;
  std::string report_dir = "reports/fuzz-merged";
};

// Runs a campaign; exit 0 when every case passed, 1 on a violation (its repro written), 2 on
// bad input.
int fuzz_command(const FuzzFlags& flags);
// Sums the summaries of several campaigns (shards); exit 0, or 1 when any had a violation.
// `seconds`: the wall time of a --jobs run whose jobs are being merged (its report lines).
int merge_command(const MergeFlags& flags, std::optional<double> seconds = std::nullopt);

// Parses "i/n" (1 <= i <= n); the problem when it is not one.
std::optional<std::string> parse_shard(const std::string& text, std::uint64_t& shard,
                                       std::uint64_t& shards);

// A variable's value, or null when it is unset (std::getenv, or a map in tests).
using Environment = std::function<const char*(const char*)>;
// `--shard auto`: the shard ("i/n") a Kubernetes Indexed Job or a CI system's parallel job gives
// this process, and where it came from ("JOB_COMPLETION_INDEX=1, ONEJOB_SHARDS=4"); the problem
// when no scheme is set or its values are not a shard.
std::optional<std::string> resolve_auto_shard(const Environment& env, std::string& shard,
                                              std::string& source);

// `onejob fuzz` and `onejob merge` on the command line.
Command add_fuzz_command(CLI::App& app);
Command add_merge_command(CLI::App& app);

}  // namespace onejob::cli
