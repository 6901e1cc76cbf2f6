#pragma once

#include <utility>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <stdexcept>

namespace onejob::check {

// The history model's records by id (jobs, attempts, client requests): a std::map's meaning
// (one record per id, visited in id order, emplace keeps the first) held as one sorted deque.
// Ids come nearly in order and nearly dense (a sequence's, a timeline's numbers), so a record is
// found where its id says when the ids before it are all there, else by binary search. An id out
// of order is inserted where it belongs, moving the records on its nearer side: cheap for the few
// ids a run's concurrency reorders, linear for each id of a run whose ids came in no order (a
// map's insert is logarithmic). Against a map: no node and no pointers per record, and a walk
// over every record reads them in the order they lie. References stay valid while records are
// added at the end (a deque's), not when one is inserted before others.
// (The memory store's SequenceTable, system/adapters/sequence_table.hpp, is its sibling for ids
// that only ever increase: it indexes every id instead, and refuses one out of order.)
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
      return {std::prev(items_.end()), true};
    }
    const std::size_t found = index_of(id);
    if (found != items_.size()) return {items_.begin() + found, false};
    const auto at = std::ranges::upper_bound(items_, id, {}, &value_type::first);
    return {items_.emplace(at, std::piecewise_construct, std::forward_as_tuple(id),
                           std::forward_as_tuple(std::forward<Args>(args)...)),
            true};
  }
  std::pair<iterator, bool> emplace(std::int64_t id, V value) {
    return try_emplace(id, std::move(value));
  }
  V& operator[](std::int64_t id) { return try_emplace(id).first->second; }

 private:
  // Where `id`'s record is, or size() when there is none.
  std::size_t index_of(std::int64_t id) const {
    if (items_.empty()) return 0;
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

  Items items_;
};

}  // namespace onejob::check
