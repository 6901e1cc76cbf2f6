#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "harness/sim/sim_spec.hpp"

namespace onejob::real {

// How the stub answers one execution: what (as a simulated provider would) and after how long.
using sim::ProviderOutcome;

struct StubCall {
  ProviderOutcome outcome = ProviderOutcome::ok;
  std::chrono::milliseconds latency{0};
};

// One execution the stub performed: the ground truth of a side effect.
struct StubExecution {
  std::string key;  // the call's Idempotency-Key (the provider key)
  std::string purpose;
  std::string operation;
  std::string input;   // canonical-free JSON text as received
  std::string output;  // what it answered (empty for an error or a hang)
  ProviderOutcome outcome = ProviderOutcome::ok;
  std::chrono::steady_clock::time_point started{};  // when the call arrived: the side effect
  std::optional<std::chrono::steady_clock::time_point> ended{};  // its answer sent; never: a hang
};

// A model provider speaking the provider protocol of `onejob serve` (http_provider.hpp) on a
// loopback port, on a thread of its own. It executes each Idempotency-Key once: a repeated call
// waits for, and gets, the first one's answer. Attempt calls follow `script` in order, then
// `otherwise`; certification calls always get `otherwise`, as the simulated provider's get its
// default. Outputs are the simulated provider's (provider_output).
class ProviderStub {
 public:
  // On loopback port `port` (0: any free port). Calls for an operation in `plausible_on` past the
  // script that `otherwise` answers ok answer plausible (sim::outcome_past_script).
  ProviderStub(std::string name, std::vector<StubCall> script, StubCall otherwise = {},
               unsigned short port = 0, std::vector<std::string> plausible_on = {});
  ~ProviderStub();
  ProviderStub(const ProviderStub&) = delete;
  ProviderStub& operator=(const ProviderStub&) = delete;

  const std::string& name() const;
  unsigned short port() const;
  std::string url() const;                        // http://127.0.0.1:PORT
  std::vector<StubExecution> executions() const;  // thread-safe

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace onejob::real
