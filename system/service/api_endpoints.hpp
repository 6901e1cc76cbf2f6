#pragma once

// The API's endpoints, behind ApiHandler's routing. Internal to system/service.

#include <optional>
#include <string>
#include <string_view>

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
  static ApiAnswer failure(int status, std::string error, std::string_view message);
};

Async<ApiAnswer> create_job(SystemContext& context, const Request& request);
Async<ApiAnswer> get_job(SystemContext& context, const Request& request, JobId id);
Async<ApiAnswer> create_attempt(SystemContext& context, const Request& request, JobId id);
Async<ApiAnswer> cancel_attempt(SystemContext& context, const Request& request, AttemptId id);

}  // namespace onejob
