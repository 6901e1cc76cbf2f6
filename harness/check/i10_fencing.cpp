// I10 — fencing: no write by a lease holder commits after its lease was taken over.
//
// A worker holds an attempt's lease from its claim (the commit log gives the token). Whenever the
// lease moves on (a takeover, or a later claim), the token changes. Checks, against the store's
// commit log:
//   - every attempt write committed through a worker's connection after that worker claimed
//     the attempt finds the attempt's token still the one its claim set (a completion is
//     reported at its compare-and-swap, the first write it commits).
// Does not check:
//   - writes by nodes that never held the lease (an operator's cancel, the reconciler before
//     taking over): they are out of band, guarded by state alone;
//   - reads, or writes the store refused (refusals are what fencing is for).
#include "harness/check/invariant.hpp"

namespace onejob::check {

std::vector<Violation> check_fencing(const HistoryModel& model) {
  std::vector<Violation> out;
  for (const auto& [id, attempt] : model.attempts) {
    std::map<std::string, const At<events::CommitAttemptTransition>*> claims;  // holder -> claim
    std::int64_t token = 0;
    for (const auto& step : attempt.steps) {
      const auto& s = step.what;
      auto holder = claims.find(s.by);
      if (!s.claim && holder != claims.end() && holder->second->what.token != token) {
        // A completion commits its compare-and-swap first: that is the offending write.
        std::uint64_t seq = step.seq;
        if (const JobRecord* job = model.job(attempt.job_id())) {
          for (const auto& cas : job->cas) {
            if (cas.what.attempt_id == id && cas.what.by == s.by && cas.seq < step.seq) {
              seq = cas.seq;
            }
          }
        }
        out.push_back({"I10",
                       s.by + " moved " + attempt_ref(id) + " " + std::string(to_string(s.from)) +
                           " -> " + std::string(to_string(s.to)) + " after its lease (token " +
                           std::to_string(holder->second->what.token) + ") was taken over (token " +
                           std::to_string(token) + ")",
                       seq,
                       {holder->second->seq}});
      }
      if (s.claim) claims[s.lease_owner] = &step;
      token = s.token;
    }
  }
  return out;
}

}  // namespace onejob::check
