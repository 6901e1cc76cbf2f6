#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <sched.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "system/ports/unique_function.hpp"

#include "harness/bench/bench.hpp"
#include "harness/bench/generated_load.hpp"
#include "harness/fuzz/campaign.hpp"
#include "harness/scenario/runner.hpp"
#include "harness/sim/rng.hpp"
#include "harness/sim/sim_loop.hpp"

namespace onejob::bench {
namespace {

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// The baseline's type-erased handler: one allocation each, as the simulator's handlers were when
// the loop figure was first measured. Its own type, kept as it is, so that a change to the
// simulator's UniqueFunction moves the subject of the figure and never its baseline.
class BoxedHandler {
 public:
  template <typename F>
  explicit BoxedHandler(F f) : impl_(std::make_unique<Impl<F>>(std::move(f))) {}
  void operator()() { impl_->call(); }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual void call() = 0;
  };
  template <typename F>
  struct Impl final : Base {
    explicit Impl(F f) : fn(std::move(f)) {}
    void call() override { fn(); }
    F fn;
  };
  std::unique_ptr<Base> impl_;
};

// The baselines: the simulator's own queue discipline (a binary heap on (instant, tie, seq) of
// type-erased handlers) with nothing else: `actors` handlers that each run, draw a delay and
// queue themselves again, until `events` have run. `through_asio`: each popped handler is
// posted to an io_context and run by poll(), the cost of handing every event through Asio.
double bare_loop_rate(std::uint64_t events, bool through_asio) {
  struct Entry {
    std::int64_t at;
    std::uint64_t tie;
    std::uint64_t seq;
    BoxedHandler handler;
  };
  auto later = [](const Entry& a, const Entry& b) {
    if (a.at != b.at) return a.at > b.at;
    if (a.tie != b.tie) return a.tie > b.tie;
    return a.seq > b.seq;
  };
  std::vector<Entry> queue;
  sim::Rng rng(7);
  std::int64_t now = 0;
  std::uint64_t seq = 0;
  std::uint64_t ran = 0;
  boost::asio::io_context io{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE};  // as SimLoop's
  std::function<void()> act;  // what every handler does: count, and queue the next one
  act = [&] {
    ++ran;
    if (ran + queue.size() >= events) return;
    queue.push_back(
        Entry{now + rng.between(1, 1000), rng.next(), seq++, BoxedHandler([&] { act(); })});
    std::push_heap(queue.begin(), queue.end(), later);
  };
  for (int i = 0; i < 1000; ++i) {
    queue.push_back(Entry{rng.between(1, 1000), rng.next(), seq++, BoxedHandler([&] { act(); })});
    std::push_heap(queue.begin(), queue.end(), later);
  }
  const double start = cpu_seconds();
  while (!queue.empty()) {
    std::pop_heap(queue.begin(), queue.end(), later);
    Entry entry = std::move(queue.back());
    queue.pop_back();
    now = entry.at;
    if (through_asio) {
      boost::asio::post(io, std::move(entry.handler));
      io.poll();
      io.restart();
    } else {
      entry.handler();
    }
  }
  return static_cast<double>(ran) / std::max(cpu_seconds() - start, 1e-9);
}

// One generated load, measured in a child process.
struct LoadFigures {
  int jobs = 0;
  double cpu_s = 0;
  double peak_mb = 0;
  std::uint64_t loop_events = 0;
  std::uint64_t trace_events = 0;
  int passed = 0;
};

LoadFigures measure_load(int jobs) {
  int pipe_fds[2];
  LoadFigures figures;
  figures.jobs = jobs;
  if (pipe(pipe_fds) != 0) return figures;
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    const double start = cpu_seconds();
    scenario::RunResult result;
    try {
      result =
          scenario::run_scenario(bench::generated_load(static_cast<std::uint64_t>(jobs), true));
    } catch (const std::exception& error) {
      std::fprintf(stderr, "onejob: bench: the load of %d jobs: %s\n", jobs, error.what());
      _exit(1);
    }
    LoadFigures mine;
    mine.jobs = jobs;
    mine.cpu_s = cpu_seconds() - start;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    mine.peak_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
    mine.loop_events = result.loop_events;
    mine.trace_events = result.history.size();
    mine.passed = result.passed() ? 1 : 0;
    if (write(pipe_fds[1], &mine, sizeof mine) != static_cast<ssize_t>(sizeof mine)) _exit(1);
    _exit(0);
  }
  close(pipe_fds[1]);
  if (read(pipe_fds[0], &figures, sizeof figures) != static_cast<ssize_t>(sizeof figures)) {
    figures.jobs = -jobs;  // the child died
  }
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return figures;
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

namespace {

// The same actors as bare_loop_rate (1,000 of them, each drawing a delay of 1-1000 us and
// queueing itself again, until `events` have run), through the simulator's own loop: its queue,
// its tie-break draw and its poll of the io_context after every event. `coroutines`: each actor
// is a coroutine that co_awaits SimLoop::sleep_for, as the system's loops do.
double sim_loop_rate(std::uint64_t events, bool coroutines) {
  sim::SimLoop loop(sim::Rng(11));
  sim::Rng rng(7);
  std::uint64_t ran = 0;
  std::function<void()> act;
  act = [&] {
    ++ran;
    if (ran + loop.pending() >= events) return;
    loop.schedule_after(Duration(rng.between(1, 1000)), [&] { act(); });
  };
  const auto actor = [&]() -> Async<void> {
    for (;;) {
      co_await loop.sleep_for(Duration(rng.between(1, 1000)));
      if (++ran >= events) co_return;
    }
  };
  for (int i = 0; i < 1000; ++i) {
    if (coroutines) {
      boost::asio::co_spawn(loop.io(), actor(), boost::asio::detached);
    } else {
      loop.schedule_after(Duration(rng.between(1, 1000)), [&] { act(); });
    }
  }
  loop.run(Instant(Duration(0)));  // the coroutines start and queue their first sleeps
  const double start = cpu_seconds();
  loop.run();
  const double seconds = std::max(cpu_seconds() - start, 1e-9);
  loop.shutdown();
  return static_cast<double>(ran) / seconds;
}

// The machine the figures come from, printed beside them.
void describe_machine() {
  std::string model = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.starts_with("model name")) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  utsname system{};
  uname(&system);
  std::printf("  machine: %s, %ld CPUs online, Linux %s; built by GCC %s%s\n", model.c_str(),
              sysconf(_SC_NPROCESSORS_ONLN), system.release, __VERSION__,
#ifdef NDEBUG
              ", optimized"
#else
              ", with assertions of the standard library and no optimization"
#endif
  );
}

// Pins this process to the last CPU it may run on while it lives, so that every side of the loop
// figure runs on the same core; then gives back the CPUs it had (the loads and the fuzzer that
// follow use them). where() says which CPU, or why not.
class PinnedToOneCpu {
 public:
  PinnedToOneCpu() {
    CPU_ZERO(&allowed_);
    if (sched_getaffinity(0, sizeof allowed_, &allowed_) != 0) {
      where_ = "not pinned (the affinity cannot be read)";
      return;
    }
    int last = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &allowed_)) last = cpu;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    if (last >= 0) CPU_SET(last, &one);
    if (last < 0 || sched_setaffinity(0, sizeof one, &one) != 0) {
      where_ = "not pinned (the affinity cannot be set)";
      return;
    }
    pinned_ = true;
    where_ = "pinned to CPU " + std::to_string(last);
  }
  ~PinnedToOneCpu() {
    if (pinned_) sched_setaffinity(0, sizeof allowed_, &allowed_);
  }
  PinnedToOneCpu(const PinnedToOneCpu&) = delete;
  PinnedToOneCpu& operator=(const PinnedToOneCpu&) = delete;
  const std::string& where() const { return where_; }

 private:
  cpu_set_t allowed_;
  bool pinned_ = false;
  std::string where_;
};

struct Spread {
  double median;
  double low;
  double high;
};

Spread spread_of(const std::vector<double>& values) {
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return {median(values), *low, *high};
}

}  // namespace

void simulator(const Settings& flags, const std::vector<scenario::ScenarioSpec>& catalogue) {
  // Every round runs each side once, in an order that turns round each time (A B C D E, then
  // E D C B A): whatever drifts over the run (the clock's frequency, a neighbour) falls on every
  // side alike. Each side's figure is the median of its rounds; each ratio the median of the
  // per-round ratios, with their range.
  describe_machine();
  std::optional<PinnedToOneCpu> pinned(std::in_place);
  const std::uint64_t events = flags.quick ? 300'000 : 2'000'000;
  enum LoopSide { kBare, kAsio, kSimLoop, kSimCoroutines, kCatalogue, kSides };
  const char* names[kSides] = {"bare priority-queue loop", "the same, each event through Asio",
                               "SimLoop, the same handlers", "SimLoop, actors as coroutines",
                               "the catalogue, whole runs"};
  std::vector<std::vector<double>> rates(kSides);
  std::uint64_t catalogue_events = 0;
  double catalogue_runs_per_s = 0;
  std::vector<double> runs_per_s;
  // A warm-up pass first (the first catalogue pass pays for the pages it touches first), left out.
  for (const auto& spec : catalogue) scenario::run_scenario(spec);
  for (int round = 0; round < flags.rounds; ++round) {
    for (int k = 0; k < kSides; ++k) {
      const int side = round % 2 == 0 ? k : kSides - 1 - k;
      switch (side) {
        case kBare:
          rates[side].push_back(bare_loop_rate(events, false));
          break;
        case kAsio:
          rates[side].push_back(bare_loop_rate(events, true));
          break;
        case kSimLoop:
          rates[side].push_back(sim_loop_rate(events, false));
          break;
        case kSimCoroutines:
          rates[side].push_back(sim_loop_rate(events, true));
          break;
        default: {
          std::uint64_t round_events = 0;
          const double start = cpu_seconds();
          for (const auto& spec : catalogue)
            round_events += scenario::run_scenario(spec).loop_events;
          const double seconds = std::max(cpu_seconds() - start, 1e-9);
          rates[side].push_back(static_cast<double>(round_events) / seconds);
          runs_per_s.push_back(static_cast<double>(catalogue.size()) / seconds);
          catalogue_events = round_events;
        }
      }
    }
  }
  catalogue_runs_per_s = median(runs_per_s);
  std::printf(
      "simulator (CPU time; %d interleaved rounds, %s; medians, with the range over "
      "rounds)\n",
      flags.rounds, pinned->where().c_str());
  std::printf(
      "  loop events/s on one workload, %llu events of 1,000 actors each re-queueing "
      "after a drawn delay:\n",
      static_cast<unsigned long long>(events));
  for (int side = kBare; side <= kSimCoroutines; ++side) {
    const Spread rate = spread_of(rates[side]);
    std::printf("    %-36s %6.2f M/s (%.2f-%.2f, spread %2.0f%%)", names[side], rate.median / 1e6,
                rate.low / 1e6, rate.high / 1e6, 100 * (rate.high - rate.low) / rate.median);
    if (side != kBare) {
      std::vector<double> ratios;
      for (int r = 0; r < flags.rounds; ++r) ratios.push_back(rates[side][r] / rates[kBare][r]);
      const Spread ratio = spread_of(ratios);
      std::printf("   ratio %.2f (%.2f-%.2f)", ratio.median, ratio.low, ratio.high);
    }
    std::printf("\n");
  }
  const Spread whole = spread_of(rates[kCatalogue]);
  std::printf(
      "  the catalogue (%zu scenarios, %llu loop events a round), whole runs: building "
      "each world, the system's work, faults, the trace, every invariant check\n",
      catalogue.size(), static_cast<unsigned long long>(catalogue_events));
  std::printf("    %-36s %6.2f M/s (%.2f-%.2f, spread %2.0f%%), %.0f runs/s\n", names[kCatalogue],
              whole.median / 1e6, whole.low / 1e6, whole.high / 1e6,
              100 * (whole.high - whole.low) / whole.median, catalogue_runs_per_s);
  std::vector<double> bare = rates[kBare];
  pinned.reset();

  std::vector<int> sizes =
      flags.quick ? std::vector<int>{1'000, 4'000} : std::vector<int>{1'000, 10'000, 100'000};
  if (flags.jobs > 0) sizes = {flags.jobs};
  std::printf("  generated loads with faults (one child process each):\n");
  std::printf("    %8s %9s %9s %9s %10s %12s %11s %9s %s\n", "jobs", "CPU s", "peak MB", "KB/job",
              "events/s", "vs bare", "trace evs", "B/event", "verdict");
  std::vector<LoadFigures> loads;
  for (const int jobs : sizes) {
    const LoadFigures figures = measure_load(jobs);
    loads.push_back(figures);
    if (figures.jobs < 0) {
      std::printf("    %8d  the child process died\n", jobs);
      continue;
    }
    const double rate = static_cast<double>(figures.loop_events) / figures.cpu_s;
    std::printf("    %8d %9.2f %9.0f %9.1f %8.2f M/s %11.2f %11llu %9.0f %s\n", jobs, figures.cpu_s,
                figures.peak_mb, figures.peak_mb * 1024.0 / jobs, rate / 1e6, rate / median(bare),
                static_cast<unsigned long long>(figures.trace_events),
                figures.peak_mb * 1024.0 * 1024.0 / static_cast<double>(figures.trace_events),
                figures.passed ? "passed" : "FAILED");
  }
  for (std::size_t i = 1; i < loads.size(); ++i) {
    const auto& a = loads[i - 1];
    const auto& b = loads[i];
    if (a.jobs <= 0 || b.jobs <= 0) continue;
    std::printf("    growth exponent %d -> %d jobs: CPU %.2f, memory %.2f (linear is 1.00)\n",
                a.jobs, b.jobs, std::log(b.cpu_s / a.cpu_s) / std::log(1.0 * b.jobs / a.jobs),
                std::log(b.peak_mb / a.peak_mb) / std::log(1.0 * b.jobs / a.jobs));
  }
}

void fuzzer(const Settings& flags) {
  const std::uint64_t cases = flags.quick ? 2'000 : 20'000;
  auto rate_of = [&](int processes) {
    const auto started = std::chrono::steady_clock::now();
    std::vector<pid_t> children;
    for (int p = 1; p <= processes; ++p) {
      const pid_t child = fork();
      if (child == 0) {
        fuzz::CampaignOptions options;
        options.seed = 1;
        options.cases = cases;
        options.shard = static_cast<std::uint64_t>(p);
        options.shards = static_cast<std::uint64_t>(processes);
        fuzz::run_campaign(options);
        _exit(0);
      }
      children.push_back(child);
    }
    for (const pid_t child : children) waitpid(child, nullptr, 0);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return static_cast<double>(cases) / wall;
  };
  const double one = rate_of(1);
  const double two = rate_of(2);
  std::printf("fuzzer (%llu cases, seed 1; wall time)\n", static_cast<unsigned long long>(cases));
  std::printf("  cases/s, 1 process            %7.0f   per core %7.0f\n", one, one);
  std::printf("  cases/s, 2 processes          %7.0f   per core %7.0f   ratio to 1 process %.2f\n",
              two, two / 2, two / one);

  // Time to detect: cases and seconds until the first violation, per defect and seed
  // (shrinking not counted), medians over the seeds.
  const int seeds = flags.quick ? 1 : 3;
  std::printf("  time to detect each named defect (median over seeds 1..%d; no shrinking)\n",
              seeds);
  std::printf("    %-30s %8s %9s\n", "defect", "cases", "seconds");
  for (const auto& info : all_defects()) {
    std::vector<double> case_counts;
    std::vector<double> seconds;
    for (int seed = 1; seed <= seeds; ++seed) {
      fuzz::CampaignOptions options;
      options.seed = static_cast<std::uint64_t>(seed);
      options.cases = 20'000;
      options.shrink_runs_max = 0;
      options.defects.set(info.defect);
      const auto started = std::chrono::steady_clock::now();
      const auto result = fuzz::run_campaign(options);
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      // Not found within the campaign counts as one more case than it had.
      case_counts.push_back(result.failures.empty()
                                ? static_cast<double>(options.cases + 1)
                                : static_cast<double>(result.failures.front().case_index + 1));
    }
    std::printf("    %-30.*s %8.0f %9.2f\n", static_cast<int>(info.name.size()), info.name.data(),
                median(case_counts), median(seconds));
  }
}

}  // namespace onejob::bench
