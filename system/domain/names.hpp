#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace onejob {

// One table per vocabulary: an enum's values and the names they are written as (in traces,
// scenario files, rows, reports). to_string and parse read the same table, so a value and its
// name cannot drift apart; static_assert(names_cover(table)) beside each table catches a row
// out of order or missing in the middle (a value appended to the enum without a row reads as
// `missing`).
template <typename E>
struct Named {
  E value;
  std::string_view name;
};

// The name of `value` in `table`, or `missing` when the table has no entry for it.
template <typename E, std::size_t N>
constexpr std::string_view name_of(const Named<E> (&table)[N], E value,
                                   std::string_view missing = "invalid") {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return missing;
}

// The value named `name` in `table`, if any.
template <typename E, std::size_t N>
constexpr std::optional<E> parse_name(const Named<E> (&table)[N], std::string_view name) {
  for (const auto& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

// Whether row i of `table` is for value i of a dense enum (its member `key`), for every row:
// the table lists the enum's first N values once each, in declaration order, so a lookup by value
// may index it. For any table keyed by an enum (names, marks, defects, links, faults).
template <typename Row, std::size_t N, typename E>
constexpr bool lists_in_order(const Row (&table)[N], E Row::*key) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(table[i].*key) != i) return false;
  }
  return true;
}

// lists_in_order for a Named<E> table, and no row without a name.
template <typename E, std::size_t N>
constexpr bool names_cover(const Named<E> (&table)[N]) {
  for (const auto& row : table) {
    if (row.name.empty()) return false;
  }
  return lists_in_order(table, &Named<E>::value);
}

}  // namespace onejob
