#pragma once

#include <utility>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "harness/sim/trace.hpp"

namespace onejob::check {

// What a history says about each attempt's state, for the checkers that judge where attempts
// ended up (I7's pick-up, I8, I9). Besides `attempt.created` / `store.job_inserted` (STARTING)
// and `attempt.state` (its `to`), it reads the facts the history shows only indirectly:
//   - `attempt.write_refused` names the state the store found;
//   - `reconciler.status` means the reconciler found the attempt UNKNOWN in the store.
// A write may also commit without its event, and nothing later may ever reveal it. Then the
// attempt is in doubt until the next fact about it, or, when the attempt had already FAILED (the
// lost write was its failover or the job's failure), its job's fate is in doubt until the job
// shows a live attempt, completes or fails. Lost writes are known from:
//   - `worker.store_error` maybe_committed, which names the attempt;
//   - `store.fault` maybe_committed on the reconciler's link while it settles an attempt
//     (`reconciler.status` completed or failed; its store error names no attempt);
//   - a crash of a worker holding a provider's reply, or of the reconciler while it settles (a
//     crash hides the write's reply and records no store error);
//   - an operator's cancel (`api.request` cancel_attempt) until its answer is 2xx or 4xx.
class AttemptFacts {
 public:
  struct Attempt {
    std::int64_t job_id = 0;
    std::string state;      // STARTING, RUNNING, UNKNOWN, SUCCEEDED, FAILED, CANCELLED, DISCARDED
    bool in_doubt = false;  // the store may hold a later state the history never showed
  };

  // Folds the next event of the history in.
  void record(const sim::TraceEvent& recorded);

  const std::map<std::int64_t, Attempt>& attempts() const { return attempts_; }
  // True when the job may have failed, or have a failover attempt, that the history never showed.
  bool job_in_doubt(std::int64_t job_id) const { return doubtful_jobs_.contains(job_id); }

 private:
  void learn(std::int64_t job_id, std::int64_t attempt_id, const std::string& state);
  void lost_write(std::int64_t attempt_id);
  void record_cancel(const Event& event);
  void record_attempt_fact(const sim::TraceEvent& recorded);

  std::map<std::int64_t, Attempt> attempts_;
  std::set<std::int64_t> doubtful_jobs_;
  std::map<std::int64_t, std::string> settling_;  // attempt id -> worker holding its reply
  // The node settling an attempt after reconciler.status, and that attempt.
  std::optional<std::pair<std::string, std::int64_t>> reconciling_;
  // Cancel request id -> the attempt, and whether that cancel put it in doubt.
  std::map<std::string, std::pair<std::int64_t, bool>> cancels_;
};

}  // namespace onejob::check
