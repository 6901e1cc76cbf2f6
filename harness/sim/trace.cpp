#include "harness/sim/trace.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "system/domain/check.hpp"

#include "harness/sim/rng.hpp"
#include "harness/sim/utf8.hpp"

namespace onejob::sim {

std::uint64_t Trace::record(NodeName node, const Event& event, bool injected) {
  const Instant now = clock_.now();
  ONEJOB_ASSERT(events_.empty() || now >= last_at_, "a trace records events in time order");
  events_.append(now, node, event, injected);
  last_at_ = now;
  return events_.size();
}

namespace {

// What each byte of a string is to JSON: written as it is, escaped, or the start of a multi-byte
// UTF-8 sequence (checked). Printable ASCII other than '"' and '\\' (DEL included) is plain.
enum class ByteClass : std::uint8_t { plain, escaped, multibyte };
constexpr std::array<ByteClass, 256> kByteClass = [] {
  std::array<ByteClass, 256> classes{};
  for (std::size_t byte = 0; byte < classes.size(); ++byte) {
    classes[byte] = byte >= 0x80                                 ? ByteClass::multibyte
                    : byte < 0x20 || byte == '"' || byte == '\\' ? ByteClass::escaped
                                                                 : ByteClass::plain;
  }
  return classes;
}();

// At most what write_json_string writes for `size` bytes: a byte becomes at most six (\u00XX; a
// replaced invalid byte is three), plus the quotes.
constexpr std::size_t json_string_bound(std::size_t size) { return 6 * size + 2; }
// At most what an int64 takes in decimal, sign included.
constexpr std::size_t kIntBound = 20;

char* put(char* out, std::string_view bytes) {
  std::memcpy(out, bytes.data(), bytes.size());
  return out + bytes.size();
}

// The rare string that is not UTF-8: nlohmann writes it (its replacement rules), at `start`.
char* write_replaced(char* start, std::string_view text) {
  const std::string dumped =
      nlohmann::ordered_json(std::string(text))
          .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  ONEJOB_ASSERT(dumped.size() <= json_string_bound(text.size()),
                "a replaced JSON string outgrew its bound");
  return put(start, dumped);
}

// `text` as a JSON string at `out`, which has room for json_string_bound(text.size()) bytes;
// returns its end. One pass: runs of plain bytes are copied whole, escaped ones written one by one,
// and multi-byte UTF-8 sequences checked as they are met.
char* write_json_string(char* out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  char* const start = out;
  *out++ = '"';
  const char* const data = text.data();
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    std::size_t run = i;
    while (run < size && kByteClass[static_cast<unsigned char>(data[run])] == ByteClass::plain) {
      ++run;
    }
    out = put(out, text.substr(i, run - i));
    i = run;
    if (i == size) break;
    const auto c = static_cast<unsigned char>(data[i]);
    if (kByteClass[c] == ByteClass::multibyte) {
      std::size_t length = 1;
      if (!decode_utf8(text, i, length)) return write_replaced(start, text);
      out = put(out, text.substr(i, length));
      i += length;
      continue;
    }
    ++i;
    *out++ = '\\';
    switch (c) {
      case '"':
        *out++ = '"';
        break;
      case '\\':
        *out++ = '\\';
        break;
      case '\b':
        *out++ = 'b';
        break;
      case '\f':
        *out++ = 'f';
        break;
      case '\n':
        *out++ = 'n';
        break;
      case '\r':
        *out++ = 'r';
        break;
      case '\t':
        *out++ = 't';
        break;
      default:
        out = put(out, "u00");
        *out++ = kHex[c >> 4];
        *out++ = kHex[c & 0xF];
    }
  }
  *out++ = '"';
  return out;
}

char* write_int(char* out, std::int64_t value) {
  return std::to_chars(out, out + kIntBound, value).ptr;
}

// `"name":` for each field name, rendered once per interned name rather than escaped again in
// each of millions of events.
class FieldKeys {
 public:
  const std::string& operator()(std::uint32_t name_id) {
    if (name_id >= keys_.size()) keys_.resize(name_id + 1);
    std::string& key = keys_[name_id];
    if (key.empty()) {
      append_json_string(key, interned(name_id));
      key += ':';
    }
    return key;
  }
  // This thread's (fuzz workers render in parallel).
  static FieldKeys& of_thread() {
    thread_local FieldKeys keys;
    return keys;
  }

 private:
  std::vector<std::string> keys_;  // by interned id
};

// One event's parts, whether unpacked (TraceEvent) or read in place (PackedEvent): `text(field)`
// gives a string field's bytes.
template <typename Text>
struct LineParts {
  std::uint64_t seq;
  Instant at;
  const std::string& node;
  const std::string& kind;
  bool injected;
  std::span<const Event::Field> fields;
  const Text& text;
  FieldKeys& keys;

  // At most the bytes write_line writes.
  std::size_t bound() const {
    // {"seq":N,"t_us":N,"node":,"kind":,"injected":true,"data":{}}: 58 bytes and two numbers.
    std::size_t total =
        64 + 2 * kIntBound + json_string_bound(node.size()) + json_string_bound(kind.size());
    for (const auto& field : fields) {
      total += 1 + keys(field.name_id).size() +
               (field.type() == Event::Field::Type::string ? json_string_bound(text(field).size())
                                                           : kIntBound);
    }
    return total;
  }

  // The line at `out`, which has room for bound() bytes; returns its end.
  char* write_line(char* out) const {
    using namespace std::string_view_literals;
    out = put(out, "{\"seq\":"sv);
    out = write_int(out, static_cast<std::int64_t>(seq));
    out = put(out, ",\"t_us\":"sv);
    out = write_int(out, at.time_since_epoch().count());
    out = put(out, ",\"node\":"sv);
    out = write_json_string(out, node);
    out = put(out, ",\"kind\":"sv);
    out = write_json_string(out, kind);
    if (injected) out = put(out, ",\"injected\":true"sv);
    out = put(out, ",\"data\":{"sv);
    bool first = true;
    // Interned: one name, one id. Names whose ids differ in their low six bits cannot repeat, so
    // most events skip the search for repeats below.
    std::uint64_t seen = 0;
    bool may_repeat = false;
    for (const auto& field : fields) {
      const std::uint64_t bit = std::uint64_t{1} << (field.name_id & 63u);
      may_repeat = may_repeat || (seen & bit) != 0;
      seen |= bit;
    }
    // nlohmann's ordered_json keeps the first position of a repeated key and the last value.
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const Event::Field* value = &fields[i];
      if (may_repeat) {
        bool repeated = false;
        for (std::size_t j = 0; j < i && !repeated; ++j)
          repeated = fields[j].name_id == fields[i].name_id;
        if (repeated) continue;
        for (std::size_t j = i + 1; j < fields.size(); ++j) {
          if (fields[j].name_id == fields[i].name_id) value = &fields[j];
        }
      }
      if (!first) *out++ = ',';
      first = false;
      out = put(out, keys(fields[i].name_id));
      switch (value->type()) {
        case Event::Field::Type::integer:
          out = write_int(out, value->number);
          break;
        case Event::Field::Type::boolean:
          out = put(out, value->number != 0 ? "true"sv : "false"sv);
          break;
        case Event::Field::Type::string:
          out = write_json_string(out, text(*value));
          break;
      }
    }
    return put(out, "}}"sv);
  }
};

template <typename Text>
LineParts<Text> parts_of(const PackedEvent& event, const Text& text, FieldKeys& keys) {
  return {event.seq, event.at, event.node.str(), *event.kind, event.injected, event.fields,
          text,      keys};
}

// Appends what `write(out)` writes into room for `bound` bytes.
template <typename Write>
void append_written(std::string& out, std::size_t bound, const Write& write) {
  const std::size_t at = out.size();
  out.resize(at + bound);
  char* const end = write(out.data() + at);
  out.resize(static_cast<std::size_t>(end - out.data()));
}

// Room for lines, filled from the front and handed out as pieces: grown to fit, never
// value-initialized.
class LineRoom {
 public:
  explicit LineRoom(std::size_t capacity) : bytes_(new char[capacity]), capacity_(capacity) {}
  // Room for `bound` more bytes, after handing the held bytes to `sink` when they would not fit.
  char* make_room(std::size_t bound, const std::function<void(std::string_view)>& sink) {
    if (used_ + bound > capacity_) {
      flush(sink);
      if (bound > capacity_) *this = LineRoom(bound);
    }
    return bytes_.get() + used_;
  }
  void filled_to(const char* end) { used_ = static_cast<std::size_t>(end - bytes_.get()); }
  std::size_t used() const { return used_; }
  void flush(const std::function<void(std::string_view)>& sink) {
    if (used_ > 0) sink(std::string_view(bytes_.get(), used_));
    used_ = 0;
  }

 private:
  std::unique_ptr<char[]> bytes_;
  std::size_t capacity_;
  std::size_t used_ = 0;
};

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  append_written(out, json_string_bound(text.size()),
                 [&](char* at) { return write_json_string(at, text); });
}

void append_json_line(std::string& out, const TraceEvent& event) {
  const auto text = [&event](const Event::Field& field) { return event.event.text(field); };
  const LineParts<decltype(text)> parts{event.seq,
                                        event.at,
                                        event.node.str(),
                                        event.event.kind(),
                                        event.injected,
                                        event.event.fields(),
                                        text,
                                        FieldKeys::of_thread()};
  append_written(out, parts.bound(), [&](char* at) { return parts.write_line(at); });
}

std::string to_json_line(const TraceEvent& event) {
  std::string line;
  append_json_line(line, event);
  return line;
}

std::string render_jsonl(const History& history) {
  std::string out;
  out.reserve(history.size() * 200);
  render_jsonl_pieces(history, [&out](std::string_view piece) { out += piece; });
  return out;
}

void render_jsonl_pieces(const History& history, const std::function<void(std::string_view)>& sink,
                         std::size_t piece_bytes) {
  LineRoom room(2 * std::max<std::size_t>(piece_bytes, 1));
  FieldKeys& keys = FieldKeys::of_thread();
  history.visit_packed([&](const PackedEvent& event) {
    const auto text = [&event](const Event::Field& field) { return event.text(field); };
    const auto parts = parts_of(event, text, keys);
    char* end = parts.write_line(room.make_room(parts.bound() + 1, sink));
    *end++ = '\n';
    room.filled_to(end);
    if (room.used() >= piece_bytes) room.flush(sink);
  });
  room.flush(sink);
}

std::string hash_jsonl(const History& history) {
  // FNV-1a over the pieces in order is FNV-1a over the whole text.
  std::uint64_t hash = fnv1a64("");
  render_jsonl_pieces(
      history, [&hash](std::string_view piece) { hash = fnv1a64(piece, hash); },
      std::size_t{64} << 10);
  return hex64(hash);
}

std::string Trace::to_jsonl() const { return render_jsonl(events_); }

std::string hex64(std::uint64_t value) {
  // Sixteen lower-case hex digits, as "%016llx" writes them; without printf's machinery, as every
  // client receipt digests its body.
  std::string out(16, '0');
  for (std::size_t i = 16; i-- > 0; value >>= 4) out[i] = "0123456789abcdef"[value & 0xF];
  return out;
}

std::string fnv1a64_hex(std::string_view bytes) { return hex64(fnv1a64(bytes)); }

std::string Trace::hash() const { return hash_jsonl(events_); }

History Trace::take() { return std::move(events_); }

}  // namespace onejob::sim
