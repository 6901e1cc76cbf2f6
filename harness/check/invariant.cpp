#include "harness/check/invariant.hpp"

#include "harness/check/i1_one_job_per_key.hpp"
#include "harness/check/i2_key_reuse_conflict.hpp"
#include "harness/check/i3_one_live_attempt.hpp"
#include "harness/check/i4_timeout_is_unknown.hpp"
#include "harness/check/i5_one_winner.hpp"
#include "harness/check/i6_certified_failover.hpp"
#include "harness/check/i7_nothing_lost.hpp"
#include "harness/check/i8_liveness.hpp"
#include "harness/check/i9_side_effects.hpp"

namespace onejob::check {

const std::vector<Invariant>& all_invariants() {
  static const std::vector<Invariant> invariants = {
      {"I1", "one job per (owner, key); every accepted create with that pair returns its id",
       check_one_job_per_key},
      {"I2", "same key, different request: 422, no job id returned, nothing stored",
       check_key_reuse_conflict},
      {"I3", "at most one live (STARTING/RUNNING/UNKNOWN) attempt per job at any instant",
       check_one_live_attempt},
      {"I4", "a timeout yields UNKNOWN, never FAILED; a job is never failed by a timeout",
       check_timeout_is_unknown},
      {"I5", "one winner per job; the result is the winner's; every loser is discarded",
       check_one_winner},
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
