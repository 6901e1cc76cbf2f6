#include "harness/sim/networked_providers.hpp"

#include "system/service/deadline.hpp"

#include "harness/events/provider_events.hpp"

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
    const std::map<std::string, std::unique_ptr<SimProvider>>& providers, PauseGate& gate,
    Trace& trace)
    : link_(link), node_(std::move(node)), providers_(providers), gate_(gate), trace_(trace) {}

void NetworkedProviders::delivered(std::string_view call, const std::string& provider,
                                   const std::string& key, std::string_view outcome) {
  if (closed_) return;
  trace_.record(node_,
                events::to_event(events::ProviderDelivered{.call = std::string(call),
                                                           .provider = provider,
                                                           .provider_key = key,
                                                           .outcome = std::string(outcome)}));
}

// A call still waiting can never be answered now. Its frame owns its PendingReply, whose OneShot
// owns the frame's resumption: drop the resumption, so the executor frees the frame (and the
// cycle with it).
NetworkedProviders::~NetworkedProviders() {
  for (const auto& pending : pending_replies_) pending->done.abandon();
  for (const auto& pending : pending_statuses_) pending->done.abandon();
}

Async<ProviderReply> NetworkedProviders::call(ProviderCall call) {
  auto found = providers_.find(call.provider);
  if (found == providers_.end()) {
    co_return ProviderReply{ProviderReply::Kind::rejected, {}, "no such provider"};
  }
  SimProvider* provider = found->second.get();
  auto pending = std::make_shared<PendingReply>();
  pending_replies_.push_back(pending);
  const std::string key = call.provider_key;
  auto answer = [this, provider, pending, key](ProviderReply reply, const char* what) {
    link_.send(Direction::response, provider->name(), node_, what + key,
               [this, provider, key, pending, reply] {
                 if (pending->value) return;  // a duplicate of the reply
                 delivered(events::kDeliveredReply, provider->name(), key, to_string(reply.kind));
                 pending->value = reply;
                 pending->done.set();
               });
  };
  link_.send(Direction::request, node_, provider->name(), "call " + key,
             [this, provider, call, answer, key] {
               if (link_.reset(node_, provider->name(), "call " + key)) {
                 // The provider got the request and does the work; the caller only learns that
                 // the connection broke after sending.
                 provider->receive(call, [](const ProviderReply&) {});
                 answer({ProviderReply::Kind::maybe_delivered,
                         {},
                         "connection reset after the request was sent"},
                        "reset ");
                 return;
               }
               provider->receive(call, [answer](ProviderReply reply) { answer(reply, "reply "); });
             });
  co_await pending->done.wait();
  std::erase(pending_replies_, pending);
  if (gate_.paused()) co_await gate_.pass();
  co_return *pending->value;
}

Async<ProviderStatus> NetworkedProviders::status(std::string provider_name,
                                                 std::string provider_key) {
  auto found = providers_.find(provider_name);
  if (found == providers_.end()) co_return ProviderStatus{ProviderStatus::Kind::not_found, {}, {}};
  SimProvider* provider = found->second.get();
  if (!closed_) {
    trace_.record(node_, events::to_event(events::ProviderStatusAsked{
                             .provider = provider_name, .provider_key = provider_key}));
  }
  auto pending = std::make_shared<PendingStatus>();
  pending_statuses_.push_back(pending);
  link_.send(Direction::request, node_, provider_name, "status " + provider_key,
             [this, provider, pending, provider_key] {
               ProviderStatus answer = provider->status(provider_key);
               if (link_.reset(node_, provider->name(), "status " + provider_key)) {
                 answer = {ProviderStatus::Kind::unreachable, {}, "connection reset"};
               }
               link_.send(Direction::response, provider->name(), node_, "status " + provider_key,
                          [this, provider, provider_key, pending, answer] {
                            if (pending->value) return;
                            delivered(events::kDeliveredStatus, provider->name(), provider_key,
                                      to_string(answer.kind));
                            pending->value = answer;
                            pending->done.set();
                          });
             });
  co_await pending->done.wait();
  std::erase(pending_statuses_, pending);
  if (gate_.paused()) co_await gate_.pass();
  co_return *pending->value;
}

}  // namespace onejob::sim
