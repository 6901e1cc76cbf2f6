// The black-box rules. Each states its promise on what clients and provider stubs observed and
// decides with its own oracle: JSON values compared structurally (nlohmann::json's equality, key
// order and spacing ignored), never the judged system's canonical form or fingerprint.
//
// A job's identity, from outside, is its creator's (owner, idempotency key); the job ids a target
// answers with are attached to it by the creates it acknowledged (2xx). A provider execution
// belongs to the job whose create body carried the input the stub received (the body's "input",
// or the whole body when it has none); an execution whose input several identities share is
// linked to none, and the rules that need the link skip it (the prober makes inputs unique).
#include "harness/check/black_box.hpp"

#include <utility>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>

namespace onejob::check::black_box {
namespace {

bool success(const std::optional<int>& status) { return status && *status >= 200 && *status < 300; }

std::string identity_of(const std::string& owner, const std::string& key) {
  std::string id = owner;
  id += '\0';
  id += key;
  return id;
}

std::string describe_identity(const std::string& identity) {
  const auto nul = identity.find('\0');
  return "owner " + identity.substr(0, nul) + "'s key " + identity.substr(nul + 1);
}

std::string shown(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 120) text = text.substr(0, 117) + "...";
  return text;
}

const nlohmann::json& input_of(const nlohmann::json& body) {
  if (body.is_object() && body.contains("input")) return body["input"];
  return body;
}

Finding finding(std::string clause, std::string message, std::vector<std::uint64_t> lines) {
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
std::vector<const Response*> by_arrival(const History& history) {
  std::vector<const Response*> ordered;
  for (const auto& response : history.responses) ordered.push_back(&response);
  std::ranges::stable_sort(ordered, [](const Response* a, const Response* b) {
    return std::pair(a->t_us, a->line) < std::pair(b->t_us, b->line);
  });
  return ordered;
}

// B1: every acknowledged create of one (owner, key) names the same job.
void one_job_per_key(const Index& index, std::vector<Finding>& out) {
  for (const auto& [identity, jobs] : index.jobs_of_identity) {
    if (jobs.size() < 2) continue;
    const Response* first = jobs.begin()->second;
    for (auto it = std::next(jobs.begin()); it != jobs.end(); ++it) {
      out.push_back(finding("B1.two_job_ids",
                            describe_identity(identity) + " was answered with job " + *first->job +
                                " and with job " + it->first,
                            {it->second->line, first->line}));
    }
  }
}

// A refusal that says something else before it could say "reused": the body is malformed or too
// large, the client is not authenticated or allowed, it is rate-limited, or the target is failing.
bool refused_for_another_reason(int status) {
  return status == 400 || status == 401 || status == 403 || status == 413 || status == 429 ||
         status >= 500;
}

// B2: once a create of (owner, key) is acknowledged, a create of that key with another body is
// refused: never acknowledged, whether with the old job or a new one. Where the history declares
// the target's status for a reused key (conflict_status), a create of that key sent after the
// acknowledgement reached its client is judged by its refusal too: another body refused with
// another status (a 409 "still in flight" tells the client to send it again) is
// reuse_misanswered, unless the status says something else first; the same body refused as a
// reused key is replay_refused. (A create sent before the first acknowledgement arrived may have
// been taken first by the target, so its refusal is not judged.)
void key_reuse_refused(const History& history, const Index& index, std::vector<Finding>& out) {
  struct Acknowledged {
    const Request* request;
    const Response* response;
  };
  std::map<std::string, Acknowledged> first_acknowledged;
  const auto arrivals = by_arrival(history);
  // The create with a key and a body that `response` answers, or none.
  const auto keyed_create = [&](const Response& response) -> const Request* {
    const Request* request = index.request_of(response);
    return request && request->action == "create" && request->key && request->body ? request
                                                                                   : nullptr;
  };
  for (const Response* response : arrivals) {
    const Request* request = keyed_create(*response);
    if (!request || !success(response->status)) continue;
    const std::string identity = identity_of(request->owner, *request->key);
    const auto [it, fresh] =
        first_acknowledged.try_emplace(identity, Acknowledged{request, response});
    if (fresh || *it->second.request->body == *request->body) continue;
    out.push_back(finding("B2.other_payload_accepted",
                          describe_identity(identity) + " was reused with another body " +
                              shown(*request->body) + " and answered " +
                              std::to_string(*response->status) + " instead of a refusal",
                          {response->line, request->line, it->second.request->line}));
  }
  if (!history.conflict_status) return;
  const int conflict = *history.conflict_status;
  for (const Response* response : arrivals) {
    const Request* request = keyed_create(*response);
    if (!request || !response->status || success(response->status)) continue;
    const std::string identity = identity_of(request->owner, *request->key);
    const auto first = first_acknowledged.find(identity);
    if (first == first_acknowledged.end() || request->t_us <= first->second.response->t_us) {
      continue;
    }
    const int status = *response->status;
    const std::vector<std::uint64_t> lines = {response->line, request->line,
                                              first->second.request->line};
    if (*request->body != *first->second.request->body) {
      if (status == conflict || refused_for_another_reason(status)) continue;
      out.push_back(finding("B2.reuse_misanswered",
                            describe_identity(identity) + " was reused with another body " +
                                shown(*request->body) + " and refused " + std::to_string(status) +
                                ", not " + std::to_string(conflict) +
                                ", the target's status for a reused key",
                            lines));
    } else if (status == conflict) {
      out.push_back(finding("B2.replay_refused",
                            describe_identity(identity) + " was sent again with its body " +
                                "and refused " + std::to_string(status) +
                                " as a reused key, though the body is the one acknowledged",
                            lines));
    }
  }
}

// B3: no provider execution for a job starts while an earlier execution for it (another provider
// key) may still be running, unless the job's attempt was cancelled (a cancel of the job sent
// before the second started and acknowledged).
void one_execution_at_a_time(const Index& index, std::vector<Finding>& out) {
  for (const auto& [identity, executions] : index.executions_of_identity) {
    std::vector<std::int64_t> cancels;  // when acknowledged cancels of this job were sent
    const auto jobs = index.jobs_of_identity.find(identity);
    if (jobs != index.jobs_of_identity.end()) {
      for (const auto& [id, request] : index.request_by_id) {
        if (request->action != "cancel" || !request->job || !jobs->second.contains(*request->job)) {
          continue;
        }
        const auto responses = index.responses_by_id.find(id);
        if (responses == index.responses_by_id.end()) continue;
        for (const Response* response : responses->second) {
          if (success(response->status)) cancels.push_back(request->t_us);
        }
      }
    }
    for (std::size_t later = 1; later < executions.size(); ++later) {
      const Execution& second = *executions[later];
      for (std::size_t earlier = 0; earlier < later; ++earlier) {
        const Execution& first = *executions[earlier];
        if (first.provider_key == second.provider_key && first.provider == second.provider) {
          continue;  // the same key twice is B6's
        }
        const bool running = !first.ended_us || *first.ended_us > second.t_us;
        if (!running) continue;
        const bool cancelled =
            std::ranges::any_of(cancels, [&](std::int64_t sent) { return sent <= second.t_us; });
        if (cancelled) continue;
        out.push_back(finding("B3.overlapping_executions",
                              "provider " + second.provider + " started executing key " +
                                  second.provider_key + " for " + describe_identity(identity) +
                                  " while key " + first.provider_key + " (" + first.provider +
                                  ") was still " +
                                  (first.ended_us ? "running" : "running and never answered"),
                              {second.line, first.line}));
        break;
      }
    }
  }
}

// B4: a job shows at most one result and keeps it (any two results that differ, in any order);
// once shown succeeded, every read sent afterwards shows it succeeded.
void one_result(const History& history, const Index& index, std::vector<Finding>& out) {
  std::map<std::string, const Response*> first_result;
  std::map<std::string, const Response*> first_success;
  for (const Response* response : by_arrival(history)) {
    if (!success(response->status)) continue;
    const auto job = index.job_of(*response);
    if (!job) continue;
    if (response->result && !response->result->is_null()) {
      const auto [it, fresh] = first_result.emplace(*job, response);
      if (!fresh && *it->second->result != *response->result) {
        out.push_back(finding("B4.result_changed",
                              "job " + *job + " showed result " + shown(*it->second->result) +
                                  ", later " + shown(*response->result),
                              {response->line, it->second->line}));
      }
    }
    if (response->job_status) {
      // Only a read sent after the success was seen must see it too: one sent before may have
      // been answered from an earlier moment, however late its answer arrived.
      const auto it = first_success.find(*job);
      const Request* request = index.request_of(*response);
      if (it != first_success.end() && *response->job_status != "succeeded" && request &&
          request->t_us > it->second->t_us) {
        out.push_back(
            finding("B4.success_undone",
                    "job " + *job + " was shown succeeded, later " + *response->job_status,
                    {response->line, it->second->line}));
      }
      if (*response->job_status == "succeeded") first_success.emplace(*job, response);
    }
  }
}

// B5: a job's shown result is the output of an execution the providers performed for that job.
void result_from_execution(const History& history, const Index& index, std::vector<Finding>& out) {
  std::set<std::string> reported;
  for (const Response* response : by_arrival(history)) {
    if (!success(response->status) || !response->result || response->result->is_null()) continue;
    const auto job = index.job_of(*response);
    if (!job || reported.contains(*job)) continue;
    const auto identity = index.identity_of_job.find(*job);
    if (identity == index.identity_of_job.end()) continue;  // a job this history never created
    const auto executions = index.candidates_of_identity.find(identity->second);
    const bool performed = executions != index.candidates_of_identity.end() &&
                           std::ranges::any_of(executions->second, [&](const Execution* execution) {
                             return execution->output && *execution->output == *response->result;
                           });
    if (performed) continue;
    reported.insert(*job);
    out.push_back(finding("B5.result_not_executed",
                          "job " + *job + " shows result " + shown(*response->result) +
                              ", which no provider execution for it produced",
                          {response->line}));
  }
}

// B6: each (provider, provider key) executes at most once.
void key_executes_once(const History& history, std::vector<Finding>& out) {
  std::map<std::pair<std::string, std::string>, const Execution*> first;
  for (const auto& execution : history.executions) {
    const auto [it, fresh] =
        first.emplace(std::pair(execution.provider, execution.provider_key), &execution);
    if (fresh) continue;
    out.push_back(finding("B6.key_executed_twice",
                          "provider " + execution.provider + " executed key " +
                              execution.provider_key + " a second time",
                          {execution.line, it->second->line}));
  }
}

// B7: a job is never shown failed while an execution for it is still running (a timed-out call is
// unknown, not failed).
void timeout_is_not_failure(const History& history, const Index& index, std::vector<Finding>& out) {
  std::set<std::string> reported;
  for (const Response* response : by_arrival(history)) {
    if (!success(response->status) || response->job_status != "failed") continue;
    const auto job = index.job_of(*response);
    if (!job || reported.contains(*job)) continue;
    const auto identity = index.identity_of_job.find(*job);
    if (identity == index.identity_of_job.end()) continue;
    const auto executions = index.executions_of_identity.find(identity->second);
    if (executions == index.executions_of_identity.end()) continue;
    // The read took effect between its send and its answer: an execution that started before the
    // send and had not answered by the answer's arrival was running then.
    const Request* request = index.request_of(*response);
    if (!request) continue;
    for (const Execution* execution : executions->second) {
      const bool running = execution->t_us < request->t_us &&
                           (!execution->ended_us || *execution->ended_us > response->t_us);
      if (!running) continue;
      reported.insert(*job);
      out.push_back(finding("B7.failed_while_running",
                            "job " + *job + " was shown failed while provider " +
                                execution->provider + " was still executing its key " +
                                execution->provider_key,
                            {response->line, execution->line}));
      break;
    }
  }
}

// B8: nothing acknowledged is lost: a job acknowledged to its owner is never answered 404 to a
// read of that owner sent after the acknowledgement arrived.
void nothing_lost(const History& history, const Index& index, std::vector<Finding>& out) {
  std::map<std::string, const Response*> acknowledged;  // owner + job -> the acknowledgement
  std::set<std::string> reported;
  for (const Response* response : by_arrival(history)) {
    const Request* request = index.request_of(*response);
    if (!request) continue;
    if (request->action == "create" && success(response->status) && !response->job) {
      out.push_back(finding("B8.acknowledged_without_job",
                            "a create of owner " + request->owner + " (key " +
                                request->key.value_or("?") + ") was acknowledged " +
                                std::to_string(*response->status) +
                                " naming no job: what it promised cannot be found",
                            {response->line, request->line}));
      continue;
    }
    if (request->action == "create" && success(response->status) && response->job) {
      acknowledged.emplace(identity_of(request->owner, *response->job), response);
      continue;
    }
    if (request->action != "read" || !request->job || response->status != 404) continue;
    const std::string owned = identity_of(request->owner, *request->job);
    const auto ack = acknowledged.find(owned);
    // A read sent before the acknowledgement arrived may precede the job's commit.
    if (ack == acknowledged.end() || request->t_us <= ack->second->t_us) continue;
    if (!reported.insert(owned).second) continue;
    out.push_back(finding("B8.acknowledged_job_missing",
                          "job " + *request->job + ", acknowledged to owner " + request->owner +
                              ", was answered 404 to that owner",
                          {response->line, ack->second->line}));
  }
}

// Availability, apart from safety: after the quiet phase every request is answered, and no
// answer is a server error.
void availability(const History& history, const Index& index, std::vector<Finding>& out) {
  for (const auto& request : history.requests) {
    const auto responses = index.responses_by_id.find(request.id);
    const bool quiet = history.quiet_from_us && request.t_us >= *history.quiet_from_us;
    const bool answered = responses != index.responses_by_id.end() &&
                          std::ranges::any_of(responses->second, [](const Response* response) {
                            return response->status.has_value();
                          });
    if (quiet && !answered) {
      out.push_back(finding("availability.unanswered",
                            "request " + request.id + " (" + request.action +
                                ") was sent after the quiet phase began and never answered",
                            {request.line}));
    }
    if (responses == index.responses_by_id.end()) continue;
    for (const Response* response : responses->second) {
      if (quiet && response->status && *response->status >= 500) {
        out.push_back(finding("availability.server_error",
                              "request " + request.id + " (" + request.action + ") was answered " +
                                  std::to_string(*response->status) +
                                  " after the quiet phase began",
                              {response->line, request.line}));
      }
    }
  }
}

// B9: an operator action's idempotency key stands for one request, and every acknowledgement of
// it shows what the action did: a retry's attempt starting, a cancel's attempt cancelled (a
// replay too: it repeats the first answer, not the attempt's state now). Among retries and cancels
// of one owner under one key: once one is acknowledged, another request (another action, job,
// attempt or body) is refused, never acknowledged; the same request acknowledged again repeats
// the first acknowledgement (its status, the attempt it named, and its whole body where both
// bodies were recorded); where the target marks replays, at most one acknowledgement goes
// unmarked (one request did the action, every other answer replays it); and a cancel refused
// with 409 (its attempt was not live, and an attempt that stopped being live never is again) is
// not acknowledged later when sent again.
void action_keys_stand_for_one_request(const History& history, const Index& index,
                                       std::vector<Finding>& out) {
  const auto same_request = [](const Request& a, const Request& b) {
    return a.action == b.action && a.job == b.job && a.attempt == b.attempt && a.body == b.body;
  };
  std::map<std::string, std::pair<const Request*, const Response*>> first_acknowledged;
  std::map<std::string, const Response*> unmarked;  // the acknowledgement that did the action
  std::map<std::string, std::vector<std::pair<const Request*, const Response*>>> refused_cancels;
  for (const Response* response : by_arrival(history)) {
    const Request* request = index.request_of(*response);
    if (!request || (request->action != "retry" && request->action != "cancel") ||
        !response->status) {
      continue;
    }
    const std::string did = request->action == "retry" ? "starting" : "cancelled";
    if (success(response->status) && response->attempt_state && *response->attempt_state != did) {
      out.push_back(finding("B9.answer_misstates",
                            "a " + request->action + " of job " + request->job.value_or("?") +
                                " was answered " + std::to_string(*response->status) +
                                " showing its attempt " + *response->attempt_state + ", not " +
                                did + " (what the " + request->action + " did)",
                            {response->line, request->line}));
    }
    if (!request->key) continue;
    const std::string identity = identity_of(request->owner, *request->key);
    if (request->action == "cancel" && *response->status == 409) {
      refused_cancels[identity].emplace_back(request, response);
      continue;
    }
    if (!success(response->status)) continue;
    for (const auto& [refused, refusal] : refused_cancels[identity]) {
      // Refused, and the refusal seen, before this request was sent.
      if (!same_request(*refused, *request) || refusal->t_us >= request->t_us) continue;
      out.push_back(finding("B9.refused_then_acknowledged",
                            describe_identity(identity) + ": a cancel refused 409 was answered " +
                                std::to_string(*response->status) + " when sent again",
                            {response->line, request->line, refusal->line}));
      break;
    }
    if (response->replayed == false) {
      const auto [original, first] = unmarked.emplace(identity, response);
      if (!first) {
        out.push_back(finding("B9.replay_unmarked",
                              describe_identity(identity) + ": two acknowledgements (" +
                                  std::to_string(*original->second->status) + ", then " +
                                  std::to_string(*response->status) +
                                  ") carry no replay mark, as if each had done the action",
                              {response->line, request->line, original->second->line}));
      }
    }
    const auto [it, fresh] =
        first_acknowledged.emplace(identity, std::make_pair(request, response));
    if (fresh) continue;
    const auto& [first, first_answer] = it->second;
    if (!same_request(*first, *request)) {
      out.push_back(finding("B9.key_answered_another_request",
                            describe_identity(identity) + " was acknowledged for a " +
                                first->action + " of job " + first->job.value_or("?") +
                                " and again for another request (a " + request->action +
                                " of job " + request->job.value_or("?") + "), answered " +
                                std::to_string(*response->status) + " instead of a refusal",
                            {response->line, request->line, first_answer->line}));
    } else if (*first_answer->status != *response->status ||
               (first_answer->attempt && response->attempt &&
                *first_answer->attempt != *response->attempt)) {
      out.push_back(finding("B9.replay_differs",
                            describe_identity(identity) + ": the same " + request->action +
                                " was answered " + std::to_string(*first_answer->status) +
                                " (attempt " + first_answer->attempt.value_or("?") + "), then " +
                                std::to_string(*response->status) + " (attempt " +
                                response->attempt.value_or("?") + ")",
                            {response->line, request->line, first_answer->line}));
    } else if (first_answer->body && response->body && *first_answer->body != *response->body) {
      out.push_back(finding("B9.replay_differs",
                            describe_identity(identity) + ": the same " + request->action +
                                " was answered " + shown(*first_answer->body) + ", then " +
                                shown(*response->body),
                            {response->line, request->line, first_answer->line}));
    }
  }
}

// B10: a job is its owner's: a read, retry or cancel of a job acknowledged to one owner, sent as
// another owner (or that owner's operator), is never acknowledged.
void jobs_stay_their_owners(const History& history, const Index& index, std::vector<Finding>& out) {
  for (const Response* response : by_arrival(history)) {
    const Request* request = index.request_of(*response);
    if (!request || request->action == "create" || !request->job || !success(response->status)) {
      continue;
    }
    const auto identity = index.identity_of_job.find(*request->job);
    if (identity == index.identity_of_job.end()) continue;
    const std::string owner = identity->second.substr(0, identity->second.find('\0'));
    if (owner == request->owner) continue;
    const Response* acknowledgement = index.jobs_of_identity.at(identity->second).at(*request->job);
    out.push_back(finding("B10.another_owners_job",
                          "a " + request->action + " of job " + *request->job + " (owner " + owner +
                              "'s) sent as " + request->owner + " was answered " +
                              std::to_string(*response->status),
                          {response->line, request->line, acknowledgement->line}));
  }
}

// B11: a job moves to another provider on its own only once that provider passed its contract:
// the first execution for a job names its provider; an execution for it on another provider,
// before any operator retry of the job was sent, needs a certification execution on that
// provider that ended before it, and the last such one answered correctly (outcome "ok").
void failover_is_certified(const History& history, const Index& index, std::vector<Finding>& out) {
  for (const auto& [identity, executions] : index.executions_of_identity) {
    const std::int64_t retried = index.first_retry_of(identity);
    const std::string& own = executions.front()->provider;
    std::set<std::string> judged;
    for (const Execution* execution : executions) {
      if (execution->provider == own || execution->t_us >= retried ||
          !judged.insert(execution->provider).second) {
        continue;
      }
      const Execution* last = nullptr;  // the provider's last certification that ended before
      for (const auto& certification : history.executions) {
        if (certification.purpose != "certification" ||
            certification.provider != execution->provider || !certification.ended_us ||
            *certification.ended_us > execution->t_us) {
          continue;
        }
        if (!last || *certification.ended_us >= *last->ended_us) last = &certification;
      }
      if (last && last->outcome == "ok") continue;
      std::vector<std::uint64_t> lines{execution->line, executions.front()->line};
      if (last) lines.push_back(last->line);
      out.push_back(
          finding("B11.uncertified_failover",
                  "the job of " + describe_identity(identity) + ", first executed on " + own +
                      ", was executed on " + execution->provider +
                      (last ? ", whose last certification before it answered " + last->outcome
                            : ", which no certification had passed before it"),
                  std::move(lines)));
    }
  }
}

// B12: a failure is answered as one the client may retry under the same key — 503 (unavailable,
// with Retry-After) or a gateway's 502 or 504 — never as another server error, which leaves the
// client unable to tell whether to resend.
void failures_are_declared(const History& history, const Index& index, std::vector<Finding>& out) {
  for (const auto& response : history.responses) {
    if (!response.status || *response.status < 500 || *response.status == 502 ||
        *response.status == 503 || *response.status == 504) {
      continue;
    }
    const Request* request = index.request_of(response);
    out.push_back(finding("B12.undeclared_server_error",
                          "request " + response.id + " (" +
                              (request ? request->action : std::string("?")) + ") was answered " +
                              std::to_string(*response.status) +
                              ", not a failure it may retry (502, 503, 504)",
                          {response.line}));
  }
}

// B13: where the history declares the target's attempt limit, a job's executions, before any
// operator retry of it was sent, are under at most that many provider keys (an attempt keeps its
// key when it is sent again; each new attempt, a failover's too, has its own).
void attempts_within_limit(const History& history, const Index& index, std::vector<Finding>& out) {
  if (!history.attempt_limit) return;
  for (const auto& [identity, executions] : index.executions_of_identity) {
    const std::int64_t retried = index.first_retry_of(identity);
    std::set<std::pair<std::string, std::string>> keys;
    for (const Execution* execution : executions) {
      if (execution->t_us >= retried) break;
      keys.emplace(execution->provider, execution->provider_key);
      if (static_cast<int>(keys.size()) <= *history.attempt_limit) continue;
      out.push_back(finding("B13.attempts_past_limit",
                            "the job of " + describe_identity(identity) + " was executed under " +
                                std::to_string(keys.size()) + " provider keys, past its limit of " +
                                std::to_string(*history.attempt_limit) + " attempts",
                            {execution->line, executions.front()->line}));
      break;
    }
  }
}

// B14: a live attempt can be cancelled: a cancel refused 409 names an attempt that had
// finished. A finished attempt never runs again, so a read of the job, sent after the refusal
// arrived, that shows the attempt in a live state shows it was live when the cancel was refused.
void live_attempts_cancellable(const History& history, const Index& index,
                               std::vector<Finding>& out) {
  std::map<std::string, std::vector<const Response*>> reads_of_job;  // in arrival order
  for (const Response* response : by_arrival(history)) {
    const Request* request = index.request_of(*response);
    if (request && request->action == "read" && request->job && response->attempts) {
      reads_of_job[*request->job].push_back(response);
    }
  }
  for (const auto& response : history.responses) {
    const Request* request = index.request_of(response);
    if (!request || request->action != "cancel" || response.status != 409 || !request->job ||
        !request->attempt) {
      continue;
    }
    const auto reads = reads_of_job.find(*request->job);
    if (reads == reads_of_job.end()) continue;
    for (const Response* read : reads->second) {
      if (index.request_of(*read)->t_us <= response.t_us) continue;
      const auto shown = std::ranges::find(*read->attempts, *request->attempt, &AttemptShown::id);
      if (shown == read->attempts->end() || !shown->live) continue;
      out.push_back(finding("B14.live_attempt_refused",
                            "a cancel of attempt " + *request->attempt + " (job " + *request->job +
                                ") was refused 409, and a read sent after the refusal shows it " +
                                shown->state + ", still live",
                            {response.line, request->line, read->line}));
      break;
    }
  }
}

}  // namespace

const std::vector<Rule>& all_rules() {
  static const std::vector<Rule> rules = {
      {"B1", "one job id per (owner, key) across all answers"},
      {"B2",
       "a reused key with another payload is refused (with the target's status for it, where "
       "declared), never answered with a job; the same payload again is not refused as reused"},
      {"B3", "no execution for a job while an earlier one may still run, unless cancelled"},
      {"B4", "a job shows at most one result, and never changes it or undoes its success"},
      {"B5", "the shown result is the output of an execution performed for that job"},
      {"B6", "each provider key executes at most once"},
      {"B7", "a job is never shown failed while an execution for it still runs"},
      {"B8",
       "nothing acknowledged is lost: an acknowledged create names its job, and that job never "
       "reads 404 to its owner"},
      {"B9",
       "an operator action's key stands for one request, its replay repeats its answer, and "
       "every acknowledgement shows what the action did"},
      {"B10", "a job is its owner's: another owner's read, retry or cancel of it is refused"},
      {"B11",
       "a job moves to another provider on its own only once that provider passed its contract"},
      {"B12",
       "a failure is answered as one to retry under the same key (502, 503, 504), never another "
       "5xx"},
      {"B13", "a job runs at most the target's declared number of attempts"},
      {"B14",
       "a live attempt can be cancelled: a cancel is refused only once its attempt finished"},
  };
  return rules;
}

std::vector<Finding> judge(const History& history) {
  const Index index(history);
  std::vector<Finding> out;
  one_job_per_key(index, out);
  key_reuse_refused(history, index, out);
  one_execution_at_a_time(index, out);
  one_result(history, index, out);
  result_from_execution(history, index, out);
  key_executes_once(history, out);
  timeout_is_not_failure(history, index, out);
  nothing_lost(history, index, out);
  action_keys_stand_for_one_request(history, index, out);
  jobs_stay_their_owners(history, index, out);
  failover_is_certified(history, index, out);
  failures_are_declared(history, index, out);
  attempts_within_limit(history, index, out);
  live_attempts_cancellable(history, index, out);
  availability(history, index, out);
  return out;
}

bool is_safety(const Finding& finding) { return finding.rule != "availability"; }

std::string evidence_lines(const Finding& finding) {
  std::string text;
  for (const auto line : finding.lines) {
    text += text.empty() ? "line " : ", ";
    text += std::to_string(line);
  }
  return text;
}

}  // namespace onejob::check::black_box
