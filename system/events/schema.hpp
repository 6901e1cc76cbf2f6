#pragma once

#include <utility>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "system/domain/attempt.hpp"
#include "system/domain/time.hpp"
#include "system/ports/event_sink.hpp"

namespace onejob::events {

// Typed events. Each event type is a struct with
//   static constexpr std::string_view kind = "family.name";
//   template <typename Self, typename F> static void fields(Self& self, F&& field) {
//     field("job_id", self.job_id); ...
//   }
// `fields` lists every member once, with its wire name, in trace order; it serves both
// directions (to_event writes through it, from_event reads through it), so a field name is spelled
// in exactly one place. Members are std::int64_t, int, bool, std::string, Instant (microseconds),
// AttemptState, AttemptOrigin, or std::optional of one of those (absent from the event when empty).
template <typename T>
concept EventType = requires {
  { T::kind } -> std::convertible_to<std::string_view>;
};

namespace detail {

// The interned ids of T's field names, in fields() order, and T's interned kind: found once
// per type, so reading an event compares numbers and pointers instead of names.
struct FieldNameIds {
  std::vector<std::uint32_t> ids;
  template <typename V>
  void operator()(std::string_view name, const V& /*value*/) {
    const std::uint32_t id = intern_id(name);
    // FieldReader's cursor relies on it: a name matched once is never asked for again.
    ONEJOB_ASSERT(std::find(ids.begin(), ids.end(), id) == ids.end(),
                  "an event type names each of its fields once");
    ids.push_back(id);
  }
};

template <EventType T>
const std::vector<std::uint32_t>& field_name_ids() {
  static const std::vector<std::uint32_t> ids = [] {
    FieldNameIds names;
    const T value{};
    T::fields(value, names);
    return std::move(names.ids);
  }();
  return ids;
}

template <EventType T>
const std::string* interned_kind() {
  static const std::string* const kind = &intern_name(T::kind);
  return kind;
}

// Writes T's fields in fields() order; `ids` are their interned names in that order.
class FieldWriter {
 public:
  FieldWriter(Event& event, const std::vector<std::uint32_t>& ids) : event_(event), ids_(ids) {}

  template <typename V>
  void operator()(std::string_view /*name*/, const V& value) {
    ONEJOB_ASSERT(next_ < ids_.size(), "an event type lists its fields in one order");
    write(Event::NameId{ids_[next_++]}, value);
  }

 private:
  void write(Event::NameId name, std::int64_t value) { event_.with(name, value); }
  void write(Event::NameId name, int value) { event_.with(name, std::int64_t{value}); }
  void write(Event::NameId name, bool value) { event_.with(name, value); }
  void write(Event::NameId name, const std::string& value) {
    event_.with(name, std::string_view(value));
  }
  void write(Event::NameId name, Instant value) {
    event_.with(name, std::int64_t{value.time_since_epoch().count()});
  }
  void write(Event::NameId name, AttemptState value) { event_.with(name, to_string(value)); }
  void write(Event::NameId name, AttemptOrigin value) { event_.with(name, to_string(value)); }
  template <typename V>
  void write(Event::NameId name, const std::optional<V>& value) {
    if (value) write(name, *value);
  }

  Event& event_;
  const std::vector<std::uint32_t>& ids_;
  std::size_t next_ = 0;
};

// What FieldWriter will write: the fields present and their string bytes, so the event is
// allocated once, at its exact size.
struct FieldSizer {
  std::size_t fields = 0;
  std::size_t string_bytes = 0;

  void operator()(std::string_view, const std::string& value) { add(value.size()); }
  void operator()(std::string_view, AttemptState value) { add(to_string(value).size()); }
  void operator()(std::string_view, AttemptOrigin value) { add(to_string(value).size()); }
  template <typename V>
  void operator()(std::string_view name, const std::optional<V>& value) {
    if (value) (*this)(name, *value);
  }
  template <typename V>
  void operator()(std::string_view, const V&) {
    add(0);
  }

 private:
  void add(std::size_t bytes) {
    ++fields;
    string_bytes += bytes;
  }
};

// Reads T's fields in fields() order; `ids` are their interned names in that order. `Source` is
// an Event, or anything that lists its fields in order (field_span, found by argument-dependent
// lookup) and gives a string field's bytes (text) as an Event does.
template <typename Source = Event>
class FieldReader {
 public:
  FieldReader(const Source& event, const std::vector<std::uint32_t>& ids)
      : event_(event), ids_(ids) {}
  bool ok() const { return ok_; }

  template <typename V>
  void operator()(std::string_view /*name*/, V& value) {
    ONEJOB_ASSERT(next_ < ids_.size(), "an event type lists its fields in one order");
    read(find(ids_[next_++]), value);
  }

 private:
  using Type = Event::Field::Type;
  using Field = Event::Field;

  // The first field named `id`. The fields before the cursor each matched an earlier name of T,
  // never `id` (T names each field once), so only the fields from the cursor on are searched. An
  // event written from T lists T's fields in T's order (an absent optional left out): the field
  // at the cursor is then the one asked for, and the cursor moves past it.
  const Field* find(std::uint32_t id) {
    const std::span<const Field> all = field_span(event_);
    for (std::size_t at = cursor_; at < all.size(); ++at) {
      if (all[at].name_id != id) continue;
      if (at == cursor_) ++cursor_;
      return &all[at];
    }
    return nullptr;
  }
  // `found` when it is of `type`; else the event is not T's (ok() turns false).
  const Field* typed(const Field* found, Type type) {
    if (found == nullptr || found->type() != type) {
      ok_ = false;
      return nullptr;
    }
    return found;
  }
  void read(const Field* found, std::int64_t& value) {
    if (typed(found, Type::integer) != nullptr) value = found->number;
  }
  void read(const Field* found, int& value) {
    if (typed(found, Type::integer) != nullptr) value = static_cast<int>(found->number);
  }
  void read(const Field* found, bool& value) {
    if (typed(found, Type::boolean) != nullptr) value = found->number != 0;
  }
  void read(const Field* found, std::string& value) {
    if (typed(found, Type::string) != nullptr) value = event_.text(*found);
  }
  void read(const Field* found, Instant& value) {
    if (typed(found, Type::integer) != nullptr) value = Instant(Duration(found->number));
  }
  void read(const Field* found, AttemptState& value) {
    read_parsed(found, value, parse_attempt_state);
  }
  void read(const Field* found, AttemptOrigin& value) {
    read_parsed(found, value, parse_attempt_origin);
  }
  template <typename V>
  void read(const Field* found, std::optional<V>& value) {
    if (found == nullptr) {
      value.reset();
      return;
    }
    V inner{};
    read(found, inner);
    value = std::move(inner);
  }
  template <typename V, typename Parse>
  void read_parsed(const Field* found, V& value, Parse parse_text) {
    if (typed(found, Type::string) == nullptr) return;
    if (auto parsed = parse_text(event_.text(*found))) {
      value = *parsed;
    } else {
      ok_ = false;
    }
  }

  const Source& event_;
  const std::vector<std::uint32_t>& ids_;
  std::size_t next_ = 0;
  std::size_t cursor_ = 0;  // the event's fields before it matched T's, in order
  bool ok_ = true;
};

}  // namespace detail

template <EventType T>
Event to_event(const T& value) {
  Event event{Event::InternedKind{detail::interned_kind<T>()}};
  detail::FieldSizer size;
  T::fields(value, size);
  event.reserve(size.fields, size.string_bytes);
  T::fields(value, detail::FieldWriter(event, detail::field_name_ids<T>()));
  return event;
}

// T's kind as interned: the string Event::kind() returns, by address, for an event of T.
template <EventType T>
const std::string& kind_name() {
  return *detail::interned_kind<T>();
}

// Whether `event` is of T's kind (compared as interned names: one pointer comparison).
template <EventType T>
bool is(const Event& event) {
  return &event.kind() == detail::interned_kind<T>();
}

namespace detail {

// from_event's reading, kept out of line: a reader tries an event against many types in turn,
// and the kind comparison that turns most of them away is then inlined where it is made.
template <EventType T, typename Source = Event>
[[gnu::noinline]] std::optional<T> read_event(const Source& event) {
  T value{};
  FieldReader<Source> reader(event, field_name_ids<T>());
  T::fields(value, reader);
  if (!reader.ok()) return std::nullopt;
  return value;
}

}  // namespace detail

// The typed event, or nothing when `event` is of another kind or lacks a required field.
template <EventType T>
[[gnu::always_inline]] inline std::optional<T> from_event(const Event& event) {
  if (!is<T>(event)) return std::nullopt;
  return detail::read_event<T>(event);
}

// The job an event concerns, for every event type that names one.
inline std::optional<std::int64_t> job_of(const Event& event) { return event.int_field("job_id"); }

template <EventType T>
void emit(EventSink& sink, const T& value) {
  sink.emit(to_event(value));
}

}  // namespace onejob::events
