#include "harness/real/timeline_order.hpp"

#include <algorithm>

namespace onejob::real {

TimelineOrder::TimelineOrder(const std::vector<Duration>& at)
    : position_(at.size() + 1, 0), instant_(at.size(), 0), placed_(at.size(), 0) {
  for (std::size_t request = 1; request <= at.size(); ++request) order_.push_back(request);
  std::ranges::stable_sort(order_, {}, [&at](std::size_t request) { return at[request - 1]; });
  for (std::size_t i = 0; i < order_.size(); ++i) {
    position_[order_[i]] = i;
    instant_[i] = i > 0 && at[order_[i] - 1] == at[order_[i - 1] - 1] ? instant_[i - 1] : i;
  }
}

void TimelineOrder::place(std::size_t request) {
  if (request == 0 || request >= position_.size()) return;
  std::lock_guard lock(mutex_);
  char& placed = placed_[position_[request]];
  if (placed) return;
  placed = 1;
  while (placed_before_ < placed_.size() && placed_[placed_before_]) ++placed_before_;
  changed_.notify_all();
}

bool TimelineOrder::wait_for_turn(std::size_t request, std::chrono::milliseconds bound) {
  if (request == 0 || request >= position_.size()) return true;
  const std::size_t before = instant_[position_[request]];
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, bound, [&] { return placed_before_ >= before; });
}

}  // namespace onejob::real
