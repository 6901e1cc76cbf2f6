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

class Event {
 public:
  // A field as stored: its interned name and its typed value. A string's bytes live in the
  // event's one buffer (`number` is their offset there), so a field is 24 bytes and an event
  // makes two allocations whatever its strings.
  struct Field {
    enum class Type : std::uint8_t { integer, boolean, string };
    const std::string* name;
    std::int64_t number;
    std::uint32_t length;
    Type type;
    friend bool operator==(const Field&, const Field&) = default;
  };

  explicit Event(std::string_view kind) : kind_(&intern_name(kind)) {}

  Event& with(std::string_view name, std::int64_t value);
  Event& with(std::string_view name, bool value);
  Event& with(std::string_view name, std::string_view value);
  Event& with(std::string_view name, const std::string& value) {
    return with(name, std::string_view(value));
  }
  Event& with(std::string_view name, const char* value) {
    return with(name, std::string_view(value));
  }
  Event& with(std::string_view name, int value) { return with(name, std::int64_t{value}); }
  // Room for this many fields, so a history holds no spare capacity.
  void reserve(std::size_t fields) { fields_.reserve(fields); }

  const std::string& kind() const { return *kind_; }
  const std::vector<Field>& fields() const { return fields_; }
  // A string field's bytes. REQUIRES: field.type == Field::Type::string, a field of this event.
  std::string_view text(const Field& field) const {
    return std::string_view(strings_).substr(static_cast<std::size_t>(field.number), field.length);
  }
  EventValue value(const Field& field) const;

  // The value of a field, or nothing when the field is absent or has another type.
  std::optional<std::int64_t> int_field(std::string_view name) const;
  std::optional<std::string> string_field(std::string_view name) const;
  std::optional<bool> bool_field(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }

  friend bool operator==(const Event& a, const Event& b) {
    return a.kind_ == b.kind_ && a.fields_ == b.fields_ && a.strings_ == b.strings_;
  }

 private:
  const Field* find(std::string_view name) const;

  const std::string* kind_;
  std::vector<Field> fields_;
  std::string strings_;
};

// Where the system reports its events. The harness records them as the run's history; a
// production deployment would ship them to a log.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void emit(Event event) = 0;
};

}  // namespace onejob
