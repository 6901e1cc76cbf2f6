#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "system/events/schema.hpp"

// What the simulated providers really did: the side effects the checkers count.
namespace onejob::events {

// Why a provider was called (`purpose`).
inline constexpr std::string_view kPurposeAttempt = "attempt";
inline constexpr std::string_view kPurposeCertification = "certification";

// A provider started executing a call (its side effect happens here). `purpose`: attempt or
// certification. `outcome` is the scripted behaviour (ok, error, malformed, hallucinated_key,
// wrong_operation, hang); `output` what it will answer (empty for error and hang), at
// `answers_at` (absent for hang). What the call carried: its `temperature` (the shortest decimal
// text that reads back as the double sent), its prompt's length in bytes and FNV-1a 64 digest (16
// hex digits), and a certification call's `input` (an attempt's input is the job's stored one).
// The three are absent in histories that did not record them (hand-made ones).
struct ProviderExecuted {
  static constexpr std::string_view kind = "provider.execute";
  std::string purpose;
  std::string provider_key;
  std::string operation;
  std::optional<std::string> temperature{};
  std::optional<std::int64_t> prompt_bytes{};
  std::optional<std::string> prompt_fnv{};
  std::optional<std::string> input{};
  std::string outcome;
  std::string output;
  std::optional<Instant> answers_at{};
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("purpose", self.purpose);
    field("provider_key", self.provider_key);
    field("operation", self.operation);
    field("temperature", self.temperature);
    field("prompt_bytes", self.prompt_bytes);
    field("prompt_fnv", self.prompt_fnv);
    field("input", self.input);
    field("outcome", self.outcome);
    field("output", self.output);
    field("answers_at_us", self.answers_at);
  }
};

// A call whose key the provider had seen: answered from its own dedup, not executed again.
struct ProviderDeduped {
  static constexpr std::string_view kind = "provider.dedup";
  std::string provider_key;
  bool done = false;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("provider_key", self.provider_key);
    field("done", self.done);
  }
};

// A node asked a provider for a call's status (recorded by the simulated transport as the query
// leaves the node's process, not by the node): when the wait for its answer began.
struct ProviderStatusAsked {
  static constexpr std::string_view kind = "provider.status_asked";
  std::string provider;
  std::string provider_key;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("provider", self.provider);
    field("provider_key", self.provider_key);
  }
};

// What a node's connection to a provider delivered to it (recorded by the simulated transport,
// not by the node): the first answer to a call or a status query, as it reached the node's
// process. A crashed node's connection delivers nothing. `call`: reply or status; `outcome`:
// answered, rejected or maybe_delivered for a reply; completed, failed, running, not_found or
// unreachable for a status.
inline constexpr std::string_view kDeliveredReply = "reply";
inline constexpr std::string_view kDeliveredStatus = "status";
struct ProviderDelivered {
  static constexpr std::string_view kind = "provider.deliver";
  std::string call;
  std::string provider;
  std::string provider_key;
  std::string outcome;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("call", self.call);
    field("provider", self.provider);
    field("provider_key", self.provider_key);
    field("outcome", self.outcome);
  }
};

}  // namespace onejob::events
