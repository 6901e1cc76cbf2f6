#pragma once

// World's nodes as world.cpp and world_traffic.cpp both see them (private to the World).

#include <memory>
#include <string>
#include <vector>

#include "system/service/api_handler.hpp"
#include "system/service/reconciler.hpp"
#include "system/service/worker.hpp"

#include "harness/scenario/world.hpp"
#include "harness/sim/commit_log.hpp"
#include "harness/sim/faulty_store.hpp"
#include "harness/sim/networked_providers.hpp"
#include "harness/sim/pause.hpp"

namespace onejob::scenario {

struct World::Incarnation {
  std::unique_ptr<sim::PauseGate> gate;
  std::unique_ptr<sim::GatedTimer> timer;
  std::unique_ptr<sim::CommitLogStore> logged;
  std::unique_ptr<sim::FaultyStore> store;
  std::unique_ptr<sim::NetworkedProviders> providers;
  std::unique_ptr<sim::NodeEventSink> events;
  std::unique_ptr<sim::RngRandom> random;
  std::unique_ptr<sim::SimWorkSignal> work;  // a worker's
  std::unique_ptr<SystemContext> context;
  std::unique_ptr<ApiHandler> api;
  std::unique_ptr<Worker> worker;
  std::unique_ptr<Reconciler> reconciler;
  bool up = true;
};

struct World::Node {
  std::string name;
  Role role;
  std::vector<std::unique_ptr<Incarnation>> lives;  // every incarnation, the current one last
  Incarnation& current() { return *lives.back(); }
};

}  // namespace onejob::scenario
