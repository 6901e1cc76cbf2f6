#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "harness/check/invariant.hpp"
#include "harness/scenario/spec.hpp"

namespace onejob::scenario {

// What a client got back for one request.
struct ReceivedResponse {
  int status = 0;
  std::optional<std::int64_t> job_id;
  std::uint64_t event_seq = 0;  // the client.receive event
};

// Judges the scenario's `expect` section against what clients received (`received`: one slot per
// request, index = request number - 1), the store's final rows and the run's history model.
// A request nobody answered is a violation of "availability" (judged after the quiet phase when
// the scenario has one); every other failure is one of "expect".
std::vector<check::Violation> check_expectations(
    const ScenarioSpec& spec, const std::vector<std::optional<ReceivedResponse>>& received,
    const check::HistoryModel& model, const check::StoreRows& rows);

// Where a job stands by its final row: succeeded, failed, blocked (on an UNKNOWN attempt),
// awaiting_operator (nothing live, its latest attempt cancelled) or pending.
std::string final_status(const check::JobRow& job, const std::vector<check::AttemptRow>& attempts);

}  // namespace onejob::scenario
