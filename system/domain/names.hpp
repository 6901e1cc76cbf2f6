#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace onejob {

// One table per vocabulary: an enum's values and the names they are written as (in traces,
// scenario files, rows, reports). to_string and parse read the same table, so a value and its
// name cannot drift apart, and a value added to the enum without a name is caught where the
// table is declared (see names_cover).
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

// Whether `table` lists the values 0 .. N-1 of a dense enum, each once and in declaration
// order: used as static_assert(names_cover(kTable)) beside each table.
template <typename E, std::size_t N>
constexpr bool names_cover(const Named<E> (&table)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(table[i].value) != i || table[i].name.empty()) return false;
  }
  return true;
}

}  // namespace onejob
