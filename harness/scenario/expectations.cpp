#include "harness/scenario/expectations.hpp"

#include <algorithm>
#include <map>
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

struct AttemptView {
  std::int64_t job_id = 0;
  std::int64_t attempt_no = 0;
  std::string state = "STARTING";
};

struct JobView {
  std::string status = "pending";
  std::optional<std::int64_t> winner;  // attempt id
  std::uint64_t last_seq = 0;
};

// The end state of every job and attempt, replayed from the history.
void replay(const sim::History& history, std::map<std::int64_t, AttemptView>& attempts,
            std::map<std::int64_t, JobView>& jobs) {
  for (const auto& e : history) {
    const auto& kind = e.event.kind();
    const auto job = e.event.int_field("job_id").value_or(0);
    const auto attempt = e.event.int_field("attempt_id").value_or(0);
    if (kind == "attempt.created") {
      attempts[attempt] = {job, e.event.int_field("attempt_no").value_or(0), "STARTING"};
    } else if (kind == "attempt.state" && attempts.contains(attempt)) {
      attempts[attempt].state = e.event.string_field("to").value_or("?");
    } else if (kind == "job.completed") {
      jobs[job].status = "succeeded";
      jobs[job].winner = attempt;
    } else if (kind == "job.failed" && !jobs[job].winner) {
      jobs[job].status = "failed";
    } else {
      continue;
    }
    jobs[job].last_seq = e.seq;
  }
  for (const auto& [id, view] : attempts) {
    auto& job = jobs[view.job_id];
    if (view.state == "UNKNOWN" && job.status == "pending") job.status = "blocked";
  }
}

void check_final_jobs(const ScenarioSpec& spec,
                      const std::vector<std::optional<ReceivedResponse>>& received,
                      const sim::History& history, std::vector<check::Violation>& failed) {
  std::map<std::int64_t, AttemptView> attempts;
  std::map<std::int64_t, JobView> jobs;
  replay(history, attempts, jobs);
  for (const auto& expected : spec.expect.final_jobs) {
    const std::string name = "request " + std::to_string(expected.request) + "'s job";
    const auto& got = received[expected.request - 1];
    if (!got || !got->job_id) {
      failed.push_back({"expect", name + ": the request got no job id" + at(expected.mark), {}});
      continue;
    }
    const auto& job = jobs[*got->job_id];
    std::vector<std::string> states;
    std::int64_t winner_no = 0;
    for (const auto& [id, view] : attempts) {
      if (view.job_id != *got->job_id) continue;
      states.push_back(view.state);
      if (job.winner == id) winner_no = view.attempt_no;
    }
    const auto seq = job.last_seq ? std::optional(job.last_seq) : std::nullopt;
    if (expected.status && *expected.status != job.status) {
      failed.push_back({"expect",
                        name + ": expected status " + *expected.status + ", got " + job.status +
                            at(expected.mark),
                        seq});
    }
    if (expected.completed_by && *expected.completed_by != winner_no) {
      failed.push_back(
          {"expect",
           name + ": expected attempt " + std::to_string(*expected.completed_by) + " to win, got " +
               (winner_no ? "attempt " + std::to_string(winner_no) : "none") + at(expected.mark),
           seq});
    }
    if (expected.attempts && *expected.attempts != states) {
      std::string list;
      for (const auto& state : states) list += (list.empty() ? "" : ", ") + state;
      failed.push_back(
          {"expect", name + ": attempts ended [" + list + "], not as expected" + at(expected.mark),
           seq});
    }
  }
}

void check_count(const std::optional<CountExpectation>& expected, const char* what,
                 std::int64_t got, std::vector<check::Violation>& failed) {
  if (expected && expected->value != got) {
    failed.push_back({"expect",
                      "expected " + std::to_string(expected->value) + " " + what + ", got " +
                          std::to_string(got) + at(expected->mark),
                      std::nullopt});
  }
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
  check_final_jobs(spec, received, history, failed);
  std::int64_t attempts = 0;
  std::int64_t discarded = 0;
  std::int64_t executions = 0;
  for (const auto& e : history) {
    const auto& kind = e.event.kind();
    attempts += kind == "attempt.created" ? 1 : 0;
    discarded += kind == "result.discarded" ? 1 : 0;
    // Certification runs are the harness's, not the job's side effects.
    executions +=
        kind == "provider.execute" && !e.event.string_field("job_id").value_or("").empty() ? 1 : 0;
  }
  check_count(spec.expect.attempts, "attempt(s)", attempts, failed);
  check_count(spec.expect.discarded, "discarded result(s)", discarded, failed);
  check_count(spec.expect.executions, "provider execution(s)", executions, failed);
  return failed;
}

}  // namespace onejob::scenario
