#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace onejob::check {

// Coverage marks: rare situations a run really reached, read off the store's commit log and the
// providers' and faults' records (FoundationDB's CODE_PROBE, computed after the fact). A scenario
// that exists for a situation requires its mark (`expect: marks:`), so it cannot pass without
// reaching it; the fuzzer counts them to show what a campaign explored.
struct MarkInfo {
  std::string_view name;
  std::string_view meaning;
};

const std::vector<MarkInfo>& all_marks();
bool is_mark(std::string_view name);

// How many times each mark was reached in one run (only marks reached at least once).
using MarkCounts = std::map<std::string, int>;

}  // namespace onejob::check
