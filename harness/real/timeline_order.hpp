#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

#include "system/domain/time.hpp"

namespace onejob::real {

// The order a probe's timeline reaches its target in. Requests go out in time order, each held
// until every request of an earlier instant has its place at the target: the target answered it
// (or its wait ended), a fault dropped it, or a reordering delay began. Requests of one instant
// are not held for each other. Without this, a request sent on a fresh connection (or by a
// thread the machine ran late) could reach the target after a later one. Thread-safe.
class TimelineOrder {
 public:
  // `at[n - 1]` is request n's instant.
  explicit TimelineOrder(const std::vector<Duration>& at);

  // The request numbers in time order (one instant's in number order).
  const std::vector<std::size_t>& order() const { return order_; }
  // Request `request` has its place; numbers the timeline does not have are ignored, and so is
  // a second call.
  void place(std::size_t request);
  // Blocks until every request of an earlier instant than `request`'s has its place, or `bound`
  // passes: then says whether they all had.
  bool wait_for_turn(std::size_t request, std::chrono::milliseconds bound);

 private:
  std::vector<std::size_t> order_;     // request numbers in time order
  std::vector<std::size_t> position_;  // request number -> its position in order_ ([0] unused)
  std::vector<std::size_t> instant_;   // position -> the first position of its instant
  std::mutex mutex_;                   // guards what follows
  std::condition_variable changed_;
  std::vector<char> placed_;       // by position
  std::size_t placed_before_ = 0;  // every position before this one is placed
};

}  // namespace onejob::real
