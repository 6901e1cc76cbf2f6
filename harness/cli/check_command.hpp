#pragma once

#include <string>
#include <vector>

#include "harness/cli/flags.hpp"

namespace onejob::cli {

struct CheckFlags {
  std::vector<std::string> histories;
  bool json = false;
  std::string html_dir;  // when set: a page per history, DIR/<file name without .jsonl>.html
};

// `onejob check HISTORY.jsonl...`: judges black-box histories (client requests and answers,
// provider executions) by the black-box rules. Exit 0 when every safety rule holds, 1 when one
// is broken, 2 on bad input. Availability findings are printed apart and do not fail.
int check_command(const CheckFlags& flags);

// `onejob check` on the command line.
Command add_check_command(CLI::App& app);

}  // namespace onejob::cli
