#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/cli/flags.hpp"

namespace onejob::cli {

struct ProbeFlags {
  std::vector<std::string> scenarios;
  std::string suite;
  std::string target;
  std::string profile;
  double time_scale = 1.0;
  std::string target_cmd;
  std::string store_upstream;
  std::string settle = "10s";
  std::string observe_every = "200ms";
  std::uint64_t repeat = 1;
  std::string key_prefix = "auto";
  bool no_expect = false;
  std::string report_dir = "reports/probe";
};

// The scenarios of `--suite conformance`: the article's fractures, as catalogue files.
const std::vector<std::string>& conformance_suite();

// `onejob probe`: runs scenarios' timelines in real time against a live job API through a
// fault proxy and provider stubs, and judges the histories by the black-box rules. Exit 0 when
// every run is safe and meets its expectations, 1 otherwise, 2 on bad input or a target that
// cannot be reached or started.
int probe_command(const ProbeFlags& flags);

Command add_probe_command(CLI::App& app);

}  // namespace onejob::cli
