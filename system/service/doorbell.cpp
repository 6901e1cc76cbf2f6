#include "system/service/doorbell.hpp"

#include <algorithm>

#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>

#include "system/domain/check.hpp"
#include "system/ports/unique_function.hpp"

namespace onejob {

struct Doorbell::State {
  std::mutex mutex;
  bool rung = false;        // a ring that no wait has taken yet
  std::uint64_t waits = 0;  // numbers the waits, so a timeout left over ends no later wait
  UniqueFunction waiter;    // resumes the wait under way; empty when none is
};

namespace {

// Ends wait number `wait_no` once `after` has passed, unless a ring ended it first.
Async<void> expire(std::shared_ptr<Doorbell::State> state, Timer& timer, Duration after,
                   std::uint64_t wait_no) {
  co_await timer.sleep_for(after);
  UniqueFunction waiter;
  {
    const std::lock_guard lock{state->mutex};
    if (state->waits == wait_no) std::swap(waiter, state->waiter);
  }
  if (waiter) waiter();
}

// Completes when the state's waiter is called (by a ring or the timeout), or at once if a ring
// came since the wait began. Not a coroutine: a lambda made inside a co_await expression is
// destroyed twice by g++ 12. The initiation holds the state weakly: it lives in the waiting
// coroutine's frame, which the state's waiter holds in turn.
Async<void> ringing(std::weak_ptr<Doorbell::State> weak) {
  auto initiate = [weak = std::move(weak)](auto handler) {
    const auto state = weak.lock();
    ONEJOB_ASSERT(state != nullptr, "a Doorbell outlives its wait");
    // Posted to the waiter's own executor, never run by whoever rings: a ring may come from
    // another thread.
    UniqueFunction resume = [handler = std::move(handler)]() mutable {
      auto on = boost::asio::get_associated_executor(handler);
      boost::asio::post(on, std::move(handler));
    };
    std::unique_lock lock{state->mutex};
    if (std::exchange(state->rung, false)) {  // rung since the wait began
      lock.unlock();
      resume();
      return;
    }
    state->waiter = std::move(resume);
  };
  return boost::asio::async_initiate<const UseAsync&, void()>(std::move(initiate), use_async);
}

}  // namespace

Doorbell::Doorbell(Timer& timer) : state_(std::make_shared<State>()), timer_(timer) {}

Doorbell::~Doorbell() = default;

void Doorbell::ring() {
  UniqueFunction waiter;
  {
    const std::lock_guard lock{state_->mutex};
    std::swap(waiter, state_->waiter);
    if (!waiter) state_->rung = true;
  }
  if (waiter) waiter();
}

Async<void> Doorbell::wait(Duration at_most) {
  // Only the timeout holds the state while the wait is suspended: the state's waiter holds
  // this frame.
  std::uint64_t wait_no = 0;
  {
    const std::lock_guard lock{state_->mutex};
    if (std::exchange(state_->rung, false)) co_return;
    wait_no = ++state_->waits;
  }
  auto executor = co_await boost::asio::this_coro::executor;
  boost::asio::co_spawn(executor, expire(state_, timer_, at_most, wait_no), boost::asio::detached);
  co_await ringing(state_);
}

void Doorbells::ring() {
  const std::lock_guard lock{mutex_};
  for (Doorbell* bell : bells_) bell->ring();
}

void Doorbells::add(Doorbell& bell) {
  const std::lock_guard lock{mutex_};
  bells_.push_back(&bell);
}

void Doorbells::remove(Doorbell& bell) {
  const std::lock_guard lock{mutex_};
  std::erase(bells_, &bell);
}

}  // namespace onejob
