// I10 — fencing: no write by a lease holder commits after its lease was taken over.
//
// A worker holds an attempt's lease from its claim (the commit log gives the token). Whenever the
// lease moves on (a takeover, or a later claim), the token changes. Checks, against the store's
// commit log:
//   - every attempt write committed through a worker's connection after that worker claimed
//     the attempt finds the attempt's token still the one its claim set, and comes before any
//     other node moved the attempt RUNNING -> UNKNOWN (taking the expired lease over), whether
//     or not that takeover changed the token (a completion is reported at its compare-and-swap,
//     the first write it commits);
//   - every committed write that names a token (its fence) names the attempt's token;
//   - a claim or a takeover hands the lease to its writer: the lease owner becomes the node that
//     wrote it, under a new token (lease_not_handed_over: otherwise the previous holder's writes
//     would still carry a valid token).
// Does not check:
//   - writes by nodes that never held the lease (an operator's cancel, the reconciler before
//     taking over): they are out of band, guarded by state alone;
//   - reads, or writes the store refused (refusals are what fencing is for).
#include <set>

#include "harness/check/invariant.hpp"

namespace onejob::check {

std::vector<Violation> check_fencing(const HistoryModel& model) {
  std::vector<Violation> out;
  for (const auto& [id, attempt] : model.attempts) {
    std::map<std::string, const At<events::CommitAttemptTransition>*> claims;  // holder -> claim
    std::set<std::string> ousted;  // holders whose lease another node took over
    std::string holder;
    std::int64_t token = 0;
    for (const auto& step : attempt.steps) {
      const auto& s = step.what;
      auto claim = claims.find(s.by);
      // Stale: the writer's lease moved on, or the token it wrote with is not the attempt's.
      const bool stale = (claim != claims.end() &&
                          (claim->second->what.token != token || ousted.contains(s.by))) ||
                         (s.fence && *s.fence != token);
      if (!s.claim && stale) {
        // A completion commits its compare-and-swap first: that is the offending write.
        std::uint64_t seq = step.seq;
        if (const JobRecord* job = model.job(attempt.job_id())) {
          for (const auto& cas : job->cas) {
            if (cas.what.attempt_id == id && cas.what.by == s.by && cas.seq < step.seq) {
              seq = cas.seq;
            }
          }
        }
        const std::int64_t held = claim != claims.end() ? claim->second->what.token : *s.fence;
        std::vector<std::uint64_t> evidence;
        if (claim != claims.end()) evidence.push_back(claim->second->seq);
        out.push_back(violation(
            "I10.write_after_takeover",
            s.by + " moved " + attempt_ref(id) + " " + std::string(to_string(s.from)) + " -> " +
                std::string(to_string(s.to)) + " after its lease (token " + std::to_string(held) +
                ") was taken over (token now " + std::to_string(token) + ")",
            seq, std::move(evidence)));
      }
      if ((s.claim || s.takeover) && (s.lease_owner != s.by || s.token <= token)) {
        out.push_back(violation("I10.lease_not_handed_over",
                                s.by + (s.claim ? " claimed " : " took over ") + attempt_ref(id) +
                                    ", but the store left its lease with \"" + s.lease_owner +
                                    "\" under token " + std::to_string(s.token) + " (it was " +
                                    std::to_string(token) + ")",
                                step.seq, {}));
      }
      if (s.claim) {
        // A new claim (a re-driven attempt can come back to the worker that lost it) gives the
        // claimer a fresh lease: only what it wrote under the old one is stale.
        claims[s.lease_owner] = &step;
        ousted.erase(s.lease_owner);
        holder = s.lease_owner;
      } else if (s.from == AttemptState::running && s.to == AttemptState::unknown &&
                 s.by != holder && !holder.empty()) {
        ousted.insert(holder);  // the lease expired and another node took the attempt over
      }
      token = s.token;
    }
  }
  return out;
}

}  // namespace onejob::check
