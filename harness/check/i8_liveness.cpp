#include "harness/check/i8_liveness.hpp"

#include <utility>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "harness/check/attempt_facts.hpp"

namespace onejob::check {
namespace {

struct JobFate {
  std::uint64_t seq = 0;  // its first report; 0 when no creation was reported
  bool completed = false;
  bool failed = false;
  bool in_doubt = false;  // it may have failed, or have a failover attempt, unseen
  std::map<std::int64_t, AttemptFacts::Attempt> attempts;
};

std::map<std::int64_t, JobFate> replay(const sim::History& history, std::uint64_t until_seq) {
  std::map<std::int64_t, JobFate> jobs;
  AttemptFacts facts;
  for (const auto& recorded : history) {
    if (recorded.seq >= until_seq) break;
    facts.record(recorded);
    const Event& event = recorded.event;
    const auto job_id = event.int_field("job_id");
    if (!job_id) continue;
    if (event.kind() == "job.created" || event.kind() == "store.job_inserted") {
      auto& job = jobs[*job_id];
      if (job.seq == 0) job.seq = recorded.seq;
    } else if (event.kind() == "job.completed") {
      jobs[*job_id].completed = true;
    } else if (event.kind() == "job.failed") {
      jobs[*job_id].failed = true;
    }
  }
  for (const auto& [attempt_id, attempt] : facts.attempts()) {
    jobs[attempt.job_id].attempts.emplace(attempt_id, attempt);
  }
  for (auto& [job_id, job] : jobs) job.in_doubt = facts.job_in_doubt(job_id);
  return jobs;
}

std::string describe_attempts(const JobFate& job) {
  std::string text;
  for (const auto& [attempt_id, attempt] : job.attempts) {
    text += (text.empty() ? "" : ", ") + std::to_string(attempt_id) + " " + attempt.state;
  }
  return text.empty() ? "none" : text;
}

// Why the job is not where a finished run must leave it; nothing when it is, or when the
// history cannot tell.
std::optional<std::string> judge(const JobFate& job) {
  const auto& attempts = job.attempts;
  const auto has = [&](auto predicate) {
    return std::ranges::any_of(attempts,
                               [&](const auto& entry) { return predicate(entry.second); });
  };
  if (job.completed || job.failed || job.in_doubt) return std::nullopt;
  if (has([](const auto& a) { return a.state == "SUCCEEDED" || a.state == "DISCARDED"; })) {
    return std::nullopt;
  }
  for (const auto& [attempt_id, attempt] : attempts) {
    if (!attempt.in_doubt && (attempt.state == "STARTING" || attempt.state == "RUNNING")) {
      return "is unfinished at run end: attempt " + std::to_string(attempt_id) + " is still " +
             attempt.state;
    }
  }
  if (has([](const auto& a) { return a.in_doubt || a.state == "UNKNOWN"; })) return std::nullopt;
  return "is stuck at run end: neither completed nor failed, and no live attempt (attempts: " +
         describe_attempts(job) + ")";
}

}  // namespace

std::vector<Violation> check_liveness(const sim::History& history) {
  const auto run_end =
      std::ranges::find_if(history, [](const auto& e) { return e.event.kind() == "run.end"; });
  if (run_end == history.end()) return {};
  std::vector<Violation> violations;
  for (const auto& [job_id, job] : replay(history, run_end->seq)) {
    // Attempts of a job no creation reported are I7's business, not liveness.
    if (job.seq == 0) continue;
    if (auto problem = judge(job)) {
      violations.push_back({"I8",
                            "job " + std::to_string(job_id) + " (created at event #" +
                                std::to_string(job.seq) + ") " + *problem,
                            run_end->seq});
    }
  }
  return violations;
}

}  // namespace onejob::check
