// I14 — what a node reports about its own writes agrees with the commit log.
//
// Engineers replaying a failure read the nodes' events (attempt.created, attempt.state, job.cas,
// job.completed, result.discarded, job.failed); a report that does not match the write it
// describes sends them the wrong way. Each report must match a write the store committed, on the
// reporting node's connection, before the report:
//   - attempt.created: an inserted attempt with the same id, number, provider, provider key and
//     origin;
//   - attempt.state: a transition of that attempt with the same from and to (and, for a claim,
//     the same lease token);
//   - job.cas: a compare-and-swap by that attempt with the same expected version, outcome and
//     winner;
//   - job.completed: the winning compare-and-swap of that attempt, with the job's new version and
//     the result bytes the job took;
//   - result.discarded: the losing compare-and-swap of that attempt, naming the winner it found and
//     the result bytes the attempt offered (not the winner's);
//   - job.failed: the job's failure;
//   - attempt.write_refused: a refusal the store recorded for that node's write of that attempt,
//     fenced or for its state as the report says, of the state the write wanted.
// And a node that reports a compare-and-swap reports its consequence: job.cas won is followed by
// its job.completed, job.cas lost by its result.discarded (report_incomplete).
// Does not check: writes a node never reported (a lost reply leaves a write unreported), nor the
// providers' and API's own events (I5, I9, I13 judge those against their own truths).
#include <algorithm>

#include "system/events/attempt_events.hpp"

#include "harness/check/invariant.hpp"

namespace onejob::check {
namespace {

template <typename T, typename Match>
bool any_before(const std::vector<At<T>>& writes, std::uint64_t seq, Match match) {
  return std::ranges::any_of(
      writes, [&](const At<T>& write) { return write.seq < seq && match(write.what); });
}

std::string mismatch(const HistoryModel& model, const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const std::string node = recorded.node.str();
  const auto seq = recorded.seq;
  if (auto created = events::from_event<events::AttemptCreated>(event)) {
    const AttemptRecord* attempt = model.attempt(created->attempt_id);
    const bool ok = attempt != nullptr && attempt->inserted.seq < seq && [&] {
      const auto& row = attempt->inserted.what;
      return row.by == node && row.job_id == created->job_id &&
             row.attempt_no == created->attempt_no && row.provider == created->provider &&
             row.provider_key == created->provider_key && row.origin == created->origin;
    }();
    return ok ? "" : "attempt.created of " + attempt_ref(created->attempt_id);
  }
  if (auto changed = events::from_event<events::AttemptStateChanged>(event)) {
    const AttemptRecord* attempt = model.attempt(changed->attempt_id);
    const bool ok = attempt != nullptr && any_before(attempt->steps, seq, [&](const auto& step) {
                      return step.by == node && step.from == changed->from &&
                             step.to == changed->to &&
                             (!changed->token || *changed->token == step.token);
                    });
    return ok ? ""
              : "attempt.state of " + attempt_ref(changed->attempt_id) + " " +
                    std::string(to_string(changed->from)) + " -> " +
                    std::string(to_string(changed->to));
  }
  if (auto cas = events::from_event<events::JobCas>(event)) {
    const JobRecord* job = model.job(cas->job_id);
    const bool ok = job != nullptr && any_before(job->cas, seq, [&](const auto& write) {
                      return write.by == node && write.attempt_id == cas->attempt_id &&
                             write.expected_version == cas->expected_version &&
                             write.won == cas->won && write.winner == cas->winner;
                    });
    return ok ? "" : "job.cas of " + attempt_ref(cas->attempt_id);
  }
  if (auto completed = events::from_event<events::JobCompleted>(event)) {
    const JobRecord* job = model.job(completed->job_id);
    const bool ok =
        job != nullptr && any_before(job->cas, seq, [&](const auto& write) {
          return write.by == node && write.won && write.attempt_id == completed->attempt_id &&
                 write.version == completed->version && write.job_result == completed->result;
        });
    return ok ? ""
              : "job.completed of " + job_ref(completed->job_id) + " by " +
                    attempt_ref(completed->attempt_id);
  }
  if (auto discarded = events::from_event<events::ResultDiscarded>(event)) {
    const JobRecord* job = model.job(discarded->job_id);
    const bool ok = job != nullptr && any_before(job->cas, seq, [&](const auto& write) {
                      return write.by == node && !write.won &&
                             write.attempt_id == discarded->attempt_id &&
                             write.winner == discarded->winner && write.result == discarded->result;
                    });
    return ok ? "" : "result.discarded of " + attempt_ref(discarded->attempt_id);
  }
  if (auto refused = events::from_event<events::AttemptWriteRefused>(event)) {
    const bool ok = any_before(model.refusals, seq, [&](const events::StoreRefused& write) {
      return write.by == node && write.attempt_id == refused->attempt_id &&
             write.refusal == (refused->fenced ? events::kRefusedFenced : events::kRefusedState) &&
             write.wanted == refused->wanted;
    });
    return ok ? "" : "attempt.write_refused of " + attempt_ref(refused->attempt_id);
  }
  if (auto failed = events::from_event<events::JobFailed>(event)) {
    const JobRecord* job = model.job(failed->job_id);
    const bool ok = job != nullptr && any_before(job->failures, seq, [&](const auto& write) {
                      return write.by == node;
                    });
    return ok ? "" : "job.failed of " + job_ref(failed->job_id);
  }
  return {};
}

}  // namespace

std::vector<Violation> check_reports(const HistoryModel& model) {
  std::vector<Violation> out;
  if (model.history == nullptr) return out;
  // Compare-and-swaps a node reported, awaiting their consequence: (node, attempt) -> the job.cas.
  std::map<std::pair<std::string, std::int64_t>, std::pair<std::uint64_t, bool>> awaiting;
  for (const auto& recorded : *model.history) {
    if (auto wrong = mismatch(model, recorded); !wrong.empty()) {
      out.push_back(
          violation("I14.report_untrue",
                    recorded.node.str() + " reported " + wrong +
                        ", but the store has no such write (or refusal) on its connection",
                    recorded.seq, {}));
    }
    const Event& event = recorded.event;
    if (auto cas = events::from_event<events::JobCas>(event)) {
      awaiting[{recorded.node.str(), cas->attempt_id}] = {recorded.seq, cas->won};
    } else if (auto completed = events::from_event<events::JobCompleted>(event)) {
      awaiting.erase({recorded.node.str(), completed->attempt_id});
    } else if (auto discarded = events::from_event<events::ResultDiscarded>(event)) {
      awaiting.erase({recorded.node.str(), discarded->attempt_id});
    }
  }
  for (const auto& [who, cas] : awaiting) {
    out.push_back(violation("I14.report_incomplete",
                            who.first + " reported the " + (cas.second ? "won" : "lost") +
                                " compare-and-swap of " + attempt_ref(who.second) + " but never " +
                                (cas.second ? "job.completed" : "result.discarded"),
                            cas.first, {}));
  }
  return out;
}

}  // namespace onejob::check
