#include "harness/check/marks.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <set>
#include <tuple>

#include "system/domain/check.hpp"
#include "system/domain/names.hpp"

#include "harness/check/history.hpp"
#include "harness/check/provider_outcomes.hpp"
#include "harness/events/world_events.hpp"

namespace onejob::check {
namespace {

constexpr MarkInfo kMarks[] = {
    {Mark::duplicate_key_refused, "duplicate_key_refused",
     "a create hit the (owner, key) unique constraint"},
    {Mark::write_reply_lost, "write_reply_lost",
     "a write's reply was lost after the statement ran (it may have committed)"},
    {Mark::commit_unknown_resolved, "commit_unknown_resolved",
     "a create whose reply was lost after its commit was answered later with that job"},
    {Mark::timeout_unknown, "timeout_unknown", "an attempt went RUNNING -> UNKNOWN"},
    {Mark::lease_taken_over, "lease_taken_over",
     "a lease was taken over (the token bumped under a holder)"},
    {Mark::fenced_write_refused, "fenced_write_refused",
     "the store refused a write carrying a stale lease token"},
    {Mark::state_write_refused, "state_write_refused",
     "the store refused a write that expected another attempt state"},
    {Mark::live_attempt_refused, "live_attempt_refused",
     "the one-live-attempt index refused a new attempt"},
    {Mark::won_job_refused, "won_job_refused",
     "the store refused a new attempt for a job already won (a retry or failover that read the "
     "job before its win)"},
    {Mark::cas_lost, "cas_lost",
     "a completion lost the compare-and-swap: its result was discarded"},
    {Mark::cas_tie, "cas_tie", "two completions of one job committed at the same instant"},
    {Mark::late_result_won, "late_result_won",
     "an attempt already UNKNOWN or CANCELLED won its job"},
    {Mark::late_result_discarded, "late_result_discarded",
     "an attempt already UNKNOWN or CANCELLED lost its job"},
    {Mark::unknown_resolved_failed, "unknown_resolved_failed",
     "an UNKNOWN attempt was resolved as FAILED"},
    {Mark::cancel_then_result, "cancel_then_result",
     "an operator cancelled an attempt whose result later reached the CAS"},
    {Mark::operator_cancel, "operator_cancel", "an operator cancelled a live attempt"},
    {Mark::operator_retry, "operator_retry", "an operator's explicit attempt was inserted"},
    {Mark::failover, "failover", "an automatic failover attempt was inserted"},
    {Mark::job_failed, "job_failed", "a job failed (every permitted provider definitively failed)"},
    {Mark::certification_failed, "certification_failed",
     "a provider failed its contract certification"},
    {Mark::invalid_output_rejected, "invalid_output_rejected",
     "a provider's output broke its contract and was rejected"},
    {Mark::provider_dedup, "provider_dedup",
     "a provider answered a repeated key from its own dedup"},
    {Mark::node_crash, "node_crash", "a node crashed"},
    {Mark::node_restart, "node_restart", "a crashed node started again"},
    {Mark::node_pause, "node_pause", "a node froze and went on as the same incarnation"},
    {Mark::connection_reset, "connection_reset",
     "a connection reset after its request was delivered"},
    {Mark::deadline_race, "deadline_race",
     "a worker's move to UNKNOWN and its settling of the same attempt reached the store at one "
     "instant (the answer came as the deadline fired)"},
    {Mark::redriven, "redriven",
     "an UNKNOWN attempt whose provider had no record of its key went back to STARTING"},
    {Mark::awaiting_operator, "awaiting_operator", "a job ended parked after an operator's cancel"},
    {Mark::blocked, "blocked", "a job ended blocked on an UNKNOWN attempt"},
};
constexpr std::size_t kMarkCount = std::size(kMarks);
static_assert(lists_in_order(kMarks, &MarkInfo::id) &&
                  kMarkCount == 1 + static_cast<std::size_t>(Mark::blocked),
              "kMarks lists every Mark once, in declaration order");

class Tally {
 public:
  void add(Mark mark, std::size_t times = 1) {
    counts_[static_cast<std::size_t>(mark)] += static_cast<int>(times);
  }
  MarkCounts counts() const {
    MarkCounts out;
    for (std::size_t i = 0; i < kMarkCount; ++i) {
      if (counts_[i] > 0) out.emplace(std::string(kMarks[i].name), counts_[i]);
    }
    return out;
  }

 private:
  std::array<int, kMarkCount> counts_{};
};

// The commit log's attempts: how they were inserted and how they moved.
void reach_attempt_marks(const HistoryModel& model, Tally& tally) {
  for (const auto& [id, attempt] : model.attempts) {
    const auto origin = attempt.inserted.what.origin;
    if (origin == AttemptOrigin::failover) tally.add(Mark::failover);
    if (origin == AttemptOrigin::explicit_retry) tally.add(Mark::operator_retry);
    for (const auto& step : attempt.steps) {
      const auto from = step.what.from;
      const auto to = step.what.to;
      if (step.what.takeover) tally.add(Mark::lease_taken_over);
      if (from == AttemptState::running && to == AttemptState::unknown) {
        tally.add(Mark::timeout_unknown);
      }
      if (from == AttemptState::unknown && to == AttemptState::failed) {
        tally.add(Mark::unknown_resolved_failed);
      }
      if (from == AttemptState::unknown && to == AttemptState::starting) tally.add(Mark::redriven);
    }
  }
  tally.add(Mark::operator_cancel, model.operator_cancels.size());
}

// The compare-and-swaps of each job, and where the jobs ended.
void reach_job_marks(const HistoryModel& model, Tally& tally) {
  for (const auto& [id, job] : model.jobs) {
    for (auto cas = job.cas.begin(); cas != job.cas.end(); ++cas) {
      if (std::any_of(job.cas.begin(), cas,
                      [&](const auto& other) { return other.at == cas->at; })) {
        tally.add(Mark::cas_tie);
      }
      if (!cas->what.won) tally.add(Mark::cas_lost);
      if (const auto* attempt = model.attempt(cas->what.attempt_id)) {
        // A late result: its attempt's deadline had passed, or an operator had cancelled it.
        const auto before = attempt->state_before(cas->seq);
        if (before == AttemptState::unknown || before == AttemptState::cancelled) {
          tally.add(cas->what.won ? Mark::late_result_won : Mark::late_result_discarded);
        }
        if (before == AttemptState::cancelled) tally.add(Mark::cancel_then_result);
      }
    }
    tally.add(Mark::job_failed, job.failures.size());
    const JobEnd end = model.end_of(job);
    if (end == JobEnd::awaiting_operator) tally.add(Mark::awaiting_operator);
    if (end == JobEnd::blocked) tally.add(Mark::blocked);
  }
  for (const auto& certification : model.certifications) {
    if (!certification.what.passed) tally.add(Mark::certification_failed);
  }
  for (const auto& refused : model.refusals) {
    const auto& refusal = refused.what.refusal;
    if (refusal == events::kRefusedFenced) tally.add(Mark::fenced_write_refused);
    if (refusal == events::kRefusedState) tally.add(Mark::state_write_refused);
    if (refusal == events::kRefusedLiveAttempt) tally.add(Mark::live_attempt_refused);
    if (refusal == events::kRefusedJobCompleted) tally.add(Mark::won_job_refused);
    if (refusal == events::kRefusedDuplicateKey) tally.add(Mark::duplicate_key_refused);
  }
}

// A worker's two writes for one attempt at one instant, as the store handled them (committed or
// refused): one toward UNKNOWN (its deadline) and one settling it (the answer).
void reach_deadline_races(const HistoryModel& model, Tally& tally) {
  using Write = std::tuple<std::int64_t, std::string, Instant>;  // attempt, writer, instant
  // The moves to UNKNOWN first (few: one per timeout); a settling write is looked up only when
  // its attempt has one.
  std::set<Write> to_unknown;
  std::set<std::int64_t> timed_out;
  for (const auto& [id, attempt] : model.attempts) {
    for (const auto& step : attempt.steps) {
      if (step.what.takeover || step.what.claim || step.what.to != AttemptState::unknown) continue;
      to_unknown.emplace(id, step.what.by, step.at);
      timed_out.insert(id);
    }
  }
  for (const auto& refused : model.refusals) {
    if (!refused.what.attempt_id || refused.what.wanted != AttemptState::unknown) continue;
    to_unknown.emplace(*refused.what.attempt_id, refused.what.by, refused.at);
    timed_out.insert(*refused.what.attempt_id);
  }
  std::set<Write> raced;
  auto settling = [&](std::int64_t attempt, const std::string& by, Instant at) {
    if (!timed_out.contains(attempt)) return;
    Write write{attempt, by, at};
    if (to_unknown.contains(write)) raced.insert(std::move(write));
  };
  for (const auto& [id, attempt] : model.attempts) {
    for (const auto& step : attempt.steps) {
      if (step.what.takeover || step.what.claim || step.what.to != AttemptState::failed) continue;
      settling(id, step.what.by, step.at);
    }
  }
  for (const auto& [id, job] : model.jobs) {
    for (const auto& cas : job.cas) settling(cas.what.attempt_id, cas.what.by, cas.at);
  }
  for (const auto& refused : model.refusals) {
    const auto wanted = refused.what.wanted;
    if (refused.what.attempt_id &&
        (wanted == AttemptState::succeeded || wanted == AttemptState::failed)) {
      settling(*refused.what.attempt_id, refused.what.by, refused.at);
    }
  }
  tally.add(Mark::deadline_race, raced.size());
}

// A create whose commit no API node answered with 201, answered later with 200: the commit's
// outcome was unknown to its writer and a retry resolved it. Each job's answers in the order
// they were given (one flat list, sorted: a big run answers hundreds of thousands of creates).
void reach_resolved_commits(const HistoryModel& model, Tally& tally) {
  struct Answer {
    std::int64_t job;
    std::uint64_t seq;  // the response's
    bool created;       // 201; otherwise 200
  };
  std::vector<Answer> answers;
  for (const auto& exchange : model.exchanges) {
    if (!exchange.answered() || exchange.route != "create_job") continue;
    if (exchange.status != 200 && exchange.status != 201) continue;
    const auto response = model.response_of(exchange);
    if (!response->job_id) continue;
    answers.push_back({*response->job_id, exchange.response_seq, response->status == 201});
  }
  std::ranges::sort(answers, {}, [](const Answer& a) { return std::pair(a.job, a.seq); });
  for (auto job = answers.begin(); job != answers.end();) {
    const auto end =
        std::find_if(job, answers.end(), [id = job->job](const Answer& a) { return a.job != id; });
    // Counted once per job: a 200 before any 201.
    const auto first_200 = std::find_if(job, end, [](const Answer& a) { return !a.created; });
    if (first_200 != end &&
        std::none_of(job, first_200, [](const Answer& a) { return a.created; })) {
      tally.add(Mark::commit_unknown_resolved);
    }
    job = end;
  }
}

// An attempt FAILED after its provider's output broke the contract.
void reach_rejected_outputs(const HistoryModel& model, Tally& tally) {
  for (const auto& execution : model.executions) {
    const auto& outcome = execution.executed.what.outcome;
    if (outcome_gives(outcome.str()) != OutcomeGives::refused_answer) continue;
    auto id = model.attempt_by_provider_key.find(execution.executed.what.provider_key);
    if (id != model.attempt_by_provider_key.end() &&
        model.attempts.at(id->second).state == AttemptState::failed) {
      tally.add(Mark::invalid_output_rejected);
    }
  }
}

// What the run's own records say: injected faults, node lives, providers' dedup.
void reach_world_marks(const sim::History& history, Tally& tally) {
  const auto reset = events::injected_fault(events::InjectedFault::reset);
  using events::kind_name;
  history.visit_kinds({&kind_name<events::ProviderDeduped>(), &kind_name<events::StoreFault>(),
                       &kind_name<events::NetFault>(), &kind_name<events::NodePaused>(),
                       &kind_name<events::NodeCrashed>(), &kind_name<events::NodeStarted>()},
                      [&](const sim::TraceEvent& recorded) {
                        const Event& event = recorded.event;
                        if (events::is<events::ProviderDeduped>(event)) {
                          tally.add(Mark::provider_dedup);
                        } else if (auto fault = events::from_event<events::StoreFault>(event)) {
                          if (fault->maybe_committed) tally.add(Mark::write_reply_lost);
                          if (fault->fault == reset.store) tally.add(Mark::connection_reset);
                        } else if (auto net = events::from_event<events::NetFault>(event)) {
                          if (net->fault == reset.net) tally.add(Mark::connection_reset);
                        } else if (events::is<events::NodePaused>(event)) {
                          tally.add(Mark::node_pause);
                        } else if (events::is<events::NodeCrashed>(event)) {
                          tally.add(Mark::node_crash);
                        } else if (auto started = events::from_event<events::NodeStarted>(event)) {
                          if (started->incarnation > 1) tally.add(Mark::node_restart);
                        }
                      });
}

}  // namespace

const std::vector<MarkInfo>& all_marks() {
  static const std::vector<MarkInfo> marks(std::begin(kMarks), std::end(kMarks));
  return marks;
}

bool is_mark(std::string_view name) {
  return std::ranges::find(kMarks, name, &MarkInfo::name) != std::end(kMarks);
}

MarkCounts reach_marks(const HistoryModel& model) {
  ONEJOB_ASSERT(model.history != nullptr, "marks are read off a folded history");
  Tally tally;
  reach_attempt_marks(model, tally);
  reach_job_marks(model, tally);
  reach_resolved_commits(model, tally);
  reach_deadline_races(model, tally);
  reach_rejected_outputs(model, tally);
  reach_world_marks(*model.history, tally);
  return tally.counts();
}

}  // namespace onejob::check
