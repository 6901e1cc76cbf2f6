#include "system/domain/attempt.hpp"

#include <algorithm>

#include "system/domain/names.hpp"

namespace onejob {
namespace {

using S = AttemptState;

constexpr Named<S> kStateNames[] = {
    {S::starting, "STARTING"},   {S::running, "RUNNING"}, {S::unknown, "UNKNOWN"},
    {S::succeeded, "SUCCEEDED"}, {S::failed, "FAILED"},   {S::cancelled, "CANCELLED"},
    {S::discarded, "DISCARDED"},
};
static_assert(names_cover(kStateNames));

constexpr Named<AttemptOrigin> kOriginNames[] = {
    {AttemptOrigin::initial, "initial"},
    {AttemptOrigin::failover, "failover"},
    {AttemptOrigin::explicit_retry, "explicit"},
};
static_assert(names_cover(kOriginNames));

}  // namespace

std::string_view to_string(AttemptState state) { return name_of(kStateNames, state, "INVALID"); }

std::optional<AttemptState> parse_attempt_state(std::string_view text) {
  return parse_name(kStateNames, text);
}

bool is_live(AttemptState state) {
  return state == S::starting || state == S::running || state == S::unknown;
}

const std::vector<std::pair<AttemptState, AttemptState>>& legal_attempt_transitions() {
  static const std::vector<std::pair<S, S>> table = {
      // A worker claims it, or an operator cancels it before any worker did, or it cannot even
      // be sent (its prompt does not fit the provider).
      {S::starting, S::running},
      {S::starting, S::cancelled},
      {S::starting, S::failed},
      // The call's outcome.
      {S::running, S::succeeded},
      {S::running, S::discarded},
      {S::running, S::failed},
      {S::running, S::unknown},  // deadline passed, or the lease expired with the worker gone
      {S::running, S::cancelled},
      // Late truth (the original call answering late, or the reconciler asking), or an operator.
      {S::unknown, S::succeeded},
      {S::unknown, S::discarded},
      {S::unknown, S::failed},
      {S::unknown, S::cancelled},
      // Re-driven: the provider has no record of the attempt's key (the call never reached it),
      // so it is sent again under the same key; a provider that deduplicates runs it once.
      {S::unknown, S::starting},
      // A cancelled attempt's late result still competes: first to return wins.
      {S::cancelled, S::succeeded},
      {S::cancelled, S::discarded},
  };
  return table;
}

bool is_legal_transition(AttemptState from, AttemptState to) {
  const auto& table = legal_attempt_transitions();
  return std::find(table.begin(), table.end(), std::pair{from, to}) != table.end();
}

IllegalTransition::IllegalTransition(AttemptState from, AttemptState to)
    : std::logic_error("illegal attempt transition " + std::string(to_string(from)) + " -> " +
                       std::string(to_string(to))) {}

void require_legal_transition(AttemptState from, AttemptState to) {
  if (!is_legal_transition(from, to)) throw IllegalTransition(from, to);
}

std::string_view to_string(AttemptOrigin origin) { return name_of(kOriginNames, origin); }

std::optional<AttemptOrigin> parse_attempt_origin(std::string_view text) {
  return parse_name(kOriginNames, text);
}

std::string derive_provider_key(JobId job_id, int attempt_no) {
  return std::to_string(job_id) + ":" + std::to_string(attempt_no);
}

}  // namespace onejob
