#include "system/service/reconciler.hpp"

#include <utility>

#include <algorithm>
#include <map>

#include "system/events/reconciler_events.hpp"
#include "system/service/backoff.hpp"
#include "system/service/deadline.hpp"
#include "system/service/settlement.hpp"

namespace onejob {

struct ReconcilerCore {
  SystemContext& context;
  bool alive = true;
  std::map<AttemptId, int> redrives;  // re-drives this reconciler made, by attempt
};

namespace {

constexpr const char* kName = "reconciler";

using CorePtr = std::shared_ptr<ReconcilerCore>;

// The provider has no record of the attempt's key: the call never reached it (the worker lost the
// store before sending, its claim reply was lost, the request was dropped), or it has not reached
// it yet. Waiting cannot tell, so the attempt goes back to STARTING and a worker sends it again
// under the same provider key: a provider that deduplicates on the key runs it once even if the
// first request does arrive. Bounded: after policy.redrive_limit re-drives by this reconciler the
// attempt stays UNKNOWN, for an operator.
Async<void> redrive(CorePtr core, Attempt attempt) {
  auto& context = core->context;
  if (context.config.defects.has(Defect::no_redrive)) co_return;  // the defect
  const int limit = context.config.policy.redrive_limit;
  // Re-drives that committed: a write the store failed or refused does not count.
  const int done = core->redrives[attempt.id];
  if (done >= limit) co_return;
  // Built before the update, not inside its initializer: g++ 12 frees such temporaries twice in
  // a coroutine.
  std::string reason = "re-driven (";
  reason += std::to_string(done + 1);
  reason += " of ";
  reason += std::to_string(limit);
  reason += "): ";
  reason += attempt.provider;
  reason += " has no record of key ";
  reason += attempt.provider_key;
  const std::vector<AttemptState> only_unknown{AttemptState::unknown};
  AttemptUpdate update{.attempt_id = attempt.id,
                       .from = only_unknown,
                       .to = AttemptState::starting,
                       .fence = {},
                       .take_over_as = {},
                       .reason = std::move(reason),
                       .at = context.clock.now()};
  Settlement settlement(context);
  const Writer me{kName, attempt.lease_token};  // a local: see above
  const auto result = co_await settlement.transition(std::move(update), me);
  if (result.outcome == UpdateAttemptResult::Outcome::applied) ++core->redrives[attempt.id];
}

Async<void> resolve_unknown(CorePtr core, Attempt attempt) {
  auto& context = core->context;
  auto status =
      co_await with_deadline(context.providers.status(attempt.provider, attempt.provider_key),
                             context.timer, context.config.policy.status_timeout);
  if (!core->alive) co_return;
  const auto kind = status ? status->kind : ProviderStatus::Kind::unreachable;
  events::emit(context.events, events::ReconcilerStatus{.job_id = attempt.job_id,
                                                        .attempt_id = attempt.id,
                                                        .provider = attempt.provider,
                                                        .status = std::string(to_string(kind))});
  Settlement settlement(context);
  const Writer me{kName, attempt.lease_token};
  // Locals, not braced lists inside co_await: g++ 12 miscompiles initializer_list temporaries
  // there ("array used as initializer").
  const std::vector<AttemptState> only_unknown{AttemptState::unknown};
  if (kind == ProviderStatus::Kind::completed) {
    auto job = co_await context.store.load_job(attempt.job_id);
    if (!core->alive || !job) co_return;
    co_await settlement.answered(attempt, *job, status->output, only_unknown, me);
  } else if (kind == ProviderStatus::Kind::failed) {
    co_await settlement.failed(attempt, "provider reports failure: " + status->reason, only_unknown,
                               me);
  } else if (kind == ProviderStatus::Kind::not_found) {
    co_await redrive(core, attempt);
  }
}

// One sweep; true when the store had nothing live and no idle job, so nothing to act on.
Async<bool> sweep(CorePtr core) {
  auto& context = core->context;
  Settlement settlement(context);
  auto work = co_await context.store.find_sweep_work(context.clock.now());
  if (!work.any_live && work.expired.empty() && work.unknown.empty() && work.idle.empty()) {
    co_return true;
  }
  for (const auto& attempt : work.expired) {
    if (!core->alive) co_return false;
    const Writer takeover{kName, attempt.lease_token};
    if (context.config.defects.has(Defect::lease_expiry_is_failure)) {  // the defect: FAILED
      const std::vector<AttemptState> only_running{AttemptState::running};
      co_await settlement.failed(attempt, "lease expired: worker " + attempt.lease_owner + " lost",
                                 only_running, takeover);
      continue;
    }
    const auto taken = co_await settlement.unknown(
        attempt, "lease expired: worker " + attempt.lease_owner + " presumed lost", takeover,
        std::string(kName));
    // Asked about in this same sweep, as if read after the takeover.
    if (taken.outcome == UpdateAttemptResult::Outcome::applied && taken.attempt) {
      work.unknown.push_back(*taken.attempt);
    }
  }
  std::ranges::sort(work.unknown, {}, &Attempt::id);
  for (auto& attempt : work.unknown) {
    if (!core->alive) co_return false;
    co_await resolve_unknown(core, std::move(attempt));
  }
  // A failover that a store fault interrupted (after the FAILED write, before the next attempt
  // or the job's failure) leaves a pending job nothing works on: finish it here. A job whose
  // latest attempt an operator cancelled is left to the operator.
  for (const auto& latest : work.idle) {
    if (!core->alive) co_return false;
    if (latest.state != AttemptState::failed) continue;
    events::emit(context.events,
                 events::FailoverResumed{.job_id = latest.job_id, .attempt_id = latest.id});
    co_await settlement.fail_over(latest.job_id, latest);
  }
  co_return false;
}

Async<void> run_loop(CorePtr core) {
  const Policy& policy = core->context.config.policy;
  // Never longer than a period: a failed sweep is retried sooner than the next one was due.
  Backoff backoff(std::min(policy.worker_poll, policy.reconcile_period),
                  std::min(policy.store_backoff_cap, policy.reconcile_period));
  // Idle (nothing live, no idle job), it waits for a ring, and looks anyway after the longer of
  // a period and the workers' idle poll: the most a lost ring delays a sweep. A ring puts it back
  // on its period: the next sweep comes a period after the one that found nothing, as if it had
  // never stopped (nothing new needs it sooner: a STARTING attempt has no lease yet).
  const Duration idle_poll = std::max(policy.reconcile_period, policy.worker_idle_poll);
  std::int64_t failures = 0;  // store errors in a row
  while (core->alive) {
    Duration wait = policy.reconcile_period;
    bool idle = false;
    try {
      idle = co_await sweep(core);
      if (failures > 0 && core->alive) {
        events::emit(core->context.events,
                     events::ReconcilerStoreRecovered{.failures = std::exchange(failures, 0)});
      }
      backoff.reset();
    } catch (const StoreError& error) {
      // Unreachable store: try again after a backoff; nothing here is lost, only delayed.
      ++failures;
      wait = backoff.next(core->context.random);
      if (core->alive) {
        events::emit(core->context.events, events::ReconcilerStoreError{
                                               .message = error.what(),
                                               .retry_in_us = wait.count(),
                                           });
      }
    }
    if (idle && core->context.work != nullptr) {
      const Instant due = core->context.clock.now() + policy.reconcile_period;
      co_await core->context.work->wait(idle_poll);
      if (const Instant now = core->context.clock.now(); now < due) {
        co_await core->context.timer.sleep_for(due - now);
      }
      continue;
    }
    co_await core->context.timer.sleep_for(wait);
  }
}

}  // namespace

Reconciler::Reconciler(SystemContext& context)
    : core_(std::make_shared<ReconcilerCore>(ReconcilerCore{context, true, {}})) {}

Reconciler::~Reconciler() { core_->alive = false; }

Async<void> Reconciler::run() { return run_loop(core_); }

Async<void> Reconciler::sweep_once() { co_await sweep(core_); }

void Reconciler::stop() { core_->alive = false; }

}  // namespace onejob
