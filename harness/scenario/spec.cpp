#include "harness/scenario/spec.hpp"

#include <algorithm>

#include "system/domain/check.hpp"

namespace onejob::scenario {

ScenarioError::ScenarioError(const std::string& file, SourcePos pos, const std::string& message)
    : std::runtime_error(pos.line > 0 ? file + ":" + std::to_string(pos.line) + ":" +
                                            std::to_string(pos.column) + ": " + message
                                      : file + ": " + message),
      file_(file),
      pos_(pos),
      message_(message) {}

namespace {

constexpr std::string_view kNumber = "{n}";

// `text` with every "{n}" replaced by `number`.
std::string with_number(const std::string& text, const std::string& number) {
  std::string out;
  std::size_t from = 0;
  for (auto at = text.find(kNumber); at != std::string::npos; at = text.find(kNumber, from)) {
    out.append(text, from, at - from).append(number);
    from = at + kNumber.size();
  }
  return out.append(text, from, std::string::npos);
}

const GeneratedLoad::Arrival& arrival_of(const ScenarioSpec& spec, std::size_t number) {
  ONEJOB_ASSERT(number > spec.timeline.size() && number <= request_count(spec),
                "request " + std::to_string(number) + " is not one of the load's");
  return spec.load.arrivals[number - spec.timeline.size() - 1];
}

std::string load_client(const GeneratedLoad& load, std::uint64_t job) {
  ONEJOB_ASSERT(load.clients > 0, "a load with clients (the loader gives at least one)");
  return std::string(kLoadClientPrefix) +
         std::to_string(job % static_cast<std::uint64_t>(load.clients) + 1);
}

}  // namespace

std::size_t request_count(const ScenarioSpec& spec) {
  return spec.timeline.size() + spec.load.arrivals.size();
}

std::optional<std::string> action_key_sent(const TimelineEntry& entry) {
  if (entry.keyless) return std::nullopt;
  return entry.action_key.value_or("op-r" + std::to_string(entry.request));
}

const TimelineEntry& request_entry(const ScenarioSpec& spec, std::size_t number,
                                   TimelineEntry& room) {
  if (number >= 1 && number <= spec.timeline.size()) return spec.timeline[number - 1];
  const auto& arrival = arrival_of(spec, number);
  const GeneratedLoad& load = spec.load;
  ONEJOB_ASSERT(!load.bodies.empty(), "a load with bodies (the loader gives at least one)");
  const std::string n = std::to_string(arrival.job);
  room = TimelineEntry{};
  room.kind = TimelineEntry::Kind::create_job;
  room.at = arrival.at;
  room.client = load_client(load, arrival.job);
  room.create_job.client = room.client;
  if (load.key) room.create_job.key = with_number(*load.key, n);
  room.create_job.body = with_number(load.bodies[arrival.job % load.bodies.size()], n);
  room.request = static_cast<int>(number);
  room.pos = load.pos;
  return room;
}

Duration request_at(const ScenarioSpec& spec, std::size_t number) {
  if (number >= 1 && number <= spec.timeline.size()) return spec.timeline[number - 1].at;
  return arrival_of(spec, number).at;
}

std::string request_client(const ScenarioSpec& spec, std::size_t number) {
  if (number >= 1 && number <= spec.timeline.size()) return spec.timeline[number - 1].client;
  return load_client(spec.load, arrival_of(spec, number).job);
}

Duration last_action(const ScenarioSpec& spec) {
  Duration last{0};
  for (const auto& entry : spec.timeline) last = std::max(last, entry.at);
  if (!spec.load.arrivals.empty()) last = std::max(last, spec.load.arrivals.back().at);
  for (const auto& fault : spec.node_faults) last = std::max(last, fault.at);
  for (const auto& partition : spec.partitions) last = std::max(last, partition.until);
  for (const auto& pause : spec.pauses) last = std::max(last, pause.until);
  return last;
}

Duration faults_end(const ScenarioSpec& spec) {
  if (!spec.quiet) return last_action(spec);
  return spec.duration.value_or(last_action(spec) + kStormSettleTime);
}

Duration run_end(const ScenarioSpec& spec) {
  if (spec.quiet) return faults_end(spec) + *spec.quiet;
  return spec.duration.value_or(last_action(spec) + kSettleTime);
}

std::string api_node(int number) { return std::string(kApiNodePrefix) + std::to_string(number); }
std::string worker_node(int number) {
  return std::string(kWorkerNodePrefix) + std::to_string(number);
}

// The names a partition can cut off on each link are that link's endpoints, except the single
// load balancer and the single store: clients on client_lb, API nodes on lb_api, workers and
// providers on worker_provider, every API node, worker and the reconciler on node_store.
std::vector<std::string> nodes_on(const ScenarioSpec& spec, LinkKind link) {
  std::vector<std::string> nodes;
  const auto add_topology = [&](std::string_view prefix) {
    for (auto& name : topology_nodes(spec.topology)) {
      if (name.starts_with(prefix)) nodes.push_back(std::move(name));
    }
  };
  switch (link) {
    case LinkKind::client_lb:
      for (const auto& client : spec.clients) nodes.push_back(client.name);
      break;
    case LinkKind::lb_api:
      add_topology(kApiNodePrefix);
      break;
    case LinkKind::worker_provider:
      add_topology(kWorkerNodePrefix);
      for (const auto& provider : spec.providers) nodes.push_back(provider.name);
      break;
    case LinkKind::node_store:
      add_topology("");
      break;
  }
  return nodes;
}

std::vector<std::string> topology_nodes(const TopologySpec& topology) {
  std::vector<std::string> nodes;
  for (int i = 1; i <= topology.api_nodes; ++i) nodes.push_back(api_node(i));
  for (int i = 1; i <= topology.workers; ++i) nodes.push_back(worker_node(i));
  if (topology.reconciler) nodes.emplace_back(kReconcilerNode);
  return nodes;
}

}  // namespace onejob::scenario
