#include "system/service/worker.hpp"

#include "system/domain/check.hpp"
#include "system/events/attempt_events.hpp"
#include "system/events/worker_events.hpp"
#include "system/service/backoff.hpp"
#include "system/service/deadline.hpp"
#include "system/service/settlement.hpp"

namespace onejob {

// Shared by the worker and every coroutine it started, so a coroutine that resumes after the
// worker stopped (or was destroyed) finds `alive` false instead of a dangling pointer.
struct WorkerCore {
  SystemContext& context;
  std::string name;
  bool alive = true;
  int in_flight = 0;
};

namespace {

using CorePtr = std::shared_ptr<WorkerCore>;

std::vector<AttemptState> expected_states(bool late) {
  if (late) return {AttemptState::unknown, AttemptState::cancelled};
  return {AttemptState::running, AttemptState::cancelled};
}

Async<void> settle_reply(CorePtr core, Attempt attempt, Job job, ProviderReply reply, bool late) {
  Settlement settlement(core->context);
  const Writer me{core->name, attempt.lease_token};
  switch (reply.kind) {
    case ProviderReply::Kind::answered:
      co_await settlement.answered(attempt, job, reply.output, expected_states(late), me);
      break;
    case ProviderReply::Kind::rejected:
      co_await settlement.failed(attempt, "provider refused: " + reply.reason,
                                 expected_states(late), me);
      break;
    case ProviderReply::Kind::maybe_delivered:
      // The request may have reached the provider: as unknown as a timeout, never a failure
      // (defect timeout-is-failure: a failure).
      if (late) break;
      if (core->context.config.defects.has(Defect::timeout_is_failure)) {
        co_await settlement.failed(attempt, "transport failed after sending: " + reply.reason,
                                   expected_states(late), me);
        break;
      }
      co_await settlement.unknown(attempt, "transport failed after sending: " + reply.reason, me);
      break;
  }
}

void emit_reply(WorkerCore& core, const Attempt& attempt, const ProviderReply& reply, bool late) {
  static constexpr std::string_view kKinds[] = {events::kReplyAnswered, events::kReplyRejected,
                                                events::kReplyMaybeDelivered};
  events::emit(core.context.events,
               events::ProviderReplied{.job_id = attempt.job_id,
                                       .attempt_id = attempt.id,
                                       .provider = attempt.provider,
                                       .reply = std::string(kKinds[static_cast<int>(reply.kind)]),
                                       .late = late});
}

// A store that cannot be reached leaves the attempt as it is: its lease expires and the
// reconciler takes over, which is exactly the path of a crashed worker.
void report_store_error(WorkerCore& core, const StoreError& error, AttemptId attempt,
                        Duration retry_in = Duration::zero()) {
  events::emit(core.context.events,
               events::WorkerStoreError{
                   .worker = core.name,
                   .attempt_id = attempt,
                   .maybe_committed = error.kind() == StoreError::Kind::maybe_committed,
                   .message = error.what(),
                   .retry_in_us = retry_in.count(),
               });
}

Async<void> on_late_reply(CorePtr core, Attempt attempt, Job job, ProviderReply reply) {
  if (!core->alive) co_return;
  emit_reply(*core, attempt, reply, /*late=*/true);
  try {
    co_await settle_reply(core, attempt, std::move(job), std::move(reply), true);
  } catch (const StoreError& error) {
    report_store_error(*core, error, attempt.id);
  }
}

// Runs one claimed attempt until its outcome is decided: answered, failed, or UNKNOWN at the
// deadline. Decrements in_flight at that point; a late answer is handled after.
Async<void> run_attempt(CorePtr core, Attempt attempt) {
  auto& context = core->context;
  Settlement settlement(context);
  const Writer me{core->name, attempt.lease_token};
  struct InFlight {
    CorePtr core;
    ~InFlight() { --core->in_flight; }
  } in_flight{core};

  auto job = co_await context.store.load_job(attempt.job_id);
  if (!core->alive || !job) co_return;
  // Locals, not braced lists inside co_await: g++ 12 miscompiles initializer_list temporaries
  // there ("array used as initializer").
  const std::vector<AttemptState> only_running{AttemptState::running};
  if (job->completed_by) {
    AttemptUpdate update{
        .attempt_id = attempt.id,
        .from = only_running,
        .to = AttemptState::cancelled,
        .fence = {},
        .take_over_as = {},
        .reason = "job already completed by attempt " + std::to_string(*job->completed_by),
        .at = context.clock.now()};
    co_await settlement.transition(std::move(update), me);
    co_return;
  }
  const ProviderProfile* profile = context.config.find_provider(attempt.provider);
  if (profile == nullptr) {
    co_await settlement.failed(attempt, "provider \"" + attempt.provider + "\" is not configured",
                               only_running, me);
    co_return;
  }
  auto prompt = render_prompt(*profile, job->operation, job->input_json);
  if (auto* rejected = std::get_if<PromptRejected>(&prompt)) {
    co_await settlement.failed(attempt, rejected->reason, only_running, me);
    co_return;
  }
  const Duration deadline = context.config.policy.attempt_deadline;
  ProviderCall call{.provider = attempt.provider,
                    .provider_key = attempt.provider_key,
                    .operation = job->operation,
                    .prompt = std::get<RenderedPrompt>(prompt).text,
                    .input_json = job->input_json,
                    .temperature = 0.0,
                    .deadline = context.clock.now() + deadline};
  events::emit(context.events, events::ProviderCalled{.job_id = attempt.job_id,
                                                      .attempt_id = attempt.id,
                                                      .provider = attempt.provider,
                                                      .provider_key = attempt.provider_key,
                                                      .deadline = call.deadline});
  LateHandler<ProviderReply> late = [core, attempt, job = *job](ProviderReply reply) {
    return on_late_reply(core, attempt, job, std::move(reply));
  };
  auto reply = co_await with_deadline(context.providers.call(std::move(call)), context.timer,
                                      deadline, std::move(late));
  if (!core->alive) co_return;
  if (!reply) {
    if (context.config.defects.has(Defect::timeout_is_failure)) {  // the defect: FAILED
      co_await settlement.failed(attempt, "no answer within the attempt deadline", only_running,
                                 me);
      co_return;
    }
    co_await settlement.unknown(attempt, "no answer within the attempt deadline", me);
    co_return;
  }
  emit_reply(*core, attempt, *reply, /*late=*/false);
  co_await settle_reply(core, attempt, *job, std::move(*reply), false);
}

Async<void> run_attempt_guarded(CorePtr core, Attempt attempt) {
  const AttemptId id = attempt.id;
  try {
    co_await run_attempt(core, std::move(attempt));
  } catch (const StoreError& error) {
    if (core->alive) report_store_error(*core, error, id);
  }
}

Async<std::optional<Attempt>> claim(const CorePtr& core) {
  auto& context = core->context;
  const Instant now = context.clock.now();
  auto claimed =
      co_await context.store.claim_next_attempt(core->name, now, now + context.config.policy.lease);
  if (!core->alive || !claimed) co_return std::nullopt;
  ONEJOB_ASSERT(claimed->state == AttemptState::running && claimed->lease_owner == core->name &&
                    claimed->lease_expires_at > now,
                "a claimed attempt is RUNNING under this worker's unexpired lease");
  events::emit(context.events,
               events::AttemptStateChanged{.job_id = claimed->job_id,
                                           .attempt_id = claimed->id,
                                           .from = AttemptState::starting,
                                           .to = AttemptState::running,
                                           .reason = "claimed",
                                           .by = core->name,
                                           .token = claimed->lease_token,
                                           .lease_expires = claimed->lease_expires_at});
  ++core->in_flight;
  co_return claimed;
}

Async<void> run_loop(CorePtr core) {
  auto executor = co_await boost::asio::this_coro::executor;
  const Policy& policy = core->context.config.policy;
  Backoff backoff(policy.worker_poll, policy.store_backoff_cap);
  while (core->alive) {
    ONEJOB_ASSERT(core->in_flight >= 0, core->name + ": attempts in flight went negative");
    Duration wait = policy.worker_poll;
    if (core->in_flight < policy.worker_capacity) {
      std::optional<Attempt> attempt;
      try {
        attempt = co_await claim(core);
        backoff.reset();
      } catch (const StoreError& error) {
        // A claim whose reply was lost may have committed: that attempt's lease expires. The
        // store is failing: wait longer each time, with jitter, up to the cap.
        wait = backoff.next(core->context.random);
        if (core->alive) report_store_error(*core, error, 0, wait);
      }
      if (attempt) {
        ONEJOB_ASSERT(core->in_flight <= policy.worker_capacity,
                      core->name + " runs more attempts than its capacity");
        boost::asio::co_spawn(executor, run_attempt_guarded(core, std::move(*attempt)),
                              rethrow_error);
        continue;
      }
    }
    co_await core->context.timer.sleep_for(wait);
  }
}

}  // namespace

Worker::Worker(SystemContext& context, std::string name)
    : core_(std::make_shared<WorkerCore>(WorkerCore{context, std::move(name)})) {}

Worker::~Worker() { core_->alive = false; }

void Worker::stop() { core_->alive = false; }

const std::string& Worker::name() const { return core_->name; }

Async<void> Worker::run() { return run_loop(core_); }

Async<bool> Worker::run_once() {
  auto attempt = co_await claim(core_);
  if (!attempt) co_return false;
  co_await run_attempt_guarded(core_, std::move(*attempt));
  co_return true;
}

}  // namespace onejob
