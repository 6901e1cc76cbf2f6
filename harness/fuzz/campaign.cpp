#include "harness/fuzz/campaign.hpp"

#include <utility>

#include <algorithm>
#include <array>
#include <charconv>
#include <tuple>

#include <rapidcheck.h>

#include "harness/fuzz/record_gen.hpp"
#include "harness/report/report.hpp"
#include "harness/scenario/yaml_writer.hpp"
#include "harness/sim/trace.hpp"

namespace onejob::fuzz {
namespace {

// A list of at most `most` elements (RapidCheck would otherwise draw up to its size, 100, and
// build_scenario would drop the rest). The elements keep the case's size: their magnitudes scale
// with it.
template <typename T>
rc::Gen<std::vector<T>> list(std::size_t most, rc::Gen<T> element) {
  return [most, element](const rc::Random& random, int size) {
    const int length = std::min(size, static_cast<int>(most));
    return rc::gen::container<std::vector<T>>(rc::gen::resize(size, element))(random, length);
  };
}

// Every case draws its values from here, each record of integers in one draw (record_gen.hpp):
// RapidCheck shrinks each ranged integer toward its lower bound (choices stay as drawn) and each
// list toward fewer elements.
rc::Gen<RawCase> raw_case() {
  constexpr std::size_t kRates = std::size(scenario::kFaultRates);
  std::array<Draw, 1 + kRates> link_draws;
  link_draws[0] = in_range(0, 6);
  for (std::size_t i = 1; i < link_draws.size(); ++i) link_draws[i] = in_range(0, 4);
  const auto calls =
      // mostly ok; 7 and 8 garbled (a refusal, an answer): bytes a text column cannot hold
      rc::gen::map(record<2>({one_of({0, 0, 0, 0, 1, 2, 3, 4, 5, 7, 8}),
                              one_of({0, 0, 0, 15'000, 40'000})}),  // 0: the provider's own
                   [](const std::array<int, 2>& v) {
                     return RawCall{v[0], v[1]};
                   });
  const auto provider = rc::gen::map(
      rc::gen::tuple(
          record<5>({in_range(0, 3'000), one_of({0, 1}), one_of({0, 0, 0, 1}), one_of({0, 0, 0, 1}),
                     one_of({0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4})}),
          list<RawCall>(kMaxScript, calls)),
      [](const std::tuple<std::array<int, 5>, std::vector<RawCall>>& drawn) {
        const auto& [v, script] = drawn;
        RawProvider drawn_provider;
        drawn_provider.latency_ms = v[0];
        drawn_provider.certify = v[1] == 1;
        drawn_provider.behaviour = v[2];
        drawn_provider.at_deadline = v[3] == 1;
        drawn_provider.prompt_limit = v[4];
        drawn_provider.script = script;
        return drawn_provider;
      });
  const auto link =
      rc::gen::map(record<1 + kRates>(link_draws), [](const std::array<int, 1 + kRates>& v) {
        RawLink drawn;
        drawn.latency_ms = v[0];
        std::copy(v.begin() + 1, v.end(), drawn.rates.begin());
        return drawn;
      });
  const auto fault = rc::gen::map(
      record<6>({pick(kFaultKinds), pick(16), in_range(0, 30'000), in_range(0, 20'000), pick(3),
                 in_range(0, 3)}),
      [](const std::array<int, 6>& v) { return RawFault{v[0], v[1], v[2], v[3], v[4], v[5]}; });
  // body: 66 values, so that both the 6 bodies and the 11 refused variants of a create (which read
  // it modulo 6 and 11) are drawn evenly. deep: 1 MiB bodies (8, 9) are costly, about one create
  // in 700.
  const auto step = rc::gen::map(
      record<11>({pick(kStepKinds), in_range(0, 20'000), pick(3), pick(3), pick(66), pick(4),
                  pick(3), pick(4), one_of({0, 0, 0, 0, 0, 1, 2, 3, 4}),
                  one_of({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6}),
                  weighted({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
                           {1000, 50, 50, 50, 50, 50, 50, 50, 1, 1, 50})}),
      [](const std::array<int, 11>& v) {
        return RawStep{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]};
      });
  const auto top =
      record<16>({pick(1'000'000), in_range(0, 3), in_range(0, 3), in_range(0, 20), in_range(0, 20),
                  in_range(0, 10), in_range(0, 4), in_range(0, 3), in_range(0, 3),
                  one_of({0, 0, 0, 0, 1, 1, 1, 1, 2}), one_of({0, 0, 0, 1, 2, 3, 4}),
                  one_of({1, 1, 0}), one_of({3, 3, 0, 1, 2}), one_of({4, 4, 4, 0, 1, 2}),
                  one_of({0, 0, 0, 0, 1}), one_of({0, 1, 2})});
  using Drawn = std::tuple<std::array<int, 16>, std::vector<RawProvider>, std::vector<RawLink>,
                           std::vector<RawFault>, std::vector<RawStep>>;
  return rc::gen::map(
      rc::gen::tuple(top, list<RawProvider>(kMaxProviders, provider),
                     list<RawLink>(kLinkCount, link), list<RawFault>(kMaxFaults, fault),
                     list<RawStep>(kMaxSteps, step)),
      [](const Drawn& drawn) {
        const auto& [v, providers, links, faults, steps] = drawn;
        RawCase raw;
        raw.seed = static_cast<std::uint64_t>(v[0]);
        raw.api_nodes = v[1];
        raw.workers = v[2];
        raw.deadline_s = v[3];
        raw.lease_extra_s = v[4];
        raw.reconcile_s = v[5];
        raw.client_retries = v[6];
        raw.lb_retries = v[7];
        raw.clients = v[8];
        raw.owners = v[9];
        raw.profile = v[10];
        raw.reconciler = v[11];
        raw.capacity = v[12];
        raw.attempt_limit = v[13];
        raw.edge = v[14];
        raw.read_back = v[15];
        raw.providers = providers;
        raw.links = links;
        raw.faults = faults;
        raw.steps = steps;
        return raw;
      });
}

// Cases end once nothing is left to happen rather than simulating idle minutes (and the files
// that reproduce them say so: as_campaign_runs).
constexpr bool kCasesStopWhenQuiescent = true;

// `traced`: with the trace hashed, for what a failure reports.
scenario::RunOptions case_options(const CampaignOptions& campaign, bool traced) {
  return {.seed = std::nullopt,
          .make_store = campaign.make_store,
          .stop_when_quiescent = kCasesStopWhenQuiescent,
          .trace_text = traced,
          .defects = campaign.defects};
}

// splitmix64: the case's own seed from the campaign's seed and the case index.
std::uint64_t case_seed(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + index + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// RapidCheck's size grows with the case index, as in its own runs: small cases first.
int case_size(std::uint64_t index) { return static_cast<int>(index % 100); }

struct Shrunk {
  rc::Shrinkable<RawCase> value;
  scenario::RunResult run;
  std::vector<std::size_t> path{};
  int runs = 0;
};

// The run's first violation of `rule`, or nullptr.
const check::Violation* violation_of(const scenario::RunResult& run, const std::string& rule) {
  auto found = std::ranges::find(run.violations, rule, &check::Violation::rule);
  return found == run.violations.end() ? nullptr : &*found;
}

// Case `index` of the campaign with `seed`: drawn from those two alone.
rc::Shrinkable<RawCase> draw_case(const rc::Gen<RawCase>& generator, std::uint64_t seed,
                                  std::uint64_t index) {
  return generator(rc::Random(case_seed(seed, index)), case_size(index));
}

// Greedy shrinking, as RapidCheck does it: adopt the first smaller case that still breaks the
// same rule, and start again from it, until no smaller case does or the budget is spent.
Shrunk shrink(rc::Shrinkable<RawCase> failing, scenario::RunResult run, const std::string& rule,
              const std::string& name, int budget, const scenario::RunOptions& fast) {
  Shrunk result{std::move(failing), std::move(run), {}, 0};
  bool smaller = true;
  while (smaller && result.runs < budget) {
    smaller = false;
    auto candidates = result.value.shrinks();
    for (std::size_t position = 0; auto candidate = candidates.next(); ++position) {
      if (++result.runs > budget) break;
      auto candidate_run = scenario::run_scenario(build_scenario(candidate->value(), name), fast);
      if (violation_of(candidate_run, rule) == nullptr) continue;
      result.value = std::move(*candidate);
      result.run = std::move(candidate_run);
      result.path.push_back(position);
      smaller = true;
      break;
    }
  }
  return result;
}

}  // namespace

std::string case_name(std::uint64_t seed, std::uint64_t case_index) {
  return "fuzz-" + std::to_string(seed) + "-" + std::to_string(case_index);
}

std::string to_string(const CaseId& id) {
  std::string text = std::to_string(id.seed) + ":" + std::to_string(id.index);
  for (std::size_t i = 0; i < id.shrink_path.size(); ++i) {
    text.push_back(i == 0 ? ':' : '.');
    text.append(std::to_string(id.shrink_path[i]));
  }
  return text;
}

std::optional<CaseId> parse_case_id(std::string_view text, std::string& problem) {
  CaseId id;
  auto number = [&](std::string_view part, auto& out) {
    const auto* end = part.data() + part.size();
    auto [stop, error] = std::from_chars(part.data(), end, out);
    return !part.empty() && error == std::errc() && stop == end;
  };
  const auto first = text.find(':');
  const auto second = first == std::string_view::npos ? first : text.find(':', first + 1);
  bool ok = first != std::string_view::npos && number(text.substr(0, first), id.seed) &&
            number(text.substr(first + 1, second == std::string_view::npos ? std::string_view::npos
                                                                           : second - first - 1),
                   id.index);
  if (ok && second != std::string_view::npos) {
    std::string_view rest = text.substr(second + 1);
    while (ok) {
      const auto dot = rest.find('.');
      std::size_t position = 0;
      ok = number(rest.substr(0, dot), position) && id.shrink_path.size() < 100'000;
      if (ok) id.shrink_path.push_back(position);
      if (dot == std::string_view::npos) break;
      rest = rest.substr(dot + 1);
    }
  }
  if (!ok) {
    problem = "expected SEED:CASE or SEED:CASE:P.P.P (unsigned numbers), found \"" +
              std::string(text) + "\"";
    return std::nullopt;
  }
  return id;
}

std::optional<scenario::ScenarioSpec> generate_case(const CaseId& id) {
  auto value = draw_case(raw_case(), id.seed, id.index);
  for (const std::size_t position : id.shrink_path) {
    auto candidates = value.shrinks();
    for (std::size_t skip = 0; skip < position; ++skip) {
      if (!candidates.next()) return std::nullopt;
    }
    auto candidate = candidates.next();
    if (!candidate) return std::nullopt;
    value = std::move(*candidate);
  }
  return build_scenario(value.value(), case_name(id.seed, id.index));
}

CampaignResult run_campaign(const CampaignOptions& options) {
  CampaignResult result;
  const auto fast = case_options(options, false);
  auto replay = fast;  // the determinism check's second run: its history is compared, not judged
  replay.judge = false;
  const auto traced = case_options(options, true);
  if (options.exact) {
    auto spec = generate_case(*options.exact);
    if (!spec) return result;
    auto run = scenario::run_scenario(*spec, traced);
    ++result.cases_run;
    result.marks = run.marks;
    if (!run.passed()) {
      const auto& first = run.violations.front();
      // The case as generated, before its shrink path: what the path made it smaller than.
      auto original = generate_case({options.exact->seed, options.exact->index, {}});
      result.failures.push_back({options.exact->index, options.exact->shrink_path, first.rule,
                                 first.message, original ? std::move(*original) : *spec, *spec,
                                 std::move(run),
                                 static_cast<int>(options.exact->shrink_path.size()), 0, true});
    }
    return result;
  }
  const auto generator = raw_case();
  for (std::uint64_t index = 0; index < options.cases; ++index) {
    if (options.only_case && index != *options.only_case) continue;
    if (!options.only_case && index % options.shards != options.shard - 1) continue;
    if (options.should_stop && options.should_stop()) break;
    const std::string name = case_name(options.seed, index);
    auto shrinkable = draw_case(generator, options.seed, index);
    const auto spec = build_scenario(shrinkable.value(), name);
    const bool checked = index % 16 == 0;  // every 16th case also runs twice
    auto run = scenario::run_scenario(spec, fast);
    ++result.cases_run;
    for (const auto& [mark, count] : run.marks) result.marks[mark] += count;
    // The same case must give the same trace.
    if (run.passed() && checked) {
      ++result.determinism_checks;
      // Compared event by event; the trace is rendered only if they differ.
      if (auto broken = scenario::compare_runs(run, scenario::run_scenario(spec, replay))) {
        run.trace_hash = sim::hash_jsonl(run.history);
        run.violations.push_back(std::move(*broken));
      }
    }
    if (!run.passed()) {
      const std::string rule = run.violations.front().rule;
      auto shrunk = rule == "determinism"
                        ? Shrunk{shrinkable, run, {}, 0}
                        : shrink(shrinkable, run, rule, name, options.shrink_runs_max, fast);
      auto shrunk_spec = build_scenario(shrunk.value.value(), name);
      if (rule != "determinism") shrunk.run = scenario::run_scenario(shrunk_spec, traced);
      const auto* violation = violation_of(shrunk.run, rule);
      const std::string message = violation == nullptr ? std::string() : violation->message;
      const int steps = static_cast<int>(shrunk.path.size());
      result.failures.push_back({index, std::move(shrunk.path), rule, message, spec,
                                 std::move(shrunk_spec), std::move(shrunk.run), steps,
                                 shrunk.runs});
    }
    if (options.on_progress) {
      options.on_progress(result.cases_run, result.marks.size(), result.failures.size());
    }
    if (!result.failures.empty()) break;
  }
  return result;
}

std::string shrink_story(const CampaignFailure& failure) {
  auto sizes = [](const CaseSize& size) {
    return std::to_string(size.steps) + " steps, " + std::to_string(size.nodes) + " nodes, " +
           std::to_string(size.faults) + " faults";
  };
  const std::string from_to =
      "from " + sizes(size_of(failure.original)) + " to " + sizes(size_of(failure.shrunk));
  if (failure.rebuilt) {
    if (failure.shrink_path.empty())
      return "run as generated (" + sizes(size_of(failure.shrunk)) + ")";
    return "rebuilt from its shrink path (" + std::to_string(failure.shrink_path.size()) +
           " choices, no search) " + from_to;
  }
  if (failure.shrink_runs == 0) return "not shrunk (" + sizes(size_of(failure.shrunk)) + ")";
  return "shrunk in " + std::to_string(failure.shrink_steps) + " steps (" +
         std::to_string(failure.shrink_runs) + " runs) " + from_to;
}

scenario::ScenarioSpec as_campaign_runs(scenario::ScenarioSpec spec, const Defects& defects) {
  spec.defects = defects;
  spec.stop_when_quiescent = kCasesStopWhenQuiescent;
  return spec;
}

std::string repro_yaml(const CampaignFailure& failure, std::uint64_t seed, const std::string& path,
                       const Defects& defects) {
  // The file carries everything that shaped the case's run, so that `onejob run` of it alone,
  // with no flags, gives the campaign's trace (hash included).
  const scenario::ScenarioSpec spec = as_campaign_runs(failure.shrunk, defects);
  const std::string program = report::shell_quote(report::program());
  const std::string file = report::shell_quote(report::absolute_path(path));
  std::string comment =
      "Found by onejob fuzz --seed " + std::to_string(seed) + " (case " +
      std::to_string(failure.case_index) + "), " + shrink_story(failure) + ".\nViolated " +
      failure.rule + ": " + failure.message + "\nTrace hash " + failure.shrunk_run.trace_hash +
      "; this file holds the seed, the defects and the stop rule, so no flag is needed." +
      "\nRerun: " + program + " run " + file + "\n   or: " + program + " replay " + file +
      " --trace" + "\nRegenerate: " + program + " fuzz --reproduce " +
      to_string(CaseId{seed, failure.case_index, failure.shrink_path}) +
      report::defect_flags(defects) + " --show";
  return scenario::to_yaml(spec, comment);
}

}  // namespace onejob::fuzz
