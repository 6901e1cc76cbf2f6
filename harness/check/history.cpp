#include "harness/check/history.hpp"

#include <algorithm>
#include <deque>

#include <nlohmann/json.hpp>

#include "system/domain/check.hpp"
#include "system/domain/names.hpp"
#include "system/events/attempt_events.hpp"

#include "harness/check/event_switch.hpp"
#include "harness/check/json_value.hpp"
#include "harness/events/world_events.hpp"
#include "harness/sim/rng.hpp"
#include "harness/sim/utf8.hpp"

namespace onejob::check {
namespace {

template <typename T>
At<T> at(T what, const sim::PackedEvent& recorded) {
  return At<T>{std::move(what), recorded.seq, recorded.at};
}

class Folder {
 public:
  explicit Folder(const sim::History& history) { model_.history = &history; }

  // Folds every event of the kinds the model holds, in order.
  void fold(const sim::History& history);
  HistoryModel finish();

 private:
  // Registers `handle(T&&, const sim::PackedEvent&)`, behind the check of the trace's order.
  template <events::EventType T, typename Handle>
  void on(EventSwitch& kinds, Handle handle) {
    kinds.on<T>([this, handle](T&& typed, const sim::PackedEvent& recorded) {
      in_order(recorded);
      handle(std::move(typed), recorded);
    });
  }
  template <events::EventType T, typename Handle>
  void on_kind(EventSwitch& kinds, Handle handle) {
    kinds.on_kind<T>([this, handle](const sim::PackedEvent& recorded) {
      in_order(recorded);
      handle(recorded);
    });
  }
  void in_order(const sim::PackedEvent& recorded);
  void commits(EventSwitch& kinds);
  void seen(EventSwitch& kinds);
  void on_request(events::ApiRequest&& request, const sim::PackedEvent& recorded);
  void on_response(events::ApiResponse&& response, const sim::PackedEvent& recorded);
  void on_executed(events::ProviderExecuted&& executed, const sim::PackedEvent& recorded);
  void on_transition(const At<Transition>& step);
  void on_cas(const At<Cas>& cas);
  // A commit.* event: in the commit log, in commit order, with any text it holds that
  // PostgreSQL could not.
  void logged(const sim::PackedEvent& recorded) {
    model_.commit_log.push_back(recorded.seq - 1);
    for (const auto& field : recorded.fields) {
      if (field.type() == Event::Field::Type::string &&
          !sim::text_column_holds(recorded.text(field))) {
        model_.unstorable_commits.emplace_back(recorded.seq, field.name_id);
        break;
      }
    }
  }

  HistoryModel model_;
  // Forwarded request id -> (client request, the client's attempt).
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> forwarded_;
  // (node + request id) -> the exchanges still unanswered, oldest first: a duplicated message
  // delivers one request twice, under one id (nearly always one, so a vector).
  std::map<std::string, std::vector<std::size_t>> open_exchange_;
  std::optional<Instant> last_at_;  // the instant of the event folded last
};

void Folder::in_order(const sim::PackedEvent& recorded) {
  // The trace's own shape, which every instant in the model relies on (a seq is its event's
  // position in the packed history: nothing to check).
  ONEJOB_ASSERT(!last_at_ || recorded.at >= *last_at_,
                "trace event " + std::to_string(recorded.seq) + " is earlier than the one before");
  last_at_ = recorded.at;
}

void Folder::on_transition(const At<Transition>& step) {
  auto it = model_.attempts.find(step.what.attempt_id);
  if (it == model_.attempts.end()) return;  // a transition of an attempt never inserted: I3
  it->second.steps.push_back(step);
  it->second.state = step.what.to;
  if (step.what.to == AttemptState::cancelled) {
    const bool asked = std::ranges::any_of(open_exchange_, [&](const auto& open) {
      return std::ranges::any_of(open.second, [&](std::size_t index) {
        const ApiExchange& exchange = model_.exchanges[index];
        return exchange.node == step.what.by && exchange.route == "cancel_attempt";
      });
    });
    if (asked) model_.operator_cancels.insert(step.seq);
  }
}

void Folder::on_cas(const At<Cas>& cas) {
  auto job = model_.jobs.find(cas.what.job_id);
  if (job != model_.jobs.end()) job->second.cas.push_back(cas);
}

// The store's truth: the commit log.
void Folder::commits(EventSwitch& kinds) {
  on<events::CommitJobInserted>(kinds, [this](auto&& job, const sim::PackedEvent& recorded) {
    const auto id = job.job_id;
    auto& [owner_key, ids] = *model_.jobs_by_key.try_emplace({job.owner, job.key}).first;
    ids.push_back(id);
    model_.jobs.emplace(
        id, JobRecord{{JobInserted::of(job, owner_key), recorded.seq, recorded.at}, {}, {}, {}});
    logged(recorded);
  });
  on<events::CommitAttemptInserted>(
      kinds, [this](auto&& attempt, const sim::PackedEvent& recorded) {
        const auto id = attempt.attempt_id;
        if (auto owner = model_.jobs.find(attempt.job_id); owner != model_.jobs.end()) {
          owner->second.attempts.push_back(id);
        }
        model_.attempt_by_provider_key.emplace(attempt.provider_key, id);
        model_.attempts.emplace(
            id, AttemptRecord{{AttemptInserted::of(attempt), recorded.seq, recorded.at},
                              {},
                              AttemptState::starting});
        logged(recorded);
      });
  on<events::CommitAttemptTransition>(kinds, [this](auto&& step, const sim::PackedEvent& recorded) {
    on_transition({Transition::of(step), recorded.seq, recorded.at});
    logged(recorded);
  });
  on<events::CommitCas>(kinds, [this](auto&& cas, const sim::PackedEvent& recorded) {
    on_cas({Cas::of(cas), recorded.seq, recorded.at});
    logged(recorded);
  });
  on<events::CommitJobFailed>(kinds, [this](auto&& failed, const sim::PackedEvent& recorded) {
    if (auto owner = model_.jobs.find(failed.job_id); owner != model_.jobs.end()) {
      owner->second.failures.push_back(at(std::move(failed), recorded));
    }
    logged(recorded);
  });
  on<events::CommitCertification>(
      kinds, [this](auto&& certified, const sim::PackedEvent& recorded) {
        model_.certifications.push_back(at(std::move(certified), recorded));
        logged(recorded);
      });
  on<events::StoreRefused>(kinds, [this](auto&& refused, const sim::PackedEvent& recorded) {
    model_.refusals.push_back(at(std::move(refused), recorded));
  });
}

void Folder::on_request(events::ApiRequest&& request, const sim::PackedEvent& recorded) {
  const auto client = forwarded_.find(request.request_id);
  const auto [number, attempt] =
      client == forwarded_.end() ? std::pair<std::int64_t, std::int64_t>{0, 0} : client->second;
  open_exchange_[recorded.node.str() + "\n" + request.request_id].push_back(
      model_.exchanges.size());
  model_.exchanges.push_back(ApiExchange{.node = recorded.node,
                                         .route = sim::NodeName(request.route),
                                         .request_seq = recorded.seq,
                                         .response_seq = 0,
                                         .status = 0,
                                         .client_request = number,
                                         .client_send = attempt});
  model_.keep_decoded(recorded.seq, std::move(request));
}

void Folder::on_response(events::ApiResponse&& response, const sim::PackedEvent& recorded) {
  auto open = open_exchange_.find(recorded.node.str() + "\n" + response.request_id);
  if (open == open_exchange_.end()) return;
  ONEJOB_ASSERT(!open->second.empty(), "an open exchange entry with nothing open");
  ApiExchange& exchange = model_.exchanges[open->second.front()];
  exchange.response_seq = recorded.seq;
  exchange.status = response.status;
  open->second.erase(open->second.begin());
  if (open->second.empty()) open_exchange_.erase(open);
  model_.keep_decoded(recorded.seq, std::move(response));
}

void Folder::on_executed(events::ProviderExecuted&& executed, const sim::PackedEvent& recorded) {
  Execution execution{recorded.node,
                      {{std::move(executed.provider_key), executed.outcome, executed.answers_at,
                        executed.operation},
                       recorded.seq,
                       recorded.at}};
  if (executed.purpose == events::kPurposeAttempt) {
    model_.first_execution.try_emplace(execution.executed.what.provider_key,
                                       model_.executions.size());
    model_.executions.push_back(std::move(execution));
  } else {
    model_.certification_executions.push_back(std::move(execution));
  }
}

// What nodes and clients saw.
void Folder::seen(EventSwitch& kinds) {
  on<events::ClientSent>(kinds, [this](auto&& sent, const sim::PackedEvent& recorded) {
    auto [it, first] = model_.requests.try_emplace(sent.request);
    if (first) {
      it->second.client = recorded.node;
      it->second.action = sent.action;
    }
    it->second.send_seqs.push_back(recorded.seq);
    model_.keep_decoded(recorded.seq, std::move(sent));
  });
  on<events::ClientSkipped>(kinds, [this](auto&& skipped, const sim::PackedEvent&) {
    model_.requests[skipped.request].skipped = skipped.reason;
  });
  on<events::ClientReceived>(kinds, [this](auto&& received, const sim::PackedEvent& recorded) {
    model_.requests[received.request].received_seqs.push_back(recorded.seq);
    model_.keep_decoded(recorded.seq, std::move(received));
  });
  on<events::LbForwarded>(kinds, [this](auto&& forwarded, const sim::PackedEvent&) {
    forwarded_[forwarded.request_id] = {forwarded.request, forwarded.send};
  });
  on<events::ApiRequest>(kinds, [this](auto&& request, const sim::PackedEvent& recorded) {
    on_request(std::move(request), recorded);
  });
  on<events::ApiResponse>(kinds, [this](auto&& response, const sim::PackedEvent& recorded) {
    on_response(std::move(response), recorded);
  });
  on<events::ProviderCalled>(kinds, [this](auto&& call, const sim::PackedEvent& recorded) {
    model_.calls[call.attempt_id].push_back(recorded.seq);
  });
  on<events::ProviderExecuted>(kinds, [this](auto&& executed, const sim::PackedEvent& recorded) {
    on_executed(std::move(executed), recorded);
  });
  on<events::ProviderDelivered>(kinds, [this](auto&& delivered, const sim::PackedEvent& recorded) {
    model_.deliveries[delivered.provider_key].push_back(
        Delivery{recorded.node, delivered.call, delivered.outcome, recorded.seq, recorded.at});
  });
  const auto life = [this](bool up) {
    return [this, up](const sim::PackedEvent& recorded) {
      model_.node_life[recorded.node.str()].push_back(At<bool>{up, recorded.seq, recorded.at});
    };
  };
  on_kind<events::NodeStarted>(kinds, life(true));
  on_kind<events::NodeCrashed>(kinds, life(false));
  const auto pause = [this](bool paused) {
    return [this, paused](const sim::PackedEvent& recorded) {
      model_.node_pauses[recorded.node.str()].push_back(
          At<bool>{paused, recorded.seq, recorded.at});
    };
  };
  on_kind<events::NodePaused>(kinds, pause(true));
  on_kind<events::NodeResumed>(kinds, pause(false));
  on<events::RunPolicy>(kinds, [this](auto&& policy, const sim::PackedEvent& recorded) {
    model_.policy = at(std::move(policy), recorded);
  });
  on<events::RunProvider>(kinds, [this](auto&& provider, const sim::PackedEvent&) {
    const std::string name = provider.name;
    model_.providers[name] = std::move(provider);
  });
  on_kind<events::QuietStarted>(
      kinds, [this](const sim::PackedEvent& recorded) { model_.quiet_seq = recorded.seq; });
  on<events::RunEnded>(kinds, [this](auto&& ended, const sim::PackedEvent& recorded) {
    model_.end_seq = recorded.seq;
    model_.quiescent_end = ended.quiescent;
  });
}

void Folder::fold(const sim::History& history) {
  EventSwitch kinds;
  commits(kinds);
  seen(kinds);
  kinds.run(history);
}

HistoryModel Folder::finish() {
  HistoryModel model = std::move(model_);
  model.marks = reach_marks(model);
  return model;
}

}  // namespace

bool is_live_state(AttemptState state) {
  return state == AttemptState::starting || state == AttemptState::running ||
         state == AttemptState::unknown;
}

JobInserted JobInserted::of(const events::CommitJobInserted& inserted,
                            const std::pair<std::string, std::string>& owner_key) {
  return {.job_id = inserted.job_id,
          .owner_key = &owner_key,
          .operation = inserted.operation,
          .provider = inserted.provider,
          .by = inserted.by};
}

AttemptInserted AttemptInserted::of(const events::CommitAttemptInserted& inserted) {
  return {.job_id = inserted.job_id,
          .attempt_id = inserted.attempt_id,
          .attempt_no = inserted.attempt_no,
          .provider = inserted.provider,
          .provider_key = inserted.provider_key,
          .origin = inserted.origin,
          .has_action = inserted.action_key.has_value(),
          .by = inserted.by};
}

Cas Cas::of(const events::CommitCas& cas) {
  return {.job_id = cas.job_id,
          .attempt_id = cas.attempt_id,
          .expected_version = cas.expected_version,
          .version = cas.version,
          .winner = cas.winner,
          .won = cas.won,
          .result_offered = cas.job_result == cas.result,
          .by = cas.by};
}

Transition Transition::of(const events::CommitAttemptTransition& step) {
  return {.job_id = step.job_id,
          .attempt_id = step.attempt_id,
          .from = step.from,
          .to = step.to,
          .claim = step.claim,
          .takeover = step.takeover,
          .has_action = step.action_key.has_value(),
          .by = step.by,
          .lease_owner = step.lease_owner,
          .fence = step.fence,
          .token = step.token,
          .lease_expires_at = step.lease_expires_at};
}

namespace {

// Folded once the deliveries are known: a call ends at a delivery that comes after it.
std::deque<CallSpan> spans_of(const HistoryModel& model) {
  std::deque<CallSpan> spans;
  if (model.history == nullptr) return spans;
  model.history->visit_kinds(
      {&events::kind_name<events::ProviderCalled>()}, [&](const sim::TraceEvent& recorded) {
        auto call = events::from_event<events::ProviderCalled>(recorded.event);
        if (!call) return;
        CallSpan span{.node = recorded.node,
                      .call = {{call->attempt_id}, recorded.seq, recorded.at},
                      .deadline = call->deadline,
                      .ended = call->deadline,
                      .reply = std::nullopt};
        if (auto found = model.deliveries.find(call->provider_key);
            found != model.deliveries.end()) {
          // Deliveries are in trace order: the first reply after the call is the one that ends
          // it, unless it came after the deadline.
          for (const Delivery& delivery : found->second) {
            if (delivery.node == span.node && delivery.seq > recorded.seq &&
                delivery.call == events::kDeliveredReply) {
              span.first_reply_at = delivery.at;
              if (delivery.at <= span.ended) {
                span.ended = delivery.at;
                span.reply = delivery.outcome;
              }
              break;
            }
          }
        }
        spans.push_back(std::move(span));
      });
  return spans;
}

}  // namespace

JobRow JobRow::of(const Job& job) {
  return {job.status, job.version, job.completed_by, job.result};
}

AttemptRow AttemptRow::of(const Attempt& attempt) {
  return {attempt.id, attempt.attempt_no, attempt.state};
}

HistoryModel fold_history(const sim::History& history) {
  Folder folder(history);
  folder.fold(history);
  HistoryModel model = folder.finish();
  model.call_spans = spans_of(model);
  return model;
}

std::optional<std::string> json_digest(const std::string& text) {
  const JsonValue held = json_value(text);
  const nlohmann::json& parsed = *held;
  if (parsed.is_discarded()) return std::nullopt;
  return digest_of(parsed);
}

}  // namespace onejob::check
