#pragma once

#include <string>
#include <vector>

#include "system/ports/clock.hpp"
#include "system/ports/event_sink.hpp"

namespace onejob::test {

// Keeps every event the system emits, for assertions.
class RecordingSink final : public EventSink {
 public:
  void emit(Event event) override { events.push_back(std::move(event)); }
  std::vector<Event> events;
};

// A clock that only moves when told to.
class ManualClock final : public Clock {
 public:
  Instant now() const override { return now_; }
  void advance(Duration by) { now_ += by; }

 private:
  Instant now_{};
};

}  // namespace onejob::test
