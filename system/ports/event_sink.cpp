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
  fields_.push_back(Field{&intern_name(name), value, 0, Field::Type::integer});
  return *this;
}

Event& Event::with(std::string_view name, bool value) {
  fields_.push_back(Field{&intern_name(name), value ? 1 : 0, 0, Field::Type::boolean});
  return *this;
}

Event& Event::with(std::string_view name, std::string_view value) {
  fields_.push_back(Field{&intern_name(name), static_cast<std::int64_t>(strings_.size()),
                          static_cast<std::uint32_t>(value.size()), Field::Type::string});
  strings_.append(value);
  return *this;
}

EventValue Event::value(const Field& field) const {
  switch (field.type) {
    case Field::Type::integer:
      return field.number;
    case Field::Type::boolean:
      return field.number != 0;
    case Field::Type::string:
      break;
  }
  return std::string(text(field));
}

const Event::Field* Event::find(std::string_view name) const {
  for (const auto& field : fields_) {
    if (*field.name == name) return &field;
  }
  return nullptr;
}

std::optional<std::int64_t> Event::int_field(std::string_view name) const {
  const Field* field = find(name);
  if (field == nullptr || field->type != Field::Type::integer) return std::nullopt;
  return field->number;
}

std::optional<std::string> Event::string_field(std::string_view name) const {
  const Field* field = find(name);
  if (field == nullptr || field->type != Field::Type::string) return std::nullopt;
  return std::string(text(*field));
}

std::optional<bool> Event::bool_field(std::string_view name) const {
  const Field* field = find(name);
  if (field == nullptr || field->type != Field::Type::boolean) return std::nullopt;
  return field->number != 0;
}

}  // namespace onejob
