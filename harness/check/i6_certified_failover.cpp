// I6 — automatic failover only to contract-certified providers; invalid output never becomes a
// result.
//
// What a provider produced is known from the provider itself: its scripted behaviour says
// whether the output honours the contract (ok) or breaks it (malformed, an extra top-level key,
// the wrong operation); the system's validator is never consulted. Checks, against the store's
// commit log:
//   - every attempt inserted by failover or by an operator's retry names a provider whose latest
//     committed certification before the insert passed;
//   - every winning compare-and-swap is by an attempt whose provider produced a valid output,
//     and its result equals that output as JSON.
// Does not check:
//   - initial attempts: the client chose that provider, certified or not;
//   - whether certifications themselves judged right (the certifier's own tests).
#include <nlohmann/json.hpp>

#include "harness/check/invariant.hpp"

namespace onejob::check {

std::vector<Violation> check_certified_failover(const HistoryModel& model) {
  std::vector<Violation> out;
  for (const auto& [id, attempt] : model.attempts) {
    const auto& a = attempt.inserted.what;
    if (a.origin == AttemptOrigin::initial) continue;
    const At<events::CommitCertification>* latest = nullptr;
    for (const auto& certification : model.certifications) {
      if (certification.seq > attempt.inserted.seq) break;
      if (certification.what.provider == a.provider) latest = &certification;
    }
    if (latest != nullptr && latest->what.passed) continue;
    out.push_back({"I6",
                   "the store inserted " + attempt_ref(id) + " of " + job_ref(a.job_id) + " (" +
                       std::string(to_string(a.origin)) + ") on provider \"" + a.provider +
                       "\", whose latest certification " +
                       (latest == nullptr ? "does not exist" : "failed"),
                   attempt.inserted.seq,
                   latest == nullptr ? std::vector<std::uint64_t>{}
                                     : std::vector<std::uint64_t>{latest->seq}});
  }
  for (const auto& [id, job] : model.jobs) {
    const auto* won = job.won();
    if (won == nullptr) continue;
    const Execution* execution = model.execution_of(won->what.attempt_id);
    const std::string what = job_ref(id) + "'s result, from " + attempt_ref(won->what.attempt_id);
    if (execution == nullptr) {
      out.push_back({"I6", what + ", was never produced by its provider", won->seq, {}});
    } else if (execution->executed.what.outcome != "ok") {
      out.push_back({"I6",
                     what + ", is an invalid output (provider behaviour \"" +
                         execution->executed.what.outcome + "\")",
                     won->seq,
                     {execution->executed.seq}});
    } else if (nlohmann::json::parse(won->what.result, nullptr, false) !=
               nlohmann::json::parse(execution->executed.what.output, nullptr, false)) {
      out.push_back({"I6",
                     what + ", is not what its provider answered",
                     won->seq,
                     {execution->executed.seq}});
    }
  }
  return out;
}

}  // namespace onejob::check
