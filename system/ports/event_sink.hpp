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
// Names (event kinds and field names) are interned: each distinct name is stored once for the
// life of the process and an event holds a pointer to it, so a history of millions of events
// does not hold millions of copies of "attempt_id". Interning is thread-safe.
const std::string& intern_name(std::string_view name);

struct EventField {
  const std::string* name;  // interned
  EventValue value;
  friend bool operator==(const EventField&, const EventField&) = default;
};

class Event {
 public:
  explicit Event(std::string_view kind) : kind_(&intern_name(kind)) {}

  Event& with(std::string_view name, std::int64_t value);
  Event& with(std::string_view name, bool value);
  Event& with(std::string_view name, std::string value);
  Event& with(std::string_view name, const char* value) { return with(name, std::string(value)); }
  Event& with(std::string_view name, int value) { return with(name, std::int64_t{value}); }
  // Room for this many fields, so a history holds no spare capacity.
  void reserve(std::size_t fields) { fields_.reserve(fields); }

  const std::string& kind() const { return *kind_; }
  const std::vector<EventField>& fields() const { return fields_; }

  // The value of a field, or nothing when the field is absent or has another type.
  std::optional<std::int64_t> int_field(std::string_view name) const;
  std::optional<std::string> string_field(std::string_view name) const;
  std::optional<bool> bool_field(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }

 private:
  const EventValue* find(std::string_view name) const;

  const std::string* kind_;
  std::vector<EventField> fields_;
};

// Where the system reports its events. The harness records them as the run's history; a
// production deployment would ship them to a log.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void emit(Event event) = 0;
};

}  // namespace onejob
