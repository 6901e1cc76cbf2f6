#include "tests/support/fake_providers.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "system/service/deadline.hpp"

#include "harness/sim/sim_provider.hpp"

namespace onejob::test {

std::string correct_output(const std::string& operation, const std::string& input_json) {
  return sim::provider_output(sim::ProviderOutcome::ok, operation, input_json, "fake");
}

FakeProviders::FakeProviders(sim::SimLoop& loop) : loop_(loop) {}

// Destroying the never-set OneShots frees the calls suspended on them.
FakeProviders::~FakeProviders() = default;

std::size_t FakeProviders::calls_to(const std::string& provider) const {
  std::size_t n = 0;
  for (const auto& call : calls_) n += call.provider == provider ? 1 : 0;
  return n;
}

Async<ProviderReply> FakeProviders::call(ProviderCall call) {
  calls_.push_back(call);
  Scripted behaviour = defaults_[call.provider];
  if (auto& script = scripts_[call.provider]; !script.empty()) {
    behaviour = std::move(script.front());
    script.pop_front();
  }
  if (behaviour.kind == Scripted::Kind::hang) {
    // Never set: the call stays suspended until the fake is destroyed, which frees it.
    hung_.push_back(std::make_unique<OneShot>());
    co_await hung_.back()->wait();
  }
  co_await loop_.sleep_for(behaviour.latency);
  switch (behaviour.kind) {
    case Scripted::Kind::correct:
      co_return ProviderReply{
          ProviderReply::Kind::answered, correct_output(call.operation, call.input_json), {}};
    case Scripted::Kind::answer:
      co_return ProviderReply{ProviderReply::Kind::answered, behaviour.output, {}};
    case Scripted::Kind::reject:
      co_return ProviderReply{ProviderReply::Kind::rejected, {}, "model overloaded (503)"};
    case Scripted::Kind::maybe_delivered:
    case Scripted::Kind::hang:
      break;
  }
  co_return ProviderReply{ProviderReply::Kind::maybe_delivered, {}, "connection reset"};
}

Async<ProviderStatus> FakeProviders::status(std::string, std::string provider_key) {
  co_await loop_.sleep_for(std::chrono::milliseconds(5));
  auto it = statuses_.find(provider_key);
  if (it != statuses_.end()) co_return it->second;
  // Unless told otherwise, a key it was called with is still running (as a provider that got the
  // call reports), and any other is unknown to it.
  const bool called = std::ranges::any_of(
      calls_, [&](const ProviderCall& call) { return call.provider_key == provider_key; });
  co_return ProviderStatus{
      called ? ProviderStatus::Kind::running : ProviderStatus::Kind::not_found, {}, {}};
}

}  // namespace onejob::test
