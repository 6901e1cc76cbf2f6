#pragma once
// Records a black-box history (harness/check/black_box.hpp) of a real run: each request a client
// sends through it and what came back, read from the body where the target's profile says its
// job id, status, result and error are (`onejob serve`'s by default), and the executions the
// provider stubs performed. Thread-safe: clients on several threads share one recorder.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "harness/check/black_box.hpp"
#include "harness/real/http_client.hpp"
#include "harness/real/provider_stub.hpp"
#include "harness/real/target_profile.hpp"

namespace onejob::real {

// The id at JSON pointer `pointer` in the JSON text `body_text` (a string, or an integer as its
// decimal text), if the text is JSON and has one there.
std::optional<std::string> id_at(const std::string& body_text, const std::string& pointer);

class BlackBoxRecorder {
 public:
  // Each call waits `timeout` for its answer (then records none), or the call's own `wait`.
  explicit BlackBoxRecorder(TargetProfile profile = {},
                            std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Each call below is recorded as sent by `client` (may be empty) for `owner`, authenticated
  // with `credential` (the profile's auth prefix goes before it); an empty `key` sends no
  // idempotency-key header.
  // The profile's create route (POST /jobs) with `body` (JSON text).
  HttpReply create(HttpConnection& connection, const std::string& owner,
                   const std::string& credential, const std::string& key, const std::string& body,
                   const std::string& client = "",
                   std::optional<std::chrono::milliseconds> wait = std::nullopt);
  // The profile's read route (GET /jobs/{job}).
  HttpReply read(HttpConnection& connection, const std::string& owner,
                 const std::string& credential, const std::string& job,
                 const std::string& client = "",
                 std::optional<std::chrono::milliseconds> wait = std::nullopt);
  // The profile's retry route (POST /jobs/{job}/attempts).
  HttpReply retry(HttpConnection& connection, const std::string& owner,
                  const std::string& credential, const std::string& key, const std::string& job,
                  const std::string& body, const std::string& client = "",
                  std::optional<std::chrono::milliseconds> wait = std::nullopt);
  // The profile's cancel route (POST /attempts/{attempt}/cancel), recorded as a cancel of `job`.
  HttpReply cancel(HttpConnection& connection, const std::string& owner,
                   const std::string& credential, const std::string& key, const std::string& job,
                   const std::string& attempt, const std::string& client = "",
                   std::optional<std::chrono::milliseconds> wait = std::nullopt);
  const TargetProfile& profile() const { return profile_; }

  // The faults are over: requests from now on must be answered.
  void quiet();
  // The target's attempt limit per job, which B13 judges executions against; declared before
  // the first request, it is the history's first line.
  void declare_attempt_limit(int limit);
  // The status the target refuses a reused key with (its profile's codes.conflict), which B2
  // judges refusals against; declared with the attempt limit on one policy line.
  void declare_conflict_status(int status);
  // Where the target says a created job lives (its profile's created_location), which B16 judges
  // each create's Location against; on the same policy line.
  void declare_created_location(const std::string& location);
  // Every execution `stub` performed so far (certifications included), on this history's clock.
  void add_executions(const ProviderStub& stub);

  check::black_box::History history() const;
  // The history as JSON Lines, in the order its lines were recorded.
  std::string jsonl() const;

 private:
  // Applies `what` to the history's policy, under the lock; the first declaration places the
  // policy line.
  template <typename Declare>
  void declare(const Declare& what);
  HttpReply exchange(check::black_box::Request request, HttpConnection& connection,
                     const Route& route, const std::string& job, const std::string& attempt,
                     const std::string& credential, const std::string& key, const std::string& body,
                     std::optional<std::chrono::milliseconds> wait);
  std::int64_t now_us() const;
  std::int64_t us_of(std::chrono::steady_clock::time_point at) const;

  TargetProfile profile_;
  std::chrono::milliseconds timeout_;
  std::chrono::steady_clock::time_point origin_;
  mutable std::mutex mutex_;
  check::black_box::History history_;
  std::uint64_t lines_ = 0;
  std::uint64_t quiet_line_ = 0;
  std::uint64_t policy_line_ = 0;
  std::uint64_t requests_ = 0;
};

}  // namespace onejob::real
