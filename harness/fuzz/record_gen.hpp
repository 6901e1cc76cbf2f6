#pragma once

#include <utility>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <rapidcheck.h>
#include <rapidcheck/gen/detail/ScaleInteger.h>

namespace onejob::fuzz {

// How one integer of a record is drawn: either in [lo, hi), shrinking toward lo, or one of
// `choices`, picked by `weights` (equal when empty) and never shrunk (as rc::gen::element and
// rc::gen::weightedElement). A scaled range grows with the case's size, as rc::gen::inRange's does:
// right for a magnitude (a delay, a count), wrong for a category (which step, which node), whose
// last values a size below 100 would never reach.
struct Draw {
  int lo = 0;
  int hi = 1;
  bool scaled = true;
  std::vector<int> choices{};
  std::vector<int> weights{};
};

// A magnitude in [lo, hi), its range growing with the case's size, shrinking toward lo.
inline Draw in_range(int lo, int hi) { return {.lo = lo, .hi = hi}; }
// A category in [0, n), any of them at any size, shrinking toward 0.
inline Draw pick(int n) { return {.lo = 0, .hi = n, .scaled = false}; }
// One of `choices`, equally likely, not shrunk.
inline Draw one_of(std::vector<int> choices) { return {.choices = std::move(choices)}; }
// One of `choices` by `weights`, not shrunk.
inline Draw weighted(std::vector<int> choices, std::vector<int> weights) {
  return {.choices = std::move(choices), .weights = std::move(weights)};
}

namespace detail {

inline int draw_one(const Draw& draw, rc::Random& random, int size) {
  if (draw.choices.empty()) {
    const auto span = static_cast<std::uint64_t>(draw.hi) - static_cast<std::uint64_t>(draw.lo);
    const auto range = draw.scaled ? rc::gen::detail::scaleInteger(span - 1, size) + 1 : span;
    return draw.lo + static_cast<int>(random.next() % range);
  }
  if (draw.weights.empty()) {
    return draw.choices[static_cast<std::size_t>(random.next() % draw.choices.size())];
  }
  std::uint64_t total = 0;
  for (const int weight : draw.weights) total += static_cast<std::uint64_t>(weight);
  auto pick = random.next() % total;
  for (std::size_t i = 0; i < draw.choices.size(); ++i) {
    const auto weight = static_cast<std::uint64_t>(draw.weights[i]);
    if (pick < weight) return draw.choices[i];
    pick -= weight;
  }
  return draw.choices.back();
}

// The shrinks of a record: each ranged field in turn toward its lo, the others kept.
template <std::size_t N>
class FieldShrinks {
 public:
  using Values = std::array<int, N>;
  FieldShrinks(Values values, std::shared_ptr<const std::array<Draw, N>> draws)
      : values_(values), draws_(std::move(draws)) {}

  rc::Maybe<Values> operator()() {
    while (field_ < N) {
      if (!started_) {
        started_ = true;
        const Draw& draw = (*draws_)[field_];
        current_ =
            draw.choices.empty() ? rc::shrink::towards(values_[field_], draw.lo) : rc::Seq<int>();
      }
      if (auto next = current_.next()) {
        Values shrunk = values_;
        shrunk[field_] = *next;
        return shrunk;
      }
      ++field_;
      started_ = false;
    }
    return rc::Nothing;
  }

 private:
  Values values_;
  std::shared_ptr<const std::array<Draw, N>> draws_;
  std::size_t field_ = 0;
  bool started_ = false;
  rc::Seq<int> current_;
};

}  // namespace detail

// A record of N integers drawn in one go, from one random stream: the same values, sizes and
// shrinks as N separate draws inside rc::gen::exec, at a fraction of the cost (one shrinkable for
// the record, not one per integer plus exec's bookkeeping).
template <std::size_t N>
rc::Gen<std::array<int, N>> record(std::array<Draw, N> draws) {
  auto shared = std::make_shared<const std::array<Draw, N>>(std::move(draws));
  return [shared](const rc::Random& random, int size) {
    rc::Random stream(random);
    std::array<int, N> values{};
    for (std::size_t i = 0; i < N; ++i) values[i] = detail::draw_one((*shared)[i], stream, size);
    return rc::shrinkable::shrinkRecur(values, [shared](const std::array<int, N>& from) {
      return rc::Seq<std::array<int, N>>(detail::FieldShrinks<N>(from, shared));
    });
  };
}

}  // namespace onejob::fuzz
