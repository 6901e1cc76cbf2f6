#include "harness/check/i14_heard.hpp"

#include <algorithm>

#include "system/events/attempt_events.hpp"
#include "system/events/reconciler_events.hpp"
#include "system/events/worker_events.hpp"

#include "harness/check/event_switch.hpp"

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

}  // namespace

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
    const bool breach =
        outcome == "malformed" || outcome == "hallucinated_key" || outcome == "wrong_operation";
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
