#include "system/service/ringing_store.hpp"

namespace onejob {

namespace {

void ring_if_in_doubt(WorkBell& bell, const StoreError& error) {
  if (error.kind() == StoreError::Kind::maybe_committed) bell.ring();
}

}  // namespace

Async<InsertJobResult> RingingStore::insert_job(NewJob job) {
  try {
    auto result = co_await StoreWrapper::insert_job(std::move(job));
    if (result.outcome == InsertJobResult::Outcome::inserted) bell_.ring();
    co_return result;
  } catch (const StoreError& error) {
    ring_if_in_doubt(bell_, error);
    throw;
  }
}

Async<InsertAttemptResult> RingingStore::insert_attempt(NewAttempt attempt) {
  try {
    auto result = co_await StoreWrapper::insert_attempt(std::move(attempt));
    if (result.outcome == InsertAttemptResult::Outcome::inserted) bell_.ring();
    co_return result;
  } catch (const StoreError& error) {
    ring_if_in_doubt(bell_, error);
    throw;
  }
}

Async<UpdateAttemptResult> RingingStore::update_attempt(AttemptUpdate update) {
  const bool to_starting = update.to == AttemptState::starting;
  try {
    auto result = co_await StoreWrapper::update_attempt(std::move(update));
    if (to_starting && result.outcome == UpdateAttemptResult::Outcome::applied) bell_.ring();
    co_return result;
  } catch (const StoreError& error) {
    if (to_starting) ring_if_in_doubt(bell_, error);
    throw;
  }
}

}  // namespace onejob
