#include "harness/check/invariant.hpp"

#include "harness/check/i1_one_job_per_key.hpp"
#include "harness/check/i6_certified_failover.hpp"
#include "harness/check/i7_nothing_lost.hpp"
#include "harness/check/i8_liveness.hpp"
#include "harness/check/i9_side_effects.hpp"

namespace onejob::check {

const std::vector<Invariant>& all_invariants() {
  static const std::vector<Invariant> invariants = {
      {"I1", "one job per (owner, key); every accepted create with that pair returns its id",
       check_one_job_per_key},
      {"I6", "automatic failover only to certified providers; invalid output is never a result",
       check_certified_failover},
      {"I7", "no accepted job is lost across crashes or lost replies; reads are owner-scoped",
       check_nothing_lost},
      {"I8", "by run end every job is completed, failed, or blocked on an UNKNOWN attempt",
       check_liveness},
      {"I9", "a provider runs a job again only after an explicit cancel, never after a timeout",
       check_side_effects},
  };
  return invariants;
}

const Invariant* find_invariant(std::string_view id) {
  for (const auto& invariant : all_invariants()) {
    if (invariant.id == id) return &invariant;
  }
  return nullptr;
}

}  // namespace onejob::check
