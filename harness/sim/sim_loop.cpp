#include "harness/sim/sim_loop.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>

#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace onejob::sim {

struct SimLoop::Io {
  // Single-threaded by contract: the scheduler takes no locks.
  boost::asio::io_context context{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE};
  // Keeps poll() from marking the context stopped when it momentarily has no work.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{
      context.get_executor()};
};

SimLoop::SimLoop(Rng tie_breaker) : io_(std::make_unique<Io>()), tie_breaker_(tie_breaker) {}

// Queued handlers may own suspended coroutine frames; destroy them before the io_context.
SimLoop::~SimLoop() { shutdown(); }

void SimLoop::shutdown() {
  queue_.clear();
  io_.reset();
}

boost::asio::io_context& SimLoop::io() {
  if (!io_) throw std::logic_error("SimLoop used after shutdown()");
  return io_->context;
}

bool SimLoop::later(const Entry& a, const Entry& b) {
  if (a.at != b.at) return a.at > b.at;
  if (a.tie != b.tie) return a.tie > b.tie;
  return a.seq > b.seq;
}

void SimLoop::schedule_at(Instant at, UniqueFunction handler) {
  if (at < now_) throw std::logic_error("SimLoop::schedule_at: instant is in the past");
  queue_.push_back(Entry{at, tie_breaker_.next(), next_seq_++, std::move(handler)});
  std::push_heap(queue_.begin(), queue_.end(), later);
}

Async<void> SimLoop::sleep_for(Duration delay) {
  auto initiate = [this, delay](auto completion) {
    schedule_after(delay,
                   [completion = std::move(completion)]() mutable { std::move(completion)(); });
  };
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void()>(
      std::move(initiate), boost::asio::use_awaitable);
}

std::uint64_t SimLoop::run(Instant until) {
  std::uint64_t ran = 0;
  auto& context = io();
  for (;;) {
    handled_ += context.poll();
    if (queue_.empty() || queue_.front().at > until) break;
    std::pop_heap(queue_.begin(), queue_.end(), later);
    Entry entry = std::move(queue_.back());
    queue_.pop_back();
    now_ = entry.at;
    // Called, not posted: a timer's completion resumes its coroutine here, and whatever that
    // posts (a spawn, a message handed on) runs in the next poll(), in the order posted.
    entry.handler();
    ++handled_;
    ++ran;
  }
  return ran;
}

}  // namespace onejob::sim
