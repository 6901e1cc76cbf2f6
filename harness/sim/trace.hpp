#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>

#include "system/ports/clock.hpp"
#include "system/ports/event_sink.hpp"

namespace onejob::sim {

// A node's name as a history holds it: interned, so each of millions of events holds a pointer.
class NodeName {
 public:
  NodeName() : name_(&intern_name("")) {}
  NodeName(std::string_view name) : name_(&intern_name(name)) {}  // NOLINT: implicit by design
  NodeName(const std::string& name) : NodeName(std::string_view(name)) {}  // NOLINT
  NodeName(const char* name) : NodeName(std::string_view(name)) {}         // NOLINT

  const std::string& str() const { return *name_; }
  operator const std::string&() const { return *name_; }  // NOLINT
  const char* c_str() const { return name_->c_str(); }

  friend bool operator==(NodeName a, NodeName b) { return a.name_ == b.name_; }
  friend bool operator==(NodeName a, std::string_view b) { return *a.name_ == b; }
  friend bool operator==(NodeName a, const char* b) { return *a.name_ == b; }

 private:
  const std::string* name_;
};

// One recorded event: what happened, where, and at which simulated instant.
struct TraceEvent {
  std::uint64_t seq = 0;  // 1-based position in the history
  Instant at{};
  NodeName node;
  Event event{""};
  bool injected = false;  // a fault the harness caused, as opposed to the system's own doing
};

// A deque, not a vector: a history of millions of events grows without copying itself and without
// the up-to-double spare capacity a vector keeps.
using History = std::deque<TraceEvent>;

// The history of one run, in the order events happened. Its JSON Lines form is the run's
// canonical trace; the hash of those bytes is the run's fingerprint: same build, scenario and
// seed give the same hash.
class Trace {
 public:
  explicit Trace(const Clock& clock) : clock_(clock) {}

  const TraceEvent& record(NodeName node, Event event, bool injected = false);

  const History& events() const { return events_; }
  // Hands the history over (moved, not copied); the trace is empty afterwards.
  History take();
  std::string to_jsonl() const;
  // 16 hex digits of FNV-1a 64 over to_jsonl().
  std::string hash() const;

 private:
  const Clock& clock_;
  History events_;
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

// The EventSink of one simulated node: stamps each event with the node and the simulated time.
class NodeEventSink final : public EventSink {
 public:
  NodeEventSink(Trace& trace, NodeName node) : trace_(trace), node_(node) {}
  void emit(Event event) override { trace_.record(node_, std::move(event)); }

 private:
  Trace& trace_;
  NodeName node_;
};

}  // namespace onejob::sim
