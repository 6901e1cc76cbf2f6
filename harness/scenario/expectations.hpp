#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "harness/check/invariant.hpp"
#include "harness/scenario/spec.hpp"
#include "harness/sim/trace.hpp"

namespace onejob::scenario {

// What a client got back for one request.
struct ReceivedResponse {
  int status = 0;
  std::optional<std::int64_t> job_id;
  std::uint64_t event_seq = 0;  // the client.receive event
};

// Judges the scenario's `expect` section, and that every request was answered. `received` has
// one slot per request (index = request number - 1). Failures are Violations of "expect".
std::vector<check::Violation> check_expectations(
    const ScenarioSpec& spec, const std::vector<std::optional<ReceivedResponse>>& received,
    const sim::History& history);

}  // namespace onejob::scenario
