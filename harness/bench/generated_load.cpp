#include "harness/bench/generated_load.hpp"

#include <string>

#include "harness/scenario/loader.hpp"

namespace onejob::bench {

std::string generated_load_yaml(std::uint64_t jobs, bool faults) {
  const std::string name = "load-" + std::to_string(jobs) + (faults ? "-faults" : "");
  std::string text = "name: " + name +
                     "\n"
                     "seed: 1\n"
                     "topology: {api_nodes: 2, workers: 4, reconciler: true}\n"
                     "policy: {client_timeout: 5s, client_retries: 3, lb_timeout: 2s, "
                     "lb_retries: 1, worker_capacity: 16}\n"
                     "providers:\n"
                     "  - {name: alpha, latency: {min: 50ms, max: 500ms}}\n"
                     "  - {name: beta, latency: {min: 50ms, max: 500ms}}\n"
                     "load:\n"
                     "  jobs: " +
                     std::to_string(jobs) +
                     "\n"
                     "  clients: 10\n"
                     "  every: 20ms\n"
                     "  double_click: 20%\n"
                     "  double_click_after: 200ms\n"
                     "  key: k{n}\n"
                     "  bodies:\n"
                     "    - {operation: classify, provider: alpha, input: {text: \"job {n}\"}}\n"
                     "    - {operation: classify, provider: beta, input: {text: \"job {n}\"}}\n";
  if (faults) {
    text +=
        "network:\n"
        "  client_lb: {drop_request: 1%, duplicate: 1%, reorder: 1%}\n"
        "  lb_api: {drop_request: 1%, duplicate: 1%, reorder: 1%}\n"
        "  worker_provider: {drop_request: 1%, duplicate: 1%, reorder: 1%}\n"
        "  node_store: {drop_request: 1%, duplicate: 1%, reorder: 1%, commit_unknown: 0.5%}\n";
  }
  // Two minutes after the last create.
  text += "duration: " + std::to_string(jobs * 20 / 1000 + 120) + "s\n";
  return text;
}

scenario::ScenarioSpec generated_load(std::uint64_t jobs, bool faults) {
  const std::string yaml = generated_load_yaml(jobs, faults);
  return scenario::parse_scenario(yaml, "load-" + std::to_string(jobs) + ".yaml");
}

}  // namespace onejob::bench
