#pragma once

#include <utility>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "system/domain/check.hpp"
#include "system/events/schema.hpp"

#include "harness/sim/packed_history.hpp"

namespace onejob::check {

// Whether an event read in place is of T's kind (as events::is), its bytes not read.
template <events::EventType T>
bool is_kind(const sim::PackedEvent& event) {
  return event.kind == &events::kind_name<T>();
}

// The typed event read in place, its strings copied straight from the history's bytes without
// unpacking the event first; nothing when it is of another kind or lacks a required field (as
// events::from_event).
template <events::EventType T>
std::optional<T> from_packed(const sim::PackedEvent& event) {
  if (!is_kind<T>(event)) return std::nullopt;
  return events::detail::read_event<T>(event);
}

// Visits `history` in order by kind: an event whose interned kind id `wanted(id)` accepts is read
// in place and handed to `read(id, event)`; any other goes to `skipped(index)`, its bytes not
// read.
template <typename Wanted, typename Read, typename Skipped>
void visit_by_kind(const sim::History& history, Wanted wanted, Read read, Skipped skipped) {
  sim::PackedEvent current;
  for (std::size_t index = 0; index < history.size(); ++index) {
    const std::uint32_t kind = history.kind_id(index);
    if (!wanted(kind)) {
      skipped(index);
      continue;
    }
    history.read(index, current);
    read(kind, static_cast<const sim::PackedEvent&>(current));
  }
}

// A pass over a history by kind: one handler per event type, in one table, so the kinds a pass
// reads and the handlers it runs cannot drift apart. An event whose kind no handler takes is
// skipped without reading its bytes; one a handler takes is read in place once and typed once (an
// event of that kind lacking a required field is skipped, as from_event says).
class EventSwitch {
 public:
  // `handle(T&&, const sim::PackedEvent&)` for every event of T's kind.
  template <events::EventType T, typename Handle>
  EventSwitch& on(Handle handle) {
    slot(events::kind_name<T>()) = [handle = std::move(handle)](const sim::PackedEvent& recorded) {
      if (auto typed = from_packed<T>(recorded)) handle(std::move(*typed), recorded);
    };
    return *this;
  }
  // `handle(const sim::PackedEvent&)` for every event of T's kind, its fields not typed.
  template <events::EventType T, typename Handle>
  EventSwitch& on_kind(Handle handle) {
    slot(events::kind_name<T>()) = std::move(handle);
    return *this;
  }

  // Runs the handlers over `history`, in order.
  void run(const sim::History& history) const {
    visit_by_kind(
        history, [this](std::uint32_t kind) { return kind < handlers_.size() && handlers_[kind]; },
        [this](std::uint32_t kind, const sim::PackedEvent& event) { handlers_[kind](event); },
        [](std::size_t) {});
  }

 private:
  using Handler = std::function<void(const sim::PackedEvent&)>;
  Handler& slot(const std::string& kind) {
    const std::uint32_t id = id_of_interned(kind);
    if (id >= handlers_.size()) handlers_.resize(id + 1);
    ONEJOB_ASSERT(!handlers_[id], "two handlers for " + kind + " in one pass");
    return handlers_[id];
  }
  std::vector<Handler> handlers_;  // by interned kind id
};

}  // namespace onejob::check
