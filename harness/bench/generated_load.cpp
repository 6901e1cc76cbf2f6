#include "harness/bench/generated_load.hpp"

#include <chrono>
#include <string>

#include "harness/check/invariant.hpp"

namespace onejob::bench {

scenario::ScenarioSpec generated_load(int jobs, bool faults) {
  using std::chrono::milliseconds;
  scenario::ScenarioSpec spec;
  spec.name = "load-" + std::to_string(jobs) + (faults ? "-faults" : "");
  spec.file = spec.name + ".yaml";
  spec.seed = 1;
  spec.topology = {2, 4, true};
  spec.policy.client_timeout = std::chrono::seconds(5);
  spec.policy.client_retries = 3;
  spec.policy.lb_timeout = std::chrono::seconds(2);
  spec.policy.lb_retries = 1;
  spec.policy.worker_capacity = 16;
  for (const char* name : {"alpha", "beta"}) {
    scenario::ProviderSpec provider;
    provider.name = name;
    provider.latency = {milliseconds(50), milliseconds(500)};
    spec.providers.push_back(std::move(provider));
  }
  for (int i = 0; i < 10; ++i) spec.clients.push_back({"c" + std::to_string(i), "owner"});
  if (faults) {
    for (auto* link : {&spec.network.client_lb, &spec.network.lb_api, &spec.network.worker_provider,
                       &spec.network.node_store}) {
      link->drop_request = 10'000;
      link->duplicate = 10'000;
      link->reorder = 10'000;
    }
    spec.network.node_store.commit_unknown = 5'000;
  }
  for (int i = 0; i < jobs; ++i) {
    scenario::TimelineEntry create;
    create.kind = scenario::TimelineEntry::Kind::create_job;
    create.at = milliseconds(20) * i;
    create.client = spec.clients[static_cast<std::size_t>(i % 10)].name;
    create.create_job.client = create.client;
    create.create_job.key = "k" + std::to_string(i);
    create.create_job.body = std::string(R"({"operation":"classify","provider":")") +
                             (i % 2 == 0 ? "alpha" : "beta") + R"(","input":{"text":"job )" +
                             std::to_string(i) + R"("}})";
    create.request = static_cast<int>(spec.timeline.size()) + 1;
    if (i % 5 == 0) {
      scenario::TimelineEntry again = create;
      again.at += milliseconds(200);
      spec.timeline.push_back(std::move(create));
      again.request = static_cast<int>(spec.timeline.size()) + 1;
      spec.timeline.push_back(std::move(again));
    } else {
      spec.timeline.push_back(std::move(create));
    }
  }
  spec.duration = milliseconds(20) * jobs + std::chrono::minutes(2);
  for (const auto& invariant : check::all_invariants()) spec.invariants.emplace_back(invariant.id);
  return spec;
}

}  // namespace onejob::bench
