// I9 — side effects: a provider runs a job's work again only after the earlier attempt ended or
// was cancelled, never while it may still be running (a timeout alone allows nothing).
//
// Reads the providers' own record of executions (a side effect: compute, money) against the
// store's commit log. Checks:
//   - no provider key executes twice (the provider's dedup on the derived key must hold);
//   - no two attempts the store inserted carry one provider key (key_shared): the provider's
//     dedup would run one of them and answer the other with its work, another attempt's (or
//     another job's) result;
//   - every attempt's provider key is its job id and attempt number, "job_id:attempt_no", as the
//     providers' protocol says (key_format): a provider may read it so;
//   - an attempt's work executes at the attempt's own provider (executed_elsewhere);
//   - when an attempt's work executes, every earlier attempt of its job is, at that instant,
//     SUCCEEDED, FAILED, DISCARDED, or CANCELLED by an operator (an API node handling a cancel
//     request committed it), never STARTING, RUNNING, UNKNOWN, or cancelled by anyone else.
// Does not check:
//   - certification calls, which belong to no job;
//   - executions of keys the store never gave an attempt (reported nowhere: nothing to judge).
#include <map>
#include <string>

#include "harness/check/invariant.hpp"

namespace onejob::check {
std::vector<Violation> check_side_effects(const HistoryModel& model) {
  std::vector<Violation> out;
  for (const auto& [id, attempt] : model.attempts) {
    // The model keeps each provider key's first attempt.
    const auto& key = attempt.inserted.what.provider_key;
    const std::int64_t first = model.attempt_by_provider_key.at(key);
    if (first == id) {
      const std::string expected_key =
          std::to_string(attempt.job_id()) + ":" + std::to_string(attempt.inserted.what.attempt_no);
      if (key == expected_key) continue;
      out.push_back(violation("I9.key_format",
                              "the store inserted " + attempt_ref(id) + " (attempt number " +
                                  std::to_string(attempt.inserted.what.attempt_no) + " of " +
                                  job_ref(attempt.job_id()) + ") under provider key \"" + key +
                                  "\", not \"" + expected_key + "\"",
                              attempt.inserted.seq, {}));
      continue;
    }
    // A key shared is reported as such, whatever its form.
    const AttemptRecord& other = model.attempts.at(first);
    out.push_back(violation("I9.key_shared",
                            "the store inserted " + attempt_ref(id) + " of " +
                                job_ref(attempt.job_id()) + " under provider key " + key +
                                ", which " + attempt_ref(other.id()) + " of " +
                                job_ref(other.job_id()) +
                                " already has: the provider's dedup answers one with the "
                                "other's work",
                            attempt.inserted.seq, {other.inserted.seq}));
  }
  std::map<std::string, std::uint64_t> first_run;
  for (const auto& execution : model.executions) {
    const auto& key = execution.executed.what.provider_key;
    const auto seq = execution.executed.seq;
    auto [seen, first] = first_run.try_emplace(key, seq);
    if (!first) {
      out.push_back(violation("I9.executed_twice",
                              "provider key " + key + " executed twice (on " + execution.provider +
                                  "): the provider's dedup failed",
                              seq, {seen->second}));
    }
    const auto owner = model.attempt_by_provider_key.find(key);
    if (owner == model.attempt_by_provider_key.end()) continue;
    const AttemptRecord& attempt = model.attempts.at(owner->second);
    if (attempt.inserted.what.provider != execution.provider) {
      out.push_back(violation("I9.executed_elsewhere",
                              attempt_ref(attempt.id()) + " of " + job_ref(attempt.job_id()) +
                                  " is " + attempt.inserted.what.provider + "'s, but " +
                                  execution.provider + " executed its key " + key,
                              seq, {attempt.inserted.seq}));
    }
    const JobRecord* job = model.job(attempt.job_id());
    if (job == nullptr) continue;  // I3 reports an attempt of a job never inserted
    for (auto earlier_id : job->attempts) {
      if (earlier_id == attempt.id()) break;
      const AttemptRecord& earlier = model.attempts.at(earlier_id);
      const auto state = earlier.state_before(seq);
      if (!is_live_state(state) &&
          (state != AttemptState::cancelled || model.cancelled_by_operator(earlier, seq))) {
        continue;
      }
      out.push_back(violation("I9.executed_beside_earlier",
                              attempt_ref(attempt.id()) + " of " + job_ref(attempt.job_id()) +
                                  " executed while the earlier " + attempt_ref(earlier_id) +
                                  " is " + std::string(to_string(state)) +
                                  (is_live_state(state) ? "" : " without an operator's cancel") +
                                  ": its work may still be running",
                              seq, {earlier.inserted.seq}));
    }
  }
  return out;
}

}  // namespace onejob::check
