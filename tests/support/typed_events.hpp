#pragma once

#include <string_view>
#include <vector>

#include "system/events/schema.hpp"

#include "harness/events/world_events.hpp"
#include "harness/sim/trace.hpp"

namespace onejob::test {

// One typed event of a recorded history, with where and when it happened.
template <typename T>
struct Recorded {
  T what;
  std::uint64_t seq = 0;
  Instant at{};
  std::string node;
  bool injected = false;
};

// Every event of type T in `history`, in order.
template <events::EventType T>
std::vector<Recorded<T>> events_of(const sim::History& history) {
  std::vector<Recorded<T>> found;
  for (const auto& e : history) {
    if (auto typed = events::from_event<T>(e.event)) {
      found.push_back({std::move(*typed), e.seq, e.at, e.node, e.injected});
    }
  }
  return found;
}

// The injected network faults of one kind (drop, delay, duplicate, partitioned).
inline std::vector<Recorded<events::NetFault>> net_faults(const sim::History& history,
                                                          std::string_view fault) {
  auto all = events_of<events::NetFault>(history);
  std::erase_if(all, [fault](const auto& e) { return e.what.fault != fault; });
  return all;
}

// Every event of type T the system emitted into a list of events.
template <events::EventType T>
std::vector<T> typed(const std::vector<Event>& emitted) {
  std::vector<T> found;
  for (const auto& e : emitted) {
    if (auto typed_event = events::from_event<T>(e)) found.push_back(std::move(*typed_event));
  }
  return found;
}

}  // namespace onejob::test
