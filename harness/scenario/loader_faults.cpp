#include <algorithm>
#include <array>
#include <map>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "harness/scenario/loader_sections.hpp"

namespace onejob::scenario::loading {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined.empty() ? "none" : joined;
}

LinkSpec read_link(const YamlReader& reader, const YAML::Node& node, const sim::LinkInfo& link) {
  const std::string what = "network." + std::string(link.name);
  std::vector<std::string_view> keys = {"latency"};
  for (const auto& fault : kFaultRates) {
    keys.push_back(fault.name);
    if (fault.rate == &LinkSpec::reorder) keys.emplace_back("reorder_window");
  }
  YamlMap map(reader, node, what, keys);
  LinkSpec spec;
  if (auto latency = map.get("latency")) spec.latency = reader.latency(*latency, what + ".latency");
  for (const auto& fault : kFaultRates) {
    if (auto value = map.get(fault.name)) {
      if (fault.store_only && link.kind != LinkKind::node_store) {
        reader.fail(*value, what + "." + std::string(fault.name) +
                                ": only allowed on network.node_store (a store write that "
                                "commits while its reply is lost)");
      }
      spec.*fault.rate = reader.probability(*value, what + "." + std::string(fault.name));
    }
    if (auto window = map.get("reorder_window"); window && fault.rate == &LinkSpec::reorder) {
      spec.reorder_window = reader.duration(*window, what + ".reorder_window");
    }
  }
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
  const std::string kind_name(name_of(kNodeFaultKinds, kind));
  YamlMap entry(reader_, item, kind_name + " fault", {"at", kind_name});
  NodeFaultSpec fault;
  fault.kind = kind;
  fault.pos = reader_.pos(item);
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
  partition.pos = reader_.pos(item);
  const auto link = entry.require("partition");
  const std::string link_name = reader_.string(link, "partition");
  const auto known = sim::parse_link(link_name);
  if (!known) {
    std::string names;
    for (const auto& each : kLinks) names += (names.empty() ? "" : ", ") + std::string(each.name);
    reader_.fail(link,
                 "partition: unknown link \"" + link_name + "\" (expected one of: " + names + ")");
  }
  partition.link = *known;
  partition.from = start_time(entry.require("from"), "from");
  partition.until = end_time(entry.require("until"), partition.from);
  partition.nodes = read_partition_nodes(entry.require("nodes"), partition.link);
  if (auto direction = entry.get("direction")) {
    const std::string text = reader_.string(*direction, "direction");
    const auto parsed = parse_name(sim::kPartitionDirections, text);
    if (!parsed) reader_.fail(*direction, "direction: expected both, requests or responses");
    partition.direction = *parsed;
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
  pause.pos = reader_.pos(item);
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
      throw ScenarioError(reader_.file(), fault->pos,
                          "impossible timeline: crash of " + when + ", but it is already crashed " +
                              "(since " + format_duration(crashed->second) + ")");
    }
    if (fault->kind == NodeFaultSpec::Kind::restart && crashed == crashed_since.end()) {
      throw ScenarioError(reader_.file(), fault->pos,
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

NetworkSpec read_network(const YamlReader& reader, const YAML::Node& node) {
  std::vector<std::string_view> names;
  for (const auto& link : kLinks) names.push_back(link.name);
  YamlMap network(reader, node, "network", names);
  NetworkSpec spec;
  for (const auto& link : kLinks) {
    if (auto value = network.get(link.name)) spec.*link.spec = read_link(reader, *value, link);
  }
  return spec;
}

void read_faults(const YamlReader& reader, const YAML::Node& node, ScenarioSpec& spec) {
  FaultReader(reader, spec).read(node);
}

}  // namespace onejob::scenario::loading
