#include "harness/sim/packed_history.hpp"

#include <cstring>
#include <stdexcept>

#include "system/domain/check.hpp"

namespace onejob::sim {
namespace {

// A chunk holds events packed one after another; an event larger than this has a chunk of its
// own.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

// A field's tag, in the low two bits beside its name id.
enum Tag : std::uint64_t { kInteger = 0, kFalse = 1, kString = 2, kTrue = 3 };

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

// An event's bytes: instant (zigzag), node id, kind id, field count << 1 | injected, the
// strings' total length, then per field: name id << 2 | tag, and an integer's value (zigzag) or
// a string's length and bytes. Written straight into the chunk, within a bound on their size.
void History::append(Instant at, NodeName node, const Event& event, bool injected) {
  const auto fields = event.fields();
  std::size_t string_bytes = 0;
  for (const auto& field : fields) string_bytes += field.length;
  const std::size_t bound = (5 + 3 * fields.size()) * kMaxVarint + string_bytes;
  if (chunks_.empty() || chunks_.back().capacity - chunks_.back().used < bound) {
    chunks_.emplace_back(std::max(kChunkBytes, bound));
  }
  Chunk& chunk = chunks_.back();
  char* const begin = chunk.bytes.get() + chunk.used;
  char* out = begin;
  out = put(out, zigzag(at.time_since_epoch().count()));
  out = put(out, node.id());
  out = put(out, id_of_interned(event.kind()));
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
      case Event::Field::Type::string: {
        const std::string_view text = event.text(field);
        out = put(out, name | kString);
        out = put(out, text.size());
        if (!text.empty()) std::memcpy(out, text.data(), text.size());
        out += text.size();
        break;
      }
    }
  }
  where_.push_back((Where{chunks_.size() - 1} << 32) | chunk.used);
  chunk.used += static_cast<std::size_t>(out - begin);
}

const char* History::start(std::size_t index) const {
  const Where where = where_[index];
  return chunks_[where >> 32].bytes.get() + (where & 0xFFFF'FFFFu);
}

TraceEvent History::operator[](std::size_t index) const {
  TraceEvent event;
  read(index, event);
  return event;
}

void History::read(std::size_t index, TraceEvent& into) const {
  const char* in = start(index);
  into.seq = index + 1;
  into.at = Instant{Duration{unzigzag(get(in))}};
  into.node = NodeName::of_id(static_cast<std::uint32_t>(get(in)));
  Event& event = into.event;
  event.reset(Event::InternedKind{&interned(static_cast<std::uint32_t>(get(in)))});
  const std::uint64_t header = get(in);
  into.injected = (header & 1) != 0;
  const std::size_t count = header >> 1;
  event.reserve(count, get(in));
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t name = get(in);
    const Event::NameId id{static_cast<std::uint32_t>(name >> 2)};
    switch (name & 3) {
      case kInteger:
        event.with(id, unzigzag(get(in)));
        break;
      case kFalse:
        event.with(id, false);
        break;
      case kTrue:
        event.with(id, true);
        break;
      case kString: {
        const std::size_t length = get(in);
        event.with(id, std::string_view(in, length));
        in += length;
        break;
      }
    }
  }
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

const std::string& History::kind(std::size_t index) const {
  const char* in = start(index);
  get(in);
  get(in);
  return interned(static_cast<std::uint32_t>(get(in)));
}

std::size_t History::bytes() const {
  std::size_t total = where_.size() * sizeof(Where);
  for (const auto& chunk : chunks_) total += chunk.capacity;
  return total;
}

}  // namespace onejob::sim
