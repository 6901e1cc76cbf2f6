// The black-box rules about keys and answers: one job per key (B1), a reused key refused (B2),
// nothing acknowledged lost (B8), operator keys (B9), owners (B10), failures declared (B12) and
// availability. The ground rules of every black-box rule are in black_box.cpp's header.
#include "harness/check/black_box_rules.hpp"

namespace onejob::check::black_box::detail {

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
static bool refused_for_another_reason(int status) {
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
// attempt or body) is refused, never acknowledged; the same request (bodies compared as JSON
// values) acknowledged again repeats the first acknowledgement (its status, the attempt it named,
// and its whole body where both bodies were recorded), and sent after that acknowledgement
// arrived is not refused (replay_refused: a 4xx other than 401, 403 and 429); where the target
// marks replays, at most one acknowledgement goes unmarked (one request did the action, every other
// answer replays it); and a cancel refused with 409 (its attempt was not live, and an attempt that
// stopped being live never is again) is not acknowledged later when sent again.
void action_keys_stand_for_one_request(const History& history, const Index& index,
                                       std::vector<Finding>& out) {
  const auto same_request = [](const Request& a, const Request& b) {
    return a.action == b.action && a.job == b.job && a.attempt == b.attempt && a.body == b.body;
  };
  const auto refused_after_the_key = [](int status) {
    return status >= 400 && status < 500 && status != 401 && status != 403 && status != 429;
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
    // The same request sent after its key's first acknowledgement arrived is that
    // acknowledgement again, never a refusal (credentials and rate limits are judged before the
    // key).
    if (const auto acknowledged = first_acknowledged.find(identity);
        acknowledged != first_acknowledged.end() && refused_after_the_key(*response->status) &&
        acknowledged->second.second->t_us < request->t_us &&
        same_request(*acknowledged->second.first, *request)) {
      out.push_back(finding("B9.replay_refused",
                            describe_identity(identity) + ": the " + request->action +
                                " it acknowledged was sent again and refused " +
                                std::to_string(*response->status) + " instead of its first answer",
                            {response->line, request->line, acknowledged->second.second->line}));
    }
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

// B16: a create answered 201 (Created) names where its job lives: its Location is the path the
// target declared (created_location) with the job its body names, or an absolute URI of that path.
void created_jobs_located(const History& history, const Index& index, std::vector<Finding>& out) {
  if (!history.created_location) return;
  const std::string& pattern = *history.created_location;
  for (const Response& response : history.responses) {
    if (response.status != 201 || !response.location || !response.job) continue;
    const Request* request = index.request_of(response);
    if (request == nullptr || request->action != "create") continue;
    const std::string expected = substitute(pattern, "job", *response.job);
    std::string_view path = *response.location;
    if (const auto scheme = path.find("://"); scheme != std::string_view::npos) {
      const auto slash = path.find('/', scheme + 3);
      path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
    }
    if (path == expected) continue;
    out.push_back(
        finding("B16.location_wrong",
                "a create of owner " + request->owner + " (key " + request->key.value_or("?") +
                    ") was answered 201 for job " + *response.job +
                    (response.location->empty() ? std::string(" with no Location")
                                                : " with Location \"" + *response.location + "\"") +
                    ", not \"" + expected + "\"",
                {response.line, request->line}));
  }
}

}  // namespace onejob::check::black_box::detail
