#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "system/ports/clock.hpp"
#include "system/ports/event_sink.hpp"
#include "system/ports/provider_client.hpp"
#include "system/ports/random.hpp"
#include "system/ports/store.hpp"
#include "system/ports/timer.hpp"
#include "system/ports/work_signal.hpp"
#include "system/service/contract.hpp"
#include "system/service/defects.hpp"

namespace onejob {

struct Policy {
  // How long a worker waits for a provider before the attempt becomes UNKNOWN.
  Duration attempt_deadline = std::chrono::seconds(30);
  // How long a claim lasts. Longer than attempt_deadline, so a live worker always settles its
  // attempt before its lease can be taken over.
  Duration lease = std::chrono::seconds(60);
  Duration reconcile_period = std::chrono::seconds(10);
  Duration status_timeout = std::chrono::seconds(5);  // for the reconciler's status queries
  // How soon a worker at capacity looks again, and the first step of the store-error backoff;
  // without a WorkSignal, also how often an idle worker polls the store.
  Duration worker_poll = std::chrono::milliseconds(100);
  // With a WorkSignal, how long an idle worker waits for a ring before it looks at the store
  // anyway: the most a lost ring delays work (for an idle reconciler, at least a period).
  Duration worker_idle_poll = std::chrono::seconds(5);
  int worker_capacity = 4;  // attempts one worker runs at once
  // While the store keeps failing, workers and the reconciler wait longer between tries, up to
  // this (see Backoff); they start from worker_poll.
  Duration store_backoff_cap = std::chrono::seconds(5);
  int attempt_limit = 5;  // attempts per job beyond which failover stops (explicit ones too)
  // How many times one reconciler re-drives an UNKNOWN attempt whose provider has no record of
  // its key (back to STARTING, same provider key) before leaving it to an operator.
  int redrive_limit = 8;
};

struct SystemConfig {
  Policy policy;
  std::vector<ProviderProfile> providers;
  Defects defects;  // none in production

  // nullptr when no provider has this name.
  const ProviderProfile* find_provider(std::string_view name) const;
  // Throws std::invalid_argument naming the first problem (lease not above the deadline, a
  // duplicate provider, a non-positive limit).
  void validate() const;
};

// The ports and configuration every service component works with.
// REQUIRES: everything referenced outlives the components built on it.
struct SystemContext {
  Store& store;
  ProviderClient& providers;
  const Clock& clock;
  Timer& timer;
  EventSink& events;
  const SystemConfig& config;
  Random& random;
  // Wakes an idle worker (or an idle reconciler) when there may be work; without one, idle
  // workers poll every policy.worker_poll and the reconciler sweeps every reconcile_period.
  WorkSignal* work = nullptr;
};

}  // namespace onejob
