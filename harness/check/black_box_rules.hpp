#pragma once
// What the black-box rules share: the history indexed the ways they ask, the helpers they word
// their findings with, and each rule's entry. Only black_box.cpp (execution and availability
// rules, the rule table) and black_box_answers.cpp (keys, answers and owners) include it.
#include <utility>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>

#include "harness/check/black_box.hpp"

namespace onejob::check::black_box::detail {

inline bool success(const std::optional<int>& status) {
  return status && *status >= 200 && *status < 300;
}

inline std::string identity_of(const std::string& owner, const std::string& key) {
  std::string id = owner;
  id += '\0';
  id += key;
  return id;
}

inline std::string describe_identity(const std::string& identity) {
  const auto nul = identity.find('\0');
  return "owner " + identity.substr(0, nul) + "'s key " + identity.substr(nul + 1);
}

inline std::string shown(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 120) text = text.substr(0, 117) + "...";
  return text;
}

inline const nlohmann::json& input_of(const nlohmann::json& body) {
  if (body.is_object() && body.contains("input")) return body["input"];
  return body;
}

inline Finding finding(std::string clause, std::string message, std::vector<std::uint64_t> lines) {
  std::string rule = clause.substr(0, clause.find('.'));
  return Finding{std::move(rule), std::move(clause), std::move(message), std::move(lines)};
}

// What the history says, indexed the ways the rules ask.
struct Index {
  std::map<std::string, const Request*> request_by_id;
  std::map<std::string, std::vector<const Response*>> responses_by_id;
  // Acknowledged creates: identity -> (job id -> first acknowledging response).
  std::map<std::string, std::map<std::string, const Response*>> jobs_of_identity;
  std::map<std::string, std::string> identity_of_job;
  // Every create body, with its identity, for linking executions.
  std::vector<std::pair<const nlohmann::json*, std::string>> inputs;
  // Attempt executions linked to exactly one identity, and those that may belong to an identity
  // (their input is one of its creates', perhaps another identity's too).
  std::map<std::string, std::vector<const Execution*>> executions_of_identity;
  std::map<std::string, std::vector<const Execution*>> candidates_of_identity;
  std::map<std::string, std::int64_t> first_retry;  // identity -> its first retry's sending

  explicit Index(const History& history) {
    for (const auto& request : history.requests) request_by_id.emplace(request.id, &request);
    for (const auto& response : history.responses) {
      responses_by_id[response.id].push_back(&response);
    }
    for (const auto& request : history.requests) {
      if (request.action != "create" || !request.key) continue;
      const std::string identity = identity_of(request.owner, *request.key);
      if (request.body) inputs.emplace_back(&input_of(*request.body), identity);
      for (const Response* response : responses_by_id[request.id]) {
        if (!success(response->status) || !response->job) continue;
        jobs_of_identity[identity].emplace(*response->job, response);
        identity_of_job.emplace(*response->job, identity);
      }
    }
    for (const auto& execution : history.executions) {
      if (execution.purpose != "attempt") continue;
      std::set<std::string> owners;
      for (const auto& [input, identity] : inputs) {
        if (*input == execution.input) owners.insert(identity);
      }
      if (owners.size() == 1) executions_of_identity[*owners.begin()].push_back(&execution);
      for (const auto& identity : owners) candidates_of_identity[identity].push_back(&execution);
    }
    for (auto& [identity, executions] : executions_of_identity) {
      std::ranges::stable_sort(executions, {}, &Execution::t_us);
    }
    for (const auto& request : history.requests) {
      if (request.action != "retry" || !request.job) continue;
      const auto identity = identity_of_job.find(*request.job);
      if (identity == identity_of_job.end()) continue;
      const auto [it, fresh] = first_retry.emplace(identity->second, request.t_us);
      if (!fresh) it->second = std::min(it->second, request.t_us);
    }
  }

  // When the first operator retry of the identity's job was sent (never: the largest time).
  std::int64_t first_retry_of(const std::string& identity) const {
    const auto found = first_retry.find(identity);
    return found == first_retry.end() ? std::numeric_limits<std::int64_t>::max() : found->second;
  }

  const Request* request_of(const Response& response) const {
    const auto found = request_by_id.find(response.id);
    return found == request_by_id.end() ? nullptr : found->second;
  }
  // The job a response is about: the one it shows, else the one its request named.
  std::optional<std::string> job_of(const Response& response) const {
    if (response.job) return response.job;
    if (const Request* request = request_of(response)) return request->job;
    return std::nullopt;
  }
};

// Responses in the order clients received them.
inline std::vector<const Response*> by_arrival(const History& history) {
  std::vector<const Response*> ordered;
  for (const auto& response : history.responses) ordered.push_back(&response);
  std::ranges::stable_sort(ordered, [](const Response* a, const Response* b) {
    return std::pair(a->t_us, a->line) < std::pair(b->t_us, b->line);
  });
  return ordered;
}

// Keys and answers (black_box_answers.cpp).
void one_job_per_key(const Index& index, std::vector<Finding>& out);
void key_reuse_refused(const History& history, const Index& index, std::vector<Finding>& out);
void nothing_lost(const History& history, const Index& index, std::vector<Finding>& out);
void availability(const History& history, const Index& index, std::vector<Finding>& out);
void action_keys_stand_for_one_request(const History& history, const Index& index,
                                       std::vector<Finding>& out);
void jobs_stay_their_owners(const History& history, const Index& index, std::vector<Finding>& out);
void failures_are_declared(const History& history, const Index& index, std::vector<Finding>& out);
void created_jobs_located(const History& history, const Index& index, std::vector<Finding>& out);

// Executions and results (black_box.cpp).
void one_execution_at_a_time(const Index& index, std::vector<Finding>& out);
void one_result(const History& history, const Index& index, std::vector<Finding>& out);
void result_from_execution(const History& history, const Index& index, std::vector<Finding>& out);
void key_executes_once(const History& history, std::vector<Finding>& out);
void timeout_is_not_failure(const History& history, const Index& index, std::vector<Finding>& out);
void failover_is_certified(const History& history, const Index& index, std::vector<Finding>& out);
void attempts_within_limit(const History& history, const Index& index, std::vector<Finding>& out);
void outputs_shown_only_as_results(const History& history, std::vector<Finding>& out);
void live_attempts_cancellable(const History& history, const Index& index,
                               std::vector<Finding>& out);
void finished_attempts_stay_finished(const History& history, const Index& index,
                                     std::vector<Finding>& out);

}  // namespace onejob::check::black_box::detail
