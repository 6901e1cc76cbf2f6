#pragma once

// The plain data the simulator is configured with: links and their fault rates, providers and
// their scripts, partition windows. It lives below the scenario layer (the scenario spec embeds
// it; the loader, the writer and the fuzzer fill it), so nothing in sim/ reads a scenario.
//
// Each vocabulary here is one table: kLinks (the four links), kFaultRates (a link's fault
// rates), kProviderOutcomes. A new link or fault rate is added to its table, and heal, swarm,
// the loader, the writer, the generator and case sizes follow, since they all iterate it.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "system/domain/names.hpp"
#include "system/domain/time.hpp"

namespace onejob::sim {

// The topology's node names: api-N, worker-N (1-based) and reconciler. Below the scenario layer,
// so the checkers can tell a node's role from its name in the trace.
constexpr std::string_view kApiNodePrefix = "api-";
constexpr std::string_view kWorkerNodePrefix = "worker-";
constexpr std::string_view kReconcilerNode = "reconciler";

struct LatencySpec {
  Duration min{0};
  Duration max{0};
};

// A probability in parts per million: integer arithmetic keeps draws identical everywhere.
using Ppm = std::uint32_t;
constexpr Ppm kPpmOne = 1'000'000;

// ---- providers ------------------------------------------------------------------------------

// What a simulated provider does with one execution.
enum class ProviderOutcome {
  ok,                // the contract-honouring answer
  error,             // a definitive error (HTTP 4xx/5xx from the provider)
  malformed,         // prose, or JSON breaking one rule of the operation's output contract
  hallucinated_key,  // the right answer plus an extra top-level key
  wrong_operation,   // valid JSON that does another operation
  hang,              // never answers
  plausible,         // the right shape with the wrong content: passes the schema, not the meaning
  garbled_refusal,   // a definitive error whose reason holds bytes text cannot hold
  garbled_answer,    // an answer the contract refuses, holding or quoting such bytes
};

inline constexpr Named<ProviderOutcome> kProviderOutcomes[] = {
    {ProviderOutcome::ok, "ok"},
    {ProviderOutcome::error, "error"},
    {ProviderOutcome::malformed, "malformed"},
    {ProviderOutcome::hallucinated_key, "hallucinated_key"},
    {ProviderOutcome::wrong_operation, "wrong_operation"},
    {ProviderOutcome::hang, "hang"},
    {ProviderOutcome::plausible, "plausible"},
    {ProviderOutcome::garbled_refusal, "garbled_refusal"},
    {ProviderOutcome::garbled_answer, "garbled_answer"},
};
static_assert(names_cover(kProviderOutcomes));

inline std::string_view to_string(ProviderOutcome outcome) {
  return name_of(kProviderOutcomes, outcome);
}
inline std::optional<ProviderOutcome> parse_provider_outcome(std::string_view text) {
  return parse_name(kProviderOutcomes, text);
}

struct ProviderCallSpec {
  ProviderOutcome outcome = ProviderOutcome::ok;
  std::optional<LatencySpec> latency;  // overrides the provider's latency
};

// A later certification of a provider: at `at` the certifier checks it again, and from `at` on
// the provider answers as `default_call` says, when one is given (calls past its script, and
// certification calls), as a provider that changed its model would.
struct RecertificationSpec {
  Duration at{};
  std::optional<ProviderCallSpec> default_call;
};

// The outcome of a call for `operation` past a provider's script: `outcome` (its default in
// force), made plausible when it is ok and the provider gets that operation wrong (`plausible_on`).
// The simulated provider and the real mode's stub both answer so.
inline ProviderOutcome outcome_past_script(ProviderOutcome outcome,
                                           const std::vector<std::string>& plausible_on,
                                           std::string_view operation) {
  const bool wrong = std::ranges::find(plausible_on, operation) != plausible_on.end();
  return outcome == ProviderOutcome::ok && wrong ? ProviderOutcome::plausible : outcome;
}

struct ProviderSpec {
  std::string name;
  LatencySpec latency{std::chrono::milliseconds(20), std::chrono::milliseconds(20)};
  bool certify = false;  // run contract certification at t=0, before the timeline
  std::size_t max_prompt_tokens = 4096;
  std::optional<std::string> prompt_template;
  ProviderCallSpec default_call;
  // Operations it gets wrong: a call for one of them past the script (a certification call too)
  // whose default answer is ok answers "plausible" instead (the right shape, the wrong content).
  std::vector<std::string> plausible_on;
  std::vector<ProviderCallSpec> script;        // executions 1, 2, ... in order; then default_call
  std::vector<RecertificationSpec> recertify;  // in time order

  // The default in force at `now`: default_call, or the latest recertification's by then.
  const ProviderCallSpec& default_at(Duration now) const {
    const ProviderCallSpec* in_force = &default_call;
    for (const auto& later : recertify) {
      if (later.at > now) break;
      if (later.default_call) in_force = &*later.default_call;
    }
    return *in_force;
  }
};

// ---- links ----------------------------------------------------------------------------------

struct LinkSpec {
  LatencySpec latency{std::chrono::milliseconds(1), std::chrono::milliseconds(1)};
  Ppm drop_request = 0;
  Ppm drop_response = 0;  // the work is done, the reply is lost
  Ppm duplicate = 0;
  Ppm reorder = 0;  // the message is held back by up to reorder_window extra
  Duration reorder_window = std::chrono::milliseconds(50);
  Ppm commit_unknown = 0;  // node_store only: the write commits, the reply is lost
  // The connection resets after the request was delivered: the far end does the work, the
  // sender only learns that the transport failed (a client or the balancer tries again, the
  // balancer answers 502 when it has no try left; a worker's call or a store statement has an
  // unknown outcome).
  Ppm reset = 0;
};

// A link's fault rates, in the order scenario files and the writer list them.
struct FaultRate {
  std::string_view name;  // the key in a scenario's network.<link> mapping
  Ppm LinkSpec::*rate;
  bool store_only;  // allowed on node_store alone
  // Whether swarm mode (scenario `swarm: true`) draws this rate. `reset` is not drawn: swarm
  // seeds predate it, and drawing it would change every swarm run's trace.
  bool swarmed;
};
inline constexpr FaultRate kFaultRates[] = {
    {"drop_request", &LinkSpec::drop_request, false, true},
    {"drop_response", &LinkSpec::drop_response, false, true},
    {"duplicate", &LinkSpec::duplicate, false, true},
    {"reorder", &LinkSpec::reorder, false, true},
    {"commit_unknown", &LinkSpec::commit_unknown, true, true},
    {"reset", &LinkSpec::reset, false, false},
};

// Whether any of the link's fault rates is on.
bool has_faults(const LinkSpec& link);

enum class LinkKind { client_lb, lb_api, worker_provider, node_store };

struct NetworkSpec {
  LinkSpec client_lb;
  LinkSpec lb_api;
  LinkSpec worker_provider;
  LinkSpec node_store;
};

struct LinkInfo {
  LinkKind kind;
  std::string_view name;        // the key in a scenario's `network:` and `partition:`
  std::string_view trace_node;  // the node its faults are recorded under
  LinkSpec NetworkSpec::*spec;
};
inline constexpr LinkInfo kLinks[] = {
    {LinkKind::client_lb, "client_lb", "net.client_lb", &NetworkSpec::client_lb},
    {LinkKind::lb_api, "lb_api", "net.lb_api", &NetworkSpec::lb_api},
    {LinkKind::worker_provider, "worker_provider", "net.worker_provider",
     &NetworkSpec::worker_provider},
    {LinkKind::node_store, "node_store", "net.node_store", &NetworkSpec::node_store},
};

const LinkInfo& link_info(LinkKind kind);
std::optional<LinkKind> parse_link(std::string_view name);

// ---- partitions -----------------------------------------------------------------------------

enum class PartitionDirection { both, requests, responses };
inline constexpr Named<PartitionDirection> kPartitionDirections[] = {
    {PartitionDirection::both, "both"},
    {PartitionDirection::requests, "requests"},
    {PartitionDirection::responses, "responses"},
};
static_assert(names_cover(kPartitionDirections));

// While [from, until), messages to or from `nodes` on one link are cut (in `direction`).
struct PartitionWindow {
  std::vector<std::string> nodes;
  PartitionDirection direction = PartitionDirection::both;
  Duration from{0};
  Duration until{0};
};

}  // namespace onejob::sim
