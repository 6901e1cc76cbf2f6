#include "system/service/ringing_store.hpp"

namespace onejob {

namespace {

// Awaits `write` and rings `bell` when `left_work(result)` says it left an attempt STARTING, or
// when the reply was lost (maybe_committed) of a write that could have (`may_leave_work`).
template <typename T, typename LeftWork>
Async<T> ring_after(WorkBell& bell, Async<T> write, bool may_leave_work, LeftWork left_work) {
  try {
    auto result = co_await std::move(write);
    if (may_leave_work && left_work(result)) bell.ring();
    co_return result;
  } catch (const StoreError& error) {
    if (may_leave_work && error.kind() == StoreError::Kind::maybe_committed) bell.ring();
    throw;
  }
}

}  // namespace

Async<InsertJobResult> RingingStore::insert_job(NewJob job) {
  return ring_after(
      bell_, StoreWrapper::insert_job(std::move(job)), true,
      [](const InsertJobResult& r) { return r.outcome == InsertJobResult::Outcome::inserted; });
}

Async<InsertAttemptResult> RingingStore::insert_attempt(NewAttempt attempt) {
  return ring_after(bell_, StoreWrapper::insert_attempt(std::move(attempt)), true,
                    [](const InsertAttemptResult& r) {
                      return r.outcome == InsertAttemptResult::Outcome::inserted;
                    });
}

Async<UpdateAttemptResult> RingingStore::update_attempt(AttemptUpdate update) {
  const bool to_starting = update.to == AttemptState::starting;
  return ring_after(bell_, StoreWrapper::update_attempt(std::move(update)), to_starting,
                    [](const UpdateAttemptResult& r) {
                      return r.outcome == UpdateAttemptResult::Outcome::applied;
                    });
}

}  // namespace onejob
