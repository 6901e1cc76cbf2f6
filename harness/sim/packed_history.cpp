#include "harness/sim/packed_history.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif
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
constexpr std::size_t kChunkBytes = std::size_t{1} << 21;

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

}  // namespace

// A full chunk is a 2 MiB block aligned to 2 MiB, which Linux backs with one huge page when asked
// (transparent huge pages in "madvise" mode, Debian's default): a long history then costs one
// page fault per chunk instead of 512.
char* History::allocate_room(std::size_t room) {
  void* bytes = room == kChunkBytes ? std::aligned_alloc(kChunkBytes, room) : std::malloc(room);
  if (bytes == nullptr) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
  if (room == kChunkBytes) ::madvise(bytes, room, MADV_HUGEPAGE);  // advice: failure is harmless
#endif
  return static_cast<char*>(bytes);
}

void History::FreeRoom::operator()(char* room) const { std::free(room); }

namespace {

// Reads what put() wrote; the bytes are the history's own, so they are well formed.
// One and two bytes (most names, lengths and small numbers) take no loop.
inline std::uint64_t get(const char*& in) {
  const auto first = static_cast<unsigned char>(in[0]);
  if (first < 0x80) {
    in += 1;
    return first;
  }
  const auto second = static_cast<unsigned char>(in[1]);
  if (second < 0x80) {
    in += 2;
    return (first & 0x7Fu) | (std::uint64_t{second} << 7);
  }
  in += 2;
  std::uint64_t value = (first & 0x7Fu) | (std::uint64_t{second & 0x7Fu} << 7);
  int shift = 14;
  for (;;) {
    const auto byte = static_cast<unsigned char>(*in++);
    value |= std::uint64_t{byte & 0x7Fu} << shift;
    if (byte < 0x80) return value;
    shift += 7;
  }
}

// Decodes `count` fields from `in` into `out`, each integer and boolean here; a string field's
// value (a word's number << 1 | 1, or its own bytes' length << 1) is left to
// `string(out[i], i, name id, value)` to place.
template <typename String>
void decode_each(const char*& in, std::size_t count, Event::Field* out, String&& string) {
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
      default:
        string(out[i], i, id, get(in));
        break;
    }
  }
}

// Words: at most this many per field name, each at most this long.
constexpr std::size_t kWordsPerField = 32;
constexpr std::size_t kWordBytes = 64;

}  // namespace

std::uint32_t History::word_of(std::uint32_t name_id, std::string_view text) {
  if (text.empty() || text.size() > kWordBytes) return kNotWord;
  if (field_words_.size() <= name_id) field_words_.resize(name_id + 1);
  FieldWords& field = field_words_[name_id];
  if (field.closed) return kNotWord;
  std::uint64_t prefix = 0;
  std::memcpy(&prefix, text.data(), std::min(text.size(), sizeof prefix));
  const auto length = static_cast<std::uint32_t>(text.size());
  for (const FieldWord& known : field.words) {
    if (known.prefix == prefix && known.length == length &&
        (length <= sizeof prefix ||
         std::memcmp(words_[known.word].data() + sizeof prefix, text.data() + sizeof prefix,
                     length - sizeof prefix) == 0)) {
      return known.word;
    }
  }
  if (field.words.size() == kWordsPerField) {
    field.closed = true;
    return kNotWord;
  }
  const auto word = static_cast<std::uint32_t>(words_.size());
  field.words.push_back({prefix, length, word});
  words_.emplace_back(text);
  return word;
}

// An event's bytes: instant (zigzag), node id, field count << 1 | injected, its strings' total
// length (words included); then per field: name id << 2 | tag, and an integer's value (zigzag),
// or a string's length << 1, or a word's number << 1 | 1; then the bytes of the strings that are
// not words, in field order. Written straight into the chunk, within a bound on their size.
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
  // Each string field's word, or kNotWord; none are looked up while the history is short.
  const bool words = where_.size() >= kWordsFrom;
  field_word_.resize(fields.size());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& field = fields[i];
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
        const std::uint32_t word = words ? word_of(field.name_id, event.text(field)) : kNotWord;
        field_word_[i] = word;
        out = put(out, name | kString);
        out = put(out, word == kNotWord ? std::uint64_t{field.length} << 1
                                        : (std::uint64_t{word} << 1) | 1);
        break;
      }
    }
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& field = fields[i];
    if (field.type() != Event::Field::Type::string || field.length == 0) continue;
    if (field_word_[i] != kNotWord) continue;
    std::memcpy(out, event.text(field).data(), field.length);
    out += field.length;
  }
  const std::size_t chunk_index = chunks_.size() - 1;
  if (chunk_index >= (std::size_t{1} << kChunkBits)) throw std::length_error("history too large");
  ONEJOB_ASSERT(chunk.used <= kOffsetMask, "a packed event's offset fits its 21 bits");
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

std::size_t History::decode_fields(const char*& in, std::size_t count, Event::Field* out,
                                   std::vector<WordField>& words) const {
  words.clear();
  std::int64_t offset = 0;  // among all the event's strings
  std::size_t own = 0;      // the event's own string bytes
  decode_each(in, count, out,
              [&](Event::Field& field, std::size_t i, std::uint32_t id, std::uint64_t value) {
                std::uint32_t length = 0;
                if ((value & 1) != 0) {
                  const auto word = static_cast<std::uint32_t>(value >> 1);
                  words.push_back({i, word});
                  length = static_cast<std::uint32_t>(words_[word].size());
                } else {
                  length = static_cast<std::uint32_t>(value >> 1);
                  own += length;
                }
                field = {id, length, kStringType, length == 0 ? 0 : offset};
                offset += length;
              });
  return own;
}

template <typename At>
const char* History::each_string(Event::Field* fields, std::size_t count,
                                 const std::vector<WordField>& words, const char* own,
                                 At&& at) const {
  auto word = words.begin();
  for (std::size_t i = 0; i < count; ++i) {
    auto& field = fields[i];
    if (field.type() != Event::Field::Type::string || field.length == 0) continue;
    if (word != words.end() && word->field == i) {  // a word is never empty
      at(field, words_[word->word].data());
      ++word;
    } else {
      at(field, own);
      own += field.length;
    }
  }
  return own;
}

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
  const std::size_t count = read_header(index, in, into.at, into.node, into.injected).first;
  into.seq = index + 1;
  into.kind = &kind(index);
  into.fields.resize(count);
  Event::Field* const out = into.fields.data();
  const auto address = [](const char* bytes) {
    return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(bytes));
  };
  // As decode_fields, but a word's string gets its address at once, and each of the event's
  // own strings (whose bytes follow the fields) its offset among them, negated (an address is
  // positive) until the fields' end is known.
  std::int64_t own = 0;
  decode_each(
      in, count, out, [&](Event::Field& field, std::size_t, std::uint32_t id, std::uint64_t value) {
        if ((value & 1) != 0) {
          const std::string& word = words_[value >> 1];
          field = {id, static_cast<std::uint32_t>(word.size()), kStringType, address(word.data())};
        } else {
          const auto length = static_cast<std::uint32_t>(value >> 1);
          field = {id, length, kStringType, length == 0 ? 0 : -(own + 1)};
          own += length;
        }
      });
  if (own == 0) return;
  for (std::size_t i = 0; i < count; ++i) {
    if (out[i].number < 0 && out[i].type() == Event::Field::Type::string) {
      out[i].number = address(in - out[i].number - 1);
    }
  }
}

void History::read(std::size_t index, TraceEvent& into) const {
  thread_local std::vector<WordField> words;
  const char* in = nullptr;
  // Plain variables, not a structured binding: clang 14 cannot capture one in a lambda.
  const auto sizes = read_header(index, in, into.at, into.node, into.injected);
  const std::size_t count = sizes.first;
  const std::size_t string_bytes = sizes.second;
  into.seq = index + 1;
  into.event.rebuild(Event::InternedKind{&kind(index)}, count, string_bytes,
                     [this, &in, count, string_bytes](Event::Field* fields, char* strings) {
                       decode_fields(in, count, fields, words);
                       if (!words.empty()) {
                         each_string(fields, count, words, in,
                                     [strings](const Event::Field& field, const char* bytes) {
                                       std::memcpy(strings + field.number, bytes, field.length);
                                     });
                       } else if (string_bytes > 0) {
                         std::memcpy(strings, in, string_bytes);
                       }
                     });
}

std::pair<const char*, std::size_t> History::decode_at(std::size_t index,
                                                       std::vector<WordField>& words) const {
  thread_local std::vector<Event::Field> fields;
  const char* in = nullptr;
  Instant at;
  NodeName node;
  bool injected = false;
  const auto count = read_header(index, in, at, node, injected).first;
  fields.resize(count);
  const std::size_t own = decode_fields(in, count, fields.data(), words);
  return {in, own};
}

std::string_view History::packed(std::size_t index) const {
  // Its end is found by decoding it: only read_header and decode_fields know the layout.
  thread_local std::vector<WordField> words;
  const auto [own, own_bytes] = decode_at(index, words);
  const char* const begin = start(index);
  return {begin, static_cast<std::size_t>(own - begin) + own_bytes};
}

bool History::same_event(std::size_t index, const History& other, std::size_t other_index) const {
  if (&kind(index) != &other.kind(other_index) || packed(index) != other.packed(other_index)) {
    return false;
  }
  // The same bytes name the same words by number; each history numbers its own words, so the
  // words themselves must match too.
  thread_local std::vector<WordField> words;
  decode_at(index, words);
  return std::ranges::all_of(words, [&](const WordField& field) {
    return field.word < other.words_.size() && words_[field.word] == other.words_[field.word];
  });
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
  for (const auto& word : words_) total += sizeof(word) + word.capacity();
  return total;
}

}  // namespace onejob::sim
