#include <algorithm>
#include <array>
#include <map>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "harness/scenario/loader_sections.hpp"

namespace onejob::scenario::loading {
namespace {

struct LinkName {
  std::string_view name;
  LinkKind kind;
};

constexpr std::array kLinks{
    LinkName{"client_lb", LinkKind::client_lb},
    LinkName{"lb_api", LinkKind::lb_api},
    LinkName{"worker_provider", LinkKind::worker_provider},
    LinkName{"node_store", LinkKind::node_store},
};

LinkSpec& link_of(NetworkSpec& network, LinkKind kind) {
  switch (kind) {
    case LinkKind::client_lb:
      return network.client_lb;
    case LinkKind::lb_api:
      return network.lb_api;
    case LinkKind::worker_provider:
      return network.worker_provider;
    case LinkKind::node_store:
      break;
  }
  return network.node_store;
}

std::string join(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined.empty() ? "none" : joined;
}

LinkSpec read_link(const YamlReader& reader, const YAML::Node& node, LinkName link) {
  const std::string what = "network." + std::string(link.name);
  YamlMap map(reader, node, what,
              {"latency", "drop_request", "drop_response", "duplicate", "reorder", "reorder_window",
               "commit_unknown", "reset"});
  LinkSpec spec;
  const auto read_ppm = [&](std::string_view key, Ppm& field) {
    if (auto value = map.get(key))
      field = reader.probability(*value, what + "." + std::string(key));
  };
  if (auto latency = map.get("latency")) spec.latency = reader.latency(*latency, what + ".latency");
  read_ppm("drop_request", spec.drop_request);
  read_ppm("drop_response", spec.drop_response);
  read_ppm("duplicate", spec.duplicate);
  read_ppm("reorder", spec.reorder);
  if (auto window = map.get("reorder_window")) {
    spec.reorder_window = reader.duration(*window, what + ".reorder_window");
  }
  if (auto commit_unknown = map.get("commit_unknown");
      commit_unknown && link.kind != LinkKind::node_store) {
    reader.fail(*commit_unknown, what +
                                     ".commit_unknown: only allowed on network.node_store (a "
                                     "store write that commits while its reply is lost)");
  }
  read_ppm("commit_unknown", spec.commit_unknown);
  read_ppm("reset", spec.reset);
  return spec;
}

// Checks the fault entries against the topology, clients, providers and duration already read.
class FaultReader {
 public:
  FaultReader(const YamlReader& reader, ScenarioSpec& spec) : reader_(reader), spec_(spec) {}

  void read(const YAML::Node& node);

 private:
  void read_node_fault(const YAML::Node& item, NodeFaultSpec::Kind kind);
  void read_partition(const YAML::Node& item);
  void read_pause(const YAML::Node& item);
  // `end` after `from`, or a clear error at `node`.
  Duration end_time(const YAML::Node& node, Duration from);
  std::vector<std::string> read_partition_nodes(const YAML::Node& node, LinkKind link);
  Duration start_time(const YAML::Node& node, std::string_view what);
  void check_crash_restart_order() const;

  const YamlReader& reader_;
  ScenarioSpec& spec_;
};

void FaultReader::read(const YAML::Node& node) {
  reader_.expect_sequence(node, "faults");
  for (const auto& item : node) {
    YamlMap entry(
        reader_, item, "fault",
        {"at", "crash", "restart", "from", "until", "partition", "pause", "nodes", "direction"});
    std::vector<std::string> kinds;
    for (const char* kind : {"crash", "restart", "partition", "pause"}) {
      if (entry.get(kind)) kinds.emplace_back(kind);
    }
    if (kinds.size() != 1) {
      reader_.fail(item,
                   "fault: expected exactly one of crash, restart, partition or pause, found " +
                       (kinds.empty() ? std::string("none") : join(kinds)));
    }
    if (kinds.front() == "partition") {
      read_partition(item);
    } else if (kinds.front() == "pause") {
      read_pause(item);
    } else {
      read_node_fault(item, kinds.front() == "crash" ? NodeFaultSpec::Kind::crash
                                                     : NodeFaultSpec::Kind::restart);
    }
  }
  check_crash_restart_order();
}

void FaultReader::read_node_fault(const YAML::Node& item, NodeFaultSpec::Kind kind) {
  const std::string kind_name = kind == NodeFaultSpec::Kind::crash ? "crash" : "restart";
  YamlMap entry(reader_, item, kind_name + " fault", {"at", kind_name});
  NodeFaultSpec fault;
  fault.kind = kind;
  fault.mark = reader_.mark(item);
  fault.at = start_time(entry.require("at"), "at");
  const auto node = entry.require(kind_name);
  fault.node = reader_.string(node, kind_name);
  const auto known = topology_nodes(spec_.topology);
  if (std::ranges::find(known, fault.node) == known.end()) {
    reader_.fail(node, kind_name + ": unknown node \"" + fault.node +
                           "\" (the topology has: " + join(known) + ")");
  }
  spec_.node_faults.push_back(std::move(fault));
}

void FaultReader::read_partition(const YAML::Node& item) {
  YamlMap entry(reader_, item, "partition fault",
                {"from", "until", "partition", "nodes", "direction"});
  PartitionSpec partition;
  partition.mark = reader_.mark(item);
  const auto link = entry.require("partition");
  const std::string link_name = reader_.string(link, "partition");
  const auto* known = std::ranges::find(kLinks, link_name, &LinkName::name);
  if (known == kLinks.end()) {
    reader_.fail(link, "partition: unknown link \"" + link_name +
                           "\" (expected one of: client_lb, lb_api, worker_provider, node_store)");
  }
  partition.link = known->kind;
  partition.from = start_time(entry.require("from"), "from");
  partition.until = end_time(entry.require("until"), partition.from);
  partition.nodes = read_partition_nodes(entry.require("nodes"), partition.link);
  if (auto direction = entry.get("direction")) {
    const std::string text = reader_.string(*direction, "direction");
    if (text == "both") {
      partition.direction = PartitionSpec::Direction::both;
    } else if (text == "requests") {
      partition.direction = PartitionSpec::Direction::requests;
    } else if (text == "responses") {
      partition.direction = PartitionSpec::Direction::responses;
    } else {
      reader_.fail(*direction, "direction: expected both, requests or responses");
    }
  }
  spec_.partitions.push_back(std::move(partition));
}

Duration FaultReader::end_time(const YAML::Node& node, Duration from) {
  const Duration until = reader_.duration(node, "until");
  if (until <= from) {
    reader_.fail(node, "until: expected a time after from (" + format_duration(from) + "), found " +
                           format_duration(until));
  }
  return until;
}

void FaultReader::read_pause(const YAML::Node& item) {
  YamlMap entry(reader_, item, "pause fault", {"from", "until", "pause"});
  PauseSpec pause;
  pause.mark = reader_.mark(item);
  const auto node = entry.require("pause");
  pause.node = reader_.string(node, "pause");
  const auto known = topology_nodes(spec_.topology);
  if (std::ranges::find(known, pause.node) == known.end()) {
    reader_.fail(
        node, "pause: unknown node \"" + pause.node + "\" (the topology has: " + join(known) + ")");
  }
  pause.from = start_time(entry.require("from"), "from");
  pause.until = end_time(entry.require("until"), pause.from);
  for (const auto& other : spec_.pauses) {
    if (other.node == pause.node && pause.from < other.until && other.from < pause.until) {
      reader_.fail(item, "pause: " + pause.node + " is already paused from " +
                             format_duration(other.from) + " until " +
                             format_duration(other.until));
    }
  }
  spec_.pauses.push_back(std::move(pause));
}

std::vector<std::string> FaultReader::read_partition_nodes(const YAML::Node& node, LinkKind link) {
  reader_.expect_sequence(node, "nodes");
  if (node.size() == 0) reader_.fail(node, "nodes: expected at least one node");
  const auto known = nodes_on(spec_, link);
  std::vector<std::string> nodes;
  for (const auto& item : node) {
    auto name = reader_.string(item, "node");
    if (std::ranges::find(known, name) == known.end()) {
      reader_.fail(item,
                   "nodes: \"" + name + "\" is not on this link (its nodes: " + join(known) + ")");
    }
    if (std::ranges::find(nodes, name) != nodes.end()) {
      reader_.fail(item, "nodes: \"" + name + "\" is listed twice");
    }
    nodes.push_back(std::move(name));
  }
  return nodes;
}

Duration FaultReader::start_time(const YAML::Node& node, std::string_view what) {
  const Duration time = reader_.duration(node, what);
  if (spec_.duration && time > *spec_.duration) {
    reader_.fail(node, std::string(what) + ": " + format_duration(time) +
                           " is after the end of the run (duration: " +
                           format_duration(*spec_.duration) + ")");
  }
  return time;
}

// Replays crashes and restarts in time order (file order among equal times): a node cannot
// crash twice without a restart between, nor restart without having crashed.
void FaultReader::check_crash_restart_order() const {
  std::vector<const NodeFaultSpec*> in_time_order;
  for (const auto& fault : spec_.node_faults) in_time_order.push_back(&fault);
  std::ranges::stable_sort(in_time_order, {}, &NodeFaultSpec::at);
  std::map<std::string, Duration, std::less<>> crashed_since;
  for (const auto* fault : in_time_order) {
    const auto crashed = crashed_since.find(fault->node);
    const std::string when = fault->node + " at " + format_duration(fault->at);
    if (fault->kind == NodeFaultSpec::Kind::crash && crashed != crashed_since.end()) {
      throw ScenarioError(reader_.file(), fault->mark,
                          "impossible timeline: crash of " + when + ", but it is already crashed " +
                              "(since " + format_duration(crashed->second) + ")");
    }
    if (fault->kind == NodeFaultSpec::Kind::restart && crashed == crashed_since.end()) {
      throw ScenarioError(reader_.file(), fault->mark,
                          "impossible timeline: restart of " + when +
                              ", but it is not crashed then (a restart must follow a crash of "
                              "the same node)");
    }
    if (fault->kind == NodeFaultSpec::Kind::crash) {
      crashed_since.emplace(fault->node, fault->at);
    } else {
      crashed_since.erase(crashed);
    }
  }
}

}  // namespace

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
      add_topology("api-");
      break;
    case LinkKind::worker_provider:
      add_topology("worker-");
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
  for (int i = 1; i <= topology.api_nodes; ++i) nodes.push_back("api-" + std::to_string(i));
  for (int i = 1; i <= topology.workers; ++i) nodes.push_back("worker-" + std::to_string(i));
  if (topology.reconciler) nodes.emplace_back("reconciler");
  return nodes;
}

NetworkSpec read_network(const YamlReader& reader, const YAML::Node& node) {
  YamlMap network(reader, node, "network",
                  {"client_lb", "lb_api", "worker_provider", "node_store"});
  NetworkSpec spec;
  for (const auto& link : kLinks) {
    if (auto value = network.get(link.name))
      link_of(spec, link.kind) = read_link(reader, *value, link);
  }
  return spec;
}

void read_faults(const YamlReader& reader, const YAML::Node& node, ScenarioSpec& spec) {
  FaultReader(reader, spec).read(node);
}

}  // namespace onejob::scenario::loading
