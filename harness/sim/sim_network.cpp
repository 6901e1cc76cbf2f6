#include "harness/sim/sim_network.hpp"

#include <algorithm>

#include "system/domain/check.hpp"

#include "harness/events/world_events.hpp"

namespace onejob::sim {

const char* to_string(Direction direction) {
  return direction == Direction::request ? "request" : "response";
}

SimLink::SimLink(std::string name, LinkSpec spec, Rng rng, SimLoop& loop, Trace& trace)
    : name_(std::move(name)), spec_(spec), rng_(rng), loop_(loop), trace_(trace) {}

void SimLink::add_partition(const PartitionWindow& partition) {
  ONEJOB_ASSERT(partition.from < partition.until,
                name_ + ": a partition window ends after it starts");
  partitions_.push_back(partition);
}

Duration SimLink::latency() {
  ONEJOB_ASSERT(Duration(0) <= spec_.latency.min && spec_.latency.min <= spec_.latency.max,
                name_ + ": a latency range from 0 up (the loader checks it)");
  return Duration(rng_.between(spec_.latency.min.count(), spec_.latency.max.count()));
}

bool SimLink::chance(Ppm ppm) {
  ONEJOB_ASSERT(ppm <= kPpmOne, name_ + ": a probability above 100%");
  if (ppm == 0) return false;  // no draw: a fault kind that is off leaves the stream untouched
  return rng_.below(kPpmOne) < ppm;
}

bool SimLink::partitioned(Direction direction, const std::string& from,
                          const std::string& to) const {
  using D = PartitionDirection;
  const Instant now = loop_.now();
  for (const auto& partition : partitions_) {
    if (now < Instant(partition.from) || now >= Instant(partition.until)) continue;
    if (partition.direction == D::requests && direction != Direction::request) continue;
    if (partition.direction == D::responses && direction != Direction::response) continue;
    const auto& nodes = partition.nodes;
    if (std::ranges::find(nodes, from) != nodes.end() ||
        std::ranges::find(nodes, to) != nodes.end()) {
      return true;
    }
  }
  return false;
}

void SimLink::record_fault(events::InjectedFault fault, Direction direction,
                           const std::string& from, const std::string& to,
                           const std::string& what) {
  trace_.record(
      name_,
      events::to_event(events::NetFault{.fault = std::string(events::injected_fault(fault).net),
                                        .direction = to_string(direction),
                                        .from = from,
                                        .to = to,
                                        .message = what}),
      /*injected=*/true);
}

bool SimLink::reset(const std::string& from, const std::string& to, const std::string& what) {
  if (!chance(spec_.reset)) return false;
  record_fault(events::InjectedFault::reset, Direction::response, to, from, what);
  return true;
}

void SimLink::heal() {
  for (const auto& fault : kFaultRates) spec_.*fault.rate = 0;
  partitions_.clear();
}

void SimLink::send(Direction direction, const std::string& from, const std::string& to,
                   const std::string& what, std::function<void()> deliver) {
  if (partitioned(direction, from, to)) {
    record_fault(events::InjectedFault::partition, direction, from, to, what);
    return;
  }
  const bool drop =
      chance(direction == Direction::request ? spec_.drop_request : spec_.drop_response);
  if (drop) {
    record_fault(direction == Direction::request ? events::InjectedFault::drop_request
                                                 : events::InjectedFault::drop_response,
                 direction, from, to, what);
    return;
  }
  Duration delay = latency();
  if (chance(spec_.reorder)) {
    delay += Duration(rng_.between(0, spec_.reorder_window.count()));
    record_fault(events::InjectedFault::delay, direction, from, to, what);
  }
  // The duplicate is drawn before the first delivery is queued (no draw of this link's comes in
  // between, and queueing draws from the loop's own stream), so `deliver` is copied only for a
  // duplicate.
  if (!chance(spec_.duplicate)) {
    loop_.schedule_after(delay, std::move(deliver));
    return;
  }
  record_fault(events::InjectedFault::duplicate, direction, from, to, what);
  loop_.schedule_after(delay, deliver);
  loop_.schedule_after(latency(), std::move(deliver));
}

}  // namespace onejob::sim
