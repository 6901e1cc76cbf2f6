#include "harness/sim/sim_loop.hpp"

#include <algorithm>
#include <stdexcept>

#include <boost/asio/async_result.hpp>
#include <boost/asio/detail/thread_context.hpp>
#include <boost/asio/detail/thread_info_base.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/version.hpp>

#include "system/domain/check.hpp"

namespace onejob::sim {
namespace {

// Whether the io_context has anything ready, read off its scheduler's queue of ready handlers.
// poll() answers the same question, but even with nothing ready it costs about a hundred
// instructions (it builds and tears down a thread record), and the loop asks after every event:
// that was a tenth of an event's cost where actors are coroutines. The queue is private to Asio;
// a pointer to it is taken the one way the language allows (access is not checked in an explicit
// instantiation), for the Boost this project builds with (Debian 12's 1.74). With any other
// Boost the loop simply polls every time.
#if BOOST_VERSION == 107400
using ReadyQueue = boost::asio::detail::op_queue<boost::asio::detail::scheduler_operation>
    boost::asio::detail::scheduler::*;
struct ReadyQueueTag {
  friend ReadyQueue ready_queue_of(ReadyQueueTag);
};
template <ReadyQueue Member>
struct ExposeReadyQueue {
  friend ReadyQueue ready_queue_of(ReadyQueueTag) { return Member; }
};
template struct ExposeReadyQueue<&boost::asio::detail::scheduler::op_queue_>;

bool may_have_ready(const boost::asio::detail::scheduler& scheduler) {
  return !(scheduler.*ready_queue_of(ReadyQueueTag{})).empty();
}
#else
bool may_have_ready(const boost::asio::detail::scheduler&) { return true; }
#endif

}  // namespace

struct SimLoop::Io {
  // Asio recycles the memory of coroutine frames and handlers through the thread_info at the
  // top of the thread's call stack, which only run() and poll() push: handlers the loop calls
  // itself (every timer's completion, which resumes a coroutine) would allocate afresh. run()
  // pushes this one under its own key, so recycling works there too, while whether code runs
  // "inside" the io_context (what dispatch() asks, by the io_context's key) stays as it was.
  // Declared first, so destroyed after the io_context, whose frames may still be freed.
  boost::asio::detail::thread_context recycling_key;
  boost::asio::detail::thread_info_base recycling;
  // Single-threaded by contract: the scheduler takes no locks.
  boost::asio::io_context context{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE};
  // Keeps poll() from marking the context stopped when it momentarily has no work.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{
      context.get_executor()};
  // The io_context's own scheduler (its implementation, registered as its service).
  boost::asio::detail::scheduler& scheduler =
      boost::asio::use_service<boost::asio::detail::scheduler>(context);
};

namespace {

// The loop's heap has four children a node: half the levels of a binary heap, and a node's
// children (32 bytes each) lie side by side, so taking the earliest entry walks fewer cache lines.
// Entries are in a strict total order (seq is unique), so any heap yields them in one order.
constexpr std::size_t kChildren = 4;

// Restores the heap after `heap.back()` was added. `later(a, b)`: a comes after b.
template <typename T, typename Later>
void push_onto(std::vector<T>& heap, Later later) {
  std::size_t at = heap.size() - 1;
  const T moving = heap[at];
  while (at > 0) {
    const std::size_t parent = (at - 1) / kChildren;
    if (!later(heap[parent], moving)) break;
    heap[at] = heap[parent];
    at = parent;
  }
  heap[at] = moving;
}

// Removes and returns the heap's earliest entry. REQUIRES: the heap is not empty.
template <typename T, typename Later>
T pop_earliest(std::vector<T>& heap, Later later) {
  const T earliest = heap.front();
  const T moving = heap.back();
  heap.pop_back();
  const std::size_t size = heap.size();
  if (size == 0) return earliest;
  std::size_t at = 0;
  for (;;) {
    const std::size_t first = at * kChildren + 1;
    if (first >= size) break;
    const std::size_t end = std::min(first + kChildren, size);
    std::size_t child = first;
    for (std::size_t other = first + 1; other < end; ++other) {
      if (later(heap[child], heap[other])) child = other;
    }
    if (!later(moving, heap[child])) break;
    heap[at] = heap[child];
    at = child;
  }
  heap[at] = moving;
  return earliest;
}

}  // namespace

SimLoop::SimLoop(Rng tie_breaker) : io_(std::make_unique<Io>()), tie_breaker_(tie_breaker) {}

// Queued handlers may own suspended coroutine frames; destroy them before the io_context.
SimLoop::~SimLoop() { shutdown(); }

void SimLoop::shutdown() {
  queue_.clear();
  preset_.clear();
  free_slots_.clear();
  slots_.clear();
  io_.reset();
}

boost::asio::io_context& SimLoop::io() {
  ONEJOB_ASSERT(io_ != nullptr, "SimLoop used after shutdown()");
  return io_->context;
}

bool SimLoop::Later::operator()(const Entry& a, const Entry& b) const {
  if (a.at != b.at) return a.at > b.at;
  if (a.tie != b.tie) return a.tie > b.tie;
  return a.seq > b.seq;
}

void SimLoop::schedule_at(Instant at, UniqueFunction handler) {
  ONEJOB_ASSERT(at >= now_, "SimLoop::schedule_at: an instant in the past");
  ONEJOB_ASSERT(static_cast<bool>(handler), "SimLoop::schedule_at: an empty handler");
  std::size_t slot = slots_.size();
  if (free_slots_.empty()) {
    slots_.push_back(std::move(handler));
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot] = std::move(handler);
  }
  const Entry entry{at, tie_breaker_.next(), next_seq_++, slot};
  if (!started_) {
    preset_.push_back(entry);
    return;
  }
  queue_.push_back(entry);
  push_onto(queue_, Later{});
}

const SimLoop::Entry* SimLoop::earliest() const {
  if (!started_) {
    // Not sorted yet, and the heap still empty: the preset's earliest is searched for.
    if (preset_.empty()) return nullptr;
    return &*std::max_element(preset_.begin(), preset_.end(), Later{});
  }
  if (preset_.empty()) return queue_.empty() ? nullptr : &queue_.front();
  if (queue_.empty()) return &preset_.back();
  return Later{}(preset_.back(), queue_.front()) ? &queue_.front() : &preset_.back();
}

SimLoop::Entry SimLoop::take_earliest() {
  if (!preset_.empty() && (queue_.empty() || !Later{}(preset_.back(), queue_.front()))) {
    const Entry entry = preset_.back();
    preset_.pop_back();
    return entry;
  }
  return pop_earliest(queue_, Later{});
}

Async<void> SimLoop::sleep_for(Duration delay) {
  auto initiate = [this, delay](auto completion) {
    schedule_after(delay,
                   [completion = std::move(completion)]() mutable { std::move(completion)(); });
  };
  return boost::asio::async_initiate<const UseAsync&, void()>(std::move(initiate), use_async);
}

std::uint64_t SimLoop::run(Instant until) {
  std::uint64_t ran = 0;
  auto& context = io();
  const boost::asio::detail::thread_context::thread_call_stack::context recycling{
      &io_->recycling_key, io_->recycling};
  // Run from inside a handler of this io_context, what the handler posts waits in that outer
  // run's private queue, which only poll() moves over: then poll every time.
  const bool nested =
      boost::asio::detail::thread_context::thread_call_stack::contains(&io_->scheduler) != nullptr;
  if (!started_) {
    started_ = true;
    // Latest first: the earliest is taken from the back.
    std::sort(preset_.begin(), preset_.end(), Later{});
  }
  for (;;) {
    // Nothing ready, nothing for poll() to do: posts from the handlers this loop calls itself
    // (outside any run of the io_context) go straight to the scheduler's queue.
    if (nested || may_have_ready(io_->scheduler)) handled_ += context.poll();
    const Entry* next = earliest();
    if (next == nullptr || next->at > until) break;
    const Entry entry = take_earliest();
    ONEJOB_ASSERT(entry.at >= now_, "SimLoop::run: time went backwards");
    now_ = entry.at;
    // Called, not posted: a timer's completion resumes its coroutine here, and whatever that
    // posts (a spawn, a message handed on) runs in the next poll(), in the order posted. (Run
    // from inside a handler of the io_context instead, a dispatch would run at once rather than
    // in order: the traces change.)
    // Called where it lies (a deque's elements stay put as handlers queue more), and its slot
    // freed only afterwards.
    UniqueFunction& handler = slots_[entry.slot];
    struct FreeSlot {  // also when the handler throws
      SimLoop& loop;
      std::size_t slot;
      ~FreeSlot() {
        loop.slots_[slot] = UniqueFunction();
        loop.free_slots_.push_back(slot);
      }
    } free_slot{*this, entry.slot};
    handler();
    ++handled_;
    ++ran;
  }
  return ran;
}

}  // namespace onejob::sim
