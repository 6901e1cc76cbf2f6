#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "system/ports/provider_client.hpp"

#include "harness/sim/rng.hpp"
#include "harness/sim/sim_loop.hpp"
#include "harness/sim/sim_spec.hpp"
#include "harness/sim/trace.hpp"

namespace onejob::sim {

// The answer a provider gives for `outcome` (ok = the contract-honouring answer). `identity`
// (provider and key) varies the details of a valid answer (a confidence, a length, an amount), so
// answers of different providers and attempts differ and a wrong result is visible.
// A malformed answer breaks one rule of the contract, chosen by the identity mixed with `salt`
// (a run's provider passes one drawn from its seed, so runs of other seeds break other rules).
std::string provider_output(ProviderOutcome outcome, const std::string& operation,
                            const std::string& input_json, std::string_view identity,
                            std::uint64_t salt = 0);

// What a provider whose outcome is garbled_refusal or garbled_answer sends: a refusal whose
// reason holds a NUL byte; or, by `variant`, an answer the operation's contract refuses quoting a
// NUL (a classify label, an extract field's name, a summarize answer's extra key), or one that is
// no JSON at all. Where the transport carries bytes (`raw`, the simulation's) the reason and the
// non-JSON answer also hold a multi-byte character cut short and a byte no UTF-8 text has; where
// it carries JSON text (the real mode's stub) they cannot, and hold the NUL alone. PostgreSQL
// text holds none of these: a system that writes such a text down as it came fails the write on
// every try.
std::string garbled_text(ProviderOutcome outcome, const std::string& operation,
                         std::uint64_t variant, bool raw);

// A scripted model provider. It deduplicates on the derived key, as a well-behaved provider
// does: the first request with a key executes (an execution is a side effect: compute, money);
// every later request with that key waits for, or gets, the same outcome. Executions follow the
// provider's script in order, then its default; certification requests always use the default
// and do not consume the script. The status endpoint reports what it knows of a key.
class SimProvider {
 public:
  SimProvider(const ProviderSpec& spec, Rng rng, SimLoop& loop, Trace& trace);

  using ReplyFn = std::function<void(ProviderReply)>;
  // A request that has reached the provider. `reply` runs when it answers (never, for a hang).
  void receive(const ProviderCall& call, ReplyFn reply);
  ProviderStatus status(const std::string& provider_key) const;

  const std::string& name() const { return spec_.name; }
  // Whether some execution is still working and will answer (a hang never does).
  bool working() const;
  // Whether the execution of `provider_key` has answered, or will: not a hang, not unknown.
  bool answers(const std::string& provider_key) const;
  // Whether a request with `provider_key` has ever reached it.
  bool knows(const std::string& provider_key) const { return executions_.contains(provider_key); }

 private:
  struct Execution {
    bool done = false;
    bool hangs = false;
    ProviderReply reply;
    std::vector<ReplyFn> waiting;
  };

  void execute(const ProviderCall& call);

  ProviderSpec spec_;
  Rng rng_;
  std::uint64_t salt_;  // mixed into which rule a malformed answer breaks
  SimLoop& loop_;
  Trace& trace_;
  std::size_t scripted_executions_ = 0;
  std::map<std::string, Execution> executions_;  // by provider key
};

}  // namespace onejob::sim
