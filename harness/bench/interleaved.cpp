#include "harness/bench/interleaved.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace onejob::bench {
namespace {

// A round gives each side its time in slices of about this long, in the order A B C, C B A,
// A B C, ...: the load other processes (and, in a virtual machine, the host) put on the
// machine changes from one moment to the next, and short slices make every side of a round
// sample the same moments.
constexpr double kSliceSeconds = 0.05;

}  // namespace

int passes(const Settings& flags) {
  return std::max(2, 2 * static_cast<int>(std::lround(flags.seconds / (2 * kSliceSeconds))));
}

namespace {

// Each side's rate in one round: the median of its slices' rates, so that a slice stalled by
// another process weighs no more than any other slice.
std::vector<double> round_rates(const std::vector<std::unique_ptr<Side>>& sides, Budget slice,
                                int passes) {
  std::vector<std::vector<double>> slices(sides.size());
  for (int pass = 0; pass < passes; ++pass) {
    for (std::size_t k = 0; k < sides.size(); ++k) {
      const std::size_t s = pass % 2 == 0 ? k : sides.size() - 1 - k;
      const Tally tally = sides[s]->run(slice);
      slices[s].push_back(static_cast<double>(tally.calls) / tally.seconds);
    }
  }
  std::vector<double> rates;
  for (const auto& side : slices) rates.push_back(median(side));
  return rates;
}

}  // namespace

Figure measure(const Plan& plan, const std::vector<std::unique_ptr<Side>>& sides,
               const Settings& flags) {
  Figure figure{plan.name, {}, std::vector<std::vector<double>>(sides.size())};
  for (const auto& side : sides) figure.sides.push_back(side->name());
  const int round_passes = passes(flags);
  const double slice_seconds = flags.seconds / round_passes;
  Budget slice{slice_seconds, plan.warmup_calls};
  for (int round = 0; round <= flags.rounds; ++round) {
    plan.before_round(slice.calls * round_passes);
    const std::vector<double> rates = round_rates(sides, slice, round_passes);
    plan.after_round();
    if (round == 0) {
      if (plan.warmup_calls > 0) {
        const double calls = median(rates) * slice_seconds / plan.threads;
        slice.calls = std::max<std::int64_t>(plan.warmup_calls, static_cast<std::int64_t>(calls));
      }
      continue;
    }
    for (std::size_t s = 0; s < sides.size(); ++s) figure.rates[s].push_back(rates[s]);
  }
  return figure;
}

namespace {

std::string thousands(double value) {
  const std::string digits = std::to_string(static_cast<std::int64_t>(value + 0.5));
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

// The geometric mean. Over rounds it makes the figure's ratio one number however it is taken:
// the ratio of two sides' geometric-mean rates is exactly the geometric mean of their per-round
// ratios, so printed rates and printed ratio never disagree, even when the machine's speed
// changed between rounds (as a virtual machine's does) and the medians of the two sides' rates
// came from different rounds.
double geometric_mean(const std::vector<double>& values) {
  double logs = 0;
  for (const double value : values) logs += std::log(value);
  return std::exp(logs / static_cast<double>(values.size()));
}

// (max - min) / geometric mean of a side's per-round rates.
double relative_spread(const std::vector<double>& rates) {
  const auto [low, high] = std::minmax_element(rates.begin(), rates.end());
  return (*high - *low) / geometric_mean(rates);
}

}  // namespace

void print_figure(const Figure& figure) {
  std::printf("  %s\n   ", figure.name.c_str());
  for (std::size_t s = 0; s < figure.sides.size(); ++s) {
    std::printf(" %s %s/s (spread %.0f%%)%s", figure.sides[s].c_str(),
                thousands(geometric_mean(figure.rates[s])).c_str(),
                100 * relative_spread(figure.rates[s]), s + 1 < figure.sides.size() ? "," : "\n");
  }
  for (std::size_t s = 1; s < figure.sides.size(); ++s) {
    std::vector<double> ratios;
    for (std::size_t r = 0; r < figure.rates[0].size(); ++r) {
      ratios.push_back(figure.rates[0][r] / figure.rates[s][r]);
    }
    const auto [low, high] = std::minmax_element(ratios.begin(), ratios.end());
    std::printf("    against %-9s %.2f   per round: median %.2f, range %.2f-%.2f\n",
                figure.sides[s].c_str(),
                geometric_mean(figure.rates[0]) / geometric_mean(figure.rates[s]), median(ratios),
                *low, *high);
  }
  std::fflush(stdout);
}

}  // namespace onejob::bench
