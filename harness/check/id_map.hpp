#pragma once

#include <utility>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <vector>

namespace onejob::check {

// The history model's records by id (jobs, attempts, client requests): a std::map's meaning
// (one record per id, visited in id order, emplace keeps the first) held as one sorted deque.
// Ids come nearly in order and nearly dense (a sequence's, a timeline's numbers, with a gap where
// a refused insert took one), so while the ids span at most a few times as many numbers as there
// are records, an index from each number in that span to its record's place finds a record in
// two reads; ids spread wider are found by binary search. An id out of order is inserted where it
// belongs, moving the records on its nearer side and renumbering the index after it: cheap for
// the few ids a run's concurrency reorders, linear for each id of a run whose ids came in no order
// (a map's insert is logarithmic). Against a map: no node and no pointers per record, and a walk
// over every record reads them in the order they lie. References stay valid while records are
// added at the end (a deque's), not when one is inserted before others.
// (The memory store's SequenceTable, system/adapters/sequence_table.hpp, is its sibling for ids
// that only ever increase: it always indexes them, and refuses one out of order.)
template <typename V>
class IdMap {
 public:
  using key_type = std::int64_t;
  using mapped_type = V;
  using value_type = std::pair<std::int64_t, V>;
  using Items = std::deque<value_type>;
  using iterator = typename Items::iterator;
  using const_iterator = typename Items::const_iterator;

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }

  iterator find(std::int64_t id) { return items_.begin() + index_of(id); }
  const_iterator find(std::int64_t id) const { return items_.begin() + index_of(id); }
  bool contains(std::int64_t id) const { return index_of(id) != items_.size(); }

  const V& at(std::int64_t id) const {
    const std::size_t index = index_of(id);
    if (index == items_.size()) throw std::out_of_range("IdMap::at: no record with that id");
    return items_[index].second;
  }
  V& at(std::int64_t id) { return const_cast<V&>(std::as_const(*this).at(id)); }

  // The record of `id`, made from `args` if there is none (as std::map::try_emplace).
  template <typename... Args>
  std::pair<iterator, bool> try_emplace(std::int64_t id, Args&&... args) {
    if (items_.empty() || items_.back().first < id) {
      items_.emplace_back(std::piecewise_construct, std::forward_as_tuple(id),
                          std::forward_as_tuple(std::forward<Args>(args)...));
      indexed(id, items_.size() - 1);
      return {std::prev(items_.end()), true};
    }
    const std::size_t found = index_of(id);
    if (found != items_.size()) return {items_.begin() + found, false};
    const auto at = std::ranges::upper_bound(items_, id, {}, &value_type::first);
    const auto place = static_cast<std::size_t>(at - items_.begin());
    items_.emplace(at, std::piecewise_construct, std::forward_as_tuple(id),
                   std::forward_as_tuple(std::forward<Args>(args)...));
    indexed(id, place);
    return {items_.begin() + static_cast<std::ptrdiff_t>(place), true};
  }
  std::pair<iterator, bool> emplace(std::int64_t id, V value) {
    return try_emplace(id, std::move(value));
  }
  V& operator[](std::int64_t id) { return try_emplace(id).first->second; }

 private:
  // Where `id`'s record is, or size() when there is none.
  std::size_t index_of(std::int64_t id) const {
    if (items_.empty()) return 0;
    if (indexed_) {
      if (id < base_) return items_.size();
      const std::uint64_t offset =
          static_cast<std::uint64_t>(id) - static_cast<std::uint64_t>(base_);
      if (offset >= slots_.size()) return items_.size();
      const std::uint32_t slot = slots_[static_cast<std::size_t>(offset)];
      return slot == 0 ? items_.size() : slot - 1;
    }
    // Where a dense run of ids from the first would hold it.
    const std::int64_t first = items_.front().first;
    if (id >= first) {
      // Unsigned: the distance between two ids may not fit an int64_t.
      const std::uint64_t dense =
          static_cast<std::uint64_t>(id) - static_cast<std::uint64_t>(first);
      if (dense < items_.size() && items_[static_cast<std::size_t>(dense)].first == id) {
        return static_cast<std::size_t>(dense);
      }
    }
    const auto found = std::ranges::lower_bound(items_, id, {}, &value_type::first);
    return found != items_.end() && found->first == id
               ? static_cast<std::size_t>(found - items_.begin())
               : items_.size();
  }

  // Notes in the index that the record of `id` now lies at `place`, and every record after it
  // one place further on; gives the index up for good once the ids spread too wide for it.
  void indexed(std::int64_t id, std::size_t place) {
    if (!indexed_) return;
    const std::int64_t low = items_.front().first;
    // Unsigned: the distance between two ids may not fit an int64_t.
    const std::uint64_t span =
        static_cast<std::uint64_t>(items_.back().first) - static_cast<std::uint64_t>(low);
    if (span >= kSpanPerRecord * items_.size() + kSpanSlack || items_.size() >= UINT32_MAX) {
      indexed_ = false;
      slots_ = {};
      return;
    }
    if (items_.size() == 1 || id < base_) {  // the first record, or one before all the others
      base_ = low;
      slots_.assign(static_cast<std::size_t>(span) + 1, 0);
    } else if (static_cast<std::size_t>(span) >= slots_.size()) {
      slots_.resize(static_cast<std::size_t>(span) + 1, 0);
    }
    for (std::size_t i = place; i < items_.size(); ++i) {
      const std::uint64_t offset =
          static_cast<std::uint64_t>(items_[i].first) - static_cast<std::uint64_t>(base_);
      slots_[static_cast<std::size_t>(offset)] = static_cast<std::uint32_t>(i + 1);
    }
  }

  // The index is kept while the ids span fewer numbers than this many per record, plus the slack.
  static constexpr std::uint64_t kSpanPerRecord = 4;
  static constexpr std::uint64_t kSpanSlack = 1024;

  Items items_;
  // While `indexed_`: for each number from base_ (the first id) to the last id, its record's
  // place + 1, or 0 where no record has that id.
  bool indexed_ = true;
  std::int64_t base_ = 0;
  std::vector<std::uint32_t> slots_;
};

}  // namespace onejob::check
