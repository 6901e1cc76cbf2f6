// The `load:` statement: a generated load of many jobs, written in a few lines. It becomes the
// scenario's GeneratedLoad: ordinary clients, and create_job steps that follow the written
// timeline's, each made when asked for (request_entry), so that everything downstream (the run,
// its checks, reports, replays) sees what a hand-written timeline would have given it.

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "harness/scenario/loader.hpp"
#include "harness/scenario/loader_sections.hpp"
#include "harness/sim/rng.hpp"

namespace onejob::scenario::loading {
namespace {

// ceil(a * b / kPpmOne) without overflow for a up to kMaxLoadJobs.
std::uint64_t ceil_share(std::uint64_t jobs, Ppm share) {
  return (jobs * share + kPpmOne - 1) / kPpmOne;
}

}  // namespace

LoadSpec read_load(const YamlReader& reader, const YAML::Node& node, ScenarioSpec& spec,
                   std::uint64_t max_jobs) {
  YamlMap map(reader, node, "load",
              {"jobs", "clients", "owners", "start", "every", "over", "arrivals", "double_click",
               "double_click_after", "key", "bodies"});
  LoadSpec load;
  load.pos = reader.pos(node);
  const auto jobs = map.require("jobs");
  load.jobs = reader.unsigned_integer(jobs, "load.jobs");
  if (load.jobs < 1 || load.jobs > max_jobs) {
    reader.fail(jobs, "load.jobs: expected 1 to " + std::to_string(max_jobs) + ", found " +
                          std::to_string(load.jobs));
  }
  if (auto clients = map.get("clients")) {
    load.clients = reader.small_integer(*clients, "load.clients", 1, 10'000);
  }
  if (auto owners = map.get("owners")) {
    load.owners = reader.small_integer(*owners, "load.owners", 1, load.clients);
  }
  if (auto start = map.get("start")) load.start = reader.duration(*start, "load.start");
  const auto every = map.get("every");
  const auto over = map.get("over");
  if (every && over) reader.fail(node, "load: give either every or over, not both");
  if (!every && !over) {
    reader.fail(node,
                "load: missing how the arrivals are spaced: every (e.g. 20ms) or over "
                "(the window they spread over, e.g. 30m)");
  }
  if (every) {
    load.every = reader.duration(*every, "load.every");
    if (load.every <= Duration(0)) reader.fail(*every, "load.every: expected more than 0");
  } else {
    const Duration window = reader.duration(*over, "load.over");
    load.every = window / static_cast<std::int64_t>(load.jobs);
    if (load.every <= Duration(0)) {
      reader.fail(*over, "load.over: " + format_duration(window) + " is shorter than one " +
                             "microsecond per job (" + std::to_string(load.jobs) + " jobs)");
    }
  }
  // The last arrival must fit the longest run (the run as a whole is checked once everything is
  // read). Divided, not multiplied: the product could overflow.
  if (load.start > kMaxSpan ||
      static_cast<std::int64_t>(load.jobs - 1) > (kMaxSpan - load.start) / load.every) {
    reader.fail(every ? *every : *over, "load: the last arrival would come after " +
                                            format_duration(kMaxSpan) + " of simulated time");
  }
  if (auto arrivals = map.get("arrivals")) {
    const std::string how = reader.string(*arrivals, "load.arrivals");
    if (how == "random") {
      load.random_arrivals = true;
    } else if (how != "even") {
      reader.fail(*arrivals,
                  "load.arrivals: expected even (one every `every`) or random (each at "
                  "a seeded instant within its own `every`), found \"" +
                      how + "\"");
    }
  }
  if (auto share = map.get("double_click")) {
    load.double_click = reader.probability(*share, "load.double_click");
  }
  if (auto after = map.get("double_click_after")) {
    load.double_click_after = reader.duration(*after, "load.double_click_after");
  }
  if (auto key = map.get("key")) {
    if (key->IsNull()) {
      load.key.reset();
    } else {
      load.key = reader.string(*key, "load.key");
    }
  }
  if (auto bodies = map.get("bodies")) {
    reader.expect_sequence(*bodies, "load.bodies");
    if (bodies->size() == 0) reader.fail(*bodies, "load.bodies: expected at least one body");
    for (const auto& body : *bodies) {
      if (!body.IsMap()) reader.fail(body, "load.bodies: expected each body as a JSON object");
      try {
        load.bodies.push_back(reader.json(body).dump());
      } catch (const nlohmann::json::type_error&) {
        reader.fail(body, "load.bodies: text is not valid UTF-8");
      }
    }
  } else {
    if (spec.providers.empty()) {
      reader.fail(node,
                  "load: no bodies given and no providers to send jobs to: give "
                  "bodies, or providers for the default body");
    }
    for (const auto& provider : spec.providers) {
      load.bodies.push_back(nlohmann::json{
          {"operation", "classify"}, {"provider", provider.name}, {"input", {{"text", "job {n}"}}}}
                                .dump());
    }
  }
  // The generated clients join the named ones before faults and the timeline are read, so that
  // both can name them.
  for (int c = 1; c <= load.clients; ++c) {
    ClientSpec client{std::string(kLoadClientPrefix) + std::to_string(c),
                      "owner-" + std::to_string((c - 1) % load.owners + 1)};
    if (std::ranges::find(spec.clients, client.name, &ClientSpec::name) != spec.clients.end()) {
      reader.fail(node, "load: generated client \"" + client.name +
                            "\" is already defined under clients (rename it)");
    }
    spec.clients.push_back(std::move(client));
  }
  return load;
}

void expand_load(const LoadSpec& load, ScenarioSpec& spec) {
  GeneratedLoad generated;
  auto& arrivals = generated.arrivals;
  const std::uint64_t doubled = ceil_share(load.jobs, load.double_click);
  arrivals.reserve(load.jobs + doubled);
  // The random draws come from a stream of their own: the run's other draws stay as they were.
  sim::Rng rng(spec.seed ^ 0x6c6f61642d617272ULL);
  for (std::uint64_t n = 0; n < load.jobs; ++n) {
    Duration at = load.start + load.every * static_cast<std::int64_t>(n);
    if (load.random_arrivals) at += Duration(rng.between(0, load.every.count() - 1));
    arrivals.push_back({at, n});
    // Spread evenly: job n is clicked twice when the share's running total steps past a whole
    // job there (20% doubles jobs 0, 5, 10, ...).
    if (ceil_share(n, load.double_click) < ceil_share(n + 1, load.double_click)) {
      arrivals.push_back({at + load.double_click_after, n});
    }
  }
  // Time order; at one instant, in job order, a double click after its first click.
  std::ranges::stable_sort(arrivals, [](const GeneratedLoad::Arrival& a,
                                        const GeneratedLoad::Arrival& b) { return a.at < b.at; });
  generated.clients = load.clients;
  generated.key = load.key;
  generated.bodies = load.bodies;
  generated.pos = load.pos;
  spec.load = std::move(generated);
}

}  // namespace onejob::scenario::loading
