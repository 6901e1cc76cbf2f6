#include "harness/scenario/expectations.hpp"

#include <algorithm>
#include <set>
#include <string>

namespace onejob::scenario {
namespace {

std::string at(const SourceMark& mark) {
  return " (expected at line " + std::to_string(mark.line) + ")";
}

std::string join(const std::vector<int>& values, const std::string& separator) {
  std::string out;
  for (int value : values) out += (out.empty() ? "" : separator) + std::to_string(value);
  return out;
}

}  // namespace

std::vector<check::Violation> check_expectations(
    const ScenarioSpec& spec, const std::vector<std::optional<ReceivedResponse>>& received,
    const sim::History& history) {
  std::vector<check::Violation> failed;
  auto fail = [&failed](std::string message, std::optional<std::uint64_t> seq) {
    failed.push_back({"expect", std::move(message), seq});
  };
  for (std::size_t i = 0; i < received.size(); ++i) {
    if (!received[i]) fail("request " + std::to_string(i + 1) + " got no response", std::nullopt);
  }
  for (const auto& expected : spec.expect.responses) {
    const auto& got = received[expected.request - 1];
    if (!got) continue;
    if (std::ranges::find(expected.statuses, got->status) == expected.statuses.end()) {
      fail("request " + std::to_string(expected.request) + ": expected status " +
               join(expected.statuses, " or ") + ", got " + std::to_string(got->status) +
               at(expected.mark),
           got->event_seq);
    }
  }
  for (const auto& group : spec.expect.same_job_id) {
    std::optional<std::int64_t> first_id;
    for (int request : group.requests) {
      const auto& got = received[request - 1];
      if (!got) continue;
      const std::string name = "requests " + join(group.requests, ", ");
      if (!got->job_id) {
        fail(name + ": expected the same job id, but request " + std::to_string(request) +
                 " got none (status " + std::to_string(got->status) + ")" + at(group.mark),
             got->event_seq);
        break;
      }
      if (first_id && *first_id != *got->job_id) {
        fail(name + ": expected the same job id, got " + std::to_string(*first_id) + " and " +
                 std::to_string(*got->job_id) + at(group.mark),
             got->event_seq);
        break;
      }
      first_id = got->job_id;
    }
  }
  if (spec.expect.jobs) {
    // Distinct jobs the store committed or the API reported (a commit whose reply was lost is
    // in the store's log only).
    std::set<std::int64_t> jobs;
    for (const auto& e : history) {
      if (e.event.kind() == "job.created" || e.event.kind() == "store.job_inserted") {
        jobs.insert(e.event.int_field("job_id").value_or(0));
      }
    }
    const auto created = static_cast<std::int64_t>(jobs.size());
    if (created != *spec.expect.jobs) {
      fail("expected " + std::to_string(*spec.expect.jobs) + " job(s) created, got " +
               std::to_string(created) + at(spec.expect.jobs_mark),
           std::nullopt);
    }
  }
  return failed;
}

}  // namespace onejob::scenario
