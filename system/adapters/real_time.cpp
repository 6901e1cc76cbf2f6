#include "system/adapters/real_time.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "system/domain/check.hpp"

namespace onejob {

Instant SteadyClock::now() const {
  return Instant(std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - start_));
}

Instant WallClock::now() const {
  return Instant(
      std::chrono::duration_cast<Duration>(std::chrono::system_clock::now().time_since_epoch()));
}

Async<void> AsioTimer::sleep_for(Duration delay) {
  boost::asio::steady_timer timer(io_, delay);
  co_await timer.async_wait(use_async);
}

SystemRandom::SystemRandom() : engine_(std::random_device{}()) {}

std::uint64_t SystemRandom::below(std::uint64_t bound) {
  ONEJOB_ASSERT(bound > 0, "Random::below needs a bound above 0");
  return std::uniform_int_distribution<std::uint64_t>(0, bound - 1)(engine_);
}

}  // namespace onejob
