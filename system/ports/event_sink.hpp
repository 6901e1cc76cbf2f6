#pragma once

#include <utility>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace onejob {

using EventValue = std::variant<std::int64_t, bool, std::string>;

// One fact the system reports about itself: a request, a response, a state change. Field order is
// the order of with() calls, so a recorded history is byte-for-byte reproducible.
class Event {
 public:
  explicit Event(std::string kind) : kind_(std::move(kind)) {}

  Event& with(std::string name, std::int64_t value);
  Event& with(std::string name, bool value);
  Event& with(std::string name, std::string value);
  Event& with(std::string name, const char* value) {
    return with(std::move(name), std::string(value));
  }
  Event& with(std::string name, int value) { return with(std::move(name), std::int64_t{value}); }

  const std::string& kind() const { return kind_; }
  const std::vector<std::pair<std::string, EventValue>>& fields() const { return fields_; }

  // The value of a field, or nothing when the field is absent or has another type.
  std::optional<std::int64_t> int_field(std::string_view name) const;
  std::optional<std::string> string_field(std::string_view name) const;
  std::optional<bool> bool_field(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }

 private:
  const EventValue* find(std::string_view name) const;

  std::string kind_;
  std::vector<std::pair<std::string, EventValue>> fields_;
};

// Where the system reports its events. The harness records them as the run's history; a
// production deployment would ship them to a log.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void emit(Event event) = 0;
};

}  // namespace onejob
