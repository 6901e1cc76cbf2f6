// I11 — an operator's action (a retry, a cancel) is idempotent under its Idempotency-Key.
//
// Stated on what the store committed and what clients were answered:
//   - one committed action per (owner, key) (key_committed_twice);
//   - a success is backed by its effect in the commit log: a retry's 2xx names an attempt the
//     store inserted as an explicit retry of the job the request named (on the provider its body
//     named), a cancel's 2xx names the attempt of its path and the store moved that attempt to
//     CANCELLED; with a key, that very commit recorded the key (unbacked_success); a retry
//     whose body names no provider retries the provider of the job's latest attempt. A refused
//     action that recorded its key anyway shows the moment it is replayed as a success;
//   - a success says what the action did, not what happened since: a retry's shows the attempt it
//     created, STARTING, with the attempt_no and provider the store inserted it with; a cancel's
//     shows CANCELLED; both name the attempt's job (answer_misstates);
//   - every success under one key is one answer: the status and body bytes of the first one a
//     client received (replay_differs), to requests with the same action, path and body, bodies
//     compared as JSON values: key order and spacing do not make another request (key_shared: a
//     key reused with another request, job or action must be refused);
//   - a success received by any client request other than the one whose exchange recorded the key
//     carries `Idempotent-Replayed: true` (replay_unmarked), and the answer to the one send whose
//     one exchange can have recorded the key (the only one open on the committing node at the
//     commit, and the send handled by no other) does not (first_marked_replayed);
//   - the same request again under a recorded key is that success again: an API node that answers
//     it with any 4xx after the key was recorded refused a replay (replay_refused: a double click
//     on cancel whose twin lost the race must still get the 200, not 409 or 422). A refusal
//     whose grounds held after the request reached the node and before the key was recorded told
//     the truth when it was made, and is no refused replay: a store's refusal of this node's write
//     for the attempt's state, a live attempt or a won job, or 422 provider_not_certified while
//     the provider the retry names was not certified (the commit log's certifications);
//   - a key is each owner's own: an action refused 422 idempotency_key_reused had its owner's key
//     recorded before the answer (free_key_refused).
// Does not check: refusals' codes (I13 judges what a refusal claims), job creates' keys (I1, I2).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "harness/check/api_routes.hpp"
#include "harness/check/invariant.hpp"
#include "harness/check/json_value.hpp"

namespace onejob::check {
namespace {

// A commit that recorded an action key: an attempt inserted by a retry, or a cancel's transition.
struct Binding {
  bool retry = false;
  std::int64_t attempt_id = 0;
  std::string by;
  std::uint64_t seq = 0;
};

using OwnerKey = std::pair<std::string, std::string>;

std::map<OwnerKey, std::vector<Binding>> bindings(const HistoryModel& model) {
  std::map<OwnerKey, std::vector<Binding>> out;
  for (const auto& [id, attempt] : model.attempts) {
    const auto& inserted = attempt.inserted.what;
    if (inserted.has_action) {
      out[model.action_of(attempt.inserted)].push_back(
          {true, id, inserted.by, attempt.inserted.seq});
    }
    for (const auto& step : attempt.steps) {
      if (!step.what.has_action) continue;
      out[model.action_of(step)].push_back({false, id, step.what.by, step.seq});
    }
  }
  for (auto& [key, list] : out) std::ranges::sort(list, {}, &Binding::seq);
  return out;
}

// One success a client received for an operator action, with the send it answered.
struct Success {
  std::int64_t request = 0;
  events::ClientSent sent;
  At<events::ClientReceived> received;
};

// Whether two sends are one request, what one key must never be shared across: the same action
// on the same path, with bodies equal as JSON values (this checker's own parser: key order and
// spacing do not matter), or byte for byte when either is no JSON.
bool same_request(const events::ClientSent& a, const events::ClientSent& b) {
  if (a.action != b.action || a.path != b.path) return false;
  const std::string& one = a.body ? *a.body : std::string();
  const std::string& other = b.body ? *b.body : std::string();
  if (one == other) return true;
  if (!holds_json_value(one) || !holds_json_value(other)) return false;
  return *json_value(one) == *json_value(other);
}

// The provider a retry's body names, read by this checker's own parser.
std::optional<std::string> named_provider(const events::ClientSent& sent) {
  if (!sent.body || sent.body->empty()) return std::nullopt;
  const JsonValue held = json_value(*sent.body);
  const nlohmann::json& body = *held;
  if (!body.is_object() || !body.contains("provider") || !body["provider"].is_string()) {
    return std::nullopt;
  }
  return body["provider"].get<std::string>();
}

std::vector<Success> successes(const HistoryModel& model) {
  std::vector<Success> out;
  for (const auto& [number, request] : model.requests) {
    const std::string& action = request.action;
    if (action != "retry" && action != "cancel") continue;
    for (const auto& received : model.receipts(request)) {
      if (!is_success(received.what.status)) continue;
      const auto sent = model.client_send(number, received.what.send);
      if (!sent) continue;
      out.push_back(Success{number, *sent, received});
    }
  }
  return out;
}

// The providers a retry naming none may have been given: the provider of the job's latest attempt
// as the API node may have read it, at any moment from the client's send to the retry's insert.
// A retry already inserted when this send left (a replay) is judged at the send that made it.
std::vector<sim::NodeName> latest_providers(const HistoryModel& model, const AttemptRecord& retry,
                                            const Success& success) {
  const std::vector<sim::NodeName> unjudged{retry.inserted.what.provider};
  const JobRecord* job = model.job(retry.job_id());
  const auto request = model.requests.find(success.request);
  if (job == nullptr || request == model.requests.end()) return unjudged;
  const auto& sends = request->second.send_seqs;
  const auto send = static_cast<std::size_t>(success.received.what.send);
  if (send == 0 || send > sends.size() || retry.inserted.seq < sends[send - 1]) return unjudged;
  return model.latest_attempt_providers(*job, sends[send - 1], retry.inserted.seq - 1);
}

// What the success claims the action did, checked against the commit log; empty when it holds.
std::string misbacked(const HistoryModel& model, const Success& success, const Binding* binding) {
  const auto& got = success.received.what;
  const bool retry = success.sent.action == "retry";
  const std::int64_t named = got.attempt_id.value_or(0);
  const AttemptRecord* attempt = model.attempt(named);
  const std::string what = retry ? "retry" : "cancel";
  if (attempt == nullptr || attempt->inserted.seq > success.received.seq) {
    return "naming " + attempt_ref(named) + ", which the store had not inserted";
  }
  if (retry) {
    if (attempt->inserted.what.origin != AttemptOrigin::explicit_retry ||
        attempt->job_id() != success.sent.job_id.value_or(0)) {
      return "naming " + attempt_ref(named) + ", which is not an explicit retry of " +
             job_ref(success.sent.job_id.value_or(0));
    }
    const auto provider = named_provider(success.sent);
    if (provider && *provider != attempt->inserted.what.provider) {
      return "naming " + attempt_ref(named) + " on " + attempt->inserted.what.provider +
             ", but the request asked for " + *provider;
    }
    if (!provider) {
      if (const auto latest = latest_providers(model, *attempt, success);
          std::ranges::find(latest, attempt->inserted.what.provider) == latest.end()) {
        return "naming " + attempt_ref(named) + " on " + attempt->inserted.what.provider +
               ", but the request named no provider and the job's latest attempt was on " +
               latest.front().str();
      }
    }
  } else {
    if (named != id_in_path(success.sent.path.value_or(""), "/attempts/")) {
      return "naming " + attempt_ref(named) + ", not the attempt its path " +
             success.sent.path.value_or("") + " cancels";
    }
    const bool cancelled = std::ranges::any_of(attempt->steps, [&](const auto& step) {
      return step.what.to == AttemptState::cancelled && step.seq < success.received.seq;
    });
    if (!cancelled) return "but the store never moved " + attempt_ref(named) + " to CANCELLED";
  }
  if (success.sent.key) {
    if (binding == nullptr || binding->seq > success.received.seq) {
      return "but the store recorded no " + what + " under key \"" + *success.sent.key + "\"";
    }
    if (binding->retry != retry || binding->attempt_id != named) {
      return "but key \"" + *success.sent.key + "\" recorded a " +
             (binding->retry ? "retry creating " : "cancel of ") + attempt_ref(binding->attempt_id);
    }
  }
  return {};
}

// The client requests and sends whose API exchanges may have committed `binding`: every exchange
// of that key on the committing node open at the commit (two sends of one request can be in
// flight on one node at once; either may have made the write).
std::set<std::pair<std::int64_t, std::int64_t>> committers(const HistoryModel& model,
                                                           const OwnerKey& key,
                                                           const Binding& binding) {
  std::set<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& exchange : model.exchanges) {
    if (exchange.node != binding.by || exchange.request_seq > binding.seq) continue;
    if (exchange.answered() && exchange.response_seq < binding.seq) continue;
    const auto request = model.request_of(exchange);
    if (request->owner != key.first || request->key != key.second) continue;
    out.emplace(exchange.client_request, exchange.client_send);
  }
  return out;
}

// How many API exchanges handled the client's send `send` of request `request`.
std::size_t exchanges_of(const HistoryModel& model, std::int64_t request, std::int64_t send) {
  return static_cast<std::size_t>(
      std::ranges::count_if(model.exchanges, [&](const ApiExchange& exchange) {
        return exchange.client_request == request && exchange.client_send == send;
      }));
}

// Whether a refusal told the truth when it was made: its grounds held at some moment between the
// request reaching the node and the key being recorded, so the twin's success came after it (two
// clicks at one instant, the first refused while a cancel had not yet freed the job, or while the
// provider it names was not yet certified). Grounds: a refusal the store made on this node of the
// action's write for a live attempt, a state or a won job (not for the key itself, duplicate_key,
// whose replay was due); or 422 provider_not_certified while the provider the retry names was
// uncertified (the commit log's certifications: a certification that passed later, in time for
// the twin, does not make the refusal a lie).
bool told_the_truth(const HistoryModel& model, const ApiExchange& exchange,
                    const HistoryModel::Decoded<events::ClientSent>& sent, const Binding& binding) {
  const std::string_view operation =
      exchange.route == "create_attempt" ? "insert_attempt" : "update_attempt";
  const bool store_refused = std::ranges::any_of(model.refusals, [&](const auto& refused) {
    const auto& r = refused.what;
    return refused.seq > exchange.request_seq && refused.seq < binding.seq &&
           r.by == exchange.node.str() && r.operation == operation &&
           (!sent || !sent->job_id || !r.job_id || *r.job_id == *sent->job_id) &&
           r.refusal != events::kRefusedDuplicateKey && r.refusal != events::kRefusedFenced;
  });
  if (store_refused) return true;
  if (exchange.status != 422 || !sent) return false;
  const auto provider = named_provider(*sent);
  return model.response_of(exchange)->error == "provider_not_certified" && provider &&
         !model.certified_throughout(*provider, exchange.request_seq, binding.seq);
}

void check_refused_replays(const HistoryModel& model,
                           const std::map<OwnerKey, std::vector<Binding>>& bound,
                           std::vector<Violation>& out) {
  for (const auto& exchange : model.exchanges) {
    // Any refusal: a replay is owed the first success whatever the twin that lost the race
    // met (in flight, a reused key, no such attempt). A 5xx (the store failed) is no refusal.
    if (!exchange.answered() || exchange.status < 400 || exchange.status >= 500) continue;
    if (exchange.route != "create_attempt" && exchange.route != "cancel_attempt") continue;
    const auto request = model.request_of(exchange);
    const auto found = bound.find({request->owner, request->key});
    if (found == bound.end()) continue;
    const Binding& binding = found->second.front();
    if (binding.seq > exchange.response_seq) continue;
    const auto sent = model.client_send(exchange.client_request, exchange.client_send);
    if (told_the_truth(model, exchange, sent, binding)) continue;
    // The refused send recorded nothing. Of the sends in flight at the node when the key was
    // recorded, one did; unless all of them are this request, which one is unknown: no verdict.
    auto recorders = committers(model, found->first, binding);
    recorders.erase({exchange.client_request, exchange.client_send});
    if (!sent || recorders.empty()) continue;
    const bool identical = std::ranges::all_of(recorders, [&](const auto& recorder) {
      const auto first = model.client_send(recorder.first, recorder.second);
      return first && same_request(*first, *sent);
    });
    if (!identical) continue;
    const auto number = recorders.begin()->first;
    out.push_back(violation(
        "I11.replay_refused",
        exchange.node + " answered request " + std::to_string(exchange.client_request) + " (" +
            sent->action + " " + sent->path.value_or("") + ") " + std::to_string(exchange.status) +
            " under key \"" + request->key + "\", which had already recorded request " +
            std::to_string(number) + "'s identical action: the replay of its success was due",
        exchange.response_seq, {binding.seq}));
  }
}

// A retry or cancel refused as a reused key: the store had recorded an action under that owner's
// key before the answer (action keys are each owner's own: another owner's use of the same key is
// no reuse).
void check_free_keys_refused(const HistoryModel& model,
                             const std::map<OwnerKey, std::vector<Binding>>& bound,
                             std::vector<Violation>& out) {
  for (const auto& exchange : model.exchanges) {
    if (!exchange.answered() || exchange.status != 422) continue;
    if (exchange.route != "create_attempt" && exchange.route != "cancel_attempt") continue;
    if (model.response_of(exchange)->error != "idempotency_key_reused") continue;
    const auto request = model.request_of(exchange);
    const auto found = bound.find({request->owner, request->key});
    if (found != bound.end() && found->second.front().seq < exchange.response_seq) continue;
    out.push_back(violation("I11.free_key_refused",
                            exchange.node + " answered " + request->method + " " + request->path +
                                " 422 idempotency_key_reused under key \"" + request->key +
                                "\", but the store had recorded no action under " + request->owner +
                                "'s key \"" + request->key + "\" by then",
                            exchange.response_seq, {exchange.request_seq}));
  }
}

}  // namespace

std::vector<Violation> check_operator_actions(const HistoryModel& model) {
  std::vector<Violation> out;
  const auto bound = bindings(model);
  for (const auto& [key, list] : bound) {
    if (list.size() < 2) continue;
    out.push_back(violation("I11.key_committed_twice",
                            "the store recorded owner " + key.first + "'s action key \"" +
                                key.second + "\" twice: with " + attempt_ref(list[0].attempt_id) +
                                " and again with " + attempt_ref(list[1].attempt_id),
                            list[1].seq, {list[0].seq}));
  }
  check_refused_replays(model, bound, out);
  check_free_keys_refused(model, bound, out);
  std::map<OwnerKey, const Success*> first_success;
  const auto all = successes(model);
  for (const auto& success : all) {
    const auto& got = success.received.what;
    const std::string head = "request " + std::to_string(success.request) + " (" +
                             success.sent.action + " " + success.sent.path.value_or("") +
                             ") was answered " + std::to_string(got.status) + " ";
    const Binding* binding = nullptr;
    std::optional<OwnerKey> key;
    if (success.sent.key) {
      key = OwnerKey{success.sent.owner, *success.sent.key};
      if (auto it = bound.find(*key); it != bound.end()) binding = &it->second.front();
    }
    const std::vector<std::uint64_t> evidence =
        binding ? std::vector<std::uint64_t>{binding->seq} : std::vector<std::uint64_t>{};
    if (auto wrong = misbacked(model, success, binding); !wrong.empty()) {
      out.push_back(
          violation("I11.unbacked_success", head + wrong, success.received.seq, evidence));
      continue;
    }
    const bool retry = success.sent.action == "retry";
    const AttemptRecord& attempt = *model.attempt(*got.attempt_id);
    const std::string state(
        contract_word(retry ? AttemptState::starting : AttemptState::cancelled));
    // A retry's answer also names the attempt's number and provider, as the store inserted it.
    const auto& made = attempt.inserted.what;
    const bool names_wrong = retry && (got.shown_attempt_no != made.attempt_no ||
                                       got.shown_provider != made.provider.str());
    if (names_wrong) {
      out.push_back(
          violation("I11.answer_misstates",
                    head + "showing " + attempt_ref(attempt.id()) + " as attempt_no " +
                        (got.shown_attempt_no ? std::to_string(*got.shown_attempt_no) : "(none)") +
                        " on provider " + got.shown_provider.value_or("(none)") +
                        "; the store inserted it as attempt_no " + std::to_string(made.attempt_no) +
                        " on " + made.provider.str(),
                    success.received.seq, evidence));
      continue;
    }
    if (got.shown_state != state || got.job_id != attempt.job_id()) {
      out.push_back(violation("I11.answer_misstates",
                              head + "showing " + attempt_ref(attempt.id()) + " as " +
                                  got.shown_state.value_or("(no state)") + " of " +
                                  job_ref(got.job_id.value_or(0)) + "; the " + success.sent.action +
                                  " left it " + state + " in " + job_ref(attempt.job_id()) +
                                  ", and a replay repeats that first answer",
                              success.received.seq, evidence));
      continue;
    }
    if (!key) continue;
    auto [first, inserted] = first_success.try_emplace(*key, &success);
    if (!inserted) {
      const Success& earlier = *first->second;
      if (!same_request(earlier.sent, success.sent)) {
        out.push_back(violation("I11.key_shared",
                                head + "under key \"" + key->second + "\", which request " +
                                    std::to_string(earlier.request) + " used for " +
                                    earlier.sent.action + " " + earlier.sent.path.value_or("") +
                                    ": a key reused with another request is refused",
                                success.received.seq, {earlier.received.seq}));
        continue;
      }
      if (earlier.received.what.status != got.status ||
          earlier.received.what.body_digest != got.body_digest) {
        out.push_back(violation("I11.replay_differs",
                                head + "under key \"" + key->second +
                                    "\" with another answer than the first one (request " +
                                    std::to_string(earlier.request) + ", status " +
                                    std::to_string(earlier.received.what.status) + ")",
                                success.received.seq, {earlier.received.seq}));
        continue;
      }
    }
    if (binding == nullptr) continue;
    const auto made_by = committers(model, *key, *binding);
    if (got.replayed.value_or(false)) {
      // The one exchange of the one send that can have recorded the key: a first answer.
      const bool recorder = made_by.size() == 1 && made_by.contains({success.request, got.send});
      if (recorder && exchanges_of(model, success.request, got.send) == 1) {
        out.push_back(violation("I11.first_marked_replayed",
                                head + "to send " + std::to_string(got.send) +
                                    ", whose own exchange recorded the key, marked "
                                    "Idempotent-Replayed: true: it is no replay",
                                success.received.seq, evidence));
      }
      continue;
    }
    if (!made_by.empty() && !made_by.contains({success.request, got.send})) {
      const auto& [request, send] = *made_by.begin();
      out.push_back(violation("I11.replay_unmarked",
                              head + "to send " + std::to_string(got.send) +
                                  ", replaying what request " + std::to_string(request) +
                                  " (send " + std::to_string(send) +
                                  ") recorded, without Idempotent-Replayed: true",
                              success.received.seq, evidence));
    }
  }
  return out;
}

}  // namespace onejob::check
