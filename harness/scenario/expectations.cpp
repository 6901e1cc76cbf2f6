#include "harness/scenario/expectations.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

namespace onejob::scenario {
namespace {

std::string at(const SourcePos& pos) {
  return " (expected at line " + std::to_string(pos.line) + ")";
}

template <typename T>
std::string join(const std::vector<T>& values, const std::string& separator) {
  std::string out;
  for (const auto& value : values) {
    if (!out.empty()) out += separator;
    if constexpr (std::is_same_v<T, std::string>) {
      out += value;
    } else {
      out += std::to_string(value);
    }
  }
  return out;
}

using Violations = std::vector<check::Violation>;
using check::violation;

void check_final_jobs(const ScenarioSpec& spec,
                      const std::vector<std::optional<ReceivedResponse>>& received,
                      const check::StoreRows& rows, Violations& failed) {
  static const std::vector<check::AttemptRow> kNone;
  for (const auto& expected : spec.expect.final_jobs) {
    const std::string name = "request " + std::to_string(expected.request) + "'s job";
    const auto& got = received[expected.request - 1];
    const auto row = got && got->job_id ? rows.jobs.find(*got->job_id) : rows.jobs.end();
    if (row == rows.jobs.end()) {
      failed.push_back(violation("expect.final_no_job",
                                 name + ": the request got no job id" + at(expected.pos), {}, {}));
      continue;
    }
    const auto found = rows.attempts.find(row->first);
    const auto& attempts = found == rows.attempts.end() ? kNone : found->second;
    const std::string status = final_status(row->second, attempts);
    if (!expected.statuses.empty() &&
        std::ranges::find(expected.statuses, status) == expected.statuses.end()) {
      failed.push_back(violation("expect.final_status",
                                 name + ": expected status " + join(expected.statuses, " or ") +
                                     ", got " + status + at(expected.pos),
                                 {}, {}));
    }
    int winner_no = 0;
    std::vector<std::string> states;
    for (const auto& attempt : attempts) {
      states.emplace_back(to_string(attempt.state));
      if (row->second.completed_by == attempt.id) winner_no = attempt.attempt_no;
    }
    if (expected.completed_by && *expected.completed_by != winner_no) {
      failed.push_back(violation(
          "expect.final_winner",
          name + ": expected attempt " + std::to_string(*expected.completed_by) + " to win, got " +
              (winner_no ? "attempt " + std::to_string(winner_no) : "none") + at(expected.pos),
          {}, {}));
    }
    if (expected.attempts && *expected.attempts != states) {
      std::string list;
      for (const auto& state : states) list += (list.empty() ? "" : ", ") + state;
      failed.push_back(violation(
          "expect.final_attempts",
          name + ": attempts ended [" + list + "], not as expected" + at(expected.pos), {}, {}));
    }
  }
}

void check_count(const std::optional<CountExpectation>& expected, std::string_view clause,
                 const char* what, std::int64_t got, Violations& failed) {
  if (expected && expected->value != got) {
    failed.push_back(violation(clause,
                               "expected " + std::to_string(expected->value) + " " + what +
                                   ", got " + std::to_string(got) + at(expected->pos),
                               {}, {}));
  }
}

void check_responses(const ScenarioSpec& spec,
                     const std::vector<std::optional<ReceivedResponse>>& received,
                     Violations& failed) {
  const std::string after = spec.quiet ? " after the quiet phase" : "";
  for (std::size_t i = 0; i < received.size(); ++i) {
    if (!received[i]) {
      failed.push_back(violation("availability.unanswered",
                                 "request " + std::to_string(i + 1) + " got no answer" + after, {},
                                 {}));
    }
  }
  for (const auto& expected : spec.expect.responses) {
    const auto& got = received[expected.request - 1];
    if (got && std::ranges::find(expected.statuses, got->status) == expected.statuses.end()) {
      failed.push_back(violation("expect.response_status",
                                 "request " + std::to_string(expected.request) +
                                     ": expected status " + join(expected.statuses, " or ") +
                                     ", got " + std::to_string(got->status) + at(expected.pos),
                                 got->event_seq, {}));
    }
  }
  for (const auto& group : spec.expect.same_job_id) {
    std::optional<std::int64_t> first_id;
    for (int request : group.requests) {
      const auto& got = received[request - 1];
      if (!got) continue;
      const std::string name = "requests " + join(group.requests, ", ");
      if (!got->job_id || (first_id && *first_id != *got->job_id)) {
        failed.push_back(
            violation("expect.same_job_id",
                      name + ": expected the same job id, request " + std::to_string(request) +
                          " got " + (got->job_id ? std::to_string(*got->job_id) : "none") +
                          " (status " + std::to_string(got->status) + ")" + at(group.pos),
                      got->event_seq, {}));
        break;
      }
      first_id = got->job_id;
    }
  }
}

}  // namespace

std::string final_status(const check::JobRow& job, const std::vector<check::AttemptRow>& attempts) {
  if (job.status != JobStatus::pending) return std::string(to_string(job.status));
  for (const auto& attempt : attempts) {
    if (attempt.state == AttemptState::unknown) return "blocked";
  }
  if (!attempts.empty() && attempts.back().state == AttemptState::cancelled) {
    return "awaiting_operator";
  }
  return "pending";
}

std::vector<check::Violation> check_expectations(
    const ScenarioSpec& spec, const std::vector<std::optional<ReceivedResponse>>& received,
    const check::HistoryModel& model, const check::StoreRows& rows) {
  Violations failed;
  check_responses(spec, received, failed);
  if (spec.expect.jobs && static_cast<std::int64_t>(rows.jobs.size()) != *spec.expect.jobs) {
    failed.push_back(violation("expect.jobs",
                               "expected " + std::to_string(*spec.expect.jobs) +
                                   " job(s) created, got " + std::to_string(rows.jobs.size()) +
                                   at(spec.expect.jobs_pos),
                               {}, {}));
  }
  check_final_jobs(spec, received, rows, failed);
  std::int64_t attempts = 0;
  std::int64_t discarded = 0;
  for (const auto& [job, rows_of_job] : rows.attempts) {
    attempts += static_cast<std::int64_t>(rows_of_job.size());
    discarded +=
        std::ranges::count(rows_of_job, AttemptState::discarded, &check::AttemptRow::state);
  }
  check_count(spec.expect.attempts, "expect.attempts", "attempt(s)", attempts, failed);
  check_count(spec.expect.discarded, "expect.discarded", "discarded result(s)", discarded, failed);
  check_count(spec.expect.executions, "expect.executions", "provider execution(s)",
              static_cast<std::int64_t>(model.executions.size()), failed);
  for (const auto& expected : spec.expect.marks) {
    if (!model.marks.contains(expected.name)) {
      failed.push_back(violation(
          "expect.mark", "the run never reached mark \"" + expected.name + "\"" + at(expected.pos),
          {}, {}));
    }
  }
  return failed;
}

}  // namespace onejob::scenario
