#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "system/ports/provider_client.hpp"

#include "harness/sim/pause.hpp"
#include "harness/sim/sim_network.hpp"
#include "harness/sim/sim_provider.hpp"

namespace onejob::sim {

// A node's ProviderClient: each call and status query travels the worker_provider link to the
// SimProvider and its answer travels back, each way subject to the link's faults. A lost message
// means the call never completes; the caller's own deadline decides what that means.
class NetworkedProviders final : public ProviderClient {
 public:
  // `gate`: the node's pause switch (a reply waits there while the node is paused).
  NetworkedProviders(SimLink& link, std::string node,
                     const std::map<std::string, std::unique_ptr<SimProvider>>& providers,
                     PauseGate& gate);
  ~NetworkedProviders() override;

  Async<ProviderReply> call(ProviderCall call) override;
  Async<ProviderStatus> status(std::string provider, std::string provider_key) override;

 private:
  struct PendingReply;
  struct PendingStatus;

  SimLink& link_;
  std::string node_;
  const std::map<std::string, std::unique_ptr<SimProvider>>& providers_;
  PauseGate& gate_;
  // Calls still waiting own their resumption here, so a call that never completes is freed with
  // the client instead of keeping itself alive.
  std::vector<std::shared_ptr<PendingReply>> pending_replies_;
  std::vector<std::shared_ptr<PendingStatus>> pending_statuses_;
};

}  // namespace onejob::sim
