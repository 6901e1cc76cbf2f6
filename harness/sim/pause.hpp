#pragma once

#include <algorithm>

#include "system/ports/timer.hpp"

#include "harness/sim/sim_loop.hpp"

namespace onejob::sim {

// One node incarnation's pause switch. A paused node runs nothing: every place its code would
// resume (a timer, a store reply, a provider reply, a request reaching it) passes this gate
// first, and waits there until the pause is over. Its state is untouched: it goes on as the
// same incarnation, acting on what it knew before (the zombie writer).
class PauseGate {
 public:
  explicit PauseGate(SimLoop& loop) : loop_(loop) {}

  void pause_until(Instant until) { until_ = std::max(until_, until); }
  bool paused() const { return loop_.now() < until_; }

  // Completes at once when the node runs, else when its pause is over.
  Async<void> pass() {
    while (loop_.now() < until_) co_await loop_.sleep_for(until_ - loop_.now());
  }

 private:
  SimLoop& loop_;
  Instant until_{};
};

// The node's timer: the loop's, through the node's pause gate.
class GatedTimer final : public Timer {
 public:
  GatedTimer(SimLoop& loop, PauseGate& gate) : loop_(loop), gate_(gate) {}
  Async<void> sleep_for(Duration delay) override {
    co_await loop_.sleep_for(delay);
    if (gate_.paused()) co_await gate_.pass();
  }

 private:
  SimLoop& loop_;
  PauseGate& gate_;
};

}  // namespace onejob::sim
