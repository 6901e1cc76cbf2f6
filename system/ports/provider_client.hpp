#pragma once

#include <iterator>
#include <string>
#include <string_view>

#include "system/domain/names.hpp"
#include "system/domain/time.hpp"
#include "system/ports/async.hpp"

namespace onejob {

// One request to a model provider. `provider_key` is derived from the attempt
// (job_id:attempt_no): a provider that deduplicates on it executes a repeated call once.
// Why a provider is called: to try a job's attempt, or to check its contract.
enum class CallPurpose { attempt, certification };

struct ProviderCall {
  CallPurpose purpose = CallPurpose::attempt;
  std::string provider;
  std::string provider_key;
  std::string operation;
  std::string prompt;      // rendered through the provider's own template
  std::string input_json;  // the operation's input, canonical JSON
  double temperature = 0.0;
  Instant deadline{};  // the caller stops waiting then; the provider may go on working
};

struct ProviderReply {
  enum class Kind {
    answered,         // `output` is what the provider returned (not yet validated)
    rejected,         // the provider definitively refused or failed; `reason` says why
    maybe_delivered,  // the transport failed after sending: the provider may be working on it
  };
  Kind kind = Kind::maybe_delivered;
  std::string output;
  std::string reason;
};

// What the provider knows of a key, for the reconciler.
struct ProviderStatus {
  enum class Kind {
    completed,  // `output` is the answer
    failed,     // definitively failed; `reason`
    running,    // still working
    not_found,  // never received (or forgotten): says nothing about whether work happened
    unreachable,
  };
  Kind kind = Kind::unreachable;
  std::string output;
  std::string reason;
};

// The names replies and statuses are written as (events, traces).
inline std::string_view to_string(ProviderReply::Kind kind) {
  using K = ProviderReply::Kind;
  static constexpr Named<K> kNames[] = {{K::answered, "answered"},
                                        {K::rejected, "rejected"},
                                        {K::maybe_delivered, "maybe_delivered"}};
  static_assert(names_cover(kNames) &&
                std::size(kNames) == 1 + static_cast<int>(K::maybe_delivered));
  return name_of(kNames, kind);
}
inline std::string_view to_string(ProviderStatus::Kind kind) {
  using K = ProviderStatus::Kind;
  static constexpr Named<K> kNames[] = {{K::completed, "completed"},
                                        {K::failed, "failed"},
                                        {K::running, "running"},
                                        {K::not_found, "not_found"},
                                        {K::unreachable, "unreachable"}};
  static_assert(names_cover(kNames) && std::size(kNames) == 1 + static_cast<int>(K::unreachable));
  return name_of(kNames, kind);
}

// The model providers. A call that never answers simply never completes; callers bound it
// with a deadline of their own.
class ProviderClient {
 public:
  virtual ~ProviderClient() = default;
  virtual Async<ProviderReply> call(ProviderCall call) = 0;
  virtual Async<ProviderStatus> status(std::string provider, std::string provider_key) = 0;
};

}  // namespace onejob
