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

void put(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>(static_cast<unsigned char>(value | 0x80));
    value >>= 7;
  }
  out += static_cast<char>(static_cast<unsigned char>(value));
}

std::uint64_t zigzag(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}

std::int64_t unzigzag(std::uint64_t value) {
  return static_cast<std::int64_t>(value >> 1) ^ -static_cast<std::int64_t>(value & 1);
}

// Reads what put() wrote; the bytes are the history's own, so they are well formed.
std::uint64_t get(const char*& in) {
  std::uint64_t value = 0;
  int shift = 0;
  for (;;) {
    const auto byte = static_cast<unsigned char>(*in++);
    value |= std::uint64_t{byte & 0x7Fu} << shift;
    if (byte < 0x80) return value;
    shift += 7;
  }
}

}  // namespace

// An event's bytes: instant (zigzag), node id, kind id, field count << 1 | injected, then per
// field: name id << 2 | tag, and an integer's value (zigzag) or a string's length and bytes.
void History::append(Instant at, NodeName node, const Event& event, bool injected) {
  thread_local std::string packed;
  packed.clear();
  put(packed, zigzag(at.time_since_epoch().count()));
  put(packed, node.id());
  put(packed, id_of_interned(event.kind()));
  const auto fields = event.fields();
  put(packed, (std::uint64_t{fields.size()} << 1) | (injected ? 1u : 0u));
  for (const auto& field : fields) {
    const std::uint64_t name = std::uint64_t{field.name_id} << 2;
    switch (field.type()) {
      case Event::Field::Type::integer:
        put(packed, name | kInteger);
        put(packed, zigzag(field.number));
        break;
      case Event::Field::Type::boolean:
        put(packed, name | (field.number != 0 ? kTrue : kFalse));
        break;
      case Event::Field::Type::string: {
        const std::string_view text = event.text(field);
        put(packed, name | kString);
        put(packed, text.size());
        packed += text;
        break;
      }
    }
  }
  if (chunks_.empty() || chunks_.back().capacity() - chunks_.back().size() < packed.size()) {
    chunks_.emplace_back().reserve(std::max(kChunkBytes, packed.size()));
  }
  auto& chunk = chunks_.back();
  where_.push_back((Where{chunks_.size() - 1} << 32) | chunk.size());
  chunk.insert(chunk.end(), packed.begin(), packed.end());
}

const char* History::start(std::size_t index) const {
  const Where where = where_[index];
  return chunks_[where >> 32].data() + (where & 0xFFFF'FFFFu);
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
  // Sized once: the strings' bytes are counted in a first pass over the fields.
  std::size_t string_bytes = 0;
  const char* const fields = in;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t name = get(in);
    switch (name & 3) {
      case kInteger:
        get(in);
        break;
      case kString: {
        const std::uint64_t length = get(in);
        string_bytes += length;
        in += length;
        break;
      }
      default:
        break;
    }
  }
  event.reserve(count, string_bytes);
  in = fields;
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
  for (const auto& chunk : chunks_) total += chunk.capacity();
  return total;
}

}  // namespace onejob::sim
