#include "harness/sim/networked_providers.hpp"

#include "system/service/deadline.hpp"

namespace onejob::sim {

struct NetworkedProviders::PendingReply {
  std::optional<ProviderReply> value;
  OneShot done;
};

struct NetworkedProviders::PendingStatus {
  std::optional<ProviderStatus> value;
  OneShot done;
};

NetworkedProviders::NetworkedProviders(
    SimLink& link, std::string node,
    const std::map<std::string, std::unique_ptr<SimProvider>>& providers)
    : link_(link), node_(std::move(node)), providers_(providers) {}

NetworkedProviders::~NetworkedProviders() = default;

Async<ProviderReply> NetworkedProviders::call(ProviderCall call) {
  auto found = providers_.find(call.provider);
  if (found == providers_.end()) {
    co_return ProviderReply{ProviderReply::Kind::rejected, {}, "no such provider"};
  }
  SimProvider* provider = found->second.get();
  auto pending = std::make_shared<PendingReply>();
  pending_replies_.push_back(pending);
  const std::string key = call.provider_key;
  link_.send(Direction::request, node_, provider->name(), "call " + key,
             [this, provider, call, pending, key] {
               provider->receive(call, [this, provider, pending, key](ProviderReply reply) {
                 link_.send(Direction::response, provider->name(), node_, "reply " + key,
                            [pending, reply] {
                              if (pending->value) return;  // a duplicate of the reply
                              pending->value = reply;
                              pending->done.set();
                            });
               });
             });
  co_await pending->done.wait();
  std::erase(pending_replies_, pending);
  co_return *pending->value;
}

Async<ProviderStatus> NetworkedProviders::status(std::string provider_name,
                                                 std::string provider_key) {
  auto found = providers_.find(provider_name);
  if (found == providers_.end()) co_return ProviderStatus{ProviderStatus::Kind::not_found, {}, {}};
  SimProvider* provider = found->second.get();
  auto pending = std::make_shared<PendingStatus>();
  pending_statuses_.push_back(pending);
  link_.send(Direction::request, node_, provider_name, "status " + provider_key,
             [this, provider, pending, provider_key] {
               ProviderStatus answer = provider->status(provider_key);
               link_.send(Direction::response, provider->name(), node_, "status " + provider_key,
                          [pending, answer] {
                            if (pending->value) return;
                            pending->value = answer;
                            pending->done.set();
                          });
             });
  co_await pending->done.wait();
  std::erase(pending_statuses_, pending);
  co_return *pending->value;
}

}  // namespace onejob::sim
