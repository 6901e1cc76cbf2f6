#include "harness/check/i1_one_job_per_key.hpp"

#include <utility>

#include <map>
#include <string>

namespace onejob::check {
namespace {

struct CreatedJob {
  std::int64_t job_id;
  std::uint64_t seq;
};

std::string pair_name(const std::string& owner, const std::string& key) {
  return "(owner \"" + owner + "\", key \"" + key + "\")";
}

}  // namespace

std::vector<Violation> check_one_job_per_key(const sim::History& history) {
  std::vector<Violation> violations;
  std::map<std::pair<std::string, std::string>, CreatedJob> jobs;
  for (const auto& recorded : history) {
    const Event& event = recorded.event;
    const auto owner = event.string_field("owner").value_or("");
    const auto key = event.string_field("key").value_or("");
    const auto job_id = event.int_field("job_id");
    const bool created = event.kind() == "job.created" || event.kind() == "store.job_inserted";
    if (created && job_id) {
      auto [it, first] = jobs.try_emplace({owner, key}, CreatedJob{*job_id, recorded.seq});
      // The store's log and the API both report a creation; the same job twice is one job.
      if (!first && it->second.job_id != *job_id) {
        violations.push_back({"I1",
                              "second job " + std::to_string(*job_id) + " created for " +
                                  pair_name(owner, key) + ", which already has job " +
                                  std::to_string(it->second.job_id) + " (event #" +
                                  std::to_string(it->second.seq) + ")",
                              recorded.seq});
      }
    } else if (event.kind() == "api.response" && job_id &&
               event.string_field("route") == "create_job") {
      const auto status = event.int_field("status").value_or(0);
      if (status != 200 && status != 201) continue;
      auto it = jobs.find({owner, key});
      if (it == jobs.end()) {
        violations.push_back({"I1",
                              "response " + std::to_string(status) + " carries job " +
                                  std::to_string(*job_id) + " but no job was created for " +
                                  pair_name(owner, key),
                              recorded.seq});
      } else if (it->second.job_id != *job_id) {
        violations.push_back({"I1",
                              "response " + std::to_string(status) + " carries job " +
                                  std::to_string(*job_id) + " but " + pair_name(owner, key) +
                                  " is job " + std::to_string(it->second.job_id),
                              recorded.seq});
      }
    }
  }
  return violations;
}

}  // namespace onejob::check
