#pragma once

#include <utility>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "system/domain/job.hpp"
#include "system/domain/time.hpp"

namespace onejob {

// The life of one try to fulfil a job.
//   starting   created, waiting for a worker to claim it
//   running    claimed under a lease; the provider is being called
//   unknown    the outcome is not known (deadline passed, worker lost): the provider may still be
//              working, so the job is blocked until late truth or an operator resolves it
//   succeeded  its result won the job's compare-and-swap
//   failed     definitively not done (provider refused, output broke the contract)
//   cancelled  stopped out of band by an operator; no longer blocks new attempts, but a late
//              result still competes for the job
//   discarded  it produced a valid result after another attempt had won; kept, never applied
enum class AttemptState { starting, running, unknown, succeeded, failed, cancelled, discarded };

std::string_view to_string(AttemptState state);
std::optional<AttemptState> parse_attempt_state(std::string_view text);

// Live attempts block new attempts of the same job (the store enforces at most one).
bool is_live(AttemptState state);

// The one table of legal transitions.
const std::vector<std::pair<AttemptState, AttemptState>>& legal_attempt_transitions();
bool is_legal_transition(AttemptState from, AttemptState to);

// A transition outside the table: a programming error, never an expected outcome.
class IllegalTransition : public std::logic_error {
 public:
  IllegalTransition(AttemptState from, AttemptState to);
};
// Throws IllegalTransition unless from -> to is in the table.
void require_legal_transition(AttemptState from, AttemptState to);

// Why an attempt exists.
enum class AttemptOrigin { initial, failover, explicit_retry };
std::string_view to_string(AttemptOrigin origin);
std::optional<AttemptOrigin> parse_attempt_origin(std::string_view text);

struct Attempt {
  AttemptId id = 0;
  JobId job_id = 0;
  int attempt_no = 0;  // 1, 2, ... within the job
  std::string provider;
  std::string provider_key;  // job_id:attempt_no, so the provider's own dedup sees one identity
  AttemptOrigin origin = AttemptOrigin::initial;
  AttemptState state = AttemptState::starting;
  std::string lease_owner;       // the worker that claimed it, empty before any claim
  std::int64_t lease_token = 0;  // fencing token: bumped by every claim, checked by every write
  Instant lease_expires_at{};
  Instant created_at{};
  std::optional<Instant> finished_at;
  std::string outcome_reason;  // why it ended (or became unknown)
  std::string result;          // output it produced, when valid (discarded ones keep theirs)
};

// The key the provider sees for an attempt: one per attempt, stable across retries of the call.
std::string derive_provider_key(JobId job_id, int attempt_no);

}  // namespace onejob
