#pragma once

#include "system/ports/async.hpp"
#include "system/ports/clock.hpp"
#include "system/ports/event_sink.hpp"
#include "system/ports/store.hpp"
#include "system/service/http.hpp"

namespace onejob {

// The job API. Status codes:
//   POST /jobs  201 created | 200 replay of the same request (same job id) |
//               400 missing/invalid Idempotency-Key or body | 401 no principal |
//               422 idempotency_key_reused (same key, different request; nothing stored)
// Every request and response is reported to the EventSink with the request id, owner and key.
class ApiHandler {
 public:
  // REQUIRES: store, clock and events outlive the handler and every request it is handling.
  ApiHandler(Store& store, const Clock& clock, EventSink& events)
      : store_(store), clock_(clock), events_(events) {}

  Async<Response> handle(Request request);

 private:
  struct Answer;  // a response plus the facts its event reports
  Async<Answer> create_job(const Request& request);

  Store& store_;
  const Clock& clock_;
  EventSink& events_;
};

}  // namespace onejob
