// I13 — every answer keeps the API contract: status codes, limits at their exact boundaries, and
// refusals that tell the truth.
//
// The contract is stated here, not taken from system/ (a checker must not share a bug with the
// code it judges):
//   - no answer is a 500 or another 5xx than 503 (the load balancer's own 502 aside): a store
//     failure is 503 with Retry-After, a bug is a bug (internal_error, judged on every answer an
//     API node gave, delivered or not); every 503 a client receives carries Retry-After
//     (no_retry_after), of 1 second, as the contract says (README "API contract");
//   - limits, judged from the bytes the client sent (limit_misjudged): a retry's body other than
//     exactly {"provider": a string} is never accepted but refused 400 invalid_json or
//     invalid_body, and one naming a provider the run has not (run.provider) is refused 400
//     invalid_body, each unless refused for its job (404, 409 job_completed), its key (422
//     idempotency_key_reused), its credentials (401, 403), its owner's name (400
//     unstorable_value, for an owner the store cannot hold) or a 5xx first; nor is a create whose
//     input has an empty or
//     missing "text" or a member besides "text" and "fields", nor one whose operation is not
//     classify, summarize or extract, whose provider is not one the run has (run.provider), or
//     whose failover list names one it has not, or one twice (the provider included); a body over 1
//     MiB is 413 and one at or under it never is; an Idempotency-Key is 1-255 bytes of 0x20-0x7e: a
//     create with a valid key is never refused for its key, one with an invalid or missing key (and
//     a body within the limit) is refused 400 naming that, idempotency_key_invalid or
//     idempotency_key_missing (an action's key is optional: one without is never refused as
//     missing it, nor a request with a key); JSON nested deeper than 64 levels is refused as
//     invalid_json (400), and JSON at or under 64 levels that this checker's own parser reads (no
//     duplicate key) is never refused as invalid JSON; a body that parser cannot read (a key
//     repeated in one object, a number beyond a double, no JSON) is never accepted, and a create
//     with such a body and a valid key is refused as invalid_json (unless 401, 403 or a 5xx);
//   - a create answered 201 names its new job in a Location header, /jobs/{the job id its body
//     shows} (location_wrong);
//   - routes, judged from the method and path the client sent (route_misjudged): a path that fits
//     none of POST /jobs, GET /jobs/{id}, POST /jobs/{id}/attempts, POST /attempts/{id}/cancel
//     (an id: a positive decimal number, digits only) is answered 404, one that fits with another
//     method 405, and one that fits with its method never 405; and the route an API node records
//     for a request (api.request) is the one the request's path names, or none: a router that took
//     "/jobs/0" or "/jobs/-1" for a job's path acts on a resource the request does not name, even
//     where its 404 reads the same;
//   - a job read shows a result exactly when it shows "succeeded" and a failure_reason exactly
//     when it shows "failed", that reason a non-empty text: a failed job says why
//     (read_misstates);
//   - a job read lists the job's attempts as they stood (read_misstates): every attempt of the job
//     inserted before the API node received the read, no attempt of another job or inserted after
//     its answer, each once, each in a state it was in at some point of the exchange, each
//     with the attempt_no, origin and provider the store inserted it with, and each with a reason
//     the store's row held at some point of the exchange (the commit log's outcome_reason); a
//     failed job's failure_reason is one the store wrote for it by the answer;
//   - a job read's status is one the job had at some point of the exchange that answered it
//     (read_misstates), by the commit log: pending from its insert and from any attempt insert,
//     failed from a job failure, succeeded from its winning compare-and-swap; so is the status a
//     create's 200 or 201 shows (create_misstates: a replay of a finished job is not pending);
//   - a job read's "blocked" tells the truth (read_misstates): true when one of the job's attempts
//     was UNKNOWN throughout the exchange that answered, false when none was at any point of it;
//   - a job read shows a "version" (an integer; read_misstates) the job had at some point of the
//     exchange: 1 from its insert, 2 from its winning compare-and-swap (only the winner bumps it);
//   - a refusal's reason was true while the API node handled the request (refusal_untrue): a
//     cancel refused as attempt_not_live is for an attempt (the one its path names) that was not
//     live at some point of the exchange; a retry refused as attempt_in_flight names an attempt
//     live at some point of it; a retry refused as job_completed is for a job the store had
//     completed by the answer; a retry refused 422 provider_not_certified asked for a provider
//     (its body's, or with none the job's latest attempt's) whose latest certification in the
//     commit log failed, or was missing, at some point of the exchange;
//   - every refusal a client reads names, in its body's "error", a word the contract gives its
//     status on its route, and a success names none (error_misnamed). The words, from the
//     contract's table (README "API contract") and stated here in kErrorWords: any route 400
//     unstorable_value (a value of the request, the caller's owner name included, that the store
//     cannot hold), 401 unauthenticated, 404 not_found, 405 method_not_allowed, 413
//     payload_too_large, 500 internal, 502 bad_gateway (the load balancer's), 503
//     store_unavailable; a create 400 idempotency_key_missing, idempotency_key_invalid,
//     invalid_json or invalid_body and 422 idempotency_key_reused; a retry those 400s, 403
//     operator_only, 409 attempt_in_flight or job_completed, 422 idempotency_key_reused or
//     provider_not_certified; a cancel those 400s, 403 operator_only, 409 attempt_not_live,
//     422 idempotency_key_reused. A 409 is never a create's (a reused key is 422);
//   - a failure the client cannot fix (a 5xx, or 400 unstorable_value) names, in its body's
//     "request_id", the request id the API node handled it under, and the node's own record of
//     that answer (api.response) keeps the failure's detail (failure_unnamed): the id is how an
//     operator finds the detail the answer leaves out.
//   - a request whose owner's name PostgreSQL text cannot hold (a NUL byte or invalid UTF-8, by
//     the checker's own reading) is answered neither 2xx (nothing can be stored or read for an
//     owner the store cannot hold) nor 503 while the store answered that node (no store.fault on
//     its connection during the exchange): retrying cannot help (unstorable_misanswered). The
//     contract's answer is 400 unstorable_value; a refusal the API makes before the store (401,
//     404, 405, 413, a 400 for the key or the body) says something true first.
// Does not check: what a success says (I1, I5, I11), owner scope (I7).
#include <utility>

#include <algorithm>
#include <map>
#include <set>

#include "harness/check/api_routes.hpp"
#include "harness/check/i13_bodies.hpp"
#include "harness/check/i13_truth.hpp"
#include "harness/check/invariant.hpp"
#include "harness/check/json_value.hpp"
#include "harness/events/world_events.hpp"
#include "harness/sim/utf8.hpp"

namespace onejob::check {
namespace {

// The Retry-After every 503 carries, in seconds (README, "API contract": the store cannot answer).
constexpr std::string_view kStoreRetryAfter = "1";

using i13::AnswerCounts;
using i13::BodyFacts;
using i13::check_create_answer;
using i13::check_read;
using i13::read_shape;
using i13::retry_body_ok;
using i13::retry_body_provider;
using i13::untrue_refusal;

constexpr std::size_t kBodyLimit = 1024 * 1024;
constexpr std::size_t kKeyLimit = 255;
constexpr std::size_t kDepthLimit = 64;

bool valid_key(const std::string& key) {
  return !key.empty() && key.size() <= kKeyLimit &&
         std::ranges::all_of(key, [](char c) { return c >= 0x20 && c <= 0x7e; });
}

// The method and path a client sent: a route probe records them; otherwise the action's own.
std::pair<std::string, std::string> method_and_path(const events::ClientSent& sent) {
  std::string method = sent.method.value_or(sent.action == "get_job" ? "GET" : "POST");
  std::string path = sent.path.value_or(
      sent.action == "get_job" ? "/jobs/" + std::to_string(sent.job_id.value_or(0)) : "/jobs");
  return {std::move(method), std::move(path)};
}

// What a request's status says about its route, wrong: a path naming no resource must be 404, one
// naming a resource with another method 405, and one naming a resource with its method never 405.
// `request` is the method and path the client sent, `route` what they name.
std::string route_breach(const std::pair<std::string, std::string>& request, const Route& route,
                         const events::ClientReceived& got, const std::string& body) {
  if (got.status == 502 || body.size() > kBodyLimit) return {};  // the balancer's; too big first
  const std::string named = request.first + " " + request.second;
  switch (route.fit) {
    case RouteFit::none:
      return got.status == 404 ? "" : named + " names no resource but was not answered 404";
    case RouteFit::other_method:
      return got.status == 405 ? "" : named + " (a resource, another method) was not refused 405";
    case RouteFit::resource:
      return got.status == 405 ? named + " was refused 405, but it names a resource and its method"
                               : "";
  }
  return {};
}

std::string limit_breach(const events::ClientSent& sent, const Route& route,
                         const events::ClientReceived& got, BodyFacts& facts,
                         const std::set<std::string, std::less<>>& providers) {
  const std::string& body = facts.body();
  if (got.status == 502) return {};  // the load balancer's, not the API's
  const std::string error = got.error.value_or("");
  const bool too_big = body.size() > kBodyLimit;
  if (too_big != (got.status == 413)) {
    return too_big ? "a " + std::to_string(body.size()) + "-byte body was not refused 413"
                   : "a " + std::to_string(body.size()) + "-byte body (the limit is " +
                         std::to_string(kBodyLimit) + ") was refused 413";
  }
  if (too_big || route.fit != RouteFit::resource) return {};
  const bool create = sent.action == "create_job";
  const bool key_ok = sent.key && valid_key(*sent.key);
  if (sent.key && key_ok && error == "idempotency_key_invalid") {
    return "a valid " + std::to_string(sent.key->size()) + "-byte Idempotency-Key was refused";
  }
  if (sent.key && error == "idempotency_key_missing") {
    return "a request with an Idempotency-Key (" + std::to_string(sent.key->size()) +
           " bytes) was refused as missing one";
  }
  if ((sent.key && !key_ok) || (create && !sent.key)) {
    const std::string what =
        sent.key ? "an invalid Idempotency-Key (" + std::to_string(sent.key->size()) + " bytes)"
                 : std::string("a create without an Idempotency-Key");
    if (got.status != 400) return what + " was not refused 400";
    // The key is read first: its refusal names what is wrong with it.
    const std::string word = sent.key ? "idempotency_key_invalid" : "idempotency_key_missing";
    if (error != word) {
      return what + " was refused 400 " + (error.empty() ? "naming no error" : error) + ", not " +
             word;
    }
    return {};
  }
  if (!sent.key && error == "idempotency_key_missing") {
    return "a " + sent.action +
           " without an Idempotency-Key (optional there) was refused as "
           "missing one";
  }
  if (body.empty() || (!create && sent.action != "retry")) return {};
  if (!create && is_success(got.status) && !retry_body_ok(body)) {
    return "a retry body the contract refuses (" + body + ") was accepted";
  }
  // Refused for its job, its key, its credentials, its owner's name the store cannot hold (the
  // job is looked up under it) or a server failure first: a retry's body is read after those.
  const bool owner_refused = error == "unstorable_value" && !sim::text_column_holds(sent.owner);
  const bool judged_before = got.status >= 500 || got.status == 401 || got.status == 403 ||
                             got.status == 404 || error == "job_completed" ||
                             error == "idempotency_key_reused" || owner_refused;
  if (!create && !retry_body_ok(body) && !judged_before && !is_success(got.status) &&
      !(got.status == 400 && (error == "invalid_json" || error == "invalid_body"))) {
    return "a retry body the contract refuses (" + body + ") was answered " +
           std::to_string(got.status) + (error.empty() ? "" : " " + error) +
           ", not refused 400 invalid_json or invalid_body";
  }
  if (const auto named = create || providers.empty() ? std::nullopt : retry_body_provider(body);
      named && !providers.contains(*named)) {
    // Nothing but an invalid body may be said of a provider the server does not have.
    if (!judged_before && !(got.status == 400 && error == "invalid_body")) {
      return "a retry naming a provider the server does not have (\"" + *named +
             "\") was answered " + std::to_string(got.status) + (error.empty() ? "" : " " + error) +
             ", not refused 400 invalid_body";
    }
  }
  if (create && is_success(got.status) && !facts.create_input_ok()) {
    return "a create whose input the contract refuses (" + body + ") was accepted";
  }
  if (create && is_success(got.status) && !providers.empty() && facts.readable() &&
      !facts.create_names_ok(providers)) {
    return "a create naming an operation or a provider the server does not have, or a provider "
           "twice (" +
           body + ") was accepted";
  }
  if (is_success(got.status) && !facts.readable()) {
    return "a body this checker's parser cannot read as one JSON value (a key repeated in an "
           "object, a number beyond a double, or no JSON at all) was accepted";
  }
  // A create's body is parsed right after its key is checked: what is not one JSON value (by this
  // checker's parser) is invalid JSON, not some later answer about a value a parser made up. A 5xx
  // (a node shedding load before reading) and an authentication refusal may come first.
  if (create && !facts.readable() && error != "invalid_json" && got.status < 500 &&
      got.status != 401 && got.status != 403) {
    return "a create body this checker's parser cannot read as one JSON value was answered " +
           std::to_string(got.status) + (error.empty() ? "" : " " + error) +
           ", not refused as invalid JSON";
  }
  const std::size_t depth = facts.depth();
  if (depth > kDepthLimit && error != "invalid_json" && got.status != 404 && !owner_refused) {
    return "JSON nested " + std::to_string(depth) + " levels deep was not refused as invalid JSON";
  }
  if (depth <= kDepthLimit && error == "invalid_json" && facts.readable()) {
    return "JSON nested " + std::to_string(depth) + " levels deep was refused as invalid";
  }
  return {};
}

// An API node's record of its answer (api.response) is the answer its client received: the same
// status, and the job id, attempt id and error code the client read in the body. Judged for a
// client send only one API node answered, on the client's first receipt of it.
void check_recorded_answer(const HistoryModel& model, const ApiExchange& exchange,
                           const events::ApiResponse& answer, std::vector<Violation>& out) {
  const auto request = model.requests.find(exchange.client_request);
  if (request == model.requests.end()) return;
  for (const auto& received : model.receipts(request->second)) {
    const auto& got = received.what;
    if (got.send != exchange.client_send || got.status == 502) continue;
    std::string differs;
    if (got.status != answer.status) {
      differs = "status " + std::to_string(answer.status) + ", the client got " +
                std::to_string(got.status);
    } else if (got.job_id && got.job_id != answer.job_id) {
      differs = "no job id or another than the body's " + job_ref(*got.job_id);
    } else if (got.attempt_id && got.attempt_id != answer.attempt_id) {
      differs = "no attempt id or another than the body's " + attempt_ref(*got.attempt_id);
    } else if (got.error != answer.error) {
      differs = "error " + answer.error.value_or("(none)") + ", the body's is " +
                got.error.value_or("(none)");
    }
    if (!differs.empty()) {
      out.push_back(violation("I13.answer_misrecorded",
                              exchange.node + " recorded its answer to request " +
                                  std::to_string(exchange.client_request) + " with " + differs,
                              exchange.response_seq, {received.seq}));
      return;
    }
    // A failure the client cannot fix (a 5xx, a value the store cannot hold) names the request
    // id the node handled it under, and the node's own record of it keeps the detail: the id is
    // how an operator finds the detail the answer leaves out.
    const bool server_failure = answer.status >= 500 || answer.error == "unstorable_value";
    const auto id = model.request_of(exchange)->request_id;
    if (server_failure && got.request_id != id) {
      out.push_back(violation("I13.failure_unnamed",
                              exchange.node + " answered request " +
                                  std::to_string(exchange.client_request) + " " +
                                  std::to_string(answer.status) + " naming request id \"" +
                                  got.request_id.value_or("(none)") + "\", not \"" + id +
                                  "\", the id it handled the request under",
                              received.seq, {exchange.response_seq}));
    } else if (server_failure && answer.detail.value_or("").empty()) {
      out.push_back(violation("I13.failure_unnamed",
                              exchange.node + " answered request " +
                                  std::to_string(exchange.client_request) + " " +
                                  std::to_string(answer.status) + " (request id " + id +
                                  ") and kept no detail of the failure in its own record",
                              exchange.response_seq, {received.seq}));
    }
    return;
  }
}

}  // namespace

// The error words the contract gives each (route, status); route "" holds for every route.
struct ErrorWords {
  std::string_view action;
  std::int64_t status;
  std::initializer_list<std::string_view> words;
};
constexpr std::string_view kAny;              // every route
constexpr std::string_view kWrite = "write";  // a create, a retry or a cancel
const ErrorWords kErrorWords[] = {
    {kAny, 401, {"unauthenticated"}},
    {kAny, 404, {"not_found"}},
    {kAny, 405, {"method_not_allowed"}},
    {kAny, 400, {"unstorable_value"}},
    {kAny, 413, {"payload_too_large"}},
    {kAny, 500, {"internal"}},
    {kAny, 502, {"bad_gateway"}},
    {kAny, 503, {"store_unavailable"}},
    {kWrite,
     400,
     {"idempotency_key_missing", "idempotency_key_invalid", "invalid_json", "invalid_body"}},
    {kWrite, 422, {"idempotency_key_reused"}},
    {"retry", 403, {"operator_only"}},
    {"retry", 409, {"attempt_in_flight", "job_completed"}},
    {"retry", 422, {"provider_not_certified"}},
    {"cancel", 403, {"operator_only"}},
    {"cancel", 409, {"attempt_not_live"}},
};

// Whether the table's `row` holds for `action`.
bool row_holds(std::string_view row, std::string_view action) {
  return row == kAny || row == action ||
         (row == kWrite && (action == "create_job" || action == "retry" || action == "cancel"));
}

// What is wrong with the error word of an answer the client read ("" when nothing): a success
// names none, a refusal one its status has on `route`, the one the request's method and path name
// (a path naming none, or another method: only any route's words).
std::string error_misnamed(const Route& route, const events::ClientReceived& got) {
  const std::string_view action = route.fit == RouteFit::resource ? route.name : kAny;
  if (got.status < 400) {
    return got.error ? "a success naming error \"" + *got.error + "\"" : std::string();
  }
  for (const ErrorWords& row : kErrorWords) {
    if (row.status != got.status || !row_holds(row.action, action)) continue;
    if (got.error && std::ranges::find(row.words, *got.error) != row.words.end()) return {};
  }
  return got.error ? "error \"" + *got.error + "\" is not one the contract gives a " +
                         std::to_string(got.status) + " to " +
                         (action.empty() ? std::string("a path naming no route")
                                         : "a " + std::string(action))
                   : "a refusal naming no error";
}

namespace {

// The exchanges whose owner's name the store cannot hold, with the status each was answered.
using UnstorableOwners = std::vector<std::pair<const ApiExchange*, std::int64_t>>;

void check_unstorable_owners(const HistoryModel& model, const UnstorableOwners& answered,
                             std::vector<Violation>& out) {
  if (answered.empty() || model.history == nullptr) return;
  // Where each node's store connection failed (store.fault), in trace order.
  std::map<std::string, std::vector<std::uint64_t>, std::less<>> faults;
  model.history->visit_kinds(
      {&events::kind_name<events::StoreFault>()}, [&](const sim::TraceEvent& recorded) {
        if (auto fault = events::from_event<events::StoreFault>(recorded.event)) {
          faults[fault->node].push_back(recorded.seq);
        }
      });
  for (const auto& entry : answered) {
    // Plain variables, not a structured binding: clang 14 cannot capture one in a lambda.
    const ApiExchange* exchange = entry.first;
    const std::int64_t status = entry.second;
    const auto found = faults.find(exchange->node.str());
    const bool cut_off =
        found != faults.end() && std::ranges::any_of(found->second, [&](std::uint64_t seq) {
          return seq > exchange->request_seq && seq < exchange->response_seq;
        });
    const bool success = status >= 200 && status < 300;
    if (!success && (status != 503 || cut_off)) continue;
    out.push_back(violation(
        "I13.unstorable_misanswered",
        exchange->node + " answered " + exchange->route + " " + std::to_string(status) +
            " for an owner whose name holds a NUL byte or invalid UTF-8, which the store cannot " +
            "hold: " +
            (success ? std::string("nothing can be stored or read for such an owner")
                     : std::string("its store answered, and retrying cannot help")) +
            " (400 unstorable_value)",
        exchange->response_seq, {exchange->request_seq}));
  }
}

}  // namespace

std::vector<Violation> check_api_contract(const HistoryModel& model) {
  std::vector<Violation> out;
  AnswerCounts answers;
  for (const auto& exchange : model.exchanges) {
    if (exchange.answered()) ++answers[{exchange.client_request, exchange.client_send}];
  }
  UnstorableOwners unstorable;
  for (const auto& exchange : model.exchanges) {
    const auto request_read = model.request_of(exchange);
    const auto& request = *request_read;
    if (const auto named = recorded_name(route_of(request.method, request.path).name);
        exchange.route != named) {
      out.push_back(violation(
          "I13.route_misjudged",
          exchange.node + " recorded route \"" + exchange.route + "\" for " + request.method + " " +
              request.path + ", which names " +
              (named.empty() ? std::string("no route") : "route \"" + std::string(named) + "\""),
          exchange.request_seq, {}));
    }
    if (!exchange.answered()) continue;
    const auto answer_read = model.response_of(exchange);
    const auto& answer = *answer_read;
    const std::string head =
        exchange.node + " answered " + exchange.route + " " + std::to_string(answer.status) + ": ";
    if (!sim::text_column_holds(request.owner)) unstorable.push_back({&exchange, answer.status});
    if (answer.status >= 500 && answer.status != 503) {
      out.push_back(violation("I13.internal_error",
                              head + "no answer but 503 (with Retry-After) may say the server "
                                     "failed, and a store failure is a 503",
                              exchange.response_seq, {exchange.request_seq}));
    } else if (auto untrue = untrue_refusal(model, exchange, answer); !untrue.empty()) {
      out.push_back(violation("I13.refusal_untrue", head + untrue, exchange.response_seq,
                              {exchange.request_seq}));
    } else if (answer.status == 200 && exchange.route == "get_job" && answer.job_id) {
      check_read(model, exchange, answer, answers, out);
    } else if ((answer.status == 200 || answer.status == 201) && exchange.route == "create_job" &&
               answer.job_id) {
      check_create_answer(model, exchange, answer, answers, out);
    }
    if (answers[{exchange.client_request, exchange.client_send}] == 1) {
      check_recorded_answer(model, exchange, answer, out);
    }
  }
  check_unstorable_owners(model, unstorable, out);
  static const std::string kNoBody;
  // The providers the run has (run.provider): a create may name no other.
  std::set<std::string, std::less<>> providers;
  for (const auto& [name, provider] : model.providers) providers.insert(name);
  for (const auto& [number, request] : model.requests) {
    // A create's resends carry the bytes of its first send.
    std::optional<std::string> first_text;  // what first_body reads
    std::optional<BodyFacts> first_body;
    for (const auto& received : model.receipts(request)) {
      const auto& got = received.what;
      const auto sent = model.client_send(number, got.send);
      if (!sent) continue;
      const auto send_seq = request.send_seqs[static_cast<std::size_t>(got.send) - 1];
      const std::string head = "request " + std::to_string(number) + " (" + sent->action +
                               ") was answered " + std::to_string(got.status) + ": ";
      if (got.quotes_store.value_or(false)) {
        out.push_back(violation("I13.answer_leaks_internals",
                                head + "the body quotes the store's own words about its failure; "
                                       "an answer says what to do, and the detail stays in the "
                                       "node's own record",
                                received.seq, {send_seq}));
      }
      if (got.content_type) {
        out.push_back(violation("I13.answer_not_json",
                                head + "its Content-Type is " +
                                    (got.content_type->empty() ? std::string("missing")
                                                               : "\"" + *got.content_type + "\"") +
                                    ": every answer is a JSON object, sent as application/json",
                                received.seq, {send_seq}));
      }
      const auto request_line = method_and_path(*sent);
      const Route route = route_of(request_line.first, request_line.second);
      if (auto misnamed = error_misnamed(route, got); !misnamed.empty()) {
        out.push_back(violation("I13.error_misnamed", head + misnamed, received.seq, {send_seq}));
      }
      if (sent->action == "create_job" && got.status == 201) {
        const std::string names =
            got.job_id ? "/jobs/" + std::to_string(*got.job_id) : std::string("/jobs/{id}");
        if (got.location != names) {
          out.push_back(violation("I13.location_wrong",
                                  head + "a new job's answer names it in Location: " + names +
                                      ", but it has " +
                                      (got.location ? "\"" + *got.location + "\"" : "none"),
                                  received.seq, {send_seq}));
        }
      }
      if (got.status == 503 && got.retry_after != kStoreRetryAfter) {
        out.push_back(
            violation("I13.no_retry_after",
                      head + "a 503 with " +
                          (got.retry_after ? "Retry-After: \"" + *got.retry_after + "\""
                                           : std::string("no Retry-After")) +
                          ", where the contract says Retry-After: " + std::string(kStoreRetryAfter),
                      received.seq, {send_seq}));
        continue;
      }
      std::optional<BodyFacts> own_body;
      BodyFacts& facts =
          sent->body ? own_body.emplace(*sent->body)
                     : (first_body ? *first_body
                                   : first_body.emplace(first_text.emplace(
                                         model.first_send(request)->body.value_or(kNoBody))));
      if (auto wrong = route_breach(request_line, route, got, facts.body()); !wrong.empty()) {
        out.push_back(violation("I13.route_misjudged", head + wrong, received.seq, {send_seq}));
      } else if (auto breach = limit_breach(*sent, route, got, facts, providers); !breach.empty()) {
        out.push_back(violation("I13.limit_misjudged", head + breach, received.seq, {send_seq}));
      } else if (auto misshapen = read_shape(*sent, route, got); !misshapen.empty()) {
        out.push_back(violation("I13.read_misstates", head + misshapen, received.seq, {send_seq}));
      }
    }
  }
  return out;
}

}  // namespace onejob::check
