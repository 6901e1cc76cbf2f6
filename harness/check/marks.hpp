#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace onejob::check {

struct HistoryModel;

// Coverage marks: rare situations a run really reached, read off the store's commit log and the
// providers' and faults' records (FoundationDB's CODE_PROBE, computed after the fact). A scenario
// that exists for a situation requires its mark (`expect: marks:`), so it cannot pass without
// reaching it; the fuzzer counts them to show what a campaign explored.
//
// One table: the ids below, their names (as scenarios and reports write them) and meanings
// (kMarks), and the rule that reaches each (reach_marks, in marks.cpp beside the table).
// Declared in this order in kMarks; `blocked` is last.
enum class Mark {
  duplicate_key_refused,
  write_reply_lost,
  commit_unknown_resolved,
  timeout_unknown,
  lease_taken_over,
  fenced_write_refused,
  state_write_refused,
  live_attempt_refused,
  won_job_refused,
  cas_lost,
  cas_tie,
  late_result_won,
  late_result_discarded,
  unknown_resolved_failed,
  cancel_then_result,
  operator_cancel,
  operator_retry,
  failover,
  job_failed,
  certification_failed,
  invalid_output_rejected,
  provider_dedup,
  node_crash,
  node_restart,
  node_pause,
  connection_reset,
  deadline_race,
  redriven,
  awaiting_operator,
  blocked,
};

struct MarkInfo {
  Mark id;
  std::string_view name;
  std::string_view meaning;
};

const std::vector<MarkInfo>& all_marks();
bool is_mark(std::string_view name);

// How many times each mark was reached in one run (only marks reached at least once), by name.
using MarkCounts = std::map<std::string, int>;

// The marks a folded run reached: every rule reads the model (and the run's own fault and
// provider records in model.history), never a node's report of itself.
MarkCounts reach_marks(const HistoryModel& model);

}  // namespace onejob::check
