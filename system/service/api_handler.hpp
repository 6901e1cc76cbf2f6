#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "system/service/http.hpp"
#include "system/service/system_context.hpp"

namespace onejob {

// The job API (status codes and their reasons: README.md):
//   POST /jobs                  201 created | 200 replay, same job id | 400 missing/invalid key
//                               or body | 422 idempotency_key_reused (nothing stored)
//   GET  /jobs/{id}             200 | 404, also for another owner's job
//   POST /jobs/{id}/attempts    201 | 409 attempt_in_flight | 409 job_completed |
//                               422 provider_not_certified | 404
//   POST /attempts/{id}/cancel  200 | 409 attempt_not_live | 404
// Every call needs an authenticated principal (401 otherwise), which owns what it creates and
// is the only owner who can see it. A body over kMaxBodyBytes is refused with 413, JSON nested
// deeper than kMaxJsonDepth or with a number beyond a double with 400. Every request gets an
// answer: an unexpected failure inside is a 500, never an exception out of handle(). A store
// that cannot answer makes any call a 503 store_unavailable with Retry-After (a value the store
// cannot hold: 400 unstorable_value). Every request and response is reported to the EventSink.
inline constexpr std::size_t kMaxBodyBytes = 1 << 20;  // 1 MiB
inline constexpr const char* kStoreRetryAfterSeconds = "1";

// The name of the route `path` matches (create_job, get_job, create_attempt, cancel_attempt),
// or "unknown": what api.request events and metrics call it.
std::string api_route_name(std::string_view path);

class ApiHandler {
 public:
  // REQUIRES: the context outlives the handler and every request it is handling.
  explicit ApiHandler(SystemContext& context) : context_(context) {}

  Async<Response> handle(Request request);

  // The node stops (a crash, a shutdown): requests in flight finish without recording or
  // answering anything more; what they return is meant to be dropped.
  void stop() { stopped_ = true; }

 private:
  SystemContext& context_;
  bool stopped_ = false;
};

}  // namespace onejob
