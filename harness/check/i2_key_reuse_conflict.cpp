// I2 — the same (owner, idempotency key) with a different request is refused: 422, no job id
// returned, nothing stored.
//
// Two creates are the same request when their bodies are equal as JSON values (this checker's
// own parser: key order and spacing do not matter; every field does: operation, provider,
// failover, input). The system's fingerprint is never consulted. Checks every create answer an
// API node gave, joined to the body its client sent, against the job the store held for the key:
//   - a 200 or 201 answers a body equal to the stored job's;
//   - a 422 answers a body that differs from the stored job's, for a key that has a job;
//   - a 422 carries no job id, neither in the API's answer nor in the body a client read;
//   - a create for a key that has a job is answered 200/201 (an equal body: replay_refused
//     otherwise) or 422 with error "idempotency_key_reused" (a different body: reuse_accepted
//     for a 2xx, reuse_misanswered for any other answer, 409 included: 409 means an attempt in
//     flight, not a key reused), unless it was refused for what is judged before the key: its
//     body or size (400, 413), its credentials (401, 403), or a server failure (5xx, I13's).
//     DESIGN.md names the error; nothing is read from system/.
// Does not check:
//   - that nothing was stored for a refused request (a second job for the key is I1's);
//   - creates whose body is not JSON (refused with 400 before the store) or without a key.
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "harness/check/invariant.hpp"
#include "harness/check/json_value.hpp"

namespace onejob::check {

namespace {
// DESIGN.md: "We answer 422 (IETF Idempotency-Key draft) with error `idempotency_key_reused`".
constexpr std::string_view kKeyReused = "idempotency_key_reused";
}  // namespace

std::vector<Violation> check_key_reuse_conflict(const HistoryModel& model) {
  std::vector<Violation> out;
  std::set<std::int64_t> leaked;  // client requests whose 422 the API already gave a job id
  // Whether each client request's body is JSON, worked out once: a request's resends and the
  // creates that reuse a key meet the same bytes, which can be a megabyte.
  std::map<std::int64_t, bool> sent_is_json;
  // Equal bytes are equal values, so a body that is byte for byte the stored payload (nearly
  // every create) is never parsed into a document. The others are, each once.
  std::map<std::int64_t, JsonValue> sent_values;
  std::map<std::int64_t, JsonValue> stored_values;
  for (const auto& exchange : model.exchanges) {
    if (exchange.route != "create_job" || !exchange.answered()) continue;
    const auto response_read = model.response_of(exchange);
    const auto& response = *response_read;
    const auto seq = exchange.response_seq;
    const auto status = response.status;
    // Refused for what comes before the key: the body, its size, the credentials, the server.
    if (status == 400 || status == 401 || status == 403 || status == 413 || status >= 500) {
      continue;
    }
    const bool accepted = status == 200 || status == 201;
    const std::string what = exchange.node + " answered " + std::to_string(status) + " for key \"" +
                             response.key + "\" of owner \"" + response.owner + "\"";
    if (status == 422 && response.job_id) {
      leaked.insert(exchange.client_request);
      out.push_back(violation("I2.conflict_names_a_job",
                              what + " with " + job_ref(*response.job_id) + ": a 422 names no job",
                              seq, {}));
    }
    const auto request = model.requests.find(exchange.client_request);
    if (request == model.requests.end()) continue;
    const auto first_read = model.first_send(request->second);
    const auto& first = *first_read;
    auto [is_json, fresh] = sent_is_json.try_emplace(exchange.client_request);
    if (fresh) is_json->second = first.body && holds_json_value(*first.body);
    if (!is_json->second) continue;
    const std::string& sent = *first.body;
    const JobRecord* stored = model.job_for_key(response.owner, response.key, seq);
    if (stored == nullptr) {
      if (status == 422) {
        out.push_back(
            violation("I2.conflict_for_a_free_key", what + ", but no job holds that key", seq, {}));
      }
      continue;
    }
    const std::string payload = model.payload_of(*stored);
    bool same = sent == payload;
    if (!same) {
      auto [sent_value, unread_sent] = sent_values.try_emplace(exchange.client_request);
      if (unread_sent) sent_value->second = json_value(sent);
      auto [stored_value, unread] = stored_values.try_emplace(stored->id());
      if (unread) stored_value->second = json_value(payload);
      same = *stored_value->second == *sent_value->second;
    }
    if (same && !accepted) {
      out.push_back(violation("I2.replay_refused",
                              what + ", but the request equals " + job_ref(stored->id()) +
                                  "'s: a replay must get that job",
                              seq, {stored->inserted.seq}));
    } else if (!same && accepted) {
      out.push_back(violation("I2.reuse_accepted",
                              what + " with a request that differs from " + job_ref(stored->id()) +
                                  "'s: a reused key must get 422",
                              seq, {stored->inserted.seq}));
    } else if (!same && (status != 422 || response.error != kKeyReused)) {
      out.push_back(violation(
          "I2.reuse_misanswered",
          what + (response.error ? " (error \"" + *response.error + "\")" : std::string()) +
              " with a request that differs from " + job_ref(stored->id()) +
              "'s: a reused key is answered 422 with error \"" + std::string(kKeyReused) + "\"",
          seq, {stored->inserted.seq}));
    }
  }
  for (const auto& [number, request] : model.requests) {
    if (request.action != "create_job") continue;
    for (const auto& received : model.receipts(request)) {
      if (received.what.status == 422 && received.what.job_id && !leaked.contains(number)) {
        out.push_back(violation("I2.conflict_names_a_job",
                                request.client + " got 422 naming " +
                                    job_ref(*received.what.job_id) + ": a 422 names no job",
                                received.seq));
      }
    }
  }
  return out;
}

}  // namespace onejob::check
