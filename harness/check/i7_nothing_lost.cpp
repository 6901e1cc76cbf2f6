#include "harness/check/i7_nothing_lost.hpp"

#include <utility>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "harness/check/attempt_facts.hpp"

namespace onejob::check {
namespace {

// A job no worker picked up by run.end is lost, unless the run ended sooner than this after its
// creation: workers poll for claims, and a claim whose reply was lost only shows once its lease
// expires and the reconciler takes over.
constexpr Duration kPickUpGrace = std::chrono::minutes(1);

struct KnownJob {
  std::string owner;
  std::uint64_t seq = 0;  // its first report: the store's commit, or else the API's
  Instant at{};
  bool reported_by_api = false;
  bool store_attempt = false;  // store.job_inserted named the initial attempt
};

struct Facts {
  std::map<std::int64_t, KnownJob> jobs;
  std::set<std::int64_t> with_attempt_created;
  std::set<std::int64_t> picked_up;  // jobs with an attempt past STARTING, or maybe past it
  std::map<std::string, std::pair<std::string, std::uint64_t>> requests;  // id -> path, seq
  const sim::TraceEvent* run_end = nullptr;
};

Facts collect(const sim::History& history) {
  Facts facts;
  AttemptFacts attempts;
  for (const auto& recorded : history) {
    attempts.record(recorded);
    const Event& event = recorded.event;
    const auto& kind = event.kind();
    const auto job_id = event.int_field("job_id");
    if ((kind == "job.created" || kind == "store.job_inserted") && job_id) {
      auto [it, first] = facts.jobs.try_emplace(
          *job_id, KnownJob{event.string_field("owner").value_or(""), recorded.seq, recorded.at});
      if (kind == "job.created") it->second.reported_by_api = true;
      if (kind == "store.job_inserted" && event.int_field("attempt_id")) {
        it->second.store_attempt = true;
      }
    } else if (kind == "attempt.created" && job_id) {
      facts.with_attempt_created.insert(*job_id);
    } else if (kind == "api.request") {
      // A duplicated request keeps its first arrival: the earliest start a reply can answer.
      facts.requests.try_emplace(event.string_field("request_id").value_or(""),
                                 event.string_field("path").value_or(""), recorded.seq);
    } else if (kind == "run.end" && facts.run_end == nullptr) {
      facts.run_end = &recorded;
    }
  }
  // A claim whose reply was lost shows later (the reconciler takes over the expired lease, or
  // queries the attempt it found UNKNOWN); a cancel whose reply was lost may have ended the
  // attempt before any claim.
  for (const auto& [attempt_id, attempt] : attempts.attempts()) {
    if (attempt.state != "STARTING" || attempt.in_doubt) facts.picked_up.insert(attempt.job_id);
  }
  return facts;
}

std::optional<std::int64_t> job_in_path(const std::string& path) {
  constexpr std::string_view kPrefix = "/jobs/";
  if (!path.starts_with(kPrefix)) return std::nullopt;
  std::int64_t id = 0;
  const char* first = path.data() + kPrefix.size();
  const char* last = path.data() + path.size();
  auto [end, error] = std::from_chars(first, last, id);
  if (error != std::errc{} || end != last) return std::nullopt;
  return id;
}

std::string job_name(std::int64_t job_id) { return "job " + std::to_string(job_id); }

std::optional<Violation> judge_receive(const sim::TraceEvent& recorded, const Facts& facts) {
  const Event& event = recorded.event;
  const auto status = event.int_field("status").value_or(0);
  const auto job_id = event.int_field("job_id");
  if ((status != 200 && status != 201) || !job_id) return std::nullopt;
  const std::string received = "client received " + job_name(*job_id) + " (status " +
                               std::to_string(status) + ") for request " +
                               std::to_string(event.int_field("request").value_or(0));
  const auto it = facts.jobs.find(*job_id);
  if (it == facts.jobs.end()) {
    return Violation{"I7", received + ", but no such job was ever created", recorded.seq};
  }
  if (it->second.seq > recorded.seq) {
    return Violation{
        "I7",
        received + " before the job was created (event #" + std::to_string(it->second.seq) + ")",
        recorded.seq};
  }
  return std::nullopt;
}

std::optional<Violation> judge_get_job(const sim::TraceEvent& recorded, const Facts& facts) {
  const Event& event = recorded.event;
  const auto status = event.int_field("status").value_or(0);
  const auto owner = event.string_field("owner").value_or("");
  const auto request = facts.requests.find(event.string_field("request_id").value_or(""));
  auto job_id = event.int_field("job_id");
  if (!job_id && request != facts.requests.end()) job_id = job_in_path(request->second.first);
  const auto job = job_id ? facts.jobs.find(*job_id) : facts.jobs.end();
  if (job == facts.jobs.end()) return std::nullopt;
  if (status == 200 && job->second.owner != owner) {
    return Violation{"I7",
                     "get_job by owner \"" + owner + "\" returned " + job_name(*job_id) +
                         " of owner \"" + job->second.owner + "\"",
                     recorded.seq};
  }
  // A read that began before the commit may rightly miss the job; one that began after may not.
  if (status == 404 && job->second.owner == owner && request != facts.requests.end() &&
      job->second.seq < request->second.second) {
    return Violation{"I7",
                     "get_job for " + job_name(*job_id) + " by its owner \"" + owner +
                         "\" answered 404, but the job was created (event #" +
                         std::to_string(job->second.seq) + ") before the request arrived (event #" +
                         std::to_string(request->second.second) + "): lost job",
                     recorded.seq};
  }
  return std::nullopt;
}

void judge_jobs(const Facts& facts, std::vector<Violation>& violations) {
  for (const auto& [job_id, job] : facts.jobs) {
    const bool has_attempt =
        facts.with_attempt_created.contains(job_id) || (!job.reported_by_api && job.store_attempt);
    if (!has_attempt) {
      violations.push_back(
          {"I7", job_name(job_id) + " exists but has no attempt.created for its initial attempt",
           job.seq});
    }
    if (facts.run_end == nullptr || facts.picked_up.contains(job_id)) continue;
    const auto waited = facts.run_end->at - job.at;
    if (waited <= kPickUpGrace) continue;
    violations.push_back(
        {"I7",
         job_name(job_id) + " (created at event #" + std::to_string(job.seq) + ", " +
             std::to_string(std::chrono::duration_cast<std::chrono::seconds>(waited).count()) +
             "s before the run ended) never had an attempt picked up",
         facts.run_end->seq});
  }
}

}  // namespace

std::vector<Violation> check_nothing_lost(const sim::History& history) {
  std::vector<Violation> violations;
  const Facts facts = collect(history);
  for (const auto& recorded : history) {
    const Event& event = recorded.event;
    std::optional<Violation> violation;
    if (event.kind() == "client.receive") {
      violation = judge_receive(recorded, facts);
    } else if (event.kind() == "api.response" && event.string_field("route") == "get_job") {
      violation = judge_get_job(recorded, facts);
    }
    if (violation) violations.push_back(std::move(*violation));
  }
  judge_jobs(facts, violations);
  std::ranges::stable_sort(violations, {}, [](const Violation& v) { return v.event_seq; });
  return violations;
}

}  // namespace onejob::check
