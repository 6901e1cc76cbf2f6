#pragma once
// Black-box histories written as stories, for the rules' tests: Story appends requests, answers
// and executions, numbering lines as a file would; clean() is a history every rule passes.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/check/black_box.hpp"

namespace onejob::check::black_box::testing {

using nlohmann::json;

inline const nlohmann::json kInput = {{"text", "please refund me"}};
inline const nlohmann::json kBody = {
    {"operation", "classify"}, {"provider", "alpha"}, {"input", kInput}};
inline const nlohmann::json kBilling = {{"label", "billing"}, {"confidence", 0.9}};
inline const nlohmann::json kOther = {{"label", "other"}, {"confidence", 0.8}};

// Appends lines to a history, numbering them as a file would.
class Story {
 public:
  Story& create(std::string id, std::int64_t t, std::string owner, std::string key,
                json body = kBody) {
    Request r = request(std::move(id), t, std::move(owner), "create");
    r.key = std::move(key);
    r.body = std::move(body);
    history_.requests.push_back(std::move(r));
    return *this;
  }
  Story& act(std::string id, std::int64_t t, std::string owner, std::string action,
             std::string job) {
    Request r = request(std::move(id), t, std::move(owner), std::move(action));
    r.job = std::move(job);
    history_.requests.push_back(std::move(r));
    return *this;
  }
  // An operator's retry (attempt empty) or cancel of `attempt`, under `key`.
  Story& keyed(std::string id, std::int64_t t, std::string action, std::string key,
               std::optional<std::string> attempt = {}) {
    Request r = request(std::move(id), t, "alice", std::move(action));
    r.job = "7";
    r.key = std::move(key);
    r.attempt = std::move(attempt);
    history_.requests.push_back(std::move(r));
    return *this;
  }
  Story& acted(std::string id, std::int64_t t, int status, std::optional<std::string> attempt,
               std::optional<json> body = {}, std::optional<bool> replayed = {}) {
    Response r = response(std::move(id), t);
    r.status = status;
    r.attempt = std::move(attempt);
    r.body = std::move(body);
    r.replayed = replayed;
    history_.responses.push_back(std::move(r));
    return *this;
  }
  Story& answer(std::string id, std::int64_t t, int status, std::optional<std::string> job = {},
                std::optional<std::string> job_status = {}, std::optional<json> result = {}) {
    Response r = response(std::move(id), t);
    r.status = status;
    r.job = std::move(job);
    r.job_status = std::move(job_status);
    r.result = std::move(result);
    history_.responses.push_back(std::move(r));
    return *this;
  }
  Story& lost(std::string id, std::int64_t t) {
    history_.responses.push_back(response(std::move(id), t));
    return *this;
  }
  // A certification call a provider stub answered with `outcome` (ok: the known answer).
  Story& certify(std::int64_t t, std::int64_t ended, std::string provider, std::string outcome) {
    execute(t, ended, std::move(provider), "cert-" + std::to_string(t), std::move(outcome),
            json::object(), json{{"text", "known question"}});
    history_.executions.back().purpose = "certification";
    return *this;
  }
  Story& execute(std::int64_t t, std::optional<std::int64_t> ended, std::string provider,
                 std::string key, std::string outcome = "ok", std::optional<json> output = kBilling,
                 json input = kInput) {
    Execution e;
    e.line = next();
    e.t_us = t;
    e.ended_us = ended;
    e.provider = std::move(provider);
    e.provider_key = std::move(key);
    e.input = std::move(input);
    e.outcome = std::move(outcome);
    e.output = std::move(output);
    history_.executions.push_back(std::move(e));
    return *this;
  }
  Story& quiet(std::int64_t t) {
    history_.quiet_from_us = t;
    next();
    return *this;
  }
  const History& history() const { return history_; }
  // The last answer (a read's) lists the job's attempts.
  Story& listed(std::vector<AttemptShown> attempts) {
    history_.responses.back().attempts = std::move(attempts);
    return *this;
  }
  // The last answer shows its attempt in `state`.
  Story& shows(std::string state) {
    history_.responses.back().attempt_state = std::move(state);
    return *this;
  }

 private:
  std::uint64_t next() { return ++lines_; }
  Request request(std::string id, std::int64_t t, std::string owner, std::string action) {
    Request r;
    r.line = next();
    r.t_us = t;
    r.id = std::move(id);
    r.client = "c";
    r.owner = std::move(owner);
    r.action = std::move(action);
    return r;
  }
  Response response(std::string id, std::int64_t t) {
    Response r;
    r.line = next();
    r.t_us = t;
    r.id = std::move(id);
    return r;
  }
  History history_;
  std::uint64_t lines_ = 0;
};

// alice creates k1 (job 7); alpha executes it and answers; a double click is answered with the
// same job; the read shows the result; a reuse of k1 with another body is refused.
inline Story clean() {
  Story s;
  s.create("r1", 0, "alice", "k1")
      .answer("r1", 10, 201, "7", "queued")
      .create("r2", 12, "alice", "k1")
      .answer("r2", 20, 200, "7", "queued")
      .execute(30, 60, "alpha", "p7-1")
      .act("r3", 100, "alice", "read", "7")
      .answer("r3", 110, 200, "7", "succeeded", kBilling)
      .create("r4", 120, "alice", "k1", json{{"input", {{"text", "another"}}}})
      .answer("r4", 130, 422)
      .act("r5", 140, "bob", "read", "7")
      .answer("r5", 150, 404);
  return s;
}

inline std::vector<std::string> clauses(const History& history) {
  std::vector<std::string> out;
  for (const auto& finding : judge(history)) out.push_back(finding.clause);
  return out;
}

inline std::string joined(const std::vector<std::string>& all) {
  std::string text;
  for (const auto& one : all) text += one + " ";
  return text;
}

inline bool only(const std::vector<std::string>& found, const std::string& clause) {
  return !found.empty() && std::ranges::all_of(found, [&](const auto& c) { return c == clause; });
}

}  // namespace onejob::check::black_box::testing
