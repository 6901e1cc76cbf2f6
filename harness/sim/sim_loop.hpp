#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "system/ports/async.hpp"
#include "system/ports/clock.hpp"
#include "system/ports/timer.hpp"
#include "system/ports/unique_function.hpp"

#include "harness/sim/rng.hpp"

namespace boost::asio {
class io_context;
}

namespace onejob::sim {

// The simulator's clock and run loop (FoundationDB's model): it keeps its own queue of
// (instant, tie-break, handler), runs everything that is ready with io_context::poll(), and when
// nothing is ready jumps the clock to the next queued instant and calls its handler. Time never
// passes otherwise, so an hour of simulated time costs only the work done in it.
//
// Handlers due at the same instant run in an order drawn from the seeded RNG: different seeds
// explore different interleavings, the same seed always the same one.
//
// Single-threaded: every method must be called from the thread that calls run().
class SimLoop final : public Clock, public Timer {
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
  Async<void> sleep_for(Duration delay) override;

  // Destroys everything queued or ready, coroutine frames included, now rather than in the
  // destructor: owners call it while the objects those frames point to are still alive.
  void shutdown();

  // The io_context that runs ready work; co_spawn onto it.
  boost::asio::io_context& io();

  // Runs until nothing is queued or ready, or until the next queued instant is after `until`
  // (the clock then stays at the last instant run). Returns the number of queued handlers run.
  // Exceptions thrown by handlers propagate out of run().
  std::uint64_t run(Instant until = Instant::max());

  // run(until), then lets simulated time reach `until` even if nothing happens on the way.
  void advance_to(Instant until) {
    run(until);
    if (now_ < until) now_ = until;
  }
  void advance(Duration by) { advance_to(now_ + by); }

  std::size_t pending() const { return queue_.size() + preset_.size(); }
  // Handlers the io_context has run so far: the loop's events (timers, messages, coroutine
  // resumptions), the unit its speed is measured in.
  std::uint64_t handled() const { return handled_; }
  // The instant of the earliest queued handler, if any.
  std::optional<Instant> next_instant() const {
    const Entry* next = earliest();
    if (next == nullptr) return std::nullopt;
    return next->at;
  }

 private:
  // The heap holds small entries; their handlers stay put in slots_, so that reordering the
  // heap moves 32 bytes at a time and never a handler.
  struct Entry {
    Instant at;
    std::uint64_t tie;
    std::uint64_t seq;
    std::size_t slot;  // in slots_
  };
  // The heap's order, as a type so that the heap's algorithms inline it.
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const;
  };

  // The earliest queued entry (of the heap's and the preset's), or null.
  const Entry* earliest() const;
  // Takes the earliest queued entry. REQUIRES: something is queued.
  Entry take_earliest();

  struct Io;
  std::unique_ptr<Io> io_;
  Rng tie_breaker_;
  Instant now_{};
  std::uint64_t next_seq_ = 0;
  std::uint64_t handled_ = 0;
  std::vector<Entry> queue_;  // a four-ary min-heap on (at, tie, seq)
  // What is queued before the loop first runs (a scenario's whole timetable: every request's
  // send, every fault), sorted once, latest first, and taken from the back. A load queues its
  // hundred thousand sends up front; in the heap they would make every later push and pop walk
  // seventeen levels of memory, where the work actually in flight is a few thousand entries.
  // Both hold entries of one order (at, tie, seq; seq is unique), so taking the earlier of the
  // two fronts runs handlers in exactly the order one heap would.
  std::vector<Entry> preset_;
  bool started_ = false;  // run() was called: preset_ is sorted and takes no more entries
  std::deque<UniqueFunction> slots_;
  std::vector<std::size_t> free_slots_;
};

}  // namespace onejob::sim
