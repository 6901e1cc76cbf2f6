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
  // `gate`: the node's pause switch (a reply waits there while the node is paused). What reaches
  // the node is recorded in `trace` (provider.deliver) until close().
  NetworkedProviders(SimLink& link, std::string node,
                     const std::map<std::string, std::unique_ptr<SimProvider>>& providers,
                     PauseGate& gate, Trace& trace);
  ~NetworkedProviders() override;

  Async<ProviderReply> call(ProviderCall call) override;
  Async<ProviderStatus> status(std::string provider, std::string provider_key) override;
  // The node crashed: nothing reaches it any more.
  void close() { closed_ = true; }

 private:
  struct PendingReply;
  struct PendingStatus;

  void delivered(std::string_view call, const std::string& provider, const std::string& key,
                 std::string_view outcome);

  SimLink& link_;
  std::string node_;
  const std::map<std::string, std::unique_ptr<SimProvider>>& providers_;
  PauseGate& gate_;
  Trace& trace_;
  bool closed_ = false;
  // Calls still waiting own their resumption here, so a call that never completes is freed with
  // the client instead of keeping itself alive.
  std::vector<std::shared_ptr<PendingReply>> pending_replies_;
  std::vector<std::shared_ptr<PendingStatus>> pending_statuses_;
};

}  // namespace onejob::sim
