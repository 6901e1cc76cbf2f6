#pragma once

#include <utility>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <iosfwd>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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
  // The name with interned id `id` (intern_id), without looking it up.
  static NodeName of_id(std::uint32_t id) { return NodeName(&interned(id)); }

  const std::string& str() const { return *name_; }
  operator const std::string&() const { return *name_; }  // NOLINT
  const char* c_str() const { return name_->c_str(); }
  std::uint32_t id() const { return id_of_interned(*name_); }

  friend bool operator==(NodeName a, NodeName b) { return a.name_ == b.name_; }
  friend bool operator==(NodeName a, std::string_view b) { return *a.name_ == b; }
  friend bool operator==(NodeName a, const char* b) { return *a.name_ == b; }
  friend bool operator==(NodeName a, const std::string& b) { return *a.name_ == b; }
  // Joined into text as the name it is.
  friend std::string operator+(std::string a, NodeName b) { return a.append(*b.name_); }
  friend std::string operator+(const char* a, NodeName b) { return a + *b.name_; }
  friend std::string operator+(NodeName a, const std::string& b) { return *a.name_ + b; }
  friend std::string operator+(NodeName a, const char* b) { return *a.name_ + b; }
  friend std::ostream& operator<<(std::ostream& out, NodeName name);

 private:
  explicit NodeName(const std::string* name) : name_(name) {}
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

// One packed event as read in place: its fields as Event::Field values, where a string field's
// `number` is the address of its bytes (unlike an Event's offset), inside the history's own: the
// event's bytes, or the word it names. Valid while the history is.
struct PackedEvent {
  PackedEvent() = default;
  // Not copied: one is a scratch, read into event after event.
  PackedEvent(const PackedEvent&) = delete;
  PackedEvent& operator=(const PackedEvent&) = delete;

  std::uint64_t seq = 0;
  Instant at{};
  NodeName node;
  const std::string* kind = nullptr;
  bool injected = false;
  std::vector<Event::Field> fields;

  std::string_view text(const Event::Field& field) const {
    if (field.length == 0) return {};
    return {reinterpret_cast<const char*>(static_cast<std::uintptr_t>(field.number)), field.length};
  }
  // The first field named by interned id `name_id`, or nothing (as Event::find_id).
  const Event::Field* find_id(std::uint32_t name_id) const {
    for (const auto& field : fields) {
      if (field.name_id == name_id) return &field;
    }
    return nullptr;
  }
};

// The event's fields in order, as events::detail::FieldReader walks them.
inline std::span<const Event::Field> field_span(const PackedEvent& event) { return event.fields; }

// A run's history, packed: each event is a few bytes of variable-length integers (its instant,
// node, and each field's interned name, type and value) followed by its strings' bytes, in
// chunks that never move; its kind is kept beside its position. An event is unpacked into a
// TraceEvent when it is read, so a history of millions holds about a third of what the events
// themselves would. An event's seq is its position (1-based): it is not stored.
class History {
 public:
  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = TraceEvent;
    using difference_type = std::ptrdiff_t;
    using pointer = const TraceEvent*;
    using reference = const TraceEvent&;

    const_iterator() = default;
    // The event, unpacked into the iterator's own TraceEvent (its room reused from one event to
    // the next): valid until the iterator moves.
    const TraceEvent& operator*() const {
      if (unpacked_ != index_) {
        history_->read(index_, current_);
        unpacked_ = index_;
      }
      return current_;
    }
    const TraceEvent* operator->() const { return &**this; }
    const_iterator& operator++() {
      ++index_;
      return *this;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.index_ == b.index_;
    }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.index_) - static_cast<difference_type>(b.index_);
    }

   private:
    friend class History;
    const_iterator(const History* history, std::size_t index) : history_(history), index_(index) {}
    const History* history_ = nullptr;
    std::size_t index_ = 0;
    mutable TraceEvent current_;
    mutable std::size_t unpacked_ = SIZE_MAX;
  };

  std::size_t size() const { return where_.size(); }
  bool empty() const { return where_.empty(); }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

  // Event `index` (0-based), unpacked. REQUIRES: index < size().
  TraceEvent operator[](std::size_t index) const;
  // Unpacks event `index` into `into`, reusing its event's room.
  void read(std::size_t index, TraceEvent& into) const;
  // Reads event `index` in place, its strings left where they are (reusing `into`'s room).
  void read(std::size_t index, PackedEvent& into) const;
  // Event `index` unpacked, or std::out_of_range.
  TraceEvent at(std::size_t index) const;
  // Event `index`'s instant, node and kind, read without unpacking its fields (the kind without
  // reading its bytes at all).
  Instant instant(std::size_t index) const;
  NodeName node(std::size_t index) const;
  const std::string& kind(std::size_t index) const;
  // Event `index`'s kind as its interned id (intern_id), read without reading its bytes.
  std::uint32_t kind_id(std::size_t index) const {
    return static_cast<std::uint32_t>(where_[index] >> kKindShift);
  }

  // Calls `visit(const PackedEvent&)` for every event, in order, read in place.
  template <typename Visit>
  void visit_packed(Visit&& visit) const {
    PackedEvent current;
    for (std::size_t index = 0; index < size(); ++index) {
      read(index, current);
      visit(static_cast<const PackedEvent&>(current));
    }
  }
  // Calls `visit(const TraceEvent&)` for each event, in order, whose kind is one of `kinds`
  // (interned names, as Event::kind() returns them); the others are skipped without unpacking.
  template <typename Visit>
  void visit_kinds(std::initializer_list<const std::string*> kinds, Visit&& visit) const {
    TraceEvent current;
    for (std::size_t index = 0; index < size(); ++index) {
      const std::string* kind = &this->kind(index);
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) continue;
      read(index, current);
      visit(static_cast<const TraceEvent&>(current));
    }
  }

  // Appends an event at position size() + 1 (`seq` is that position, whatever `event.seq` says).
  void push_back(const TraceEvent& event) {
    append(event.at, event.node, event.event, event.injected);
  }
  void append(Instant at, NodeName node, const Event& event, bool injected);

  // Whether event `index` here and event `other_index` of `other` were recorded alike: the same
  // instant, node, kind, injected mark and fields (names, types, values, in order), compared as
  // their packed bytes and the words they name. False also when two alike events name their
  // words by other numbers (histories that went different ways before): compare their lines
  // then. REQUIRES: both histories packed in this process (names interned alike).
  bool same_event(std::size_t index, const History& other, std::size_t other_index) const;

  // Bytes held: the packed events, their positions and the words.
  std::size_t bytes() const;

  // Words (see words_) are made once the history holds this many events: they pay off in a long
  // history, and a short one (a fuzz case's) keeps its strings in its events, paying nothing for
  // looking words up.
  static constexpr std::size_t kWordsFrom = std::size_t{1} << 16;

 private:
  // Where each string field's bytes come from, once decoded: a word (its number), or the
  // event's own bytes.
  struct WordField {
    std::size_t field;
    std::uint32_t word;
  };
  // Decodes `count` fields from `in` into `out` (a string field's `number` is its offset among
  // all the event's strings, as an Event numbers them), noting the fields that are words;
  // `in` ends at the event's own string bytes, whose length it returns.
  std::size_t decode_fields(const char*& in, std::size_t count, Event::Field* out,
                            std::vector<WordField>& words) const;
  // Decodes event `index`'s fields (into room of its own), noting its words; returns where its
  // own string bytes start and how many there are.
  std::pair<const char*, std::size_t> decode_at(std::size_t index,
                                                std::vector<WordField>& words) const;
  // Calls `at(field, bytes)` for each non-empty string field of `count` decoded fields, with
  // where its bytes lie: its word's in words_, or the next of the event's own from `own` on, in
  // field order. Returns the end of the own bytes it used.
  template <typename At>
  const char* each_string(Event::Field* fields, std::size_t count,
                          const std::vector<WordField>& words, const char* own, At&& at) const;
  // The word `text` is under field `name_id`, made one if the field's words are still few;
  // kNotWord when it stays in the event's own bytes. Called only once the history is long.
  static constexpr std::uint32_t kNotWord = UINT32_MAX;
  std::uint32_t word_of(std::uint32_t name_id, std::string_view text);

  // An event's kind and where it starts: kind id << 40 | chunk << 21 | offset in the chunk (an
  // interned id has 24 bits; a chunk holds at most 2 MiB, or one bigger event at offset 0).
  using Where = std::uint64_t;
  static constexpr int kKindShift = 40;
  static constexpr int kChunkShift = 21;
  static constexpr int kChunkBits = 19;
  static constexpr Where kOffsetMask = (Where{1} << kChunkShift) - 1;
  static constexpr Where kChunkMask = (Where{1} << kChunkBits) - 1;
  // Event `index`'s packed bytes.
  std::string_view packed(std::size_t index) const;
  std::pair<std::size_t, std::size_t> read_header(std::size_t index, const char*& in, Instant& at,
                                                  NodeName& node, bool& injected) const;
  const char* start(std::size_t index) const {
    const Where where = where_[index];
    return chunks_[(where >> kChunkShift) & kChunkMask].bytes.get() + (where & kOffsetMask);
  }

  // Room for events, filled from the front; never moved once an event is in it. A full-size
  // chunk is one huge page where the system offers them (see allocate_room).
  struct FreeRoom {
    void operator()(char* room) const;
  };
  static char* allocate_room(std::size_t room);
  struct Chunk {
    explicit Chunk(std::size_t room) : bytes(allocate_room(room)), capacity(room) {}
    Chunk(const Chunk& other) : Chunk(other.used) {
      std::copy_n(other.bytes.get(), other.used, bytes.get());
      used = other.used;
    }
    Chunk(Chunk&&) noexcept = default;
    Chunk& operator=(const Chunk& other) { return *this = Chunk(other); }
    Chunk& operator=(Chunk&&) noexcept = default;
    ~Chunk() = default;

    std::unique_ptr<char[], FreeRoom> bytes;
    std::size_t used = 0;
    std::size_t capacity = 0;
  };
  std::vector<Chunk> chunks_;
  std::deque<Where> where_;  // a deque: no doubling copy as millions are added
  // Words: short strings that recur under one field name (a route, a state, a node's name),
  // kept once here while an event holds a word's number. A field name takes new words until it
  // has kWordsPerField; past that (an id, a key, a body) its strings stay in the events.
  struct FieldWord {
    std::uint64_t prefix;  // its first 8 bytes (zero-padded): most lookups stop here
    std::uint32_t length;
    std::uint32_t word;
  };
  struct FieldWords {
    std::vector<FieldWord> words;
    bool closed = false;
  };
  std::vector<std::string> words_;         // by number
  std::vector<FieldWords> field_words_;    // by field name id
  std::vector<std::uint32_t> field_word_;  // append's room: each field's word, or kNotWord
};

}  // namespace onejob::sim
