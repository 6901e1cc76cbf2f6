#pragma once

#include <utility>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

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

class FieldWriter {
 public:
  explicit FieldWriter(Event& event) : event_(event) {}
  void operator()(std::string_view name, std::int64_t value) { event_.with(name, value); }
  void operator()(std::string_view name, int value) { event_.with(name, value); }
  void operator()(std::string_view name, bool value) { event_.with(name, value); }
  void operator()(std::string_view name, const std::string& value) { event_.with(name, value); }
  void operator()(std::string_view name, Instant value) {
    event_.with(name, std::int64_t{value.time_since_epoch().count()});
  }
  void operator()(std::string_view name, AttemptState value) {
    event_.with(name, to_string(value));
  }
  void operator()(std::string_view name, AttemptOrigin value) {
    event_.with(name, to_string(value));
  }
  template <typename V>
  void operator()(std::string_view name, const std::optional<V>& value) {
    if (value) (*this)(name, *value);
  }

 private:
  Event& event_;
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

class FieldReader {
 public:
  explicit FieldReader(const Event& event) : event_(event) {}
  bool ok() const { return ok_; }

  void operator()(std::string_view name, std::int64_t& value) {
    take(event_.int_field(name), value);
  }
  void operator()(std::string_view name, int& value) {
    std::int64_t wide = 0;
    take(event_.int_field(name), wide);
    value = static_cast<int>(wide);
  }
  void operator()(std::string_view name, bool& value) { take(event_.bool_field(name), value); }
  void operator()(std::string_view name, std::string& value) {
    take(event_.string_field(name), value);
  }
  void operator()(std::string_view name, Instant& value) {
    std::int64_t us = 0;
    take(event_.int_field(name), us);
    value = Instant(Duration(us));
  }
  void operator()(std::string_view name, AttemptState& value) {
    take(parse(event_.string_field(name), parse_attempt_state), value);
  }
  void operator()(std::string_view name, AttemptOrigin& value) {
    take(parse(event_.string_field(name), parse_attempt_origin), value);
  }
  template <typename V>
  void operator()(std::string_view name, std::optional<V>& value) {
    if (!event_.has(name)) {
      value.reset();
      return;
    }
    V inner{};
    (*this)(name, inner);
    value = std::move(inner);
  }

 private:
  template <typename V>
  void take(std::optional<V> found, V& value) {
    if (found) {
      value = std::move(*found);
    } else {
      ok_ = false;
    }
  }
  template <typename Parse>
  static auto parse(const std::optional<std::string>& text, Parse parse_text)
      -> decltype(parse_text(std::string_view{})) {
    if (!text) return std::nullopt;
    return parse_text(*text);
  }

  const Event& event_;
  bool ok_ = true;
};

}  // namespace detail

template <EventType T>
Event to_event(const T& value) {
  Event event{T::kind};
  detail::FieldSizer size;
  T::fields(value, size);
  event.reserve(size.fields, size.string_bytes);
  T::fields(value, detail::FieldWriter(event));
  return event;
}

// The typed event, or nothing when `event` is of another kind or lacks a required field.
template <EventType T>
std::optional<T> from_event(const Event& event) {
  if (event.kind() != T::kind) return std::nullopt;
  T value{};
  detail::FieldReader reader(event);
  T::fields(value, reader);
  if (!reader.ok()) return std::nullopt;
  return value;
}

// The job an event concerns, for every event type that names one.
inline std::optional<std::int64_t> job_of(const Event& event) { return event.int_field("job_id"); }

template <EventType T>
void emit(EventSink& sink, const T& value) {
  sink.emit(to_event(value));
}

}  // namespace onejob::events
