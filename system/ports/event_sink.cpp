#include "system/ports/event_sink.hpp"

#include <utility>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>

namespace onejob {

namespace {

struct Interned {
  const std::string* name;
  std::uint32_t id;
};

// By id, in chunks allocated as the table grows; an entry is written once, under the table's
// lock, before its id is handed out, and never moves.
constexpr std::size_t kChunk = 4096;
constexpr std::size_t kChunks = 4096;
constexpr std::size_t kMaxNames = kChunk * kChunks;
const std::string** names_by_id[kChunks];
// A field's length has 30 bits; the strings of one event stay within that too.
constexpr std::uint32_t kMaxStringBytes = (1u << 30) - 1;
// The README promises 16-byte fields: a 4-byte name id, 30 bits of length, 2 of type, 8 of value.
static_assert(sizeof(Event::Field) == 16, "an event field is 16 bytes");
static_assert(alignof(Event::Field) == 8);

Interned intern(std::string_view name) {
  // Most names are string literals, passed again and again from the same address: a small
  // per-thread cache keyed by that address (and checked against the content, so a reused
  // buffer can never return another name) skips the lock and the lookup.
  struct Slot {
    const char* data = nullptr;
    Interned interned{nullptr, 0};
  };
  constexpr std::size_t kSlots = 512;
  thread_local Slot cache[kSlots];
  Slot& slot = cache[(reinterpret_cast<std::uintptr_t>(name.data()) >> 3) % kSlots];
  if (slot.data == name.data() && slot.interned.name != nullptr && *slot.interned.name == name) {
    return slot.interned;
  }
  // Names made at run time (a node's name read back from an event) come in ever-new buffers: a
  // second per-thread cache, keyed by the short name's bytes, finds those without the lock too.
  constexpr std::size_t kTextSlots = 256;
  constexpr std::size_t kShortName = 64;
  thread_local Interned by_text[kTextSlots];
  Interned* text_slot = nullptr;
  if (name.size() <= kShortName) {
    text_slot = &by_text[std::hash<std::string_view>{}(name) % kTextSlots];
    if (text_slot->name != nullptr && *text_slot->name == name) {
      slot = Slot{name.data(), *text_slot};
      return *text_slot;
    }
  }
  static std::mutex mutex;
  static std::map<std::string, std::uint32_t, std::less<>> names;  // node-based: never moves
  const std::lock_guard lock(mutex);
  auto found = names.find(name);
  if (found == names.end()) {
    const std::size_t id = names.size();
    if (id == kMaxNames) throw std::length_error("too many distinct event and node names");
    if (names_by_id[id / kChunk] == nullptr)
      names_by_id[id / kChunk] = new const std::string*[kChunk];
    found = names.emplace(name, static_cast<std::uint32_t>(id)).first;
    names_by_id[id / kChunk][id % kChunk] = &found->first;
  }
  slot = Slot{name.data(), Interned{&found->first, found->second}};
  if (text_slot != nullptr) *text_slot = slot.interned;
  return slot.interned;
}

}  // namespace

const std::string& intern_name(std::string_view name) { return *intern(name).name; }
std::uint32_t intern_id(std::string_view name) { return intern(name).id; }
const std::string& interned(std::uint32_t id) { return *names_by_id[id / kChunk][id % kChunk]; }

std::uint32_t id_of_interned(const std::string& name) {
  struct Slot {
    const std::string* name = nullptr;
    std::uint32_t id = 0;
  };
  constexpr std::size_t kSlots = 256;
  thread_local Slot cache[kSlots];
  Slot& slot = cache[(reinterpret_cast<std::uintptr_t>(&name) >> 4) % kSlots];
  if (slot.name != &name) {
    const Interned found = intern(name);
    ONEJOB_ASSERT(found.name == &name, "id_of_interned of a name intern_name did not return");
    slot = Slot{&name, found.id};
  }
  return slot.id;
}

const std::string& Event::Field::name() const { return interned(name_id); }

Event::Event(const Event& other) : kind_(other.kind_) {
  if (other.block_ == nullptr) return;
  reallocate(other.count_, other.string_size_);
  count_ = other.count_;
  string_size_ = other.string_size_;
  std::memcpy(block_, other.block_, std::size_t{count_} * sizeof(Field));
  if (string_size_ > 0) std::memcpy(string_data(), other.string_data(), string_size_);
}

Event::Event(Event&& other) noexcept
    : kind_(other.kind_),
      block_(std::exchange(other.block_, nullptr)),
      string_size_(std::exchange(other.string_size_, 0)),
      string_capacity_(std::exchange(other.string_capacity_, 0)),
      count_(std::exchange(other.count_, 0)),
      field_capacity_(std::exchange(other.field_capacity_, 0)) {}

Event& Event::operator=(const Event& other) {
  if (this != &other) *this = Event(other);
  return *this;
}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    std::free(block_);
    kind_ = other.kind_;
    block_ = std::exchange(other.block_, nullptr);
    string_size_ = std::exchange(other.string_size_, 0);
    string_capacity_ = std::exchange(other.string_capacity_, 0);
    count_ = std::exchange(other.count_, 0);
    field_capacity_ = std::exchange(other.field_capacity_, 0);
  }
  return *this;
}

Event::~Event() { std::free(block_); }

bool operator==(const Event& a, const Event& b) {
  return a.kind_ == b.kind_ && std::ranges::equal(a.fields(), b.fields()) &&
         std::string_view(a.string_data(), a.string_size_) ==
             std::string_view(b.string_data(), b.string_size_);
}

void Event::reallocate(std::uint32_t fields, std::uint32_t string_bytes) {
  const std::size_t size = std::size_t{fields} * sizeof(Field) + string_bytes;
  char* block = static_cast<char*>(std::malloc(size == 0 ? 1 : size));
  if (block == nullptr) throw std::bad_alloc();
  if (block_ != nullptr) {
    if (count_ > 0) std::memcpy(block, block_, std::size_t{count_} * sizeof(Field));
    if (string_size_ > 0) {
      std::memcpy(block + std::size_t{fields} * sizeof(Field), string_data(), string_size_);
    }
    std::free(block_);
  }
  block_ = block;
  field_capacity_ = static_cast<std::uint16_t>(fields);
  string_capacity_ = string_bytes;
}

void Event::reserve(std::size_t fields, std::size_t string_bytes) {
  if (fields > UINT16_MAX || string_bytes > kMaxStringBytes)
    throw std::length_error("event too large");
  if (fields <= field_capacity_ && string_bytes <= string_capacity_ && block_ != nullptr) return;
  reallocate(std::max<std::uint32_t>(field_capacity_, static_cast<std::uint32_t>(fields)),
             std::max(string_capacity_, static_cast<std::uint32_t>(string_bytes)));
}

void Event::shrink_to_fit() {
  if (block_ != nullptr && (count_ < field_capacity_ || string_size_ < string_capacity_)) {
    reallocate(count_, string_size_);
  }
}

void Event::push(Field field, std::string_view bytes) {
  if (count_ == UINT16_MAX || bytes.size() > kMaxStringBytes - string_size_) {
    throw std::length_error("event too large");
  }
  if (count_ == field_capacity_ || bytes.size() > string_capacity_ - string_size_) {
    const std::uint32_t fields = count_ == field_capacity_
                                     ? std::min<std::uint32_t>(UINT16_MAX, count_ * 2u + 4u)
                                     : field_capacity_;
    std::uint32_t strings = string_capacity_;
    if (bytes.size() > string_capacity_ - string_size_) {
      strings = static_cast<std::uint32_t>(std::min<std::uint64_t>(
          kMaxStringBytes, std::max<std::uint64_t>(std::uint64_t{string_size_} + bytes.size(),
                                                   std::uint64_t{string_capacity_} * 2 + 32)));
    }
    reallocate(fields, strings);
  }
  if (!bytes.empty()) {
    std::memcpy(string_data() + string_size_, bytes.data(), bytes.size());
    field.number = string_size_;
    field.length = static_cast<std::uint32_t>(bytes.size());
    string_size_ += static_cast<std::uint32_t>(bytes.size());
  }
  field_data()[count_++] = field;
}

Event& Event::with(NameId name, std::int64_t value) {
  push(Field{name.id, 0, static_cast<std::uint32_t>(Field::Type::integer), value});
  return *this;
}

Event& Event::with(NameId name, bool value) {
  push(Field{name.id, 0, static_cast<std::uint32_t>(Field::Type::boolean), value ? 1 : 0});
  return *this;
}

Event& Event::with(NameId name, std::string_view value) {
  push(Field{name.id, 0, static_cast<std::uint32_t>(Field::Type::string), 0}, value);
  return *this;
}

Event& Event::with(std::string_view name, std::int64_t value) {
  return with(NameId{intern_id(name)}, value);
}

Event& Event::with(std::string_view name, bool value) {
  return with(NameId{intern_id(name)}, value);
}

Event& Event::with(std::string_view name, std::string_view value) {
  return with(NameId{intern_id(name)}, value);
}

EventValue Event::value(const Field& field) const {
  switch (field.type()) {
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
  for (const auto& field : fields()) {
    if (field.name() == name) return &field;
  }
  return nullptr;
}

std::optional<std::int64_t> Event::int_field(std::string_view name) const {
  const Field* field = find(name);
  if (field == nullptr || field->type() != Field::Type::integer) return std::nullopt;
  return field->number;
}

std::optional<std::string> Event::string_field(std::string_view name) const {
  const Field* field = find(name);
  if (field == nullptr || field->type() != Field::Type::string) return std::nullopt;
  return std::string(text(*field));
}

std::optional<bool> Event::bool_field(std::string_view name) const {
  const Field* field = find(name);
  if (field == nullptr || field->type() != Field::Type::boolean) return std::nullopt;
  return field->number != 0;
}

}  // namespace onejob
