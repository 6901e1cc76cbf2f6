#pragma once

#include <utility>

#include <cstdint>
#include <deque>
#include <limits>
#include <stdexcept>
#include <vector>

#include "system/domain/check.hpp"

namespace onejob {

// A table's rows by an id its sequence gave (nextval: increasing, with a gap wherever an insert
// was refused after taking its id), with a std::map's meaning for the operations the memory store
// uses: one row per id, emplace keeps the first, rows visited in id order. Rows lie in one deque
// in the order they came, which is id order, and an index from id to row makes a lookup two
// reads instead of a walk down a tree of a hundred thousand nodes; the index costs 4 bytes per id
// the sequence gave, gaps included. References to rows stay valid as rows are added (a deque's).
// A new id no greater than the last row's is a programming error: a sequence never gives one.
template <typename Id, typename V>
class SequenceTable {
 public:
  using value_type = std::pair<const Id, V>;
  using Rows = std::deque<value_type>;
  using iterator = typename Rows::iterator;
  using const_iterator = typename Rows::const_iterator;

  iterator begin() { return rows_.begin(); }
  iterator end() { return rows_.end(); }
  const_iterator begin() const { return rows_.begin(); }
  const_iterator end() const { return rows_.end(); }
  std::size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }

  iterator find(Id id) { return rows_.begin() + static_cast<std::ptrdiff_t>(index_of(id)); }
  const_iterator find(Id id) const {
    return rows_.begin() + static_cast<std::ptrdiff_t>(index_of(id));
  }
  bool contains(Id id) const { return index_of(id) != rows_.size(); }
  const V& at(Id id) const {
    const std::size_t index = index_of(id);
    if (index == rows_.size()) throw std::out_of_range("SequenceTable::at: no row with that id");
    return rows_[index].second;
  }
  V& at(Id id) { return const_cast<V&>(std::as_const(*this).at(id)); }

  // The row of `id`, made from `value` if there is none (as std::map::emplace).
  std::pair<iterator, bool> emplace(Id id, V value) {
    if (const std::size_t index = index_of(id); index != rows_.size()) {
      return {rows_.begin() + static_cast<std::ptrdiff_t>(index), false};
    }
    ONEJOB_ASSERT(id > 0, "SequenceTable: an id a sequence never gives (not positive)");
    ONEJOB_ASSERT(rows_.empty() || id > rows_.back().first,
                  "SequenceTable: an id below the last row's (a sequence only increases)");
    ONEJOB_ASSERT(rows_.size() < std::numeric_limits<std::uint32_t>::max() - 1,
                  "SequenceTable: more rows than its index can number");
    const auto slot = static_cast<std::size_t>(id);
    if (position_.size() <= slot) position_.resize(slot + 1, 0);
    position_[slot] = static_cast<std::uint32_t>(rows_.size() + 1);
    rows_.emplace_back(id, std::move(value));
    return {std::prev(rows_.end()), true};
  }
  // The row of `id`, made empty if there is none (as std::map::operator[]).
  V& operator[](Id id) {
    const std::size_t index = index_of(id);
    if (index != rows_.size()) return rows_[index].second;
    return emplace(id, V{}).first->second;
  }

 private:
  // Where `id`'s row is, or size() when there is none.
  std::size_t index_of(Id id) const {
    if (id <= 0 || static_cast<std::uint64_t>(id) >= position_.size()) return rows_.size();
    const std::uint32_t position = position_[static_cast<std::size_t>(id)];
    return position == 0 ? rows_.size() : position - 1;
  }

  Rows rows_;
  std::vector<std::uint32_t> position_;  // by id: its row's index + 1, or 0 for none
};

}  // namespace onejob
