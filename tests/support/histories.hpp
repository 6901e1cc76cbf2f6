#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "system/events/api_events.hpp"
#include "system/events/worker_events.hpp"

#include "harness/events/client_events.hpp"
#include "harness/events/provider_events.hpp"

#include "tests/support/commit_histories.hpp"

// Hand-made histories for the checker tests (commit_histories.hpp: the builder and the store's
// commit log): here providers, clients, the load balancer and API nodes.
namespace onejob::test {

// ---- Providers --------------------------------------------------------------------------------

// A worker calls the provider for an attempt (node: the worker).
inline events::ProviderCalled provider_called(std::int64_t job_id, std::int64_t attempt_id,
                                              std::int64_t attempt_no = 1,
                                              std::string provider = "alpha") {
  return events::ProviderCalled{.job_id = job_id,
                                .attempt_id = attempt_id,
                                .provider = std::move(provider),
                                .provider_key = provider_key(job_id, attempt_no),
                                .deadline = Instant(std::chrono::seconds(30))};
}

// A provider executes an attempt's call (node: the provider). `outcome`: ok, error, malformed,
// hallucinated_key, wrong_operation or hang; it answers `output` at `answers_at` (never: hang).
inline events::ProviderExecuted executed(std::int64_t job_id, std::int64_t attempt_no,
                                         std::string outcome, std::string output,
                                         std::optional<Instant> answers_at) {
  return events::ProviderExecuted{.purpose = "attempt",
                                  .provider_key = provider_key(job_id, attempt_no),
                                  .operation = "classify",
                                  .outcome = std::move(outcome),
                                  .output = std::move(output),
                                  .answers_at = answers_at};
}

// ---- Clients, the load balancer and the API nodes ---------------------------------------------

// A client's create as it first sends it (node: the client).
inline events::ClientSent create_sent(std::int64_t request, std::string owner, std::string key,
                                      std::string body) {
  return events::ClientSent{.request = request,
                            .send = 1,
                            .action = "create_job",
                            .owner = std::move(owner),
                            .key = std::move(key),
                            .body = std::move(body)};
}

// A client's read of a job.
inline events::ClientSent get_sent(std::int64_t request, std::string owner, std::int64_t job_id) {
  return events::ClientSent{.request = request,
                            .send = 1,
                            .action = "get_job",
                            .owner = std::move(owner),
                            .job_id = job_id};
}

// A response reaching its client, naming `job_id` when its body does (a 201 naming it in its
// Location header too, as the contract asks).
inline events::ClientReceived received(std::int64_t request, std::int64_t status,
                                       std::optional<std::int64_t> job_id) {
  events::ClientReceived got{
      .request = request, .send = 1, .status = status, .body_digest = "", .job_id = job_id};
  if (status == 201 && job_id) got.location = "/jobs/" + std::to_string(*job_id);
  return got;
}

// A 200 job read as its client reads the body: the status, completed_by and result it shows, and
// the request of a job NewJob's defaults created (operation, provider, no failover list).
inline events::ClientReceived read_received(std::int64_t request, std::int64_t job_id,
                                            std::string shown_status,
                                            std::optional<std::int64_t> shown_winner,
                                            std::optional<std::string> result_digest) {
  events::ClientReceived got{.request = request,
                             .send = 1,
                             .status = 200,
                             .body_digest = "",
                             .job_id = job_id,
                             .shown_status = std::move(shown_status),
                             .shown_winner = shown_winner,
                             .result_digest = std::move(result_digest)};
  if (!shown_winner) got.winner_null = true;
  got.shown_blocked = false;
  got.shown_version = shown_winner ? 2 : 1;  // only the winner's compare-and-swap bumps it
  got.shown_operation = NewJob{}.operation;
  got.shown_provider = NewJob{}.provider;
  got.shown_failover = "";
  return got;
}

// One request an API node handles, forwarded by the load balancer from client request
// `request` (0: nobody forwarded it).
struct ApiCall {
  std::int64_t request = 1;
  std::string route = "create_job";
  std::string owner = "alice";
  std::string key = "k1";
  std::int64_t status = 201;
  std::optional<std::int64_t> job_id{};  // the job the answer names
  // The job (get_job, create_attempt) or attempt (cancel_attempt) the request's path names, when
  // not the answer's job_id (a read answered 404 names none).
  std::optional<std::int64_t> asks{};
  std::optional<std::string> path{};  // the path sent, when not the one the route takes
  std::string node = "api-1";
  std::int64_t lb_try = 1;
  std::optional<std::string> error{};  // the answer's error word
};

// A double click on an operator's retry of job 1 under key op-1: request 2 (the call that records
// the key) and its twin, request 3, refused `status` with `error`.
struct RetryTwins {
  ApiCall recorder;
  ApiCall twin;
};
inline RetryTwins retry_twins(std::int64_t status, std::string error) {
  const ApiCall recorder{.request = 2, .route = "create_attempt", .key = "op-1", .job_id = 1};
  ApiCall twin = recorder;
  twin.request = 3;
  twin.status = status;
  twin.error = std::move(error);
  return {recorder, twin};
}

inline std::string request_id(const ApiCall& call) {
  return events::forwarded_request_id(call.request, 1, call.lb_try);
}

// The load balancer forwards the call's client request (unless none) and the node receives it.
inline HistoryBuilder& api_request(HistoryBuilder& h, const ApiCall& call) {
  if (call.request != 0) {
    h.add("lb", events::LbForwarded{.request = call.request,
                                    .send = 1,
                                    .lb_try = call.lb_try,
                                    .to = call.node,
                                    .request_id = request_id(call)});
  }
  // The path the route takes (the API records it beside the route it made of it).
  const auto named = call.asks ? call.asks : call.job_id;
  const std::string id = named ? std::to_string(*named) : "";
  std::string path = "/jobs";
  if (call.route == "get_job") path = "/jobs/" + id;
  if (call.route == "create_attempt") path = "/jobs/" + id + "/attempts";
  if (call.route == "cancel_attempt") path = "/attempts/" + id + "/cancel";
  if (call.path) path = *call.path;
  return h.add(call.node, events::ApiRequest{.request_id = request_id(call),
                                             .route = call.route,
                                             .method = call.route == "get_job" ? "GET" : "POST",
                                             .path = path,
                                             .owner = call.owner,
                                             .key = call.key});
}

// The node answers the call.
inline HistoryBuilder& api_response(HistoryBuilder& h, const ApiCall& call) {
  return h.add(call.node, events::ApiResponse{.request_id = request_id(call),
                                              .route = call.route,
                                              .status = call.status,
                                              .owner = call.owner,
                                              .key = call.key,
                                              .job_id = call.job_id,
                                              .error = call.error});
}

inline HistoryBuilder& api_exchange(HistoryBuilder& h, const ApiCall& call) {
  api_request(h, call);
  return api_response(h, call);
}

// Job 1 and its attempt 1 (on alpha) inserted by api-1, and reported by it.
inline void inserted_and_reported(HistoryBuilder& h) {
  insert_job(h, {});
  h.add("api-1", events::JobCreated{.job_id = 1, .owner = "alice", .key = "k1"});
  h.add("api-1", events::AttemptCreated{.job_id = 1,
                                        .attempt_id = 1,
                                        .attempt_no = 1,
                                        .provider = "alpha",
                                        .provider_key = provider_key(1, 1)});
}

// Job 1 inserted by api-1 and reported; worker-1's claim of attempt 1, committed and reported; its
// call to alpha under key 1:1.
inline void claimed_and_called(HistoryBuilder& h) {
  inserted_and_reported(h);
  h.add(kStore, claimed(1, 1, "worker-1", 1));
  h.add("worker-1", events::AttemptStateChanged{.job_id = 1,
                                                .attempt_id = 1,
                                                .from = AttemptState::starting,
                                                .to = AttemptState::running,
                                                .reason = "claimed",
                                                .by = "worker-1",
                                                .token = 1});
  h.add("worker-1", provider_called(1, 1));
}

// The run ended quiescent: nothing left to happen. Returns its seq.
inline std::uint64_t end_quiescent(HistoryBuilder& h) {
  return h.add("world", events::RunEnded{.quiescent = true}).last_seq();
}

}  // namespace onejob::test
