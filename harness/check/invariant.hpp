#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/sim/trace.hpp"

namespace onejob::check {

// A broken rule, found in a recorded history.
struct Violation {
  std::string invariant;  // "I1".. or "expect" for a scenario expectation
  std::string message;
  std::optional<std::uint64_t> event_seq;  // the first offending event, when there is one
};

// An invariant judges a run from its history alone: no access to the store or the nodes.
struct Invariant {
  std::string_view id;
  std::string_view summary;
  std::vector<Violation> (*check)(const sim::History& history);
};

// Every invariant checker, in id order.
const std::vector<Invariant>& all_invariants();
// nullptr when no checker has this id.
const Invariant* find_invariant(std::string_view id);

}  // namespace onejob::check
