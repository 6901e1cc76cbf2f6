#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "system/ports/async.hpp"
#include "system/ports/clock.hpp"

#include "harness/sim/rng.hpp"
#include "harness/sim/unique_function.hpp"

namespace boost::asio {
class io_context;
}

namespace onejob::sim {

// The simulator's clock and run loop (FoundationDB's model): it keeps its own queue of
// (instant, tie-break, handler), runs everything that is ready with io_context::poll(), and when
// nothing is ready jumps the clock to the next queued instant. Time never passes otherwise, so
// an hour of simulated time costs only the work done in it.
//
// Handlers due at the same instant run in an order drawn from the seeded RNG: different seeds
// explore different interleavings, the same seed always the same one.
//
// Single-threaded: every method must be called from the thread that calls run().
class SimLoop final : public Clock {
 public:
  explicit SimLoop(Rng tie_breaker);
  ~SimLoop() override;
  SimLoop(const SimLoop&) = delete;
  SimLoop& operator=(const SimLoop&) = delete;

  Instant now() const override { return now_; }

  // Queues `handler` to run at `at`. REQUIRES: at >= now().
  void schedule_at(Instant at, UniqueFunction handler);
  void schedule_after(Duration delay, UniqueFunction handler) {
    schedule_at(now_ + delay, std::move(handler));
  }

  // Completes after `delay` of simulated time; an Asio async operation, so coroutines co_await
  // it exactly as they would a steady_timer.
  Async<void> sleep_for(Duration delay);

  // The io_context that runs ready work; co_spawn onto it.
  boost::asio::io_context& io();

  // Runs until nothing is queued or ready, or until the next queued instant is after `until`
  // (the clock then stays at the last instant run). Returns the number of queued handlers run.
  // Exceptions thrown by handlers propagate out of run().
  std::uint64_t run(Instant until = Instant::max());

  std::size_t pending() const { return queue_.size(); }

 private:
  struct Entry {
    Instant at;
    std::uint64_t tie;
    std::uint64_t seq;
    UniqueFunction handler;
  };
  static bool later(const Entry& a, const Entry& b);

  struct Io;
  std::unique_ptr<Io> io_;
  Rng tie_breaker_;
  Instant now_{};
  std::uint64_t next_seq_ = 0;
  std::vector<Entry> queue_;  // a min-heap on (at, tie, seq)
};

}  // namespace onejob::sim
