#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "system/service/system_context.hpp"

namespace onejob {

// Who is writing, and with which lease: the guard every attempt write carries.
struct Writer {
  std::string name;                   // worker name, "reconciler", "api"
  std::optional<std::int64_t> fence;  // the lease token held; nothing for out-of-band writes
};

// Every way an attempt's outcome reaches the store, whichever path brought it: the worker's call
// answering in time, the same call answering after its deadline, or the reconciler asking the
// provider. All of them end in the same compare-and-swap, so there is exactly one place where a
// result can become a job's result.
class Settlement {
 public:
  explicit Settlement(SystemContext& context) : context_(context) {}

  // A provider answer. A valid output goes to the job's compare-and-swap (won: SUCCEEDED;
  // lost: DISCARDED, kept on the attempt, never applied); an invalid one never becomes a result:
  // the attempt FAILS and failover runs. `from`: the states the writer expects.
  Async<void> answered(const Attempt& attempt, const Job& job, const std::string& output,
                       std::vector<AttemptState> from, const Writer& writer);

  // A definitive failure: FAILED, then failover. A cancelled attempt stays CANCELLED.
  Async<void> failed(const Attempt& attempt, const std::string& reason,
                     std::vector<AttemptState> from, const Writer& writer);

  // The outcome is not known: UNKNOWN, and the job is blocked (no failover).
  Async<UpdateAttemptResult> unknown(const Attempt& attempt, const std::string& reason,
                                     const Writer& writer,
                                     std::optional<std::string> take_over_as = std::nullopt);

  // A guarded state change, reported as attempt.state (applied) or attempt.write_refused.
  Async<UpdateAttemptResult> transition(AttemptUpdate update, const Writer& writer);

  // After a definitive failure of `failed`: a new attempt on the next contract-certified
  // provider of the job's order, or the job fails when none is left or the attempt limit is
  // reached. Never used for UNKNOWN: a timeout is not a failure.
  Async<void> fail_over(JobId job_id, const Attempt& failed);

  // fail_over for a FAILED attempt whose failover may have been cut short by a store fault:
  // only while the job is pending and that attempt is still its latest.
  Async<void> resume_fail_over(JobId job_id, const Attempt& failed);

 private:
  Async<bool> is_certified(const std::string& provider);

  SystemContext& context_;
};

// The events every attempt write reports; one place so all paths report alike.
void emit_attempt_created(EventSink& events, const Attempt& attempt);

}  // namespace onejob
