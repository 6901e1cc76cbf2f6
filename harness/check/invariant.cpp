#include "harness/check/invariant.hpp"

#include <algorithm>

namespace onejob::check {

const std::vector<Invariant>& all_invariants() {
  static const std::vector<Invariant> invariants = {
      {"I1", "one job per (owner, key); every accepted create names the stored job for its key",
       check_one_job_per_key},
      {"I2", "same key, different request: 422, no job id returned, nothing stored",
       check_key_reuse_conflict},
      {"I3", "at most one live (STARTING/RUNNING/UNKNOWN) attempt per job at any instant",
       check_one_live_attempt},
      {"I4", "a timeout yields UNKNOWN, never FAILED; a job is never failed by a timeout",
       check_timeout_is_unknown},
      {"I5", "one winner per job; the result is the winner's, for the store and for readers",
       check_one_winner},
      {"I6", "automatic failover only to certified providers; invalid output is never a result",
       check_certified_failover},
      {"I7", "no accepted job is lost; reads are owner-scoped", check_nothing_lost},
      {"I8", "by run end every job is completed, failed, blocked, or awaiting an operator",
       check_liveness},
      {"I9", "a provider runs a job again only after an explicit cancel, never after a timeout",
       check_side_effects},
      {"I10", "no write by a lease holder commits after its lease was taken over", check_fencing},
  };
  return invariants;
}

const Invariant* find_invariant(std::string_view id) {
  const auto& invariants = all_invariants();
  auto it = std::ranges::find(invariants, id, &Invariant::id);
  return it == invariants.end() ? nullptr : &*it;
}

bool is_safety(const Violation& violation) {
  return violation.invariant == "log" ||
         (violation.invariant.starts_with("I") && find_invariant(violation.invariant) != nullptr);
}

std::string job_ref(std::int64_t job_id) { return "job " + std::to_string(job_id); }
std::string attempt_ref(std::int64_t attempt_id) { return "attempt " + std::to_string(attempt_id); }

}  // namespace onejob::check
