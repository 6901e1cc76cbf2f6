#pragma once

#include <utility>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "system/domain/check.hpp"

namespace onejob {

using EventValue = std::variant<std::int64_t, bool, std::string>;

// One fact the system reports about itself: a request, a response, a state change. Field order is
// the order of with() calls, so a recorded history is byte-for-byte reproducible.
// Names (event kinds and field names) are interned: each distinct name is stored once for the
// life of the process and an event holds a pointer to it, so a history of millions of events
// does not hold millions of copies of "attempt_id". Interning is thread-safe.
const std::string& intern_name(std::string_view name);
// The same table by number: a field holds its name's 4-byte id.
std::uint32_t intern_id(std::string_view name);
const std::string& interned(std::uint32_t id);
// The id of a name intern_name returned. REQUIRES: `name` is intern_name's string (compared by
// address, so a lookup of an interned name compares no bytes).
std::uint32_t id_of_interned(const std::string& name);

class Event {
 public:
  // A field as stored, in 16 bytes: its interned name (by id), its type and its value. A
  // string's bytes live in the event's one block after the fields (`number` is their offset
  // among the strings).
  struct Field {
    enum class Type : std::uint8_t { integer, boolean, string };
    std::uint32_t name_id;
    std::uint32_t length : 30;  // a string's bytes; 0 otherwise
    std::uint32_t type_bits : 2;
    std::int64_t number;

    const std::string& name() const;
    Type type() const { return static_cast<Type>(type_bits); }
    friend bool operator==(const Field&, const Field&) = default;
  };

  explicit Event(std::string_view kind) : kind_(&intern_name(kind)) {}
  // A kind already interned: REQUIRES `kind` is intern_name's string for it.
  struct InternedKind {
    const std::string* kind;
  };
  explicit Event(InternedKind kind) : kind_(kind.kind) {}
  Event(const Event& other);
  Event(Event&& other) noexcept;
  Event& operator=(const Event& other);
  Event& operator=(Event&& other) noexcept;
  ~Event();

  Event& with(std::string_view name, std::int64_t value);
  Event& with(std::string_view name, bool value);
  Event& with(std::string_view name, std::string_view value);
  Event& with(std::string_view name, const char* value) {
    return with(name, std::string_view(value));
  }
  Event& with(std::string_view name, int value) { return with(name, std::int64_t{value}); }
  // The same, by a name already interned (intern_id): for writers that intern their names once.
  struct NameId {
    std::uint32_t id;
  };
  Event& with(NameId name, std::int64_t value);
  Event& with(NameId name, bool value);
  Event& with(NameId name, std::string_view value);
  // Room for this many fields and string bytes, so building the event reallocates nothing.
  void reserve(std::size_t fields, std::size_t string_bytes = 0);
  // Gives back any spare room: what a history keeps is exactly the event's size.
  void shrink_to_fit();
  // Rebuilds the event in place, keeping its room when it is big enough: kind `kind`, `count`
  // fields and `string_bytes` bytes of strings, all written by `fill(Field*, char*)` (the fields
  // as fields() gives them: a string field's `number` is its bytes' offset among the strings, 0
  // when it is empty). For a reader that stored an event's parts and gives them back whole.
  // REQUIRES: every string field `fill` writes lies within the strings.
  template <typename Fill>
  void rebuild(InternedKind kind, std::size_t count, std::size_t string_bytes, Fill&& fill) {
    kind_ = kind.kind;
    count_ = 0;
    string_size_ = 0;
    reserve(count, string_bytes);
    fill(field_data(), string_data());
    count_ = static_cast<std::uint16_t>(count);
    string_size_ = static_cast<std::uint32_t>(string_bytes);
    ONEJOB_ASSERT(strings_within(), "Event::rebuild: a string field beyond the strings");
  }

  const std::string& kind() const { return *kind_; }
  std::span<const Field> fields() const { return {field_data(), count_}; }
  // A string field's bytes. REQUIRES: field.type() == Field::Type::string, a field of this event.
  std::string_view text(const Field& field) const {
    ONEJOB_ASSERT(field.type() == Field::Type::string &&
                      static_cast<std::uint64_t>(field.number) + field.length <= string_size_,
                  "Event::text of a string field of this event");
    return {string_data() + field.number, field.length};
  }
  EventValue value(const Field& field) const;

  // The value of a field, or nothing when the field is absent or has another type.
  std::optional<std::int64_t> int_field(std::string_view name) const;
  std::optional<std::string> string_field(std::string_view name) const;
  std::optional<bool> bool_field(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }
  // The field named by interned id `name_id` (intern_id), or nothing: a lookup without
  // comparing names, for readers that intern their names once.
  const Field* find_id(std::uint32_t name_id) const {
    for (const auto& field : fields()) {
      if (field.name_id == name_id) return &field;
    }
    return nullptr;
  }

  friend bool operator==(const Event& a, const Event& b);

 private:
  const Field* find(std::string_view name) const;
  // Whether every string field lies within the event's strings.
  bool strings_within() const {
    for (const auto& field : fields()) {
      if (field.type() == Field::Type::string &&
          static_cast<std::uint64_t>(field.number) + field.length > string_size_) {
        return false;
      }
    }
    return true;
  }
  Field* field_data() const { return reinterpret_cast<Field*>(block_); }
  char* string_data() const { return block_ + std::size_t{field_capacity_} * sizeof(Field); }
  void push(Field field, std::string_view bytes = {});
  // Moves to a block of exactly these capacities, keeping the fields and strings.
  void reallocate(std::uint32_t fields, std::uint32_t string_bytes);

  const std::string* kind_;
  // One block: field_capacity_ fields, then string_capacity_ bytes of strings.
  char* block_ = nullptr;
  std::uint32_t string_size_ = 0;
  std::uint32_t string_capacity_ = 0;
  std::uint16_t count_ = 0;
  std::uint16_t field_capacity_ = 0;
};

// An event's fields in order, as events::detail::FieldReader walks them.
inline std::span<const Event::Field> field_span(const Event& event) { return event.fields(); }

// Where the system reports its events. The harness records them as the run's history; a
// production deployment would ship them to a log.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void emit(Event event) = 0;
};

}  // namespace onejob
