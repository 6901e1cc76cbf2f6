#include "harness/scenario/spec.hpp"

#include <algorithm>

namespace onejob::scenario {

ScenarioError::ScenarioError(const std::string& file, SourcePos pos, const std::string& message)
    : std::runtime_error(pos.line > 0 ? file + ":" + std::to_string(pos.line) + ":" +
                                            std::to_string(pos.column) + ": " + message
                                      : file + ": " + message),
      file_(file),
      pos_(pos),
      message_(message) {}

Duration last_action(const ScenarioSpec& spec) {
  Duration last{0};
  for (const auto& entry : spec.timeline) last = std::max(last, entry.at);
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
