#pragma once
// I14's checks of what a node says it heard or refused (i14_reports.cpp runs them in its pass over
// the history): shared by nothing else.
#include <utility>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/check/history.hpp"
#include "harness/check/invariant.hpp"

namespace onejob::check::i14 {

// What a node says it heard or refused, against what reached it: a provider.reply's "late"
// against the delivery and the call's deadline, a reconciler.status against the status answers
// delivered, an output.rejected against the provider's output, and a FAILED write for a contract
// breach against its output.rejected.
class HeardReports {
 public:
  explicit HeardReports(const HistoryModel& model) : model_(model) {}
  void see(const sim::PackedEvent& recorded, std::vector<Violation>& out);

 private:
  const HistoryModel& model_;
  std::size_t next_span_ = 0;  // model_.call_spans, one per provider.call in trace order
  // Each worker's latest call for each attempt.
  std::map<std::pair<std::string_view, std::int64_t>, const CallSpan*> latest_call_;
  // Status answers delivered to a node for a provider key since that node's last
  // reconciler.status about the key's attempt: (node, key) -> the outcomes.
  std::map<std::pair<std::string, std::string>, std::set<std::string>> heard_;
  // (node, attempt) pairs whose output.rejected was reported.
  std::set<std::pair<std::string, std::int64_t>> rejected_;
};

// What `recorded` gets wrong about the attempt it names, or "" when nothing (report_misnamed): a
// report by a node of the system that names an attempt the commit log had inserted names that
// attempt's job and provider, as inserted, and a worker.adopted names a lease token the store had
// given that worker for it. Reports of attempts never inserted are judged by report_untrue.
std::string misnamed(const HistoryModel& model, const sim::PackedEvent& recorded);

// check_reports as it would judge reading every event, not only the kinds I14 reads: the same
// verdicts, for the tests that keep the list of kinds I14 reads whole.
std::vector<Violation> check_reports_reading_every_event(const HistoryModel& model);

}  // namespace onejob::check::i14
