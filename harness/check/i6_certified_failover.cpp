#include "harness/check/i6_certified_failover.hpp"

#include <utility>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "system/service/contract.hpp"

namespace onejob::check {
namespace {

using nlohmann::json;

struct Certification {
  enum class Verdict { passed, failed, unseen };
  Verdict verdict = Verdict::unseen;
  std::uint64_t seq = 0;
};

// Each job's canonical request ("POST /jobs\n" + body). The API's own report wins; an accepted
// create response carries the same bytes (I2 refuses any other payload for the key), and is the
// only trace of a job whose commit reply was lost. Collected over the whole history because
// that response comes with the client's retry, possibly after the job completed.
std::map<std::int64_t, std::string> job_requests(const sim::History& history) {
  std::map<std::int64_t, std::string> requests;
  for (const auto& recorded : history) {
    const Event& event = recorded.event;
    const auto job_id = event.int_field("job_id");
    const auto request = event.string_field("request");
    if (!job_id || !request) continue;
    if (event.kind() == "job.created") {
      requests.insert_or_assign(*job_id, *request);
    } else if (event.kind() == "api.response" && event.string_field("route") == "create_job") {
      const auto status = event.int_field("status").value_or(0);
      if (status == 200 || status == 201) requests.try_emplace(*job_id, *request);
    }
  }
  return requests;
}

// Why `result` is not a valid result for the job created by `request`; nothing when it is.
std::optional<std::string> contract_problem(const std::string& request, const std::string& result) {
  const auto newline = request.find('\n');
  const auto body = newline == std::string::npos
                        ? json()
                        : json::parse(request.substr(newline + 1), nullptr, false);
  if (!body.is_object() || !body.contains("operation") || !body["operation"].is_string() ||
      !body.contains("input")) {
    // The API accepted a request that names no operation: no output can honour it.
    return "the job's request is not a create body: " + request;
  }
  const auto operation = body["operation"].get<std::string>();
  const auto check = validate_output(operation, body["input"].dump(), result);
  if (const auto* bad = std::get_if<ContractViolation>(&check)) {
    return "breaks the " + operation + " contract: " + bad->reason;
  }
  return std::nullopt;
}

std::optional<Violation> judge_new_attempt(const sim::TraceEvent& recorded,
                                           const std::map<std::string, Certification>& latest) {
  const Event& event = recorded.event;
  const auto origin = event.string_field("origin").value_or("");
  if (origin != "failover" && origin != "explicit") return std::nullopt;
  const auto provider = event.string_field("provider").value_or("");
  const std::string attempt = origin + " attempt " +
                              std::to_string(event.int_field("attempt_id").value_or(0)) +
                              " of job " + std::to_string(event.int_field("job_id").value_or(0)) +
                              " goes to provider \"" + provider + "\"";
  const auto it = latest.find(provider);
  if (it == latest.end()) {
    return Violation{"I6", attempt + ", which has no contract certification", recorded.seq};
  }
  // The store may hold a certification whose reply was lost; its verdict is not in the history.
  if (it->second.verdict == Certification::Verdict::unseen) return std::nullopt;
  if (it->second.verdict == Certification::Verdict::failed) {
    return Violation{"I6",
                     attempt + ", whose latest certification (event #" +
                         std::to_string(it->second.seq) + ") failed",
                     recorded.seq};
  }
  return std::nullopt;
}

}  // namespace

std::vector<Violation> check_certified_failover(const sim::History& history) {
  std::vector<Violation> violations;
  const auto requests = job_requests(history);
  std::map<std::string, Certification> latest;
  std::map<std::int64_t, std::uint64_t> rejected;  // attempt id -> its output.rejected
  for (const auto& recorded : history) {
    const Event& event = recorded.event;
    if (event.kind() == "certification.recorded") {
      const bool passed = event.bool_field("passed").value_or(false);
      latest.insert_or_assign(
          event.string_field("provider").value_or(""),
          Certification{passed ? Certification::Verdict::passed : Certification::Verdict::failed,
                        recorded.seq});
    } else if (event.kind() == "certification.store_error") {
      latest.insert_or_assign(event.string_field("provider").value_or(""),
                              Certification{Certification::Verdict::unseen, recorded.seq});
    } else if (event.kind() == "attempt.created") {
      if (auto violation = judge_new_attempt(recorded, latest)) violations.push_back(*violation);
    } else if (event.kind() == "output.rejected") {
      rejected.try_emplace(event.int_field("attempt_id").value_or(0), recorded.seq);
    } else if (event.kind() == "job.completed") {
      const auto job_id = event.int_field("job_id").value_or(0);
      const auto attempt_id = event.int_field("attempt_id").value_or(0);
      const std::string completion =
          "job " + std::to_string(job_id) + "'s result from attempt " + std::to_string(attempt_id);
      if (auto it = rejected.find(attempt_id); it != rejected.end()) {
        violations.push_back({"I6",
                              "job " + std::to_string(job_id) + " is completed by attempt " +
                                  std::to_string(attempt_id) +
                                  ", whose output was rejected (event #" +
                                  std::to_string(it->second) + ")",
                              recorded.seq});
      }
      const auto request = requests.find(job_id);
      if (request == requests.end()) continue;
      const auto result = event.string_field("result").value_or("");
      if (auto problem = contract_problem(request->second, result)) {
        violations.push_back(
            {"I6", completion + " " + *problem + " (result " + result + ")", recorded.seq});
      }
    }
  }
  return violations;
}

}  // namespace onejob::check
