#pragma once

#include <utility>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "system/domain/attempt.hpp"
#include "system/domain/time.hpp"
#include "system/events/api_events.hpp"
#include "system/events/schema.hpp"
#include "system/events/worker_events.hpp"

#include "harness/check/history.hpp"
#include "harness/check/invariant.hpp"
#include "harness/events/client_events.hpp"
#include "harness/events/commit_events.hpp"
#include "harness/events/provider_events.hpp"
#include "harness/events/world_events.hpp"
#include "harness/sim/trace.hpp"

#include "tests/support/verdicts.hpp"

// Hand-made histories for the checker tests, built only from the typed event structs (no field
// is ever spelled by its wire name here). This part: the builder and the store's commit log;
// histories.hpp adds providers, clients and API nodes. Commit-log events go on node "store", as the
// commit log records them; every other event goes on the node that emits it in a run: "worker-1", a
// provider ("alpha"), the load balancer ("lb"), an API node ("api-1"), a client ("browser").
namespace onejob::test {

inline constexpr const char* kStore = "store";

// When a provider answers, in the histories the tests build.
inline const Instant kSoon = Instant(std::chrono::seconds(2));

// Valid classify outputs two providers produce, and the create body of the default job.
inline const std::string kBilling = R"({"confidence":0.9,"label":"billing"})";
inline const std::string kOther = R"({"confidence":0.8,"label":"other"})";
inline const std::string kBody =
    R"({"input":{"text":"please refund me"},"operation":"classify","provider":"alpha"})";

// Appends typed events, each with seq = size + 1, at the builder's clock (moved by at()) or at
// the instant given.
class HistoryBuilder {
 public:
  // Events added from here on happen `since_start` into the run.
  HistoryBuilder& at(Duration since_start) {
    now_ = Instant(since_start);
    return *this;
  }
  template <events::EventType T>
  HistoryBuilder& add(std::string node, const T& event) {
    return add(std::move(node), event, now_);
  }
  template <events::EventType T>
  HistoryBuilder& add(std::string node, const T& event, Instant when) {
    history_.push_back(sim::TraceEvent{history_.size() + 1, when, std::move(node),
                                       events::to_event(event), false});
    return *this;
  }
  // The seq of the event added last: what a checker names as the offending event.
  std::uint64_t last_seq() const { return history_.size(); }
  // The builder's clock.
  Instant now() const { return now_; }
  const sim::History& history() const { return history_; }
  // The history model of what was added so far (it points into this builder).
  check::HistoryModel model() const { return check::fold_history(history_); }

 private:
  Instant now_{};
  sim::History history_;
};

// ---- The store's commit log -------------------------------------------------------------------

inline std::string provider_key(std::int64_t job_id, std::int64_t attempt_no) {
  return derive_provider_key(job_id, static_cast<int>(attempt_no));
}

struct NewJob {
  std::int64_t job_id = 1;
  std::int64_t attempt_id = 1;
  std::string owner = "alice";
  std::string key = "k1";
  std::string provider = "alpha";
  std::string operation = "classify";
  std::string body = kBody;  // the request body as stored
  std::string by = "api-1";
};

inline events::CommitAttemptInserted attempt_inserted(std::int64_t job_id, std::int64_t attempt_id,
                                                      std::int64_t attempt_no, std::string provider,
                                                      AttemptOrigin origin = AttemptOrigin::initial,
                                                      std::string by = "worker-1") {
  events::CommitAttemptInserted inserted;
  inserted.job_id = job_id;
  inserted.attempt_id = attempt_id;
  inserted.attempt_no = attempt_no;
  inserted.provider = std::move(provider);
  inserted.provider_key = provider_key(job_id, attempt_no);
  inserted.origin = origin;
  inserted.by = std::move(by);
  return inserted;
}

inline events::CommitJobInserted job_inserted(const NewJob& job) {
  return events::CommitJobInserted{.job_id = job.job_id,
                                   .owner = job.owner,
                                   .key = job.key,
                                   .operation = job.operation,
                                   .provider = job.provider,
                                   .payload = job.body,
                                   .by = job.by};
}

// The store commits a job together with its first attempt (attempt_no 1, STARTING).
inline HistoryBuilder& insert_job(HistoryBuilder& h, const NewJob& job) {
  h.add(kStore, job_inserted(job));
  return h.add(kStore, attempt_inserted(job.job_id, job.attempt_id, 1, job.provider,
                                        AttemptOrigin::initial, job.by));
}

// A worker claims a STARTING attempt: RUNNING under its lease, whose token becomes `token`.
inline events::CommitAttemptTransition claimed(std::int64_t job_id, std::int64_t attempt_id,
                                               std::string worker = "worker-1",
                                               std::int64_t token = 1) {
  return events::CommitAttemptTransition{.job_id = job_id,
                                         .attempt_id = attempt_id,
                                         .from = AttemptState::starting,
                                         .to = AttemptState::running,
                                         .by = worker,
                                         .fence = std::nullopt,
                                         .token = token,
                                         .lease_owner = worker,
                                         .claim = true,
                                         .takeover = false};
}

// The lease holder's own write, fenced with its token.
inline events::CommitAttemptTransition fenced_write(std::int64_t job_id, std::int64_t attempt_id,
                                                    AttemptState from, AttemptState to,
                                                    std::string worker = "worker-1",
                                                    std::int64_t token = 1) {
  return events::CommitAttemptTransition{.job_id = job_id,
                                         .attempt_id = attempt_id,
                                         .from = from,
                                         .to = to,
                                         .by = worker,
                                         .fence = token,
                                         .token = token,
                                         .lease_owner = worker,
                                         .claim = false,
                                         .takeover = false};
}

// A write by a node holding no lease (an operator's cancel, the reconciler resolving late
// truth): guarded by state alone, the lease left as it was.
inline events::CommitAttemptTransition unfenced_write(std::int64_t job_id, std::int64_t attempt_id,
                                                      AttemptState from, AttemptState to,
                                                      std::string by, std::int64_t token = 1,
                                                      std::string lease_owner = "worker-1") {
  return events::CommitAttemptTransition{.job_id = job_id,
                                         .attempt_id = attempt_id,
                                         .from = from,
                                         .to = to,
                                         .by = std::move(by),
                                         .fence = std::nullopt,
                                         .token = token,
                                         .lease_owner = std::move(lease_owner),
                                         .claim = false,
                                         .takeover = false};
}

// An operator's cancel: `node` handles POST /attempts/{id}/cancel, and while it does the store
// commits the move to CANCELLED (an out-of-band write: the lease is left as it was). Returns the
// commit's seq.
inline std::uint64_t operator_cancel(HistoryBuilder& h, std::int64_t job_id,
                                     std::int64_t attempt_id, AttemptState from,
                                     std::int64_t token = 1, std::string lease_owner = "worker-1",
                                     std::string node = "api-1") {
  const std::string id = "cancel-" + std::to_string(attempt_id);
  h.add(node, events::ApiRequest{.request_id = id,
                                 .route = "cancel_attempt",
                                 .method = "POST",
                                 .path = "/attempts/" + std::to_string(attempt_id) + "/cancel",
                                 .owner = "alice",
                                 .key = ""});
  const auto commit =
      h.add(kStore, unfenced_write(job_id, attempt_id, from, AttemptState::cancelled, node, token,
                                   std::move(lease_owner)))
          .last_seq();
  h.add(node, events::ApiResponse{.request_id = id,
                                  .route = "cancel_attempt",
                                  .status = 200,
                                  .owner = "alice",
                                  .key = "",
                                  .job_id = job_id,
                                  .attempt_id = attempt_id});
  return commit;
}

// The reconciler takes over an expired lease: RUNNING -> UNKNOWN, the token bumped to `token`.
inline events::CommitAttemptTransition taken_over(std::int64_t job_id, std::int64_t attempt_id,
                                                  std::int64_t token = 2,
                                                  std::string by = "reconciler") {
  return events::CommitAttemptTransition{.job_id = job_id,
                                         .attempt_id = attempt_id,
                                         .from = AttemptState::running,
                                         .to = AttemptState::unknown,
                                         .by = by,
                                         .fence = std::nullopt,
                                         .token = token,
                                         .lease_owner = by,
                                         .claim = false,
                                         .takeover = true};
}

// Job `id` with its attempt `id` (key k<id>), claimed by worker-1.
inline void running_job(HistoryBuilder& h, std::int64_t id) {
  std::string key = "k";
  key += std::to_string(id);
  insert_job(h, {.job_id = id, .attempt_id = id, .key = key});
  h.add(kStore, claimed(id, id));
}

// A compare-and-swap that won the job: version 1 -> 2, the offered result the job's.
inline events::CommitCas cas_won(std::int64_t job_id, std::int64_t attempt_id,
                                 const std::string& result, std::string by = "worker-1") {
  return events::CommitCas{.job_id = job_id,
                           .attempt_id = attempt_id,
                           .expected_version = 1,
                           .won = true,
                           .version = 2,
                           .winner = attempt_id,
                           .job_result = result,
                           .result = result,
                           .by = std::move(by)};
}

// A compare-and-swap that found the job won by `winner`, whose result the job keeps.
inline events::CommitCas cas_lost(std::int64_t job_id, std::int64_t attempt_id, std::int64_t winner,
                                  const std::string& winner_result, const std::string& offered,
                                  std::string by = "worker-1") {
  return events::CommitCas{.job_id = job_id,
                           .attempt_id = attempt_id,
                           .expected_version = 1,
                           .won = false,
                           .version = 2,
                           .winner = winner,
                           .job_result = winner_result,
                           .result = offered,
                           .by = std::move(by)};
}

// One attempt's completion, as its writer offers it.
struct Completion {
  std::int64_t job_id = 1;
  std::int64_t attempt_id = 1;
  std::string result = kBilling;  // the output offered
  AttemptState from = AttemptState::running;
  std::string by = "worker-1";
  std::int64_t token = 1;
};

// The completion's compare-and-swap wins, then its attempt becomes SUCCEEDED.
inline HistoryBuilder& win(HistoryBuilder& h, const Completion& c) {
  h.add(kStore, cas_won(c.job_id, c.attempt_id, c.result, c.by));
  return h.add(
      kStore, fenced_write(c.job_id, c.attempt_id, c.from, AttemptState::succeeded, c.by, c.token));
}

// The completion's compare-and-swap loses to `winner`, then its attempt becomes DISCARDED.
inline HistoryBuilder& lose(HistoryBuilder& h, const Completion& c, std::int64_t winner,
                            const std::string& winner_result) {
  h.add(kStore, cas_lost(c.job_id, c.attempt_id, winner, winner_result, c.result, c.by));
  return h.add(
      kStore, fenced_write(c.job_id, c.attempt_id, c.from, AttemptState::discarded, c.by, c.token));
}

// A run's recorded policy, short enough for hand-made histories: deadline 1s, lease 2s, reconcile
// every 1s, status timeout 1s, poll 0.1s, store backoff cap 1s, capacity 4, attempt_limit 5,
// redrive_limit 8, one worker and a reconciler; faults over at 5s.
inline events::RunPolicy short_policy() {
  return events::RunPolicy{.attempt_deadline_us = 1'000'000,
                           .lease_us = 2'000'000,
                           .reconcile_period_us = 1'000'000,
                           .status_timeout_us = 1'000'000,
                           .worker_poll_us = 100'000,
                           .store_backoff_cap_us = 1'000'000,
                           .worker_capacity = 4,
                           .attempt_limit = 5,
                           .redrive_limit = 8,
                           .workers = 1,
                           .reconciler = true,
                           .faults_over = Instant(std::chrono::seconds(5))};
}

inline events::CommitJobFailed job_failed(std::int64_t job_id, std::string by = "worker-1") {
  return events::CommitJobFailed{.job_id = job_id, .by = std::move(by)};
}

// Jobs 1 to 4, one in each ending a run may legitimately have: succeeded, failed, blocked on an
// UNKNOWN attempt, and awaiting an operator after a cancel.
inline void settled_jobs(HistoryBuilder& h) {
  running_job(h, 1);
  win(h, {.job_id = 1, .attempt_id = 1});
  running_job(h, 2);
  h.add(kStore, fenced_write(2, 2, AttemptState::running, AttemptState::failed))
      .add(kStore, job_failed(2));
  running_job(h, 3);
  h.add(kStore, taken_over(3, 3));
  running_job(h, 4);
  operator_cancel(h, 4, 4, AttemptState::running);
}

inline events::CommitCertification certification(std::string provider, bool passed) {
  return events::CommitCertification{
      .provider = std::move(provider), .passed = passed, .by = "certifier"};
}

// A certification call the provider answered with `outcome` at once (node: the provider).
inline events::ProviderExecuted certification_call(std::string outcome, Instant answers_at,
                                                   std::string operation = "classify",
                                                   std::string key = "cert:1") {
  return events::ProviderExecuted{.purpose = "certification",
                                  .provider_key = std::move(key),
                                  .operation = std::move(operation),
                                  .outcome = std::move(outcome),
                                  .output = R"({"label":"billing","confidence":0.9})",
                                  .answers_at = answers_at};
}

// The certifier hears the answer to certification call `key` (the transport delivered it).
inline events::ProviderDelivered certification_heard(std::string provider,
                                                     std::string key = "cert:1") {
  return events::ProviderDelivered{.call = std::string(events::kDeliveredReply),
                                   .provider = std::move(provider),
                                   .provider_key = std::move(key),
                                   .outcome = "answered"};
}

// A certification's calls: one for each operation (classify, summarize, extract, keys cert:1 to
// cert:3) but `skipped`, each answered by the provider (with `outcome`, "ok": right) and heard by
// the certifier.
inline void certification_calls(HistoryBuilder& h, const std::string& provider,
                                const std::string& outcome = "ok", std::string_view skipped = {}) {
  int number = 0;
  for (const std::string_view operation : {"classify", "summarize", "extract"}) {
    const std::string key = "cert:" + std::to_string(++number);
    if (operation == skipped) continue;
    h.add(provider, certification_call(outcome, h.now(), std::string(operation), key))
        .add("certifier", certification_heard(provider, key));
  }
}

// A certification run: its calls (certification_calls), then the store records the verdict
// `passed`.
inline void certify(HistoryBuilder& h, const std::string& provider, bool passed,
                    const std::string& outcome = "ok") {
  certification_calls(h, provider, outcome);
  h.add(kStore, certification(provider, passed));
}

// Job 1, inserted by api-1; worker-1 claims its attempt 1 (token 1) and moves it to FAILED.
inline HistoryBuilder& first_attempt_failed(HistoryBuilder& h) {
  insert_job(h, {});
  return h.add(kStore, claimed(1, 1, "worker-1", 1))
      .add(kStore, fenced_write(1, 1, AttemptState::running, AttemptState::failed, "worker-1", 1));
}

// api-1 inserts attempt 2 of job 1 (on alpha) as alice's explicit retry and records her key
// `key` with it.
inline void insert_keyed_retry(HistoryBuilder& h, const std::string& key) {
  auto retry = attempt_inserted(1, 2, 2, "alpha", AttemptOrigin::explicit_retry, "api-1");
  retry.action_owner = "alice";
  retry.action_key = key;
  h.add(kStore, retry);
}

// alice's operator retry of job `job` (request `request`, send `send`) under key `key`.
inline events::ClientSent retry_sent(std::int64_t request, std::int64_t send, std::string key,
                                     std::int64_t job = 1) {
  return events::ClientSent{.request = request,
                            .send = send,
                            .action = "retry",
                            .owner = "alice",
                            .key = std::move(key),
                            .job_id = job,
                            .path = "/jobs/" + std::to_string(job) + "/attempts"};
}

// The store refused a new attempt of the job because `blocking` is live (nothing committed).
inline events::StoreRefused live_refused(std::int64_t job_id, std::int64_t blocking,
                                         std::string by = "api-1") {
  return events::StoreRefused{.operation = "insert_attempt",
                              .refusal = std::string(events::kRefusedLiveAttempt),
                              .job_id = job_id,
                              .attempt_id = blocking,
                              .wanted = std::nullopt,
                              .by = std::move(by)};
}

// The store refused a write whose lease token was stale (nothing committed).
inline events::StoreRefused fenced_out(std::int64_t job_id, std::int64_t attempt_id,
                                       std::string by = "worker-1",
                                       AttemptState wanted = AttemptState::failed,
                                       std::int64_t fence = 1) {
  return events::StoreRefused{.operation = "update_attempt",
                              .refusal = std::string(events::kRefusedFenced),
                              .job_id = job_id,
                              .attempt_id = attempt_id,
                              .wanted = wanted,
                              .by = std::move(by),
                              .fence = fence};
}

}  // namespace onejob::test
