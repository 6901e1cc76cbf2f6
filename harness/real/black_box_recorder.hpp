#pragma once
// Records a black-box history (harness/check/black_box.hpp) of a real run: each request a client
// sends through it and what came back, read from the body the way a client of `onejob serve`
// reads it (job_id, status, result, error), and the executions the provider stubs performed.
// Thread-safe: clients on several threads share one recorder.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "harness/check/black_box.hpp"
#include "harness/real/http_client.hpp"
#include "harness/real/provider_stub.hpp"

namespace onejob::real {

class BlackBoxRecorder {
 public:
  BlackBoxRecorder();

  // POST /jobs as `owner` (bearer `token`) under `key` with `body` (JSON text), recorded.
  HttpReply create(HttpConnection& connection, const std::string& owner, const std::string& token,
                   const std::string& key, const std::string& body);
  // GET /jobs/{job} as `owner`, recorded.
  HttpReply read(HttpConnection& connection, const std::string& owner, const std::string& token,
                 const std::string& job);
  // POST /jobs/{job}/attempts (retry) as `owner` under `key`, recorded.
  HttpReply retry(HttpConnection& connection, const std::string& owner, const std::string& token,
                  const std::string& key, const std::string& job, const std::string& body);

  // POST /attempts/{attempt}/cancel as `owner` (an operator's token) under `key`, recorded as a
  // cancel of `job`.
  HttpReply cancel(HttpConnection& connection, const std::string& owner, const std::string& token,
                   const std::string& key, const std::string& job, std::int64_t attempt);

  // The faults are over: requests from now on must be answered.
  void quiet();
  // Every execution `stub` performed so far (certifications included), on this history's clock.
  void add_executions(const ProviderStub& stub);

  check::black_box::History history() const;
  // The history as JSON Lines, in the order its lines were recorded.
  std::string jsonl() const;

 private:
  HttpReply exchange(check::black_box::Request request, HttpConnection& connection,
                     const std::string& method, const std::string& path, const Headers& headers,
                     const std::string& body);
  std::int64_t now_us() const;
  std::int64_t us_of(std::chrono::steady_clock::time_point at) const;

  std::chrono::steady_clock::time_point origin_;
  mutable std::mutex mutex_;
  check::black_box::History history_;
  std::uint64_t lines_ = 0;
  std::uint64_t quiet_line_ = 0;
  std::uint64_t requests_ = 0;
};

}  // namespace onejob::real
