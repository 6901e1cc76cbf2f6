#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "system/ports/clock.hpp"
#include "system/ports/event_sink.hpp"

#include "harness/sim/packed_history.hpp"

namespace onejob::sim {

// The history of one run, in the order events happened. Its JSON Lines form is the run's
// canonical trace; the hash of those bytes is the run's fingerprint: same build, scenario and
// seed give the same hash.
class Trace {
 public:
  explicit Trace(const Clock& clock) : clock_(clock) {}

  // Records the event; returns its seq.
  std::uint64_t record(NodeName node, const Event& event, bool injected = false);

  const History& events() const { return events_; }
  // Hands the history over (moved, not copied); the trace is empty afterwards.
  History take();
  std::string to_jsonl() const;
  // 16 hex digits of FNV-1a 64 over to_jsonl().
  std::string hash() const;

 private:
  const Clock& clock_;
  History events_;
  Instant last_at_{};  // the latest event's instant
};

// One JSON object (no newline): {"seq","t_us","node","kind",["injected",]"data":{fields}},
// written directly, byte for byte what nlohmann::ordered_json's dump() makes of it.
std::string to_json_line(const TraceEvent& event);
void append_json_line(std::string& out, const TraceEvent& event);
// `text` as a JSON string exactly as nlohmann::json's dump() writes it (ensure_ascii off, invalid
// UTF-8 replaced).
void append_json_string(std::string& out, std::string_view text);
// A whole history as JSON Lines, and the FNV-1a 64 hash of exactly those bytes (16 hex
// digits), computed line by line without holding the whole text.
std::string render_jsonl(const History& history);
// The same bytes handed to `sink` in pieces of about `piece_bytes`, in order: a history of
// millions of events is written out without holding its whole text.
void render_jsonl_pieces(const History& history, const std::function<void(std::string_view)>& sink,
                         std::size_t piece_bytes = std::size_t{1} << 20);
std::string hash_jsonl(const History& history);
std::string hex64(std::uint64_t value);
// The FNV-1a digest of `bytes` as hex64 writes it: how a trace field digests a text.
std::string fnv1a64_hex(std::string_view bytes);

// The EventSink of one simulated node: stamps each event with the node and the simulated time.
class NodeEventSink final : public EventSink {
 public:
  NodeEventSink(Trace& trace, NodeName node) : trace_(trace), node_(node) {}
  void emit(Event event) override { trace_.record(node_, event); }

 private:
  Trace& trace_;
  NodeName node_;
};

}  // namespace onejob::sim
