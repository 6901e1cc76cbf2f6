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
//   - a lease is taken over only once it ran out (takeover_before_expiry): a takeover of a RUNNING
//     attempt commits at or after the expiry the store recorded with the claim it ends; taking
//     over a live lease hands one execution to a second writer while the first still works on it;
//   - a refused attempt write was refused for the right reason (refusal_misjudged): fenced
//     exactly when the token it carried was not the attempt's, else for a state it may not be
//     written from;
//   - a worker writes only under a lease handed to it (foreign_lease_written): a token a worker's
//     write carries is one a claim of this attempt gave that worker. A worker that took up
//     another worker's RUNNING attempt (after a lost claim reply, say) and wrote it under that
//     worker's token would be a second writer on one lease, which no token tells apart.
// Does not check:
//   - writes by nodes that never held the lease (an operator's cancel, the reconciler before
//     taking over): they are out of band, guarded by state alone;
//   - reads, or writes the store refused (refusals are what fencing is for).
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "harness/check/invariant.hpp"
#include "harness/sim/sim_spec.hpp"

namespace onejob::check {
namespace {

// Why the store refused an attempt write, judged from the commit log: a write carrying a token
// other than the attempt's current one is refused as fenced; one carrying the current token (or
// none) is never refused as fenced, and is refused for its state only when the attempt's state is
// not one it may be written from.
void check_refusals(const HistoryModel& model, std::vector<Violation>& out) {
  for (const auto& refusal : model.refusals) {
    const auto& r = refusal.what;
    const bool judged = r.refusal == events::kRefusedFenced || r.refusal == events::kRefusedState;
    const AttemptRecord* attempt = r.attempt_id ? model.attempt(*r.attempt_id) : nullptr;
    if (!judged || attempt == nullptr || !r.from) continue;
    std::int64_t token = 0;
    for (const auto& step : attempt->steps) {
      if (step.seq < refusal.seq) token = step.what.token;
    }
    const AttemptState state = attempt->state_before(refusal.seq);
    const bool stale = r.fence && *r.fence != token;
    bool allowed = false;  // the state is one of the comma-separated names in `from`
    for (std::string_view rest = *r.from; !allowed && !rest.empty();) {
      const auto comma = rest.find(',');
      allowed = rest.substr(0, comma) == to_string(state);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    std::string wrong;
    if (stale && r.refusal != events::kRefusedFenced) {
      wrong = "refused for its state a write carrying lease token " + std::to_string(*r.fence) +
              " while the attempt's token was " + std::to_string(token) + ": it is fenced";
    } else if (!stale && r.refusal == events::kRefusedFenced) {
      wrong = "refused as fenced a write carrying the attempt's current lease token (or none)";
    } else if (!stale && allowed) {
      wrong = "refused a write from " + *r.from + " while the attempt was " +
              std::string(to_string(state)) + ", a state it may be written from";
    }
    if (wrong.empty()) continue;
    out.push_back(violation("I10.refusal_misjudged",
                            "the store " + wrong + " (" + r.operation + " of " +
                                attempt_ref(attempt->id()) + " by " + r.by + ")",
                            refusal.seq, {}));
  }
}

}  // namespace

std::vector<Violation> check_fencing(const HistoryModel& model) {
  std::vector<Violation> out;
  for (const auto& [id, attempt] : model.attempts) {
    std::map<std::string, const At<Transition>*> claims;  // holder -> claim
    std::set<std::string> ousted;  // holders whose lease another node took over
    std::string holder;
    const At<Transition>* holder_claim = nullptr;
    std::int64_t token = 0;
    // token -> the claims and takeovers that handed it out, in commit order
    std::map<std::int64_t, std::vector<const At<Transition>*>> handed;
    for (const auto& step : attempt.steps) {
      const auto& s = step.what;
      if (s.fence && s.by.str().starts_with(sim::kWorkerNodePrefix)) {
        const auto& given = handed[*s.fence];
        const bool own = std::ranges::any_of(
            given, [&s](const At<Transition>* to) { return to->what.lease_owner == s.by; });
        if (!own) {
          std::vector<std::uint64_t> evidence;
          if (!given.empty()) evidence.push_back(given.front()->seq);
          out.push_back(violation(
              "I10.foreign_lease_written",
              s.by + " moved " + attempt_ref(id) + " " + std::string(to_string(s.from)) + " -> " +
                  std::string(to_string(s.to)) + " under lease token " + std::to_string(*s.fence) +
                  ", which " +
                  (given.empty() ? std::string("no claim handed out")
                                 : "the store handed to " + given.front()->what.lease_owner +
                                       ", never to " + s.by),
              step.seq, std::move(evidence)));
        }
      }
      const bool takes_over = s.from == AttemptState::running && !s.claim &&
                              (s.takeover || (s.to == AttemptState::unknown && s.by != holder));
      if (takes_over && holder_claim && holder_claim->what.lease_expires_at &&
          step.at < *holder_claim->what.lease_expires_at) {
        const auto expires = holder_claim->what.lease_expires_at->time_since_epoch().count();
        out.push_back(violation("I10.takeover_before_expiry",
                                s.by + " took " + attempt_ref(id) + " over from " + holder +
                                    " at " + std::to_string(step.at.time_since_epoch().count()) +
                                    " us, before its lease ran out at " + std::to_string(expires) +
                                    " us (as its claim recorded)",
                                step.seq, {holder_claim->seq}));
      }
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
      if (s.claim || s.takeover) handed[s.token].push_back(&step);
      if (s.claim) {
        // A new claim (a re-driven attempt can come back to the worker that lost it) gives the
        // claimer a fresh lease: only what it wrote under the old one is stale.
        claims[s.lease_owner] = &step;
        ousted.erase(s.lease_owner);
        holder = s.lease_owner;
        holder_claim = &step;
      } else if (s.from == AttemptState::running && s.to == AttemptState::unknown &&
                 s.by != holder && !holder.empty()) {
        ousted.insert(holder);  // the lease expired and another node took the attempt over
      }
      token = s.token;
    }
  }
  check_refusals(model, out);
  return out;
}

}  // namespace onejob::check
