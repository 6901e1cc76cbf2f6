#pragma once

#include <cstdint>
#include <string>

#include "system/ports/store_wrapper.hpp"

#include "harness/sim/trace.hpp"

namespace onejob::sim {

// The store's commit log: the "store" node's entries in the trace (commits and refusals), shared
// by every node's connection, and how many there are so far.
class CommitLog {
 public:
  // REQUIRES: `trace` outlives this.
  explicit CommitLog(Trace& trace) : trace_(trace) {}
  void append(Event event);
  std::uint64_t entries() const { return entries_; }

 private:
  Trace& trace_;
  std::uint64_t entries_ = 0;
};

// One node's connection to the store, as the store's commit log sees it: forwards every
// operation and records each write the store applied (commit.* events, on the "store" node) at
// the instant it commits, and each guarded write it refused (store.refused). It sits beneath
// FaultyStore, so a reply lost afterwards cannot hide the commit. The log is derived from what the
// store returned; the runner compares it with the store's rows at the end of the run.
class CommitLogStore final : public StoreWrapper {
 public:
  // REQUIRES: `target` and `log` outlive this.
  CommitLogStore(Store& target, CommitLog& log, std::string node)
      : StoreWrapper(target), log_(log), node_(std::move(node)) {}

  Async<InsertJobResult> insert_job(NewJob job) override;
  Async<bool> fail_job(JobId id, std::string reason, Instant at) override;
  Async<InsertAttemptResult> insert_attempt(NewAttempt attempt) override;
  Async<std::optional<Attempt>> claim_next_attempt(std::string worker, Instant now,
                                                   Instant lease_expires_at) override;
  Async<UpdateAttemptResult> update_attempt(AttemptUpdate update) override;
  Async<CompleteAttemptResult> complete_attempt(CompleteAttempt completion) override;
  Async<void> record_certification(Certification certification) override;

 private:
  // `key`: the operator action's Idempotency-Key the write recorded, if any.
  void attempt_inserted(const Attempt& attempt, const std::optional<ActionKey>& key = {});
  void transition(const Attempt& row, AttemptState before, std::optional<std::int64_t> fence,
                  bool claim, bool takeover, const std::optional<ActionKey>& key = {});
  // An attempt write, as a refusal records it: the token it carried and the states it allowed.
  struct AttemptWrite {
    std::optional<std::int64_t> fence;
    std::optional<std::vector<AttemptState>> from;
  };
  void refused(const char* operation, std::string_view refusal, std::optional<JobId> job,
               std::optional<AttemptId> attempt, std::optional<AttemptState> wanted = std::nullopt,
               const AttemptWrite& write = {});

  // `write` (the same operation on the target), with a refusal of a value the store cannot hold
  // (StoreError::Kind::rejected) logged as store.refused "unstorable" before it goes on up.
  template <typename T>
  Async<T> logging_unstorable(const char* operation, Async<T> write);

  CommitLog& log_;
  std::string node_;
};

}  // namespace onejob::sim
