// World's client and load-balancer traffic: clients sending and retrying timeline requests, the
// balancer forwarding them to API nodes and relaying answers, API nodes serving them.
#include <algorithm>
#include <cctype>
#include <set>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "system/domain/check.hpp"
#include "system/service/deadline.hpp"

#include "harness/check/json_value.hpp"
#include "harness/events/client_events.hpp"
#include "harness/scenario/world.hpp"
#include "harness/scenario/world_nodes.hpp"
#include "harness/sim/faulty_store.hpp"
#include "harness/sim/sim_network.hpp"

namespace onejob::scenario {
// ---- clients and the load balancer -------------------------------------------------------

namespace {

// The load balancer's node name.
constexpr const char* kLb = "lb";

}  // namespace

World::Send& World::send_state(int number, int send) {
  auto& sends = requests_[number - 1].sends;
  if (sends.size() < static_cast<std::size_t>(send)) sends.resize(static_cast<std::size_t>(send));
  return sends[static_cast<std::size_t>(send) - 1];
}

void World::client_send(int number, int send) {
  TimelineEntry room;
  const auto& entry = request_entry(spec_, static_cast<std::size_t>(number), room);
  requests_[number - 1].latest_send = send;
  const auto found = std::ranges::find(spec_.clients, entry.client, &ClientSpec::name);
  ONEJOB_ASSERT(found != spec_.clients.end(), "a timeline entry names a client the loader checked");
  const auto& client = *found;
  Request request{.method = "POST",
                  .path = "/jobs",
                  .headers = {},
                  .body = {},
                  .principal = client.owner,
                  .request_id = events::client_request_id(number, send)};
  events::ClientSent sent{.request = number,
                          .send = send,
                          .action = std::string(name_of(kTimelineActions, entry.kind)),
                          .owner = client.owner};
  if (entry.kind == TimelineEntry::Kind::create_job) {
    if (entry.create_job.key) {
      request.headers.emplace_back("Idempotency-Key", *entry.create_job.key);
      sent.key = *entry.create_job.key;
    }
    // The body is copied once for the trace and once for the request (it can be a megabyte).
    if (send == 1) sent.body = entry.create_job.body;
    trace_.record(client.name, events::to_event(sent));
    request.body = sent.body ? std::move(*sent.body) : entry.create_job.body;
    transmit(number, send, std::move(request));
    return;
  }
  // An action on the job of an earlier create: the client knows that job's id only from the
  // response it got.
  const auto& created = requests_[entry.target_request - 1].received;
  if (!created || !created->job_id) {
    const auto skipped_seq = trace_.record(
        client.name,
        events::to_event(events::ClientSkipped{
            .request = number,
            .reason = "request " + std::to_string(entry.target_request) + " has no job id"}));
    requests_[number - 1].received = ReceivedResponse{0, std::nullopt, skipped_seq};
    return;
  }
  const std::string job = std::to_string(*created->job_id);
  sent.job_id = *created->job_id;
  if (entry.kind == TimelineEntry::Kind::get_job) {
    request.method = "GET";
    request.path = "/jobs/" + job;
    if (entry.method) request.method = *(sent.method = *entry.method);
    if (entry.path) {
      request.path = *entry.path;
      for (auto at = request.path.find("{job}"); at != std::string::npos;
           at = request.path.find("{job}", at + job.size())) {
        request.path.replace(at, 5, job);
      }
      sent.path = request.path;
    }
    trace_.record(client.name, events::to_event(sent));
    transmit(number, send, std::move(request));
    return;
  }
  // An operator's action carries an Idempotency-Key, the same on every resend: a resend whose
  // first reply was lost gets the first outcome again. A scenario may give several actions one key,
  // or send one with none (the key is optional).
  if (const auto key = action_key_sent(entry)) {
    request.headers.emplace_back("Idempotency-Key", *key);
    sent.key = *key;
  }
  if (entry.kind == TimelineEntry::Kind::retry) {
    request.path = "/jobs/" + job + "/attempts";
    if (entry.provider) {
      request.body = nlohmann::json{{"provider", *entry.provider}}.dump(
          -1, ' ', false, nlohmann::json::error_handler_t::replace);
    } else if (entry.retry_body) {
      request.body = *entry.retry_body;
    }
    if (!request.body.empty()) sent.body = request.body;
    sent.path = request.path;
    trace_.record(client.name, events::to_event(sent));
    transmit(number, send, std::move(request));
    return;
  }
  sent.attempt_no = entry.attempt_no;
  boost::asio::co_spawn(
      loop_.io(),
      cancel_attempt(this, number, send, *created->job_id, std::move(request), std::move(sent)),
      rethrow_error);
}

// An operator's cancel: the operator console looks the attempt up (an omniscient read of the
// store, as a dashboard would show it) and sends POST /attempts/{id}/cancel.
Async<void> World::cancel_attempt(World* world, int number, int send, JobId job, Request request,
                                  events::ClientSent sent) {
  TimelineEntry room;
  const int attempt_no =
      request_entry(world->spec_, static_cast<std::size_t>(number), room).attempt_no;
  const auto attempts = co_await world->store_->list_attempts(job);
  const auto found = std::ranges::find(attempts, attempt_no, &Attempt::attempt_no);
  request.path = "/attempts/" +
                 (found == attempts.end() ? std::string("0") : std::to_string(found->id)) +
                 "/cancel";
  sent.path = request.path;
  world->trace_.record(world->requests_[number - 1].client, events::to_event(sent));
  world->transmit(number, send, std::move(request));
}

void World::transmit(int number, int send, Request request) {
  const std::string& client = requests_[number - 1].client;
  const std::string id = request.request_id;
  auto& link = *links_.at(LinkKind::client_lb);
  // Shared, never copied: a create's body can be a megabyte, and the request is handed on
  // through several closures (a duplicated delivery shares it too).
  auto shared = std::make_shared<const Request>(std::move(request));
  link.send(sim::Direction::request, client, kLb, id,
            [this, &link, client, id, number, send, request = std::move(shared)] {
              if (link.reset(client, kLb, id)) {
                // The balancer has the request; the client learns its connection broke.
                send_state(number, send).reply_lost = true;
                loop_.schedule_after(link.latency(),
                                     [this, number, send] { client_retry(number, send); });
              }
              lb_receive(number, send, request, 0);
            });
  // No answer in time: send the same request again, with the same key.
  loop_.schedule_after(spec_.policy.client_timeout,
                       [this, number, send] { client_retry(number, send); });
}

void World::client_retry(int number, int send) {
  const auto& state = requests_[number - 1];
  if (state.received || state.latest_send != send) return;
  // Once faults have healed, a client keeps trying until it is answered.
  if (send > spec_.policy.client_retries && !quiet_) return;
  client_send(number, send + 1);
}

void World::lb_retry(int number, int send, const SharedRequest& request, int lb_try, bool reset) {
  const Send& state = send_state(number, send);
  if (state.lb_answered || state.lb_try != lb_try) return;
  if (lb_try < spec_.policy.lb_retries) {
    lb_receive(number, send, request, lb_try + 1);
  } else if (reset) {
    const std::string& client = requests_[number - 1].client;
    lb_respond(number, send, client,
               std::make_shared<const Response>(
                   Response{502,
                            {{"Content-Type", "application/json"}},
                            R"({"error":"bad_gateway","message":"upstream connection reset"})"}));
  }
}

void World::lb_receive(int number, int send, const SharedRequest& request, int lb_try) {
  Send& state = send_state(number, send);
  // Round robin across requests; a retry of one request moves on to the next node.
  if (!state.lb_based) {
    state.lb_base = lb_next_++;
    state.lb_based = true;
  }
  const std::string api =
      api_names_[(state.lb_base + static_cast<std::uint64_t>(lb_try)) % api_names_.size()];
  const std::string forwarded_id = events::forwarded_request_id(number, send, lb_try + 1);
  trace_.record(kLb, events::to_event(events::LbForwarded{.request = number,
                                                          .send = send,
                                                          .lb_try = lb_try + 1,
                                                          .to = api,
                                                          .request_id = forwarded_id}));
  state.lb_try = lb_try;
  auto& link = *links_.at(LinkKind::lb_api);
  link.send(sim::Direction::request, kLb, api, forwarded_id,
            [this, &link, api, number, send, request, forwarded_id, lb_try] {
              if (link.reset(kLb, api, forwarded_id)) {
                // The node has the request; the balancer learns the connection broke.
                ONEJOB_ASSERT(lb_try < 32,
                              "a balancer try beyond the loader's bound on lb_retries");
                send_state(number, send).lb_tries_reset |= 1u << lb_try;
                loop_.schedule_after(link.latency(), [this, number, send, request, lb_try] {
                  lb_retry(number, send, request, lb_try, /*reset=*/true);
                });
              }
              // The node's copy of the request, made as it arrives, under the balancer's id.
              Request forwarded = *request;
              forwarded.request_id = forwarded_id;
              // Defect lb-new-key: a retried create goes out under a key of the balancer's own.
              if (lb_try > 0 && config_.defects.has(Defect::lb_new_key)) {
                for (auto& [name, value] : forwarded.headers) {
                  if (name == "Idempotency-Key") value += "~lb" + std::to_string(lb_try + 1);
                }
              }
              // Header names are case-insensitive: every second forward writes them in lower
              // case, as an HTTP/2 hop does ("idempotency-key").
              if ((number + lb_try) % 2 == 1) {
                for (auto& header : forwarded.headers) {
                  for (auto& c : header.first) {
                    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                  }
                }
              }
              api_receive(api, number, send, lb_try, std::move(forwarded));
            });
  // The API node did not answer in time: the same request (same key) goes to another node.
  loop_.schedule_after(spec_.policy.lb_timeout, [this, number, send, request, lb_try] {
    lb_retry(number, send, request, lb_try, /*reset=*/false);
  });
}

void World::api_receive(const std::string& api, int number, int send, int lb_try, Request request) {
  Incarnation& life = node(api).current();
  if (!life.up) return;  // a crashed node accepts nothing
  boost::asio::co_spawn(
      loop_.io(), serve(this, api, &life, number, send, lb_try, std::move(request)), rethrow_error);
}

Async<void> World::serve(World* world, std::string api, Incarnation* life, int number, int send,
                         int lb_try, Request request) {
  if (life->gate->paused())
    co_await life->gate->pass();  // a paused node takes the request when it runs again
  if (!life->up) co_return;
  auto response = std::make_shared<const Response>(co_await life->api->handle(std::move(request)));
  if (!life->up) co_return;  // crashed while handling: the reply dies with the process
  // Its connection reset: the reply has no way back.
  if (world->send_state(number, send).reset_after_delivery(lb_try)) co_return;
  const std::string& client = world->requests_[number - 1].client;
  world->links_.at(LinkKind::lb_api)
      ->send(sim::Direction::response, api, kLb,
             "response " + events::client_request_id(number, send),
             [world, number, send, client, response] {
               world->lb_respond(number, send, client, response);
             });
}

void World::lb_respond(int number, int send, const std::string& client, SharedResponse response) {
  Send& state = send_state(number, send);
  // The client's connection reset: whatever the balancer has for it goes nowhere.
  if (state.reply_lost) return;
  if (state.lb_answered) {
    trace_.record(kLb, events::to_event(events::LbDroppedLate{.request = number, .send = send}));
    return;
  }
  state.lb_answered = true;
  links_.at(LinkKind::client_lb)
      ->send(sim::Direction::response, kLb, client,
             "response " + events::client_request_id(number, send),
             [this, number, send, client, response = std::move(response)] {
               client_receive(number, send, client, *response);
             });
}

namespace {

// The entries of `body`'s array `name`, each as `entry` writes it, joined by ','; nothing when
// the body has no such array.
template <typename Entry>
std::optional<std::string> joined(const nlohmann::json& body, const char* name, Entry entry) {
  const auto list = body.find(name);
  if (list == body.end() || !list->is_array()) return std::nullopt;
  std::string shown;
  for (const auto& item : *list) {
    if (!shown.empty()) shown += ',';
    shown += entry(item);
  }
  return shown;
}

// `body`'s member `name` when it holds a value of the kind `is` asks for, else nothing.
template <typename Is>
const nlohmann::json* member(const nlohmann::json& body, const char* name, Is is) {
  const auto found = body.find(name);
  return found != body.end() && (found.value().*is)() ? &found.value() : nullptr;
}

// What the client itself reads in a response body: its own JSON parser, not the system's.
void read_body(const std::string& text, events::ClientReceived& received) {
  using json = nlohmann::json;
  const auto body = check::parse_json(text);
  if (!body.is_object()) return;
  if (const auto* id = member(body, "job_id", &json::is_number_integer)) {
    received.job_id = id->get<std::int64_t>();
  }
  if (const auto* status = member(body, "status", &json::is_string)) {
    received.shown_status = status->get<std::string>();
  }
  if (const auto winner = body.find("completed_by"); winner != body.end()) {
    if (winner->is_number_integer()) received.shown_winner = winner->get<std::int64_t>();
    if (winner->is_null()) received.winner_null = true;
  }
  if (const auto result = body.find("result"); result != body.end()) {
    received.result_digest = check::digest_of(*result);
  }
  if (const auto* id = member(body, "attempt_id", &json::is_number_integer)) {
    received.attempt_id = id->get<std::int64_t>();
  }
  if (const auto* state = member(body, "state", &json::is_string)) {
    received.shown_state = state->get<std::string>();
  }
  if (const auto* blocked = member(body, "blocked", &json::is_boolean)) {
    received.shown_blocked = blocked->get<bool>();
  }
  if (const auto* version = member(body, "version", &json::is_number_integer)) {
    received.shown_version = version->get<std::int64_t>();
  }
  if (const auto* number = member(body, "attempt_no", &json::is_number_integer)) {
    received.shown_attempt_no = number->get<std::int64_t>();
  }
  received.shown_attempts = joined(body, "attempts", [](const nlohmann::json& attempt) {
    if (!attempt.is_object()) return std::string("?");
    const auto* id = member(attempt, "attempt_id", &json::is_number_integer);
    const auto* state = member(attempt, "state", &json::is_string);
    if (id == nullptr || state == nullptr) return std::string("?");
    const auto named = [&attempt](const char* name) {
      const auto* found = member(attempt, name, &json::is_string);
      return found != nullptr ? found->get<std::string>() : std::string("?");
    };
    const auto* number = member(attempt, "attempt_no", &json::is_number_integer);
    const auto* reason = member(attempt, "reason", &json::is_string);
    return std::to_string(id->get<std::int64_t>()) + ':' + state->get<std::string>() + ':' +
           (number != nullptr ? std::to_string(number->get<std::int64_t>()) : std::string("?")) +
           ':' + named("origin") + ':' + named("provider") + ':' +
           (reason != nullptr ? sim::fnv1a64_hex(reason->get_ref<const std::string&>())
                              : std::string("?"));
  });
  if (const auto* operation = member(body, "operation", &json::is_string)) {
    received.shown_operation = operation->get<std::string>();
  }
  if (const auto* provider = member(body, "provider", &json::is_string)) {
    received.shown_provider = provider->get<std::string>();
  }
  received.shown_failover = joined(body, "failover", [](const nlohmann::json& name) {
    return name.is_string() ? name.get<std::string>() : std::string("?");
  });
  if (const auto reason = body.find("failure_reason"); reason != body.end()) {
    received.shows_failure_reason =
        reason->is_string() && !reason->get_ref<const std::string&>().empty();
    if (reason->is_string()) {
      received.failure_reason_digest = sim::fnv1a64_hex(reason->get_ref<const std::string&>());
    }
  }
  if (const auto* error = member(body, "error", &json::is_string)) {
    received.error = error->get<std::string>();
  }
  if (const auto* id = member(body, "request_id", &json::is_string)) {
    received.request_id = id->get<std::string>();
  }
  std::set<std::string> nested;
  for (const auto& [name, value] : body.items()) {
    if (name == "result") continue;
    check::for_each_object(value, [&nested](const nlohmann::json& object) {
      nested.insert(check::digest_of(object));
    });
  }
  if (!nested.empty()) {
    std::string joined;
    for (const auto& one : nested) joined += (joined.empty() ? "" : ",") + one;
    received.nested_digests = std::move(joined);
  }
}

void read_headers(const Headers& headers, events::ClientReceived& received) {
  if (find_header(headers, "Idempotent-Replayed") == "true") received.replayed = true;
  received.retry_after = find_header(headers, "Retry-After");
  received.location = find_header(headers, "Location");
  if (auto type = find_header(headers, "Content-Type"); type != "application/json") {
    received.content_type = type.value_or("");
  }
}

}  // namespace

const events::ClientReceived& World::body_read(const std::string& body) {
  return bodies_read_.get(body, [&body](std::uint64_t hash) {
    events::ClientReceived read{.body_digest = sim::hex64(hash)};
    read_body(body, read);
    if (sim::quotes_store_error(body)) read.quotes_store = true;
    return read;
  });
}

void World::client_receive(int number, int send, const std::string& client,
                           const Response& response) {
  auto& slot = requests_[number - 1].received;
  events::ClientReceived received = body_read(response.body);
  received.request = number;
  received.send = send;
  received.status = response.status;
  received.duplicate = slot.has_value();
  read_headers(response.headers, received);
  const auto received_seq = trace_.record(client, events::to_event(received));
  if (slot) return;
  // A 502 or 503 is not an answer while the client may still retry: its timeout resends the same
  // request (same key) as for a lost response. With a quiet phase ahead it always may.
  if ((response.status == 502 || response.status == 503) &&
      (send <= spec_.policy.client_retries || spec_.quiet)) {
    return;
  }
  slot = ReceivedResponse{response.status, received.job_id, received_seq};
}

}  // namespace onejob::scenario
