#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "system/ports/provider_client.hpp"

#include "harness/sim/sim_loop.hpp"

namespace onejob {
class OneShot;
}

namespace onejob::test {

// What a scripted provider does with one call.
struct Scripted {
  enum class Kind { correct, answer, reject, maybe_delivered, hang };
  Kind kind = Kind::correct;  // correct: the right answer for the operation and input
  std::string output;         // for answer: exactly these bytes
  Duration latency{std::chrono::milliseconds(10)};

  static Scripted correct_after(Duration latency) { return {Kind::correct, {}, latency}; }
  static Scripted answer(std::string output, Duration latency = std::chrono::milliseconds(10)) {
    return {Kind::answer, std::move(output), latency};
  }
  static Scripted reject() { return {Kind::reject, {}, std::chrono::milliseconds(10)}; }
  static Scripted hang() { return {Kind::hang, {}, {}}; }
};

// Providers for unit tests, on a SimLoop: each call takes the next scripted behaviour of its
// provider (or the provider's default once the script is used up), records the call, and
// answers after the scripted latency. Status queries answer from set_status(); without one, a
// key it was called with is running and any other not_found.
class FakeProviders final : public ProviderClient {
 public:
  explicit FakeProviders(sim::SimLoop& loop);
  ~FakeProviders() override;

  void script(const std::string& provider, Scripted behaviour) {
    scripts_[provider].push_back(std::move(behaviour));
  }
  void set_default(const std::string& provider, Scripted behaviour) {
    defaults_[provider] = std::move(behaviour);
  }
  void set_status(const std::string& provider_key, ProviderStatus status) {
    statuses_[provider_key] = std::move(status);
  }

  Async<ProviderReply> call(ProviderCall call) override;
  Async<ProviderStatus> status(std::string provider, std::string provider_key) override;

  const std::vector<ProviderCall>& calls() const { return calls_; }
  std::size_t calls_to(const std::string& provider) const;

 private:
  sim::SimLoop& loop_;
  std::map<std::string, std::deque<Scripted>> scripts_;
  std::map<std::string, Scripted> defaults_;
  std::map<std::string, ProviderStatus> statuses_;
  std::vector<ProviderCall> calls_;
  std::vector<std::unique_ptr<OneShot>> hung_;
};

// The contract-honouring answer to `operation` on `input_json` (one that also passes the
// certification suite's meaning checks).
std::string correct_output(const std::string& operation, const std::string& input_json);

}  // namespace onejob::test
