#include "harness/sim/trace.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
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

// Printable ASCII other than '"' and '\\': written as it is.
constexpr bool plain_ascii(unsigned char byte) {
  return byte >= 0x20 && byte < 0x80 && byte != '"' && byte != '\\';
}

}  // namespace

// One pass: runs of bytes written as they are go in one append, the escaped ones one by one, and
// multi-byte UTF-8 sequences are checked as they are met. nlohmann itself writes the rare string
// that is not UTF-8 (its replacement rules), over whatever this pass had appended.
void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto first_other = std::find_if_not(
      text.begin(), text.end(), [](char c) { return plain_ascii(static_cast<unsigned char>(c)); });
  // Most strings (names, kinds, ids) are plain ASCII throughout: one copy.
  if (first_other == text.end()) {
    const std::size_t at = out.size();
    out.resize(at + text.size() + 2);
    char* to = out.data() + at;
    *to = '"';
    if (!text.empty()) std::memcpy(to + 1, text.data(), text.size());
    to[text.size() + 1] = '"';
    return;
  }
  const std::size_t start = out.size();
  out += '"';
  std::size_t run = 0;
  std::size_t i = static_cast<std::size_t>(first_other - text.begin());  // all before it: plain
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      std::size_t length = 1;
      if (!decode_utf8(text, i, length)) {
        out.resize(start);
        out += nlohmann::ordered_json(std::string(text))
                   .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
        return;
      }
      i += length;
      continue;
    }
    if (plain_ascii(c)) {
      ++i;
      continue;
    }
    out.append(text.data() + run, i - run);
    run = ++i;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
  }
  out.append(text.data() + run, text.size() - run);
  out += '"';
}

namespace {

void append_int(std::string& out, std::int64_t value) {
  char buffer[24];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  out.append(buffer, end);
}

// `"name":` for a field name, rendered once per interned name (and thread: fuzz workers render
// in parallel) rather than escaped again in each of millions of events.
void append_field_key(std::string& out, std::uint32_t name_id) {
  thread_local std::vector<std::string> keys;
  if (name_id >= keys.size()) keys.resize(name_id + 1);
  std::string& key = keys[name_id];
  if (key.empty()) {
    append_json_string(key, interned(name_id));
    key += ':';
  }
  out += key;
}

// One line from an event's parts, whether unpacked (TraceEvent) or read in place (PackedEvent):
// `text(field)` gives a string field's bytes.
template <typename Text>
void append_line(std::string& out, std::uint64_t seq, Instant at, const std::string& node,
                 const std::string& kind, bool injected, std::span<const Event::Field> fields,
                 const Text& text) {
  using namespace std::string_view_literals;  // literals of known length: no strlen per append
  out += "{\"seq\":"sv;
  append_int(out, static_cast<std::int64_t>(seq));
  out += ",\"t_us\":"sv;
  append_int(out, at.time_since_epoch().count());
  out += ",\"node\":"sv;
  append_json_string(out, node);
  out += ",\"kind\":"sv;
  append_json_string(out, kind);
  if (injected) out += ",\"injected\":true"sv;
  out += ",\"data\":{"sv;
  bool first = true;
  // nlohmann's ordered_json keeps the first position of a repeated key and the last value.
  for (std::size_t i = 0; i < fields.size(); ++i) {
    bool repeated = false;
    // Interned: one name, one id.
    for (std::size_t j = 0; j < i && !repeated; ++j)
      repeated = fields[j].name_id == fields[i].name_id;
    if (repeated) continue;
    const Event::Field* value = &fields[i];
    for (std::size_t j = i + 1; j < fields.size(); ++j) {
      if (fields[j].name_id == fields[i].name_id) value = &fields[j];
    }
    if (!first) out += ',';
    first = false;
    append_field_key(out, fields[i].name_id);
    switch (value->type()) {
      case Event::Field::Type::integer:
        append_int(out, value->number);
        break;
      case Event::Field::Type::boolean:
        out += value->number != 0 ? "true"sv : "false"sv;
        break;
      case Event::Field::Type::string:
        append_json_string(out, text(*value));
        break;
    }
  }
  out += "}}"sv;
}

void append_packed_line(std::string& out, const PackedEvent& event) {
  append_line(out, event.seq, event.at, event.node.str(), *event.kind, event.injected, event.fields,
              [&event](const Event::Field& field) { return event.text(field); });
}

}  // namespace

void append_json_line(std::string& out, const TraceEvent& event) {
  append_line(out, event.seq, event.at, event.node.str(), event.event.kind(), event.injected,
              event.event.fields(),
              [&event](const Event::Field& field) { return event.event.text(field); });
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
  std::string piece;
  piece.reserve(piece_bytes + 4096);
  history.visit_packed([&](const PackedEvent& event) {
    append_packed_line(piece, event);
    piece += '\n';
    if (piece.size() >= piece_bytes) {
      sink(piece);
      piece.clear();
    }
  });
  if (!piece.empty()) sink(piece);
}

std::string hash_jsonl(const History& history) {
  std::uint64_t hash = fnv1a64("");
  std::string line;
  history.visit_packed([&](const PackedEvent& event) {
    line.clear();
    append_packed_line(line, event);
    line += '\n';
    hash = fnv1a64(line, hash);
  });
  return hex64(hash);
}

std::string Trace::to_jsonl() const { return render_jsonl(events_); }

std::string hex64(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string Trace::hash() const { return hash_jsonl(events_); }

History Trace::take() { return std::move(events_); }

}  // namespace onejob::sim
