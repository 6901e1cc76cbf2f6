// log — the store's final rows agree with its commit log.
//
// The commit log is derived from what the store answered each write; its rows are read at the end
// through the Store port. Checks every job and attempt the log committed:
//   - the row exists (nothing accepted is lost), with the log's final attempt state, the job's
//     winner, version, result (as the winning compare-and-swap wrote it) and failed status.
// Does not check:
//   - rows the log never mentions (a store that invents rows is caught by the differential tests
//     against PostgreSQL, not here).
#include "harness/check/invariant.hpp"

namespace onejob::check {

std::vector<Violation> check_store_agrees(const HistoryModel& model, const StoreRows& rows) {
  std::vector<Violation> out;
  const auto end = model.end_seq;
  auto report = [&](std::string_view clause, std::string message) {
    out.push_back(violation(clause, std::move(message), end));
  };
  for (const auto& [id, job] : model.jobs) {
    auto row = rows.jobs.find(id);
    if (row == rows.jobs.end()) {
      report("log.job_row_missing",
             "the store committed " + job_ref(id) + " but no longer holds it");
      continue;
    }
    const auto* won = job.won();
    const JobEnd ending = model.end_of(job);
    JobStatus status = JobStatus::pending;
    if (won != nullptr) status = JobStatus::succeeded;
    if (ending == JobEnd::failed) status = JobStatus::failed;
    // Each field that differs, as "field: row value, log value", so the headline says what.
    std::string differs;
    const auto add = [&differs](std::string_view field, const std::string& row_value,
                                const std::string& log_value) {
      if (row_value == log_value) return;
      differs += std::string(differs.empty() ? "" : "; ") + std::string(field) + " " + row_value +
                 " in the row, " + log_value + " in the log";
    };
    const auto winner_text = [](std::optional<AttemptId> attempt) {
      return attempt ? "attempt " + std::to_string(*attempt) : std::string("none");
    };
    add("status", std::string(to_string(row->second.status)), std::string(to_string(status)));
    add("completed_by", winner_text(row->second.completed_by),
        winner_text(won ? std::optional(won->what.attempt_id) : std::nullopt));
    add("version", std::to_string(row->second.version),
        std::to_string(won ? won->what.version : 1));
    if (const auto written = won ? model.cas_event(*won).result : std::string();
        won && row->second.result != written) {
      differs += std::string(differs.empty() ? "" : "; ") + "result " +
                 std::to_string(row->second.result.size()) + " bytes in the row, not the " +
                 std::to_string(written.size()) + " bytes the winner wrote";
    }
    if (!differs.empty()) {
      report("log.job_row_differs", job_ref(id) + "'s row differs from its commit log: " + differs);
    }
    const auto attempts = rows.attempts.find(id);
    for (auto attempt_id : job.attempts) {
      const auto& logged = model.attempts.at(attempt_id);
      const AttemptRow* found = nullptr;
      if (attempts != rows.attempts.end()) {
        for (const auto& a : attempts->second) found = a.id == attempt_id ? &a : found;
      }
      if (found == nullptr) {
        report("log.attempt_row_missing",
               "the store committed " + attempt_ref(attempt_id) + " but no longer holds it");
      } else if (found->state != logged.state) {
        report("log.attempt_state_differs",
               attempt_ref(attempt_id) + " is " + std::string(to_string(found->state)) +
                   " in the store but " + std::string(to_string(logged.state)) +
                   " in its commit log");
      }
    }
  }
  return out;
}

}  // namespace onejob::check
