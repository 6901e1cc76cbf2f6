#include <algorithm>

#include "harness/real/probe_run.hpp"

namespace onejob::real::probe_detail {

// A random fault of `link`'s rates for one message, drawn from the scenario's seed.
std::optional<ProxyRule> Run::draw_fault(const sim::LinkSpec& link) {
  std::lock_guard lock(random_mutex_);
  if (draw(link.drop_request)) return ProxyRule{ProxyFault::drop_request, milliseconds(0)};
  // A reset after delivery looks to the sender like a lost reply: the far end did the work.
  if (draw(link.drop_response) || draw(link.reset)) {
    return ProxyRule{ProxyFault::drop_response, milliseconds(0)};
  }
  if (draw(link.duplicate)) return ProxyRule{ProxyFault::duplicate, milliseconds(0)};
  if (draw(link.reorder)) {
    const auto window = std::max<std::int64_t>(1, real(link.reorder_window).count());
    return ProxyRule{
        .fault = ProxyFault::delay,
        .delay = milliseconds(std::uniform_int_distribution<std::int64_t>(0, window)(random_)),
        .overtaken = true};
  }
  return std::nullopt;
}

// The fault of a partition window on `link` that cuts off one of `nodes` now, if any.
std::optional<ProxyRule> Run::partitioned(LinkKind link, const std::vector<std::string>& nodes,
                                          bool any_node) const {
  const Duration now = scenario_now();
  for (const PartitionSpec& partition : spec_.partitions) {
    if (partition.link != link || now < partition.from || now >= partition.until) continue;
    const bool ours = any_node || std::ranges::any_of(nodes, [&](const std::string& node) {
                        return std::ranges::find(partition.nodes, node) != partition.nodes.end();
                      });
    if (!ours) continue;
    return ProxyRule{partition.direction == PartitionSpec::Direction::responses
                         ? ProxyFault::drop_response
                         : ProxyFault::drop_request,
                     milliseconds(0)};
  }
  return std::nullopt;
}

// The client_lb faults of the scenario for client `client`'s request arriving now; lb_api's
// apply between every client and the target (the target is its own balancer and API nodes).
ProxyRule Run::choose(std::size_t client, std::uint64_t /*number*/) {
  if (!running_ || quiet_) return {};
  const std::string& name = spec_.clients[client].name;
  if (auto rule = partitioned(LinkKind::client_lb, {name}, false)) return *rule;
  if (auto rule = partitioned(LinkKind::lb_api, {}, true)) return *rule;
  for (const auto* link : {&spec_.network.client_lb, &spec_.network.lb_api}) {
    if (auto rule = draw_fault(*link)) return *rule;
  }
  const milliseconds delay = real(spec_.network.client_lb.latency.min);
  if (delay > milliseconds(0)) return {ProxyFault::delay, delay};
  return {};
}

// The worker_provider faults for a call to provider `provider` arriving now: the target's
// workers (any of them) and the stub are that link's ends.
ProxyRule Run::choose_provider(std::size_t provider, std::uint64_t /*number*/) {
  if (!running_ || quiet_) return {};
  const std::string& name = spec_.providers[provider].name;
  std::vector<std::string> ends{name};
  for (int worker = 1; worker <= spec_.topology.workers; ++worker) {
    ends.push_back(scenario::worker_node(worker));
  }
  if (auto rule = partitioned(LinkKind::worker_provider, ends, false)) return *rule;
  if (auto rule = draw_fault(spec_.network.worker_provider)) return *rule;
  const milliseconds delay = real(spec_.network.worker_provider.latency.min);
  if (delay > milliseconds(0)) return {ProxyFault::delay, delay};
  return {};
}

// The node_store faults for a chunk of the store protocol crossing now: the target is every
// API node and worker at once (one process, one pool of store connections), so a partition of
// any of them cuts the target's link.
StreamRule Run::choose_store(StreamDirection direction) {
  if (!running_ || quiet_) return {};
  const bool to_store = direction == StreamDirection::to_server;
  const Duration now = scenario_now();
  for (const PartitionSpec& partition : spec_.partitions) {
    if (partition.link != LinkKind::node_store || now < partition.from || now >= partition.until) {
      continue;
    }
    if (partition.direction == PartitionSpec::Direction::both ||
        (partition.direction == PartitionSpec::Direction::requests) == to_store) {
      return {.cut = true};
    }
  }
  const sim::LinkSpec& link = spec_.network.node_store;
  {
    std::lock_guard lock(random_mutex_);
    if (to_store ? draw(link.drop_request) : draw(link.drop_response) || draw(link.reset)) {
      return {.cut = true};
    }
  }
  return {.delay = real(link.latency.min)};
}

bool Run::start_store_proxy() {
  if (options_.store_upstream.empty()) return true;
  const std::string& upstream = options_.store_upstream;
  const bool path = upstream.starts_with("/");
  const auto colon = path ? upstream.size() : upstream.rfind(':');
  try {
    store_proxy_ = std::make_unique<StreamProxy>(
        upstream.substr(0, colon), path ? "" : upstream.substr(colon + 1),
        [this](StreamDirection direction) { return choose_store(direction); });
  } catch (const std::exception& error) {
    result_.setup_error = error.what();
    return false;
  }
  for (const auto& partition : spec_.partitions) {
    if (partition.link != LinkKind::node_store) continue;
    std::string nodes;
    for (const auto& node : partition.nodes) nodes += (nodes.empty() ? "" : ", ") + node;
    notes_.push_back("the partition between " + nodes +
                     " and the store cuts the whole target's link to it (one process)");
  }
  return true;
}

}  // namespace onejob::real::probe_detail
