#include "harness/sim/packed_history.hpp"

#include <cstring>
#include <ostream>
#include <stdexcept>

#include "system/domain/check.hpp"

namespace onejob::sim {

std::ostream& operator<<(std::ostream& out, NodeName name) { return out << name.str(); }
namespace {

// A chunk holds events packed one after another. The first is small (a short run, such as a
// fuzz case, allocates little) and each next one twice the one before, up to the largest; an
// event larger than that has a chunk of its own.
constexpr std::size_t kFirstChunkBytes = std::size_t{4} << 10;
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

// A field's tag, in the low two bits beside its name id.
enum Tag : std::uint64_t { kInteger = 0, kFalse = 1, kString = 2, kTrue = 3 };
constexpr auto kIntegerType = static_cast<std::uint32_t>(Event::Field::Type::integer);
constexpr auto kBooleanType = static_cast<std::uint32_t>(Event::Field::Type::boolean);
constexpr auto kStringType = static_cast<std::uint32_t>(Event::Field::Type::string);

// Writes `value` in 7-bit groups, low first, the high bit set on all but the last; returns the
// byte after it. At most 10 bytes.
char* put(char* out, std::uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<char>(static_cast<unsigned char>(value | 0x80));
    value >>= 7;
  }
  *out++ = static_cast<char>(static_cast<unsigned char>(value));
  return out;
}
constexpr std::size_t kMaxVarint = 10;

std::uint64_t zigzag(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}

std::int64_t unzigzag(std::uint64_t value) {
  return static_cast<std::int64_t>(value >> 1) ^ -static_cast<std::int64_t>(value & 1);
}

// Reads what put() wrote; the bytes are the history's own, so they are well formed.
inline std::uint64_t get(const char*& in) {
  const auto first = static_cast<unsigned char>(*in++);
  if (first < 0x80) return first;
  std::uint64_t value = first & 0x7Fu;
  int shift = 7;
  for (;;) {
    const auto byte = static_cast<unsigned char>(*in++);
    value |= std::uint64_t{byte & 0x7Fu} << shift;
    if (byte < 0x80) return value;
    shift += 7;
  }
}

}  // namespace

// An event's bytes: instant (zigzag), node id, field count << 1 | injected, the strings' total
// length; then per field: name id << 2 | tag, and an integer's value (zigzag) or
// a string's length; then every string's bytes, in field order, as an Event keeps them. Written
// straight into the chunk, within a bound on their size.
void History::append(Instant at, NodeName node, const Event& event, bool injected) {
  const auto fields = event.fields();
  std::size_t string_bytes = 0;
  for (const auto& field : fields) string_bytes += field.length;
  const std::size_t bound = (5 + 2 * fields.size()) * kMaxVarint + string_bytes;
  if (chunks_.empty() || chunks_.back().capacity - chunks_.back().used < bound) {
    const std::size_t next =
        chunks_.empty() ? kFirstChunkBytes : std::min(kChunkBytes, 2 * chunks_.back().capacity);
    chunks_.emplace_back(std::max(next, bound));
  }
  Chunk& chunk = chunks_.back();
  char* const begin = chunk.bytes.get() + chunk.used;
  char* out = begin;
  out = put(out, zigzag(at.time_since_epoch().count()));
  out = put(out, node.id());
  out = put(out, (std::uint64_t{fields.size()} << 1) | (injected ? 1u : 0u));
  out = put(out, string_bytes);
  for (const auto& field : fields) {
    const std::uint64_t name = std::uint64_t{field.name_id} << 2;
    switch (field.type()) {
      case Event::Field::Type::integer:
        out = put(out, name | kInteger);
        out = put(out, zigzag(field.number));
        break;
      case Event::Field::Type::boolean:
        out = put(out, name | (field.number != 0 ? kTrue : kFalse));
        break;
      case Event::Field::Type::string:
        out = put(out, name | kString);
        out = put(out, field.length);
        break;
    }
  }
  for (const auto& field : fields) {
    if (field.type() != Event::Field::Type::string || field.length == 0) continue;
    std::memcpy(out, event.text(field).data(), field.length);
    out += field.length;
  }
  const std::size_t chunk_index = chunks_.size() - 1;
  if (chunk_index >= (std::size_t{1} << kChunkBits)) throw std::length_error("history too large");
  ONEJOB_ASSERT(chunk.used <= kOffsetMask, "a packed event's offset fits its 20 bits");
  where_.push_back((Where{id_of_interned(event.kind())} << kKindShift) |
                   (Where{chunk_index} << kChunkShift) | chunk.used);
  chunk.used += static_cast<std::size_t>(out - begin);
  // A chunk made for one big event holds only it: every offset stays within kChunkBytes.
  if (chunk.capacity > kChunkBytes) chunk.used = chunk.capacity;
}

TraceEvent History::operator[](std::size_t index) const {
  TraceEvent event;
  read(index, event);
  return event;
}

namespace {

// Decodes `count` fields from `in` into `out` (a string field's `number` is its offset among the
// strings that follow, 0 when it is empty, as an Event numbers them); `in` ends at the strings.
void decode_fields(const char*& in, std::size_t count, Event::Field* out) {
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t name = get(in);
    const auto id = static_cast<std::uint32_t>(name >> 2);
    switch (name & 3) {
      case kInteger:
        out[i] = {id, 0, kIntegerType, unzigzag(get(in))};
        break;
      case kFalse:
        out[i] = {id, 0, kBooleanType, 0};
        break;
      case kTrue:
        out[i] = {id, 0, kBooleanType, 1};
        break;
      default: {
        const auto length = static_cast<std::uint32_t>(get(in));
        out[i] = {id, length, kStringType, length == 0 ? 0 : offset};
        offset += length;
        break;
      }
    }
  }
}

}  // namespace

// The header every reader decodes first; returns the field count and the strings' length.
std::pair<std::size_t, std::size_t> History::read_header(std::size_t index, const char*& in,
                                                         Instant& at, NodeName& node,
                                                         bool& injected) const {
  in = start(index);
  at = Instant{Duration{unzigzag(get(in))}};
  node = NodeName::of_id(static_cast<std::uint32_t>(get(in)));
  const std::uint64_t header = get(in);
  injected = (header & 1) != 0;
  const std::size_t string_bytes = get(in);
  return {header >> 1, string_bytes};
}

void History::read(std::size_t index, PackedEvent& into) const {
  const char* in = nullptr;
  const auto [count, string_bytes] = read_header(index, in, into.at, into.node, into.injected);
  into.seq = index + 1;
  into.kind = &kind(index);
  into.fields.resize(count);
  decode_fields(in, count, into.fields.data());
  into.strings = std::string_view(in, string_bytes);
}

void History::read(std::size_t index, TraceEvent& into) const {
  const char* in = nullptr;
  // Plain variables, not a structured binding: clang 14 cannot capture one in a lambda.
  const auto sizes = read_header(index, in, into.at, into.node, into.injected);
  const std::size_t count = sizes.first;
  const std::size_t string_bytes = sizes.second;
  into.seq = index + 1;
  into.event.rebuild(Event::InternedKind{&kind(index)}, count, string_bytes,
                     [&in, count, string_bytes](Event::Field* fields, char* strings) {
                       decode_fields(in, count, fields);
                       if (string_bytes > 0) std::memcpy(strings, in, string_bytes);
                     });
}

std::string_view History::packed(std::size_t index) const {
  // Its end is found by decoding it: only read_header and decode_fields know the layout.
  thread_local std::vector<Event::Field> fields;
  const char* in = nullptr;
  Instant at;
  NodeName node;
  bool injected = false;
  const auto [count, string_bytes] = read_header(index, in, at, node, injected);
  fields.resize(count);
  decode_fields(in, count, fields.data());
  const char* const begin = start(index);
  return {begin, static_cast<std::size_t>(in - begin) + string_bytes};
}

bool History::same_event(std::size_t index, const History& other, std::size_t other_index) const {
  return &kind(index) == &other.kind(other_index) && packed(index) == other.packed(other_index);
}

TraceEvent History::at(std::size_t index) const {
  if (index >= size()) {
    throw std::out_of_range("history event " + std::to_string(index + 1) + " of " +
                            std::to_string(size()));
  }
  return (*this)[index];
}

Instant History::instant(std::size_t index) const {
  const char* in = start(index);
  return Instant{Duration{unzigzag(get(in))}};
}

NodeName History::node(std::size_t index) const {
  const char* in = start(index);
  get(in);
  return NodeName::of_id(static_cast<std::uint32_t>(get(in)));
}

const std::string& History::kind(std::size_t index) const { return interned(kind_id(index)); }

std::size_t History::bytes() const {
  std::size_t total = where_.size() * sizeof(Where);
  for (const auto& chunk : chunks_) total += chunk.capacity;
  return total;
}

}  // namespace onejob::sim
