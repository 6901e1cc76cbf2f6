#include "system/ports/event_sink.hpp"

#include <cstdint>
#include <functional>
#include <mutex>
#include <set>

namespace onejob {

const std::string& intern_name(std::string_view name) {
  // Most names are string literals, passed again and again from the same address: a small
  // per-thread cache keyed by that address (and checked against the content, so a reused
  // buffer can never return another name) skips the lock and the lookup.
  struct Slot {
    const char* data = nullptr;
    const std::string* interned = nullptr;
  };
  constexpr std::size_t kSlots = 512;
  thread_local Slot cache[kSlots];
  Slot& slot = cache[(reinterpret_cast<std::uintptr_t>(name.data()) >> 3) % kSlots];
  if (slot.data == name.data() && slot.interned != nullptr && *slot.interned == name) {
    return *slot.interned;
  }
  static std::mutex mutex;
  static std::set<std::string, std::less<>> names;  // node-based: an element never moves
  const std::lock_guard lock(mutex);
  auto found = names.find(name);
  if (found == names.end()) found = names.emplace(name).first;
  slot = Slot{name.data(), &*found};
  return *found;
}

Event& Event::with(std::string_view name, std::int64_t value) {
  fields_.push_back(EventField{&intern_name(name), value});
  return *this;
}

Event& Event::with(std::string_view name, bool value) {
  fields_.push_back(EventField{&intern_name(name), value});
  return *this;
}

Event& Event::with(std::string_view name, std::string value) {
  fields_.push_back(EventField{&intern_name(name), std::move(value)});
  return *this;
}

const EventValue* Event::find(std::string_view name) const {
  for (const auto& field : fields_) {
    if (*field.name == name) return &field.value;
  }
  return nullptr;
}

std::optional<std::int64_t> Event::int_field(std::string_view name) const {
  const EventValue* value = find(name);
  if (value == nullptr || !std::holds_alternative<std::int64_t>(*value)) return std::nullopt;
  return std::get<std::int64_t>(*value);
}

std::optional<std::string> Event::string_field(std::string_view name) const {
  const EventValue* value = find(name);
  if (value == nullptr || !std::holds_alternative<std::string>(*value)) return std::nullopt;
  return std::get<std::string>(*value);
}

std::optional<bool> Event::bool_field(std::string_view name) const {
  const EventValue* value = find(name);
  if (value == nullptr || !std::holds_alternative<bool>(*value)) return std::nullopt;
  return std::get<bool>(*value);
}

}  // namespace onejob
