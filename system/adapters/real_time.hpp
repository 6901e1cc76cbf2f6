#pragma once

#include <chrono>
#include <cstdint>
#include <random>

#include "system/ports/clock.hpp"
#include "system/ports/random.hpp"
#include "system/ports/timer.hpp"

namespace boost::asio {
class io_context;
}

namespace onejob {

// Real time for production wiring: instants count from the clock's construction on
// std::chrono::steady_clock (never wall-clock time, which can jump).
class SteadyClock final : public Clock {
 public:
  SteadyClock() : start_(std::chrono::steady_clock::now()) {}
  Instant now() const override;

 private:
  std::chrono::steady_clock::time_point start_;
};

// Real time that several processes read alike: instants count from the Unix epoch on
// std::chrono::system_clock. A database that processes share, and that a restarted process reads
// again, holds instants (leases, deadlines) every one of them must understand; SteadyClock's
// start differs per process. The price: a step of the machine's clock moves every instant.
class WallClock final : public Clock {
 public:
  Instant now() const override;
};

// Waits on a boost::asio::steady_timer of the given io_context.
// REQUIRES: the io_context outlives the timer and every wait.
class AsioTimer final : public Timer {
 public:
  explicit AsioTimer(boost::asio::io_context& io) : io_(io) {}
  Async<void> sleep_for(Duration delay) override;

 private:
  boost::asio::io_context& io_;
};

// Randomness for production wiring: a generator seeded once from std::random_device.
class SystemRandom final : public Random {
 public:
  SystemRandom();
  std::uint64_t below(std::uint64_t bound) override;

 private:
  std::mt19937_64 engine_;
};

}  // namespace onejob
