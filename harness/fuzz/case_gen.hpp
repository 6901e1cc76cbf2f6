#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "harness/scenario/spec.hpp"

namespace onejob::fuzz {

// A generated case in raw form: small integers that RapidCheck draws (a record at a time,
// record_gen.hpp) and shrinks one by one (toward 0 and toward shorter lists). build_scenario turns
// any RawCase into a valid scenario: references are taken modulo what exists and impossible entries
// are dropped, so every shrink of a case is still a case. What a timeline step does. RapidCheck
// draws and shrinks it as the int RawStep::kind (taken modulo kStepKinds), so the order matters:
// shrinking goes toward create_job, the simplest.
enum class StepKind {
  create_job,
  get_job,
  retry,
  cancel,
  cancel_then_retry,         // an operator's usual story: cancel, then retry on another provider
  cancel_then_racing_retry,  // the same, the retry timed to answer with the cancelled attempt
};
constexpr int kStepKinds = 6;

// What a raw fault is, drawn and shrunk as the int RawFault::kind (modulo kFaultKinds).
enum class FaultKind { crash_and_restart, partition, pause };
constexpr int kFaultKinds = 3;

struct RawStep {
  int kind = 0;    // a StepKind
  int gap_ms = 0;  // after the previous step
  int client = 0;
  int key = 0;       // create: a key from a small pool (deliberate reuse); 0: the first key
  int body = 0;      // create: one of a small set of bodies, with near-duplicates
  int target = 0;    // action: which earlier create
  int attempt = 0;   // cancel: attempt number - 1
  int provider = 0;  // retry: 0 none, else providers[provider - 1]
  // retry, cancel: 0 the action's own key; 1, 2 one of a small pool shared by every action (keys
  // reused across actions and jobs on purpose); 3 the action twice at one instant under one key;
  // 4 the same, a retry's twin naming another provider.
  int action_key = 0;
  // create: 0 a key from the pool; else one at a boundary of the key rules (255 and 256
  // characters, empty, space and tilde, 0x1f, 0x7f).
  int odd_key = 0;
  // create: 0 the body `body` names; 1 and 2 JSON nested exactly at the depth limit (64) and one
  // level past it; 3 and 4 inputs the contract refuses (an empty text; by `body`, an
  // unknown member, an extract whose fields are empty or name "" or a name twice, or fields on a
  // summarize); 5 one
  // shallow list of 70 empty lists and objects side by side (more brackets than the depth limit,
  // none deeper than 4); 6 a member name repeated in an object and in the object it contains (not
  // a duplicate key); 7 an operation that is not a string; 8 and 9 the body `body` names, padded
  // with trailing spaces to exactly the 1 MiB body limit and one byte past it; 10 a member
  // repeated in one object. get_job: 0 GET
  // /jobs/{id}; 1-10 a probe of the routes (kRouteProbes: no such resource, or another method).
  // retry: 0 the usual body; 1 and 2 bodies the contract refuses (an extra member, a provider that
  // is not a string).
  int deep = 0;
};

struct RawCall {
  int outcome = 0;     // index into the outcomes, ok first
  int latency_ms = 0;  // 0: the provider's own latency
};

struct RawProvider {
  int latency_ms = 0;
  bool certify = false;
  // Beyond its script: 0 ok, 1 "plausible" (right shape, wrong content): on every operation with
  // an even latency_ms, else on one operation only (which, by latency_ms / 2).
  int behaviour = 0;
  std::vector<RawCall> script;
  // Its own latency makes answers reach the worker at the very instant the attempt's deadline
  // fires (the deadline and the answer race).
  bool at_deadline = false;
  // Its prompt limit: 0 the default (4096 tokens); 1 8 tokens (every attempt on it fails before
  // any call: a worker's early return); 2 24 tokens (short inputs fit, long ones do not); 3 and 4
  // the template "{{input}}" padded so that the first body's prompt is exactly the limit in tokens,
  // or one byte over it.
  int prompt_limit = 0;
};

struct RawLink {
  int latency_ms = 0;
  // A rate level (0 none) per fault rate, in scenario::kFaultRates order (store-only rates are
  // used on node_store alone).
  std::array<int, std::size(scenario::kFaultRates)> rates{};
};

struct RawFault {
  int kind = 0;  // a FaultKind: a crash (then a restart after `length_ms`), a partition, a pause
  int node = 0;  // crash, pause: a node of the topology; partition: a link
  int from_ms = 0;
  int length_ms = 0;
  int direction = 0;  // partition: both, requests, responses
  int width = 0;      // partition: how many of the link's nodes are cut
};

// How much of each list build_scenario uses; the generator draws no longer lists.
constexpr std::size_t kMaxSteps = 10;
constexpr std::size_t kMaxFaults = 4;
constexpr std::size_t kMaxScript = 4;
constexpr std::size_t kMaxProviders = 3;
constexpr std::size_t kLinkCount = std::size(scenario::kLinks);

struct RawCase {
  std::uint64_t seed = 0;
  int api_nodes = 0;  // + 1
  int workers = 0;    // + 1
  int deadline_s = 0;
  int lease_extra_s = 0;
  int reconcile_s = 0;
  int client_retries = 0;
  int lb_retries = 0;
  int clients = 0;  // + 1
  // Clients share owners: 0 all alice, 1 alice and bob alternate, 2 alice and an owner whose name
  // holds a NUL byte (which the store cannot hold: each of its requests is refused) alternate.
  int owners = 0;
  // 1 and 2: "ties": instant links and every time on a grid of 1 s or 5 s (multiples of the
  // workers' 250 ms poll), so that answers of two attempts can reach the store at one instant
  // (the seed then orders them). 3: "race": a 1 s grid, and providers set up for kind 5 steps.
  // 4: "busy": a 1 s grid, one worker with one slot, the first provider slow to answer first.
  int profile = 0;
  int reconciler = 1;     // 0: the topology has no reconciler
  int capacity = 3;       // worker_capacity - 1
  int attempt_limit = 4;  // attempt_limit - 1
  // 1: edges of time: the lease is the attempt deadline plus 1 ms.
  int edge = 0;
  // 1, 2: after the last step, each client reads every job it asked to create, once, 20 s or
  // 90 s later (the read-back a story ends with: what a reader is shown once the dust settled).
  int read_back = 0;
  std::vector<RawProvider> providers;
  std::vector<RawLink> links;  // in scenario::kLinks order
  std::vector<RawFault> faults;
  std::vector<RawStep> steps;
};

// A valid scenario for any raw case. `name` names it.
scenario::ScenarioSpec build_scenario(const RawCase& raw, const std::string& name);

// How big a case is, for reports: timeline steps, nodes, faults (node faults + partitions +
// faulty links).
struct CaseSize {
  int steps = 0;
  int nodes = 0;
  int faults = 0;
};
CaseSize size_of(const scenario::ScenarioSpec& spec);

}  // namespace onejob::fuzz
