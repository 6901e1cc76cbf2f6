#pragma once

// The API's endpoints, behind ApiHandler's routing. Internal to system/service.

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "system/service/http.hpp"
#include "system/service/system_context.hpp"

namespace onejob {

// A response plus the facts its api.response event reports, so reporting never re-parses the
// body.
struct ApiAnswer {
  Response response;
  std::optional<JobId> job_id;
  std::optional<AttemptId> attempt_id;
  std::string error;

  static ApiAnswer json(int status, std::string body);
  // `request_id`, when given, names the request in the body, so that a client's report can be
  // matched with the node's api.response event (which carries what the body leaves out).
  static ApiAnswer failure(int status, std::string error, std::string_view message,
                           std::string_view request_id = {});
};

// Idempotency-Key: 1-255 printable ASCII characters (jobs and operator actions alike).
bool is_valid_idempotency_key(std::string_view key);

// An operator action's Idempotency-Key, when the request has one: the key with the request's
// fingerprint (endpoint and canonical body), or the 400 answer for a bad key or body.
std::variant<std::optional<ActionKey>, ApiAnswer> action_key(const Request& request);

// The answer to a replayed operator action: the recorded outcome again, marked
// `Idempotent-Replayed: true`, or 422 when the key came with another request.
Async<ApiAnswer> replay_action(SystemContext& context, const ActionRecord& recorded,
                               const ActionKey& key, int status, bool cancel);

Async<ApiAnswer> create_job(SystemContext& context, const Request& request);
Async<ApiAnswer> get_job(SystemContext& context, const Request& request, JobId id);
Async<ApiAnswer> create_attempt(SystemContext& context, const Request& request, JobId id);
Async<ApiAnswer> cancel_attempt(SystemContext& context, const Request& request, AttemptId id);

}  // namespace onejob
