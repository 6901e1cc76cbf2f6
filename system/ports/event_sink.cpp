#include "system/ports/event_sink.hpp"

namespace onejob {

Event& Event::with(std::string name, std::int64_t value) {
  fields_.emplace_back(std::move(name), value);
  return *this;
}

Event& Event::with(std::string name, bool value) {
  fields_.emplace_back(std::move(name), value);
  return *this;
}

Event& Event::with(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
  return *this;
}

const EventValue* Event::find(std::string_view name) const {
  for (const auto& [field_name, value] : fields_) {
    if (field_name == name) return &value;
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
