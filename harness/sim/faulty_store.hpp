#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "system/ports/store_wrapper.hpp"

#include "harness/events/world_events.hpp"
#include "harness/sim/pause.hpp"
#include "harness/sim/sim_network.hpp"

namespace onejob::sim {

// One node's connection to the store, over the node_store link. Forwards every operation and
// breaks only what the link says: latency both ways, partitions, a lost request (unavailable:
// nothing ran), a lost reply or "commit outcome unknown" (the write committed, the answer never
// came: maybe_committed). A crashed node's connection refuses everything. Every fault is
// recorded as injected. A connection reset after the statement reached the store is reported
// like a lost reply (the statement ran).
class FaultyStore final : public StoreWrapper {
 public:
  // `gate`: the node's pause switch (a reply waits there while the node is paused).
  FaultyStore(Store& target, SimLink& link, SimLoop& loop, Trace& trace, std::string node,
              PauseGate& gate)
      : StoreWrapper(target),
        link_(link),
        loop_(loop),
        trace_(trace),
        node_(std::move(node)),
        gate_(gate) {}

  // The node crashed: this connection is gone for good (a restart opens a new one).
  void close() { closed_ = true; }

  Async<InsertJobResult> insert_job(NewJob job) override;
  Async<std::optional<Job>> find_job_by_key(std::string owner_id, std::string key) override;
  Async<std::optional<Job>> find_job(std::string owner_id, JobId id) override;
  Async<std::optional<Job>> load_job(JobId id) override;
  Async<bool> fail_job(JobId id, std::string reason, Instant at) override;
  Async<InsertAttemptResult> insert_attempt(NewAttempt attempt) override;
  Async<std::optional<Attempt>> find_attempt(AttemptId id) override;
  Async<std::optional<ActionRecord>> find_action(std::string owner_id, std::string key) override;
  Async<std::vector<Attempt>> list_attempts(JobId job_id) override;
  Async<std::vector<Attempt>> find_attempts_in_state(AttemptState state) override;
  Async<std::vector<Job>> find_idle_jobs() override;
  Async<std::vector<Attempt>> find_expired_leases(Instant now) override;
  Async<SweepWork> find_sweep_work(Instant now) override;
  Async<std::optional<Attempt>> claim_next_attempt(std::string worker, Instant now,
                                                   Instant lease_expires_at) override;
  Async<UpdateAttemptResult> update_attempt(AttemptUpdate update) override;
  Async<CompleteAttemptResult> complete_attempt(CompleteAttempt completion) override;
  Async<void> record_certification(Certification certification) override;
  Async<std::optional<Certification>> latest_certification(std::string provider) override;

 private:
  // Runs `statement` (an Async<T>() callable) as one round trip over the link. `write`: may
  // commit.
  template <typename T, typename Statement>
  Async<T> round_trip(const char* operation, bool write, Statement statement);
  // What breaks the request on its way to the store, or its reply on the way back (each drawn
  // and recorded as injected when it happens), or nothing.
  std::optional<StoreError> request_fault(const char* operation);
  std::optional<StoreError> reply_fault(const char* operation, bool write);
  // record_certification's statement, as a value-returning one for round_trip.
  Async<bool> record_statement(Certification certification);
  // Records the injected fault; returns the error the node will see.
  StoreError fault(StoreError::Kind kind, events::InjectedFault fault, const char* operation);

  SimLink& link_;
  SimLoop& loop_;
  Trace& trace_;
  std::string node_;
  PauseGate& gate_;
  bool closed_ = false;
};

// The words of the error a FaultyStore gives for an injected fault (its store name, as in
// kInjectedFaults) during `operation`: "store <fault> during <operation>".
std::string store_fault_message(std::string_view fault, std::string_view operation);

// Whether `text` quotes an error a FaultyStore gave (its own words: "store <fault> during
// <operation>", "<node> is down", "<node> went down waiting for the reply"). No answer to a
// client may carry them: they stand for what a real store says (socket paths, SQL, the
// server's messages).
bool quotes_store_error(std::string_view text);

}  // namespace onejob::sim
