#pragma once

#include <cstdint>
#include <string_view>

#include "system/domain/attempt.hpp"
#include "system/domain/names.hpp"

namespace onejob::check {

// The API's routes, as DESIGN.md states them: POST /jobs, GET /jobs/{id},
// POST /jobs/{id}/attempts, POST /attempts/{id}/cancel, where an id is a positive decimal number
// (digits only, leading zeros allowed, at most 2^63-1). A path split at "/" that fits none names
// no resource (404); one that fits with another method is refused 405. The rules' own reading,
// not the API's router.
enum class RouteFit { resource, other_method, none };

struct Route {
  RouteFit fit = RouteFit::none;
  std::string_view name;  // create_job, get_job, retry, cancel; empty when the path names none
  std::int64_t id = 0;    // the job (get_job, retry) or attempt (cancel) the path names
};

// The route `method` and `path` name.
Route route_of(std::string_view method, std::string_view path);

// The operations the API offers (README "The contract gate"), as the rules state them.
inline constexpr std::string_view kOperations[] = {"classify", "summarize", "extract"};

// The words an answer uses for an attempt's state and origin (README's answer table), spelled out
// here rather than read from the system's own tables (system/domain/attempt.cpp): a word the
// system misspells is then a difference the rules see, not one both sides share. The scenario
// language's expectations use the same state words.
inline constexpr Named<AttemptState> kContractStates[] = {
    {AttemptState::starting, "STARTING"},   {AttemptState::running, "RUNNING"},
    {AttemptState::unknown, "UNKNOWN"},     {AttemptState::succeeded, "SUCCEEDED"},
    {AttemptState::failed, "FAILED"},       {AttemptState::cancelled, "CANCELLED"},
    {AttemptState::discarded, "DISCARDED"},
};
static_assert(names_cover(kContractStates));
inline constexpr Named<AttemptOrigin> kContractOrigins[] = {
    {AttemptOrigin::initial, "initial"},
    {AttemptOrigin::failover, "failover"},
    {AttemptOrigin::explicit_retry, "explicit"},
};
static_assert(names_cover(kContractOrigins));
inline std::string_view contract_word(AttemptState state) {
  return name_of(kContractStates, state);
}
inline std::string_view contract_word(AttemptOrigin origin) {
  return name_of(kContractOrigins, origin);
}

// The name the API records for a route (api.request's `route`): retry is create_attempt, cancel
// cancel_attempt, the others their own; "" for none.
std::string_view recorded_name(std::string_view route);

}  // namespace onejob::check
