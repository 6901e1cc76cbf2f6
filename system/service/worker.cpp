#include "system/service/worker.hpp"

#include <set>

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
  // The attempts run_attempt is running (a multiset: a re-driven attempt can be run again by
  // this worker while its stale run is still finishing).
  std::multiset<AttemptId> running;
  // A claim's reply was lost: it may have committed, leaving an attempt leased to this worker
  // that it does not know it holds.
  bool claim_maybe_held = false;
};

namespace {

using CorePtr = std::shared_ptr<WorkerCore>;

// One unit of the worker's capacity: taken for each attempt the worker starts running, given
// back when its outcome is decided, on every path (early returns and exceptions included),
// since only its destructor gives it back.
class Slot {
 public:
  explicit Slot(CorePtr core) : core_(std::move(core)) { ++core_->in_flight; }
  Slot(Slot&& other) noexcept = default;
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  Slot& operator=(Slot&&) = delete;
  ~Slot() {
    if (core_ && !kept_) --core_->in_flight;
  }
  // Defect capacity-leak: the slot is never given back.
  void leak() { kept_ = true; }

 private:
  CorePtr core_;
  bool kept_ = false;
};

// The states a provider's reply is written from. Whether the deadline's move to UNKNOWN has
// landed yet does not matter to the answer: both writes may be in flight at once, in either
// order, so the answer accepts either (and CANCELLED: an operator's cancel still lets a late
// result compete). The lease token guards against a takeover, not the state.
std::vector<AttemptState> reply_from(const WorkerCore& core, bool late) {
  if (core.context.config.defects.has(Defect::answer_needs_exact_state)) {  // the defect
    return {late ? AttemptState::unknown : AttemptState::running, AttemptState::cancelled};
  }
  return {AttemptState::running, AttemptState::unknown, AttemptState::cancelled};
}

// A store error the worker met, reported with the wait before its next try.
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

// Runs `operation` (which returns an Async) until it completes without a StoreError, waiting
// a capped, jittered backoff between tries, while the worker lives. Returns whether it completed.
// A rejected value (StoreError::Kind::rejected) is not retried: it propagates. Every operation
// retried here is safe to repeat: a read, or a write guarded by state and lease
// token, so one that committed before its reply was lost is refused the second time. REQUIRES: what
// `operation`'s coroutines take by reference outlives the retrying (never a temporary made inside
// `operation`: it would die when the call returns, before the coroutine runs).
template <typename Operation>
Async<bool> retry_store(CorePtr core, AttemptId attempt, Operation operation) {
  auto& context = core->context;
  Backoff backoff(context.config.policy.worker_poll, context.config.policy.store_backoff_cap);
  while (core->alive) {
    Duration wait{};
    try {
      co_await operation();
      co_return true;
    } catch (const StoreError& error) {
      // A value the store cannot hold is refused however often it is sent.
      if (error.kind() == StoreError::Kind::rejected) throw;
      if (!core->alive) co_return false;
      wait = backoff.next(context.random);
      report_store_error(*core, error, attempt, wait);
    }
    co_await context.timer.sleep_for(wait);
  }
  co_return false;
}

Async<void> settle_reply(CorePtr core, Attempt attempt, Job job, ProviderReply reply, bool late) {
  Settlement settlement(core->context);
  const Writer me{core->name, attempt.lease_token};
  const auto from = reply_from(*core, late);
  switch (reply.kind) {
    case ProviderReply::Kind::answered:
      co_await settlement.answered(attempt, job, reply.output, from, me);
      break;
    case ProviderReply::Kind::rejected:
      co_await settlement.failed(attempt, "provider refused: " + reply.reason, from, me);
      break;
    case ProviderReply::Kind::maybe_delivered:
      // The request may have reached the provider: as unknown as a timeout, never a failure
      // (defect timeout-is-failure: a failure).
      if (late) break;
      if (core->context.config.defects.has(Defect::timeout_is_failure)) {
        co_await settlement.failed(attempt, "transport failed after sending: " + reply.reason, from,
                                   me);
        break;
      }
      co_await settlement.unknown(attempt, "transport failed after sending: " + reply.reason, me);
      break;
  }
}

// A reply the worker holds is written until the store takes it or refuses it (a refusal: the
// lease was taken over, or the attempt moved on): a store error never drops it.
Async<void> settle_reply_retrying(CorePtr core, Attempt attempt, Job job, ProviderReply reply,
                                  bool late) {
  co_await retry_store(core, attempt.id,
                       [&] { return settle_reply(core, attempt, job, reply, late); });
}

void emit_reply(WorkerCore& core, const Attempt& attempt, const ProviderReply& reply, bool late) {
  events::emit(core.context.events,
               events::ProviderReplied{.job_id = attempt.job_id,
                                       .attempt_id = attempt.id,
                                       .provider = attempt.provider,
                                       .reply = std::string(to_string(reply.kind)),
                                       .late = late});
}

Async<void> on_late_reply(CorePtr core, Attempt attempt, Job job, ProviderReply reply) {
  if (!core->alive) co_return;
  emit_reply(*core, attempt, reply, /*late=*/true);
  if (core->context.config.defects.has(Defect::drop_late_reply)) co_return;  // the defect
  const AttemptId id = attempt.id;
  // A value the store refuses (rejected) is not retried: reported, as run_attempt_guarded does,
  // not thrown out of the worker.
  try {
    co_await settle_reply_retrying(core, std::move(attempt), std::move(job), std::move(reply),
                                   true);
  } catch (const StoreError& error) {
    if (core->alive) report_store_error(*core, error, id);
  }
}

Async<void> load_job_into(Store& store, JobId id, std::optional<Job>* job) {
  *job = co_await store.load_job(id);
}

// Runs one claimed attempt until its outcome is decided: answered, failed, or UNKNOWN at the
// deadline; `slot` goes back then. A late answer is handled after.
Async<void> run_attempt(CorePtr core, Attempt attempt, Slot slot) {
  auto& context = core->context;
  Settlement settlement(context);
  const Writer me{core->name, attempt.lease_token};
  const bool leaks = context.config.defects.has(Defect::capacity_leak);

  // Nothing has been sent yet: a store error here is retried. If the store stays away past the
  // lease, the reconciler may meanwhile find the provider has no record of the key and re-drive
  // the attempt: both calls carry the same provider key (the provider runs it once), and the
  // lease token fences this worker's writes out.
  std::optional<Job> job;
  const bool loaded = co_await retry_store(
      core, attempt.id, [&] { return load_job_into(context.store, attempt.job_id, &job); });
  if (!core->alive || !loaded || !job) co_return;
  // Locals, not braced lists inside co_await: g++ 12 miscompiles initializer_list temporaries
  // there ("array used as initializer").
  const std::vector<AttemptState> only_running{AttemptState::running};
  if (job->completed_by) {
    if (leaks) slot.leak();
    if (context.config.defects.has(Defect::fail_won_job_attempt)) {  // the defect: FAILED
      const std::string reason = "job already completed";
      co_await retry_store(core, attempt.id,
                           [&] { return settlement.failed(attempt, reason, only_running, me); });
      co_return;
    }
    AttemptUpdate update{
        .attempt_id = attempt.id,
        .from = only_running,
        .to = AttemptState::cancelled,
        .fence = {},
        .take_over_as = {},
        .reason = "job already completed by attempt " + std::to_string(*job->completed_by),
        .at = context.clock.now()};
    co_await retry_store(core, attempt.id, [&] { return settlement.transition(update, me); });
    co_return;
  }
  const ProviderProfile* profile = context.config.find_provider(attempt.provider);
  if (profile == nullptr) {
    if (leaks) slot.leak();
    const std::string reason = "provider \"" + attempt.provider + "\" is not configured";
    co_await retry_store(core, attempt.id,
                         [&] { return settlement.failed(attempt, reason, only_running, me); });
    co_return;
  }
  auto prompt = render_prompt(*profile, job->operation, job->input_json);
  if (auto* rejected = std::get_if<PromptRejected>(&prompt)) {
    if (leaks) slot.leak();
    co_await retry_store(core, attempt.id, [&] {
      return settlement.failed(attempt, rejected->reason, only_running, me);
    });
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
    // A named string: the coroutine keeps a reference to it beyond the lambda's return.
    const std::string reason = "no answer within the attempt deadline";
    co_await retry_store(core, attempt.id, [&] { return settlement.unknown(attempt, reason, me); });
    co_return;
  }
  emit_reply(*core, attempt, *reply, /*late=*/false);
  co_await settle_reply_retrying(core, attempt, *job, std::move(*reply), false);
}

Async<void> run_attempt_guarded(CorePtr core, Attempt attempt, Slot slot) {
  const AttemptId id = attempt.id;
  struct Running {
    CorePtr core;
    AttemptId id;
    ~Running() { core->running.erase(core->running.find(id)); }
  } running{core, id};
  core->running.insert(id);
  try {
    co_await run_attempt(core, std::move(attempt), std::move(slot));
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
  co_return claimed;
}

// After a claim whose reply was lost: the RUNNING attempts leased to this worker's name that it
// is not running (that claim's, or one a previous incarnation of this worker was running when it
// crashed). Taking them up sends their call again under the same provider key, so the provider
// runs each once; without this only the reconciler, once the lease expires, would get them back.
Async<std::vector<Attempt>> held_but_not_running(const CorePtr& core) {
  std::vector<Attempt> held;
  for (auto& attempt : co_await core->context.store.find_attempts_in_state(AttemptState::running)) {
    if (attempt.lease_owner == core->name && !core->running.contains(attempt.id)) {
      held.push_back(std::move(attempt));
    }
  }
  co_return held;
}

// What to run next. After a claim whose reply was lost, the attempts that claim may have left
// leased to this worker (`adopted`); otherwise the one it claims, if any. Throws StoreError.
struct Work {
  std::vector<Attempt> attempts;
  bool adopted = false;
};

Async<Work> next_work(const CorePtr& core) {
  if (core->claim_maybe_held && !core->context.config.defects.has(Defect::forget_lost_claims)) {
    Work held;
    held.attempts = co_await held_but_not_running(core);
    held.adopted = true;
    core->claim_maybe_held = false;
    co_return held;
  }
  Work claimed;
  try {
    if (auto attempt = co_await claim(core)) claimed.attempts.push_back(std::move(*attempt));
  } catch (const StoreError& error) {
    // The claim may have committed: look for what this worker holds before claiming again.
    if (error.kind() == StoreError::Kind::maybe_committed) core->claim_maybe_held = true;
    throw;
  }
  co_return claimed;
}

Async<void> run_loop(CorePtr core) {
  auto executor = co_await boost::asio::this_coro::executor;
  const Policy& policy = core->context.config.policy;
  Backoff backoff(policy.worker_poll, policy.store_backoff_cap);
  while (core->alive) {
    ONEJOB_ASSERT(core->in_flight >= 0, core->name + ": attempts in flight went negative");
    Duration wait = policy.worker_poll;
    // Defect claim-past-capacity: one attempt more than the capacity.
    const int capacity = policy.worker_capacity +
                         (core->context.config.defects.has(Defect::claim_past_capacity) ? 1 : 0);
    if (core->in_flight < capacity) {
      Work work;
      bool failed = false;
      try {
        work = co_await next_work(core);
        backoff.reset();
      } catch (const StoreError& error) {
        // The store is failing: wait longer each time, with jitter, up to the cap.
        failed = true;
        wait = backoff.next(core->context.random);
        if (core->alive) report_store_error(*core, error, 0, wait);
      }
      for (auto& attempt : work.attempts) {
        if (!core->alive) break;
        if (core->in_flight >= capacity) {
          core->claim_maybe_held = true;  // the rest once capacity frees up
          break;
        }
        Slot slot(core);
        if (work.adopted) {
          events::emit(core->context.events, events::WorkerAdopted{.worker = core->name,
                                                                   .job_id = attempt.job_id,
                                                                   .attempt_id = attempt.id,
                                                                   .token = attempt.lease_token});
        }
        boost::asio::co_spawn(executor,
                              run_attempt_guarded(core, std::move(attempt), std::move(slot)),
                              rethrow_error);
      }
      if (!work.attempts.empty() || work.adopted) continue;
      // Idle: nothing to claim. With a signal, wait for a write to ring (or the fallback poll).
      if (!failed && core->context.work != nullptr) {
        co_await core->context.work->wait(policy.worker_idle_poll);
        continue;
      }
    }
    co_await core->context.timer.sleep_for(wait);
  }
}

}  // namespace

Worker::Worker(SystemContext& context, std::string name)
    : core_(
          std::make_shared<WorkerCore>(WorkerCore{context, std::move(name), true, 0, {}, false})) {}

Worker::~Worker() { core_->alive = false; }

void Worker::stop() { core_->alive = false; }

const std::string& Worker::name() const { return core_->name; }

Async<void> Worker::run() { return run_loop(core_); }

Async<bool> Worker::run_once() {
  auto attempt = co_await claim(core_);
  if (!attempt) co_return false;
  co_await run_attempt_guarded(core_, std::move(*attempt), Slot(core_));
  co_return true;
}

}  // namespace onejob
