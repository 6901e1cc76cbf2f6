#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "system/ports/work_signal.hpp"
#include "system/service/doorbell.hpp"

#include "harness/sim/pause.hpp"
#include "harness/sim/sim_network.hpp"

namespace onejob::sim {

// One worker's or reconciler's incarnation's WorkSignal: a Doorbell on the loop's time, through
// the node's pause gate (a paused node that is rung resumes only when its pause is over).
class SimWorkSignal final : public WorkSignal {
 public:
  SimWorkSignal(SimLoop& loop, PauseGate& gate) : bell_(loop), gate_(gate) {}
  Async<void> wait(Duration at_most) override {
    co_await bell_.wait(at_most);
    if (gate_.paused()) co_await gate_.pass();
  }
  Doorbell& bell() { return bell_; }

 private:
  Doorbell bell_;
  PauseGate& gate_;
};

// The simulator's WorkBell. A ring travels as a notification over each worker's store
// connection: it reaches, at once, every worker and reconciler incarnation that is listening (up)
// and whose store link is not cut by a partition. A listener cut off listens again when its link
// comes back and looks once, since rings may have been lost meanwhile (reconnected(); a restarted
// worker looks as it starts): so in a run every ring lost to a fault is made good when the fault
// ends, and the idle poll is only the fallback for what the simulator does not model.
class SimWorkBells final : public WorkBell {
 public:
  // REQUIRES: `store_link` outlives the bells.
  explicit SimWorkBells(const SimLink& store_link) : store_link_(store_link) {}

  void ring() override {
    for (auto& listener : listeners_) {
      if (!store_link_.partitioned(Direction::response, listener.node, "store")) {
        listener.signal->bell().ring();
      }
    }
  }
  // The store links of `nodes` came back: each of those workers looks once. Only those: a
  // ring to a worker that was never cut off would hide a write that forgot to ring.
  void reconnected(const std::vector<std::string>& nodes) {
    for (auto& listener : listeners_) {
      if (std::ranges::find(nodes, listener.node) != nodes.end()) listener.signal->bell().ring();
    }
  }
  // The workers whose store link is cut right now (their rings are being lost).
  std::vector<std::string> cut_off() const {
    std::vector<std::string> nodes;
    for (const auto& listener : listeners_) {
      if (store_link_.partitioned(Direction::response, listener.node, "store")) {
        nodes.push_back(listener.node);
      }
    }
    return nodes;
  }
  // REQUIRES: `signal` stays alive until removed. Listeners are rung in the order added.
  void listen(std::string node, SimWorkSignal& signal) {
    listeners_.push_back({std::move(node), &signal});
  }
  void stop_listening(SimWorkSignal& signal) {
    std::erase_if(listeners_, [&](const Listener& l) { return l.signal == &signal; });
  }

 private:
  struct Listener {
    std::string node;
    SimWorkSignal* signal;
  };
  const SimLink& store_link_;
  std::vector<Listener> listeners_;
};

}  // namespace onejob::sim
