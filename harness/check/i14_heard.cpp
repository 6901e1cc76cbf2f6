#include "harness/check/i14_heard.hpp"

#include <algorithm>

#include "system/events/attempt_events.hpp"
#include "system/events/reconciler_events.hpp"
#include "system/events/worker_events.hpp"

#include "harness/check/event_switch.hpp"
#include "harness/check/provider_outcomes.hpp"
#include "harness/sim/sim_spec.hpp"

namespace onejob::check::i14 {
namespace {

// Whether the worker could see the reply and its call's deadline in either order: they came at
// one instant, or one pause of the worker held it from the first of them to the second (it
// resumed with both at hand).
bool either_first(const HistoryModel& model, const CallSpan& span, Instant replied_at) {
  const Instant first = std::min(replied_at, span.deadline);
  const Instant second = std::max(replied_at, span.deadline);
  if (first == second) return true;
  const auto pauses = model.node_pauses.find(span.node.str());
  if (pauses == model.node_pauses.end()) return false;
  bool paused = false;
  for (const At<bool>& change : pauses->second) {
    if (change.at <= first) {
      paused = change.what;
    } else if (change.at < second && !change.what) {
      return false;  // resumed between the two
    }
  }
  return paused;
}

bool system_node(std::string_view node) {
  return node.starts_with(sim::kApiNodePrefix) || node.starts_with(sim::kWorkerNodePrefix) ||
         node == sim::kReconcilerNode;
}

}  // namespace

std::string misnamed(const HistoryModel& model, const sim::PackedEvent& recorded) {
  using Type = Event::Field::Type;
  if (!system_node(recorded.node.str())) return {};
  static const std::uint32_t attempt_name = intern_id("attempt_id");
  static const std::uint32_t job_name = intern_id("job_id");
  static const std::uint32_t provider_name = intern_id("provider");
  const auto* named = recorded.find_id(attempt_name);
  if (named == nullptr || named->type() != Type::integer) return {};
  const AttemptRecord* attempt = model.attempt(named->number);
  if (attempt == nullptr || attempt->inserted.seq >= recorded.seq) return {};
  const AttemptInserted& row = attempt->inserted.what;
  std::string wrong;
  const auto add = [&wrong](std::string what) {
    wrong += (wrong.empty() ? "" : ", ") + std::move(what);
  };
  if (const auto* job = recorded.find_id(job_name);
      job != nullptr && job->type() == Type::integer && job->number != row.job_id) {
    add(job_ref(job->number) + " (its attempt belongs to " + job_ref(row.job_id) + ")");
  }
  if (const auto* provider = recorded.find_id(provider_name);
      provider != nullptr && provider->type() == Type::string &&
      recorded.text(*provider) != row.provider.str()) {
    add("provider \"" + std::string(recorded.text(*provider)) + "\" (its attempt's is \"" +
        row.provider.str() + "\")");
  }
  if (auto adopted = from_packed<events::WorkerAdopted>(recorded)) {
    const bool given = std::ranges::any_of(attempt->steps, [&](const At<Transition>& step) {
      return step.seq < recorded.seq && step.what.lease_owner == recorded.node &&
             step.what.token == adopted->token;
    });
    if (!given) add("lease token " + std::to_string(adopted->token) + ", never given to it");
  }
  if (wrong.empty()) return {};
  return std::string(*recorded.kind) + " of " + attempt_ref(row.attempt_id) + " names " + wrong;
}

void HeardReports::see(const sim::PackedEvent& recorded, std::vector<Violation>& out) {
  if (is_kind<events::ProviderCalled>(recorded)) {
    // The spans are the provider.calls the model read, in trace order.
    if (next_span_ < model_.call_spans.size() &&
        model_.call_spans[next_span_].call.seq == recorded.seq) {
      const CallSpan& span = model_.call_spans[next_span_++];
      latest_call_[{span.node.str(), span.call.what.attempt_id}] = &span;
    }
    return;
  }
  if (auto refused = from_packed<events::OutputRejected>(recorded)) {
    rejected_.insert({recorded.node.str(), refused->attempt_id});
    const Execution* execution = model_.execution_of(refused->attempt_id);
    if (execution == nullptr || model_.output_of(*execution) != refused->output) {
      out.push_back(violation("I14.report_untrue",
                              recorded.node.str() + " reported output.rejected for " +
                                  attempt_ref(refused->attempt_id) +
                                  ", but its provider produced no such output",
                              recorded.seq, {}));
    }
  } else if (auto step = from_packed<events::CommitAttemptTransition>(recorded);
             step && step->to == AttemptState::failed) {
    const Execution* execution = model_.execution_of(step->attempt_id);
    const std::string outcome = execution != nullptr ? execution->executed.what.outcome.str() : "";
    const bool breach = outcome_gives(outcome) == OutcomeGives::refused_answer;
    if (breach && !rejected_.contains({step->by, step->attempt_id})) {
      out.push_back(violation("I14.report_missing",
                              step->by + " wrote " + attempt_ref(step->attempt_id) +
                                  " FAILED for an output that broke the contract (" + outcome +
                                  ") without reporting output.rejected first",
                              recorded.seq, {execution->executed.seq}));
    }
  }
  if (auto replied = from_packed<events::ProviderReplied>(recorded)) {
    const auto found = latest_call_.find({recorded.node.str(), replied->attempt_id});
    const CallSpan* span = found != latest_call_.end() ? found->second : nullptr;
    if (span != nullptr && span->first_reply_at &&
        !either_first(model_, *span, *span->first_reply_at)) {
      const bool late = *span->first_reply_at > span->deadline;
      if (late != replied->late) {
        out.push_back(violation(
            "I14.report_untrue",
            recorded.node.str() + " reported the reply for " + attempt_ref(replied->attempt_id) +
                " as " + (replied->late ? "late" : "on time") +
                ", but the transport delivered it " +
                (late ? "after the call's deadline" : "before the call's deadline"),
            recorded.seq, {span->call.seq}));
      }
    }
  }
  if (auto delivered = from_packed<events::ProviderDelivered>(recorded);
      delivered && delivered->call == events::kDeliveredStatus) {
    heard_[{recorded.node.str(), delivered->provider_key}].insert(delivered->outcome);
  } else if (auto status = from_packed<events::ReconcilerStatus>(recorded)) {
    const AttemptRecord* attempt = model_.attempt(status->attempt_id);
    const std::string key = attempt != nullptr ? attempt->inserted.what.provider_key : "";
    auto& answers = heard_[{recorded.node.str(), key}];
    if (status->status != "unreachable" && !answers.contains(status->status)) {
      out.push_back(violation("I14.report_untrue",
                              recorded.node.str() + " reported reconciler.status \"" +
                                  status->status + "\" for " + attempt_ref(status->attempt_id) +
                                  ", but no status answer saying so reached it since its last "
                                  "report about that attempt",
                              recorded.seq, {}));
    }
    answers.clear();
  }
}

}  // namespace onejob::check::i14
