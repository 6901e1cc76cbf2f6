#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "system/ports/unique_function.hpp"

#include "harness/bench/bench.hpp"
#include "harness/bench/generated_load.hpp"
#include "harness/fuzz/campaign.hpp"
#include "harness/scenario/runner.hpp"
#include "harness/sim/rng.hpp"

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

// The baselines: the simulator's own queue discipline (a binary heap on (instant, tie, seq) of
// type-erased handlers) with nothing else: `actors` handlers that each run, draw a delay and
// queue themselves again, until `events` have run. `through_asio`: each popped handler is
// posted to an io_context and run by poll(), the cost of handing every event through Asio.
double bare_loop_rate(std::uint64_t events, bool through_asio) {
  struct Entry {
    std::int64_t at;
    std::uint64_t tie;
    std::uint64_t seq;
    UniqueFunction handler;
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
        Entry{now + rng.between(1, 1000), rng.next(), seq++, UniqueFunction([&] { act(); })});
    std::push_heap(queue.begin(), queue.end(), later);
  };
  for (int i = 0; i < 1000; ++i) {
    queue.push_back(Entry{rng.between(1, 1000), rng.next(), seq++, UniqueFunction([&] { act(); })});
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

void simulator(const Settings& flags, const std::vector<scenario::ScenarioSpec>& catalogue) {
  // The catalogue: every scenario once, its loop events over the CPU time it took.
  std::uint64_t events = 0;
  std::vector<double> rates;
  for (int round = 0; round < flags.rounds; ++round) {
    std::uint64_t round_events = 0;
    const double start = cpu_seconds();
    for (const auto& spec : catalogue) round_events += scenario::run_scenario(spec).loop_events;
    rates.push_back(static_cast<double>(round_events) / (cpu_seconds() - start));
    events = round_events;
  }
  const double sim_rate = median(rates);
  std::vector<double> bare;
  std::vector<double> asio;
  for (int round = 0; round < flags.rounds; ++round) {
    bare.push_back(bare_loop_rate(std::max<std::uint64_t>(events, 100'000), false));
    asio.push_back(bare_loop_rate(std::max<std::uint64_t>(events, 100'000), true));
  }
  std::printf("simulator (CPU time; %d rounds, medians)\n", flags.rounds);
  std::printf("  loop events/s, catalogue (%llu events)   %6.2f M/s\n",
              static_cast<unsigned long long>(events), sim_rate / 1e6);
  std::printf("    bare priority-queue loop               %6.2f M/s   ratio %.2f\n",
              median(bare) / 1e6, sim_rate / median(bare));
  std::printf("    the same loop through asio post+poll   %6.2f M/s   ratio %.2f\n",
              median(asio) / 1e6, sim_rate / median(asio));

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
