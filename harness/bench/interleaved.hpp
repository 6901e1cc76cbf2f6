#pragma once

// The bench's interleaved measurement of PostgreSQL figures (bench_pg.cpp): each side of a figure
// keeps its threads across slices, the sides take turns in short slices (A B C, C B A, ...), and
// a figure is printed as geometric means over rounds.

#include <utility>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/bench/bench.hpp"

namespace onejob::bench {

// How long one slice runs: `seconds`, or `calls` calls on every thread.
struct Budget {
  double seconds = 0;
  std::int64_t calls = 0;
};

struct Tally {
  std::int64_t calls = 0;
  double seconds = 0;
};

// A thread's work: its i-th call (i counts on across slices).
using Step = std::function<void(std::int64_t)>;

// One side of a figure: its threads, each with its step and connection made before anything is
// timed and kept across every slice, so a slice times calls and never a connect.
class Side {
 public:
  Side(std::string name, std::vector<Step> steps) : name_{std::move(name)} {
    for (auto& step : steps) {
      threads_.emplace_back([this, step = std::move(step)] { work(step); });
    }
  }
  ~Side() {
    {
      const std::lock_guard lock{mutex_};
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& thread : threads_) thread.join();
  }
  Side(const Side&) = delete;
  Side& operator=(const Side&) = delete;

  const std::string& name() const { return name_; }

  // Every thread calls its step within `budget`; the time is from the start signal until the
  // last thread is done. Rethrows the first failure of any thread.
  Tally run(Budget budget) {
    std::chrono::steady_clock::time_point start;
    {
      const std::lock_guard lock{mutex_};
      budget_ = budget;
      finished_ = 0;
      calls_ = 0;
      start = std::chrono::steady_clock::now();
      until_ = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(budget.seconds));
      ++generation_;
    }
    wake_.notify_all();
    std::unique_lock lock{mutex_};
    done_.wait(lock, [this] { return finished_ == static_cast<int>(threads_.size()); });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (failed_) std::rethrow_exception(std::exchange(failed_, nullptr));
    return {calls_, seconds};
  }

 private:
  void work(const Step& step) {
    std::uint64_t seen = 0;
    std::int64_t next = 0;
    for (;;) {
      Budget budget;
      std::chrono::steady_clock::time_point until;
      {
        std::unique_lock lock{mutex_};
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        budget = budget_;
        until = until_;
      }
      std::int64_t mine = 0;
      std::exception_ptr failed;
      try {
        if (budget.calls > 0) {
          for (; mine < budget.calls; ++mine) step(next++);
        } else {
          for (; std::chrono::steady_clock::now() < until; ++mine) step(next++);
        }
      } catch (...) {
        failed = std::current_exception();
      }
      const std::lock_guard lock{mutex_};
      calls_ += mine;
      if (failed && !failed_) failed_ = failed;
      if (++finished_ == static_cast<int>(threads_.size())) done_.notify_one();
    }
  }

  std::string name_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  Budget budget_;
  std::chrono::steady_clock::time_point until_;
  int finished_ = 0;
  std::int64_t calls_ = 0;
  std::exception_ptr failed_;
  std::vector<std::thread> threads_;
};

struct Figure {
  std::string name;
  std::vector<std::string> sides;          // the subject (PgStore) first
  std::vector<std::vector<double>> rates;  // [side][round], the warm-up round left out
};

// What a figure needs besides its sides.
struct Plan {
  std::string name;
  int threads = 1;
  // Zero: every slice runs for its share of --seconds. Else every slice makes a fixed number of
  // calls per thread (the CAS figures, whose rows are made before each round), this many in
  // the warm-up round, then as many as the warm-up's median rate makes in the same time.
  std::int64_t warmup_calls = 0;
  // Before every round (the warm-up's too), with the calls each thread will make in it (zero
  // when slices are timed): e.g. makes the rows the round's CAS calls complete. After every
  // round: the figure's sanity checks.
  std::function<void(std::int64_t)> before_round = [](std::int64_t) {};
  std::function<void()> after_round = [] {};
};

// Slices per side and round: an even number, so each side goes first as often as last.
int passes(const Settings& flags);

// A warm-up round (discarded: it pays for plans, caches and the first pages of the indexes),
// then --rounds measured rounds.
Figure measure(const Plan& plan, const std::vector<std::unique_ptr<Side>>& sides,
               const Settings& flags);

// The figure's rates (geometric means over rounds, with their spread) and PgStore's ratio to
// each baseline, with the median and range of the per-round ratios.
void print_figure(const Figure& figure);

}  // namespace onejob::bench
