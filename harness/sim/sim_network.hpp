#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/events/world_events.hpp"
#include "harness/sim/rng.hpp"
#include "harness/sim/sim_loop.hpp"
#include "harness/sim/sim_spec.hpp"
#include "harness/sim/trace.hpp"

namespace onejob::sim {

enum class Direction { request, response };

// One simulated link (client->lb, lb->api, worker->provider, node->store). Every message gets a
// latency drawn from the link's range and may be dropped, duplicated or held back (reordered),
// with the link's probabilities, or cut by a partition window. Each fault is recorded in the
// trace as injected, so a report tells a fault from a bug.
class SimLink {
 public:
  SimLink(std::string name, LinkSpec spec, Rng rng, SimLoop& loop, Trace& trace);

  void add_partition(const PartitionWindow& partition);
  // Faults heal for good: no more drops, duplicates, reordering, lost commits or partitions;
  // only the link's latency remains.
  void heal();

  // Delivers `deliver` at the far end zero, one or two times. `deliver` must be copyable: a
  // duplicated message is delivered twice.
  void send(Direction direction, const std::string& from, const std::string& to,
            const std::string& what, std::function<void()> deliver);

  // Draws whether the connection resets right after a request from `from` reached `to` (the
  // link's `reset` rate), and records the fault when it does.
  bool reset(const std::string& from, const std::string& to, const std::string& what);

  // Whether a message between these nodes in this direction is cut right now.
  bool partitioned(Direction direction, const std::string& from, const std::string& to) const;

  // The link's latency for one message (no faults).
  Duration latency();
  // Draws a yes/no with probability `ppm` parts per million from this link's stream.
  bool chance(Ppm ppm);

  const std::string& name() const { return name_; }
  const LinkSpec& spec() const { return spec_; }

 private:
  void record_fault(events::InjectedFault fault, Direction direction, const std::string& from,
                    const std::string& to, const std::string& what);

  std::string name_;
  LinkSpec spec_;
  Rng rng_;
  SimLoop& loop_;
  Trace& trace_;
  std::vector<PartitionWindow> partitions_;
};

const char* to_string(Direction direction);

}  // namespace onejob::sim
