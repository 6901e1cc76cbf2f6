#include "harness/fuzz/case_gen.hpp"

#include <algorithm>
#include <array>
#include <map>

#include <nlohmann/json.hpp>

#include "harness/check/api_routes.hpp"
#include "harness/check/invariant.hpp"
#include "harness/scenario/spec.hpp"

namespace onejob::fuzz {
namespace {

using namespace std::chrono_literals;
using scenario::LinkKind;
using scenario::Ppm;
using scenario::ProviderOutcome;

constexpr const char* kProviders[] = {"alpha", "beta", "gamma"};
constexpr const char* kKeys[] = {"k1", "k2", "k3"};
constexpr const char* kActionKeys[] = {"op-x", "op-y"};
// Idempotency-Keys at the edges of the rule (1-255 characters of 0x20-0x7e): valid ones first.
// Requests a read step may send instead, to probe the routes: paths that name no resource (404)
// and resources asked for with another method (405).
struct RouteProbe {
  const char* method;
  const char* path;
};
const RouteProbe kRouteProbes[] = {
    {"GET", "/jobs/{job}/attempts/x"},  // one segment too many
    {"GET", "/attempts"},               // one segment short
    {"GET", "/"},                       // none
    {"POST", "/jobs/{job}"},            // a read's path, another method
    {"GET", "/jobs/{job}/"},            // an empty last segment
    {"POST", "/jobs/{job}/attempts/1/cancel"},
    {"GET", "/jobs/0{job}x"},        // not digits only
    {"GET", "/attempts/{job}"},      // an attempt without its action
    {"POST", "/jobs/{job}/cancel"},  // a job's path with an attempt's action
};

const std::string kOddKeys[] = {
    std::string(255, 'k'), " ~", std::string(256, 'k'), "", "k\x1f", "k\x7f"};
constexpr std::size_t kPromptLimits[] = {4096, 8, 24};
constexpr Ppm kRates[] = {0, 10'000, 50'000, 200'000};  // 0, 1%, 5%, 20%
constexpr ProviderOutcome kOutcomes[] = {ProviderOutcome::ok,
                                         ProviderOutcome::error,
                                         ProviderOutcome::hang,
                                         ProviderOutcome::malformed,
                                         ProviderOutcome::hallucinated_key,
                                         ProviderOutcome::wrong_operation,
                                         ProviderOutcome::plausible,
                                         ProviderOutcome::garbled_refusal,
                                         ProviderOutcome::garbled_answer};

template <typename T, std::size_t N>
const T& pick(const T (&options)[N], int index) {
  return options[static_cast<std::size_t>(std::max(index, 0)) % N];
}

// In the "ties" profiles, a duration rounded up to a grid of whole seconds (a multiple of the
// workers' 250 ms poll): few distinct instants, so answers of two attempts often meet at one.
// Profile 0 has no grid; 3 is "race" and 4 "busy" (see build_scenario).
constexpr Duration kGrids[] = {Duration(1), std::chrono::seconds(1), std::chrono::seconds(5),
                               std::chrono::seconds(1), std::chrono::seconds(1)};
Duration grid(const RawCase& raw, Duration value) {
  const Duration step = pick(kGrids, raw.profile);
  return (value + step - Duration(1)) / step * step;
}

int wrap(int index, std::size_t count) {
  return static_cast<int>(static_cast<std::size_t>(std::max(index, 0)) % count);
}

// The size of the first body's input as JSON (as the store keeps it: compact).
std::size_t first_body_input_bytes();

// `text` with every "@P" replaced by `provider` and "@F" by `failover`.
std::string fill(std::string_view text, const std::string& provider, const std::string& failover) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '@' && i + 1 < text.size() && (text[i + 1] == 'P' || text[i + 1] == 'F')) {
      out.append(text[i + 1] == 'P' ? provider : failover);
      ++i;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// Bodies with near-duplicates: the same request with its keys reordered, and requests that
// differ only in the provider, the failover list or one character of the input.
constexpr std::string_view kBodies[] = {
    R"({"operation":"classify","provider":"@P","input":{"text":"I was charged twice"}@F})",
    // the same request, its keys in another order
    R"({"input":{"text":"I was charged twice"},"provider":"@P","operation":"classify"@F})",
    // one character more
    R"({"operation":"classify","provider":"@P","input":{"text":"I was charged twice!"}@F})",
    R"({"operation":"summarize","provider":"@P","input":{"text":"The app crashes every time I upload a photo"}@F})",
    R"({"operation":"classify","provider":"@P","input":{"text":"Can I get a pricing quote for 40 seats?"}@F})",
    R"({"operation":"extract","provider":"@P","input":{"fields":["total","due_date"],"text":"Invoice 77: total 310.00 EUR, due 2026-12-01."}@F})",
    // texts with every kind of string content: escaped quotes and backslashes in plain ASCII;
    // control characters only; all of it with UTF-8 written as itself and as escapes (a
    // surrogate pair among them)
    R"({"operation":"classify","provider":"@P","input":{"text":"Say \"hi\" to C:\\tmp, then \"bye\""}@F})",
    R"({"operation":"classify","provider":"@P","input":{"text":"\n\t\u0007"}@F})",
    R"({"operation":"classify","provider":"@P","input":{"text":"Say \"hi\" to C:\\tmp\n\tnow \u0001 caf\u00e9 café ✓ \ud83d\ude00"}@F})",
};

std::size_t first_body_input_bytes() {
  return nlohmann::json::parse(fill(kBodies[0], "p", ""))["input"].dump().size();
}

// A classify request whose input carries a list nested so that the whole body is `depth` levels
// deep (the body and its input are two). Its text holds a bracket and an escaped quote that a
// depth count must skip as string content: "[" in the body exactly at the limit, "]" in the one
// past it, so a count that reads strings as structure misjudges both.
std::string nested_body(std::size_t depth, const std::string& provider) {
  const std::size_t lists = depth - 2;
  const std::string text = depth > 64 ? R"(deep ] \"])" : R"(deep [ \"[)";
  return R"({"operation":"classify","provider":")" + provider + R"(","input":{"text":")" + text +
         R"(","n":)" + std::string(lists, '[') + std::string(lists, ']') + "}}";
}

// The API's body limit, and a body padded with trailing JSON whitespace to exactly `bytes`.
constexpr std::size_t kBodyLimit = 1024 * 1024;
std::string padded_body(std::size_t bytes, std::string body) {
  body.resize(std::max(bytes, body.size()), ' ');
  return body;
}

// Bodies the input contract refuses, each readable JSON no deeper than the limit: 3 an empty
// text, 4 (by `variant`) an input member the operation does not take, an extract whose fields name
// "" or one name twice or none, fields on a summarize, no provider or one that is not a string, a
// provider or a failover provider the server does not have, a failover list naming the provider
// itself, or an unknown operation, 5 an unknown member holding a list of 70 empty lists and
// objects side by side (a depth count that never closes a bracket reads it as 70 deep), 6 a name
// used both inside the input and after it in the body (one set of names per object: no
// duplicate), 7 an operation that is not a string, 10 a member repeated in one object.
std::string refused_body(int kind, int variant, const std::string& provider) {
  const std::string head = R"({"operation":"summarize","provider":")" + provider + '"';
  const std::string extract = R"({"operation":"extract","provider":")" + provider + '"';
  switch (kind) {
    case 4:  // a member the operation does not take, or extract's fields broken
      switch (wrap(variant, 11)) {
        case 9:  // no provider at all
          return R"({"operation":"summarize","input":{"text":"Notes"}})";
        case 10:  // a provider that is not a name
          return R"({"operation":"summarize","provider":7,"input":{"text":"Notes"}})";
        case 5:  // a provider the server does not have
          return R"({"operation":"summarize","provider":"nobody","input":{"text":"Notes"}})";
        case 6:  // a failover list naming one it does not have
          return head + R"(,"failover":["nobody"],"input":{"text":"Notes"}})";
        case 7:  // a failover list naming the provider itself
          return head + R"(,"failover":[")" + provider + R"("],"input":{"text":"Notes"}})";
        case 8:  // an operation the API does not offer
          return R"({"operation":"translate","provider":")" + provider +
                 R"(","input":{"text":"Notes"}})";
        case 1:
          return extract + R"(,"input":{"text":"Invoice 7","fields":["total",""]}})";
        case 2:
          return extract + R"(,"input":{"text":"Invoice 7","fields":["total","total"]}})";
        case 3:
          return extract + R"(,"input":{"text":"Invoice 7","fields":[]}})";
        case 4:
          return head + R"(,"input":{"text":"Notes","fields":["total"]}})";
        default:
          return head + R"(,"input":{"text":"Notes","lang":"en"}})";
      }
    case 3:
      return R"({"operation":"classify","provider":")" + provider + R"(","input":{"text":""}})";
    case 5: {
      std::string siblings;
      for (int i = 0; i < 70; ++i) siblings += i == 0 ? "[]" : i % 2 == 0 ? ",[]" : ",{}";
      return head + R"(,"input":{"text":"Notes","n":[)" + siblings + "]}}";
    }
    case 6:
      return R"({"input":{"text":"Notes","operation":"classify"},"operation":"summarize","provider":")" +
             provider + "\"}";
    case 7:
      return R"({"operation":7,"provider":")" + provider + R"(","input":{"text":"Notes"}})";
    case 10:  // JSON whose meaning would be the parser's guess: refused as invalid
      if (wrap(variant, 2) == 1) {  // a number beyond a double
        return R"({"operation":"classify","provider":")" + provider +
               R"(","input":{"text":"Notes","weight":1e400}})";
      }
      // one member twice in one object: which value counts
      return R"({"operation":"classify","provider":")" + provider +
             R"(","input":{"text":"Notes"},"input":{"text":"Other notes"}})";
    default:
      return head + R"(,"input":{"text":"Notes","lang":"en"}})";
  }
}

// Body `index`; one past the last is the first request on another provider.
std::string body(int index, const std::vector<std::string>& providers) {
  const std::string& first = providers[0];
  const std::string& other = providers[providers.size() > 1 ? 1 : 0];
  // Every other provider, in order: a failover may skip an uncertified one for a later one.
  std::string failover;
  for (std::size_t i = 1; i < providers.size(); ++i) {
    failover += (i == 1 ? ",\"failover\":[\"" : ",\"") + providers[i] + "\"";
  }
  if (!failover.empty()) failover += "]";
  const int choice = wrap(index, std::size(kBodies) + 1);
  if (choice == static_cast<int>(std::size(kBodies))) {  // the first request on another provider
    return fill(kBodies[0], other, "");
  }
  return fill(kBodies[static_cast<std::size_t>(choice)], first, failover);
}

// The provider that body(index, providers) names.
const std::string& body_provider(int index, const std::vector<std::string>& providers) {
  const bool other = wrap(index, std::size(kBodies) + 1) == static_cast<int>(std::size(kBodies)) &&
                     providers.size() > 1;
  return providers[other ? 1 : 0];
}

// `store`: node_store.
scenario::LinkSpec build_link(const RawLink& raw, bool store) {
  scenario::LinkSpec link;
  link.latency = {std::chrono::milliseconds(raw.latency_ms % 6),
                  std::chrono::milliseconds(raw.latency_ms % 6)};
  for (std::size_t i = 0; i < std::size(scenario::kFaultRates); ++i) {
    const auto& fault = scenario::kFaultRates[i];
    if (store || !fault.store_only) link.*fault.rate = pick(kRates, raw.rates[i]);
  }
  link.reorder_window = 50ms;
  return link;
}

void build_faults(const RawCase& raw, scenario::ScenarioSpec& spec) {
  const auto nodes = scenario::topology_nodes(spec.topology);
  std::map<std::string, Duration> busy_until;  // a node's crash windows may not overlap
  const std::size_t count = std::min(raw.faults.size(), kMaxFaults);
  for (std::size_t i = 0; i < count; ++i) {
    const RawFault& f = raw.faults[i];
    const Duration from = std::chrono::milliseconds(f.from_ms % 30'000);
    const Duration length = std::chrono::milliseconds(1 + f.length_ms % 20'000);
    const auto kind = static_cast<FaultKind>(wrap(f.kind, kFaultKinds));
    if (kind != FaultKind::partition) {  // a crash and its restart, or a pause, of one node
      const std::string& node = nodes[static_cast<std::size_t>(wrap(f.node, nodes.size()))];
      auto& busy = busy_until[node];  // a node's crash and pause windows may not overlap
      if (from < busy) continue;
      busy = from + length + 1ms;
      if (kind == FaultKind::pause) {
        spec.pauses.push_back({node, from, from + length, {}});
        continue;
      }
      spec.node_faults.push_back({from, scenario::NodeFaultSpec::Kind::crash, node, {}});
      spec.node_faults.push_back({from + length, scenario::NodeFaultSpec::Kind::restart, node, {}});
      continue;
    }
    constexpr LinkKind kPartitionLinks[] = {LinkKind::node_store, LinkKind::worker_provider,
                                            LinkKind::lb_api, LinkKind::client_lb};
    scenario::PartitionSpec partition;
    partition.link = pick(kPartitionLinks, f.node);
    auto candidates = scenario::nodes_on(spec, partition.link);
    const std::size_t width =
        1 + static_cast<std::size_t>(std::max(f.width, 0)) % candidates.size();
    const std::size_t first = static_cast<std::size_t>(wrap(f.node / 4, candidates.size()));
    for (std::size_t k = 0; k < width; ++k) {
      partition.nodes.push_back(candidates[(first + k) % candidates.size()]);
    }
    partition.direction = pick(sim::kPartitionDirections, f.direction).value;
    partition.from = from;
    partition.until = from + length;
    spec.partitions.push_back(std::move(partition));
  }
}

// When a provider's first job execution would answer, counted from its start.
Duration first_answer(const scenario::ScenarioSpec& spec, const std::string& provider) {
  for (const auto& each : spec.providers) {
    if (each.name != provider) continue;
    if (!each.script.empty() && each.script[0].latency) return each.script[0].latency->min;
    return each.latency.min;
  }
  return Duration(0);
}

// A certified provider other than `not_this`, the search starting at `from`.
std::optional<std::string> certified_other(const scenario::ScenarioSpec& spec,
                                           const std::string& not_this, int from) {
  for (std::size_t i = 0; i < spec.providers.size(); ++i) {
    const auto& each =
        spec.providers[(static_cast<std::size_t>(std::max(from, 0)) + i) % spec.providers.size()];
    if (each.certify && each.name != not_this) return each.name;
  }
  return std::nullopt;
}

// When `provider`'s certification (one execution per sample, in sequence, from t=0) is over,
// with a margin.
Duration certified_at(const scenario::ScenarioSpec& spec, const std::string& provider) {
  for (const auto& each : spec.providers) {
    if (each.name == provider) return 5 * each.latency.max + std::chrono::seconds(1);
  }
  return Duration(0);
}

void build_timeline(const RawCase& raw, scenario::ScenarioSpec& spec,
                    const std::vector<std::string>& providers) {
  struct Created {
    int request = 0;
    Duration at{0};
    std::string provider;
    std::string client;
  };
  std::vector<Created> creates;
  Duration at{0};
  const std::size_t count = std::min(raw.steps.size(), kMaxSteps);
  for (std::size_t i = 0; i < count; ++i) {
    const RawStep& s = raw.steps[i];
    at += grid(raw, std::chrono::milliseconds(s.gap_ms % 20'000));
    scenario::TimelineEntry entry;
    entry.at = at;
    entry.client = spec.clients[static_cast<std::size_t>(wrap(s.client, spec.clients.size()))].name;
    using enum StepKind;
    auto kind = static_cast<StepKind>(wrap(s.kind, kStepKinds));
    if (creates.empty() && kind != cancel_then_racing_retry) kind = create_job;
    const bool race = kind == cancel_then_racing_retry;
    // A race: create a job, cancel its first attempt shortly after, and time the retry on
    // another (certified) provider so that its answer is due at the instant the cancelled attempt
    // answers. Two completions then meet at the store at once, and the seed orders them. The
    // create waits, if need be, until the retry's provider has passed certification.
    std::optional<std::string> racer;
    if (race) {
      const std::string& first = body_provider(s.body, providers);
      racer = certified_other(spec, first, s.provider);
      const Duration ahead = first_answer(spec, first) - (racer ? first_answer(spec, *racer) : at);
      if (racer && ahead > Duration(0)) at = std::max(at, certified_at(spec, *racer) - ahead);
      entry.at = at;
    }
    if (kind == create_job || race) {
      scenario::TimelineEntry create = entry;
      create.kind = scenario::TimelineEntry::Kind::create_job;
      create.create_job.client = create.client;
      create.create_job.key = s.odd_key > 0 ? pick(kOddKeys, s.odd_key - 1) : pick(kKeys, s.key);
      create.create_job.body =
          s.deep == 1 || s.deep == 2 ? nested_body(s.deep == 1 ? 64 : 65, providers[0])
          : s.deep == 8 || s.deep == 9
              ? padded_body(s.deep == 8 ? kBodyLimit : kBodyLimit + 1, body(s.body, providers))
          : s.deep > 2 ? refused_body(s.deep, s.body, providers[0])
                       : body(s.body, providers);
      create.request = static_cast<int>(spec.timeline.size()) + 1;
      creates.push_back({create.request, at, body_provider(s.body, providers), create.client});
      spec.timeline.push_back(std::move(create));
      if (kind == create_job) continue;
    }
    const Created& target =
        race ? creates.back() : creates[static_cast<std::size_t>(wrap(s.target, creates.size()))];
    if (race) {  // off the grid: only the retry's instant matters
      at += std::chrono::milliseconds(100 + s.gap_ms % 400);
      entry.at = at;
    }
    entry.target_request = target.request;
    entry.attempt_no = race ? 1 : 1 + std::max(s.attempt, 0) % 3;
    const bool then_retry = kind == cancel_then_retry || race;
    if (kind == get_job) {
      entry.kind = scenario::TimelineEntry::Kind::get_job;
      if (s.deep > 0) {  // a route probe
        const RouteProbe& probe = pick(kRouteProbes, s.deep - 1);
        if (probe.method != std::string_view("GET")) entry.method = probe.method;
        entry.path = probe.path;
      }
    } else if (kind == cancel || then_retry) {
      entry.kind = scenario::TimelineEntry::Kind::cancel;
    } else {
      entry.kind = scenario::TimelineEntry::Kind::retry;
    }
    // 1, 2: a key from the shared pool; 3: the same action sent twice at one instant under one
    // key of its own (a double click on an operator's button: the store's key decides); 4: the
    // same, but a retry's twin names another provider (one key, two requests: one is refused).
    const bool doubled = s.action_key >= 3 && kind != get_job;
    if (s.action_key == 1 || s.action_key == 2) {
      entry.action_key = pick(kActionKeys, s.action_key - 1);
    }
    // Now and then with no key at all: an action's key is optional.
    entry.keyless = s.action_key == 0 && spec.timeline.size() % 4 == 3;
    scenario::OptionalText plain_provider;  // a respelled retry's provider, as named
    const bool respelled = kind == retry && s.deep == 0 && s.provider % 4 != 0 &&
                           s.action_key != 4 && s.gap_ms % 3 == 1;
    if (kind == retry && s.deep > 0) {
      // An extra member, a provider the server does not have, no JSON (cut short), a provider
      // that is no text.
      entry.retry_body = s.deep == 1   ? R"({"provider":")" + providers[0] + R"(","note":1})"
                         : s.deep == 2 ? std::string(R"({"provider":"nobody"})")
                         : s.deep == 4 ? R"({"provider":")" + providers[0] + '"'
                                       : std::string(R"({"provider":7})");
    } else if (kind == retry && s.provider % 4 != 0) {
      entry.provider = providers[static_cast<std::size_t>(wrap(s.provider - 1, providers.size()))];
      // Now and then spelled with spaces, as another tool writes it: the same request, so a key
      // used again with it is a replay.
      if (respelled) {
        entry.retry_body = R"({ "provider" : ")" + *entry.provider + R"(" })";
        plain_provider = std::exchange(entry.provider, std::nullopt);
      }
    }
    entry.request = static_cast<int>(spec.timeline.size()) + 1;
    if (doubled) entry.action_key = "op-d" + std::to_string(entry.request);
    // Then retry: an operator's usual story, cancel the stuck attempt and start one on another
    // provider (the cancelled one may still answer late and race it).
    scenario::TimelineEntry then = entry;
    spec.timeline.push_back(entry);
    if (doubled) {
      entry.request = static_cast<int>(spec.timeline.size()) + 1;
      // A respelled retry's twin comes two seconds later (the console again), spelled the plain
      // way: one request, so it is the first one's replay, whatever the bytes.
      if (s.action_key == 3 && respelled) {
        entry.retry_body.reset();
        entry.provider = plain_provider;
        entry.at += grid(raw, std::chrono::seconds(2));
        at = entry.at;
      }
      if (s.action_key == 4 && kind == retry) {
        entry.retry_body.reset();
        const std::string named = entry.provider.value_or("");
        entry.provider = providers[static_cast<std::size_t>(wrap(s.provider, providers.size()))];
        if (*entry.provider == named) {
          entry.provider =
              providers[static_cast<std::size_t>(wrap(s.provider + 1, providers.size()))];
        }
      }
      spec.timeline.push_back(std::move(entry));
    }
    if (!then_retry) continue;
    then.kind = scenario::TimelineEntry::Kind::retry;
    then.action_key.reset();  // its own key: the story is the retry running
    then.retry_body.reset();
    then.provider =
        racer ? *racer
              : providers[static_cast<std::size_t>(wrap(s.provider + 1, providers.size()))];
    then.at += grid(raw, std::chrono::milliseconds(100 + s.gap_ms % 900));
    const Duration meet =
        target.at + first_answer(spec, target.provider) - first_answer(spec, *then.provider);
    if (racer && meet > then.at) then.at = meet;
    at = then.at;
    then.request = static_cast<int>(spec.timeline.size()) + 1;
    spec.timeline.push_back(std::move(then));
  }
  if (raw.read_back > 0) {
    const Duration read_at = at + (raw.read_back == 1 ? std::chrono::seconds(20) : 90s);
    for (const auto& created : creates) {
      scenario::TimelineEntry read;
      read.at = read_at;
      read.client = created.client;
      read.kind = scenario::TimelineEntry::Kind::get_job;
      read.target_request = created.request;
      read.request = static_cast<int>(spec.timeline.size()) + 1;
      spec.timeline.push_back(std::move(read));
    }
  }
  if (spec.timeline.empty()) {  // a case always sends something
    scenario::TimelineEntry entry;
    entry.client = spec.clients[0].name;
    entry.create_job = {entry.client, std::string(kKeys[0]), body(0, providers)};
    entry.request = 1;
    spec.timeline.push_back(std::move(entry));
  }
}

}  // namespace

scenario::ScenarioSpec build_scenario(const RawCase& raw, const std::string& name) {
  scenario::ScenarioSpec spec;
  spec.file = name + ".yaml";
  spec.name = name;
  spec.seed = raw.seed;
  spec.quiet = 3min;
  spec.topology = {1 + std::max(raw.api_nodes, 0) % 3, 1 + std::max(raw.workers, 0) % 3,
                   raw.reconciler != 0};
  auto& policy = spec.policy;
  policy.attempt_deadline = std::chrono::seconds(2 + std::max(raw.deadline_s, 0) % 20);
  policy.lease =
      policy.attempt_deadline +
      (raw.edge % 2 == 1 ? Duration(1ms)
                         : std::chrono::seconds(1 + std::max(raw.lease_extra_s, 0) % 20));
  policy.reconcile_period = std::chrono::seconds(1 + std::max(raw.reconcile_s, 0) % 10);
  policy.worker_poll = 250ms;
  // Longer than the settle horizon's share for a claim: a write that forgets to ring its
  // workers strands the attempt for the liveness rule to see, rather than slowing it down.
  policy.worker_idle_poll = std::chrono::minutes(5);
  policy.worker_capacity = 1 + std::max(raw.capacity, 0) % 4;
  policy.attempt_limit = 1 + std::max(raw.attempt_limit, 0) % 5;
  policy.client_timeout = 2s;
  policy.client_retries = std::max(raw.client_retries, 0) % 4;
  policy.lb_timeout = 1s;
  policy.lb_retries = std::max(raw.lb_retries, 0) % 3;
  // The "race" profile sets the stage for kind 5 steps: a second provider that passes
  // certification, and a first provider whose first answer is slow enough to be raced.
  const bool race = raw.profile == 3;
  // The "busy" profile: one worker with one slot, and a first provider slow to answer its first
  // call, so an operator's retry after a cancel waits for the slot while the cancelled attempt
  // may still win: the worker then claims an attempt whose job is already won.
  const bool busy = raw.profile == 4;
  if (busy) {
    spec.topology.workers = 1;
    policy.worker_capacity = 1;
  }
  const std::size_t provider_count =
      std::clamp<std::size_t>(raw.providers.size(), race || busy ? 2 : 1, kMaxProviders);
  std::vector<std::string> provider_names;
  for (std::size_t i = 0; i < provider_count; ++i) {
    const RawProvider fallback;
    const RawProvider& p = i < raw.providers.size() ? raw.providers[i] : fallback;
    scenario::ProviderSpec provider;
    provider.name = kProviders[i];
    const Duration own = grid(raw, std::chrono::milliseconds(1 + p.latency_ms % 3'000));
    provider.latency = {own, own};
    provider.certify = p.certify;
    if (p.prompt_limit >= 3) {
      // At the boundary (4 bytes a token, rounded up): the prompt is the first body's input
      // padded to a whole number of tokens, which is the limit (3); or one byte more (4).
      const std::size_t input = first_body_input_bytes();
      const std::size_t pad = (4 - input % 4) % 4 + (p.prompt_limit == 4 ? 1 : 0);
      provider.prompt_template = "{{input}}" + std::string(pad, ' ');
      provider.max_prompt_tokens = (input + 3) / 4;
    } else {
      provider.max_prompt_tokens = pick(kPromptLimits, p.prompt_limit);
      // Each provider after the first reads prompts in a format of its own, so that a call
      // rendered with another provider's template (after a failover, say) shows.
      if (i > 0) provider.prompt_template = provider.name + " {{operation}}> {{input}}";
    }
    if (p.behaviour % 2 == 1 && p.latency_ms % 2 == 0) {
      provider.default_call.outcome = ProviderOutcome::plausible;
    } else if (p.behaviour % 2 == 1) {
      // Wrong on one operation only: its certification must judge each operation's meaning.
      const auto& operations = check::kOperations;
      provider.plausible_on = {std::string(
          operations[static_cast<std::size_t>(p.latency_ms / 2) % std::size(operations)])};
    }
    for (std::size_t k = 0; k < std::min(p.script.size(), kMaxScript); ++k) {
      scenario::ProviderCallSpec call{pick(kOutcomes, p.script[k].outcome), std::nullopt};
      if (p.script[k].latency_ms > 0) {
        const auto latency = grid(raw, std::chrono::milliseconds(p.script[k].latency_ms % 60'000));
        call.latency = scenario::LatencySpec{latency, latency};
      }
      provider.script.push_back(call);
    }
    if ((race || busy) && i == 0) {
      const Duration slow = grid(raw, std::chrono::milliseconds(3'000 + p.latency_ms % 10'000));
      scenario::ProviderCallSpec first{ProviderOutcome::ok, scenario::LatencySpec{slow, slow}};
      if (provider.script.empty()) {
        provider.script.push_back(first);
      } else {
        provider.script[0] = first;
      }
    }
    if ((race || busy) && i == 1) provider.certify = true;
    provider_names.push_back(provider.name);
    spec.providers.push_back(std::move(provider));
  }
  const int clients = 1 + std::max(raw.clients, 0) % 3;
  const std::string_view owners[] = {"alice", "bob", std::string_view("b\0b", 3)};
  const auto other = static_cast<std::size_t>(wrap(raw.owners, 3));  // every other client's
  for (int i = 0; i < clients; ++i) {
    spec.clients.push_back({"c" + std::to_string(i + 1), std::string(owners[i % 2 ? other : 0])});
  }
  const RawLink quiet_link;
  const bool instant = pick(kGrids, raw.profile) > Duration(1);    // only the grid decides
  for (std::size_t i = 0; i < std::size(scenario::kLinks); ++i) {  // raw.links in kLinks order
    const auto& each = scenario::kLinks[i];
    auto& link = spec.network.*each.spec;
    link = build_link(i < raw.links.size() ? raw.links[i] : quiet_link,
                      each.kind == LinkKind::node_store);
    if (instant) link.latency = {Duration(0), Duration(0)};
  }
  // A provider answering at the deadline: its work plus the link both ways is the deadline.
  const Duration round_trip = 2 * spec.network.worker_provider.latency.max;
  for (std::size_t i = 0; i < spec.providers.size() && i < raw.providers.size(); ++i) {
    if (!raw.providers[i].at_deadline || policy.attempt_deadline <= round_trip) continue;
    const Duration work = policy.attempt_deadline - round_trip;
    spec.providers[i].latency = {work, work};
  }
  build_faults(raw, spec);
  build_timeline(raw, spec, provider_names);
  for (const auto& invariant : check::all_invariants()) spec.invariants.emplace_back(invariant.id);
  return spec;
}

CaseSize size_of(const scenario::ScenarioSpec& spec) {
  CaseSize size;
  size.steps = static_cast<int>(spec.timeline.size());
  size.nodes = spec.topology.api_nodes + spec.topology.workers +
               (spec.topology.reconciler ? 1 : 0) + static_cast<int>(spec.clients.size()) +
               static_cast<int>(spec.providers.size());
  size.faults =
      static_cast<int>(spec.node_faults.size() / 2 + spec.partitions.size() + spec.pauses.size());
  for (const auto& link : scenario::kLinks) {
    size.faults += sim::has_faults(spec.network.*link.spec) ? 1 : 0;
  }
  return size;
}

}  // namespace onejob::fuzz
