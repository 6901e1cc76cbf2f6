#pragma once

// Include only from .cpp files: this pulls in Asio's co_spawn.
#include <utility>

#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>

#include "system/ports/async.hpp"
#include "system/ports/timer.hpp"
#include "system/ports/unique_function.hpp"

namespace onejob {

// A one-shot event coroutines can wait on. Single-threaded: use from one executor only.
class OneShot {
 public:
  bool is_set() const { return set_; }

  // Completes once set() has been called (at once if it already was).
  Async<void> wait() {
    if (set_) co_return;
    co_await boost::asio::async_initiate<const UseAsync&, void()>(
        [this](auto handler) {
          waiters_.emplace_back([handler = std::move(handler)]() mutable {
            auto executor = boost::asio::get_associated_executor(handler);
            boost::asio::post(executor, std::move(handler));
          });
        },
        use_async);
  }

  void set() {
    if (set_) return;
    set_ = true;
    auto waiters = std::move(waiters_);
    for (auto& resume : waiters) resume();
  }

  // Nothing will ever set this: the waiting coroutines are dropped (their frames are freed by
  // the executor) instead of staying suspended.
  void abandon() {
    auto waiters = std::move(waiters_);
    waiters.clear();
  }

 private:
  bool set_ = false;
  std::vector<UniqueFunction> waiters_;
};

template <typename T>
using LateHandler = std::function<Async<void>(T)>;

// Completion for co_spawn: an exception escaping a spawned coroutine is rethrown on the
// executor's thread instead of vanishing (boost::asio::detached would swallow it).
inline void rethrow_error(std::exception_ptr error) {
  if (error) std::rethrow_exception(error);
}

namespace detail {

template <typename T>
struct Race {
  std::optional<T> value;
  bool timed_out = false;
  int racers = 2;  // the operation and the timer, while they last
  OneShot settled;
};

// Each racer holds one. When both racers are gone without settling the race (torn down while
// suspended), nothing can wake the waiter: it is abandoned, so its frame, which owns the race,
// does not keep itself alive.
template <typename T>
struct Racer {
  std::shared_ptr<Race<T>> race;
  explicit Racer(std::shared_ptr<Race<T>> shared) : race(std::move(shared)) {}
  Racer(const Racer&) = delete;
  Racer& operator=(const Racer&) = delete;
  ~Racer() {
    if (--race->racers == 0 && !race->settled.is_set()) race->settled.abandon();
  }
};

template <typename T>
Async<void> race_operation(Async<T> operation, std::shared_ptr<Race<T>> race,
                           LateHandler<T> on_late) {
  const Racer<T> racer(race);
  T value = co_await std::move(operation);
  if (race->timed_out) {
    if (on_late) co_await on_late(std::move(value));
    co_return;
  }
  race->value = std::move(value);
  race->settled.set();
}

template <typename T>
Async<void> race_timer(Timer& timer, Duration timeout, std::shared_ptr<Race<T>> race) {
  const Racer<T> racer(race);
  co_await timer.sleep_for(timeout);
  if (race->value) co_return;
  race->timed_out = true;
  race->settled.set();
}

}  // namespace detail

// Waits for `operation` at most `timeout`. Returns its value, or nothing when the timeout came
// first. The operation is not abandoned: if it completes after the timeout, its value goes to
// `on_late` (when given), so late truth is never dropped on the floor. An operation that never
// completes simply stays suspended.
//
// REQUIRES: `timer` outlives the wait; `on_late` owns (or outlives) whatever it uses.
template <typename T>
Async<std::optional<T>> with_deadline(Async<T> operation, Timer& timer, Duration timeout,
                                      LateHandler<T> on_late = {}) {
  auto race = std::make_shared<detail::Race<T>>();
  auto executor = co_await boost::asio::this_coro::executor;
  boost::asio::co_spawn(executor,
                        detail::race_operation<T>(std::move(operation), race, std::move(on_late)),
                        rethrow_error);
  boost::asio::co_spawn(executor, detail::race_timer<T>(timer, timeout, race), rethrow_error);
  co_await race->settled.wait();
  co_return std::move(race->value);
}

}  // namespace onejob
