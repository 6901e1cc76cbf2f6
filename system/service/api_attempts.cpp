// POST /jobs/{id}/attempts and POST /attempts/{id}/cancel.
#include <nlohmann/json.hpp>

#include "system/service/api_endpoints.hpp"
#include "system/service/canonical_json.hpp"
#include "system/service/settlement.hpp"

namespace onejob {
namespace {

using nlohmann::json;

// The provider an explicit attempt names: {"provider": name}, or an empty body for a plain
// retry on the provider of the latest attempt.
std::variant<std::string, ApiAnswer> requested_provider(const Request& request,
                                                        const std::vector<Attempt>& attempts,
                                                        const Job& job) {
  if (request.body.empty())
    return attempts.empty() ? job.target_provider : attempts.back().provider;
  auto canonical = canonicalize_json(request.body);
  if (auto* error = std::get_if<JsonError>(&canonical)) {
    return ApiAnswer::failure(400, "invalid_json", error->message);
  }
  const auto body = json::parse(std::get<CanonicalJson>(canonical).bytes);
  if (!body.is_object() || body.size() != 1 || !body.contains("provider") ||
      !body["provider"].is_string()) {
    return ApiAnswer::failure(400, "invalid_body", "expected {\"provider\": name} or no body");
  }
  return body["provider"].get<std::string>();
}

}  // namespace

Async<ApiAnswer> create_attempt(SystemContext& context, const Request& request, JobId id) {
  // Defect foreign-owner-retry: the job is loaded whatever its owner.
  std::optional<Job> job;
  if (context.config.defects.has(Defect::foreign_owner_retry)) {
    job = co_await context.store.load_job(id);
  } else {
    job = co_await context.store.find_job(request.principal, id);
  }
  if (!job) co_return ApiAnswer::failure(404, "not_found", "no such job");
  if (job->completed_by) {
    co_return ApiAnswer::failure(409, "job_completed", "the job already has a result");
  }
  const auto attempts = co_await context.store.list_attempts(id);
  auto provider = requested_provider(request, attempts, *job);
  if (auto* refused = std::get_if<ApiAnswer>(&provider)) co_return std::move(*refused);
  const auto& name = std::get<std::string>(provider);
  if (context.config.find_provider(name) == nullptr) {
    co_return ApiAnswer::failure(400, "invalid_body", "unknown provider \"" + name + "\"");
  }
  auto certification = co_await context.store.latest_certification(name);
  if (!certification || !certification->passed) {
    co_return ApiAnswer::failure(422, "provider_not_certified",
                                 "provider \"" + name + "\" has no passing contract certification");
  }
  // The store's one-live-attempt index decides, not the list read above.
  NewAttempt new_attempt{
      .job_id = id,
      .provider = name,
      .origin = AttemptOrigin::explicit_retry,
      .created_at = context.clock.now(),
  };
  auto inserted = co_await context.store.insert_attempt(std::move(new_attempt));
  using Outcome = InsertAttemptResult::Outcome;
  if (inserted.outcome == Outcome::live_attempt_exists) {
    auto answer = ApiAnswer::failure(
        409, "attempt_in_flight",
        "attempt " + std::to_string(*inserted.blocking) +
            " is still starting, running or unknown; cancel it or wait for its outcome");
    answer.job_id = id;
    answer.attempt_id = *inserted.blocking;
    co_return answer;
  }
  if (inserted.outcome != Outcome::inserted) {
    co_return ApiAnswer::failure(409, "job_completed", "the job already has a result");
  }
  const Attempt& attempt = *inserted.attempt;
  emit_attempt_created(context.events, attempt);
  auto answer = ApiAnswer::json(201, json{{"attempt_id", attempt.id},
                                          {"attempt_no", attempt.attempt_no},
                                          {"job_id", id},
                                          {"provider", attempt.provider},
                                          {"state", to_string(attempt.state)}}
                                         .dump());
  answer.job_id = id;
  answer.attempt_id = attempt.id;
  co_return answer;
}

Async<ApiAnswer> cancel_attempt(SystemContext& context, const Request& request, AttemptId id) {
  auto attempt = co_await context.store.find_attempt(id);
  // Another owner's attempt is as absent as a missing one (defect foreign-owner-retry: any
  // owner's).
  const bool any_owner = context.config.defects.has(Defect::foreign_owner_retry);
  if (!attempt ||
      (!any_owner && !co_await context.store.find_job(request.principal, attempt->job_id))) {
    co_return ApiAnswer::failure(404, "not_found", "no such attempt");
  }
  Settlement settlement(context);
  const Writer operator_writer{"api", std::nullopt};
  AttemptUpdate cancel{
      .attempt_id = id,
      .from = {AttemptState::starting, AttemptState::running, AttemptState::unknown},
      .to = AttemptState::cancelled,
      .fence = {},
      .take_over_as = {},
      .reason = "cancelled by " + request.principal,
      .at = context.clock.now()};
  auto result = co_await settlement.transition(std::move(cancel), operator_writer);
  if (result.outcome != UpdateAttemptResult::Outcome::applied) {
    auto answer = ApiAnswer::failure(409, "attempt_not_live",
                                     "attempt is " + std::string(to_string(result.attempt->state)) +
                                         "; only a STARTING, "
                                         "RUNNING or UNKNOWN attempt can be cancelled");
    answer.job_id = attempt->job_id;
    answer.attempt_id = id;
    co_return answer;
  }
  auto answer = ApiAnswer::json(200, json{{"attempt_id", id},
                                          {"job_id", attempt->job_id},
                                          {"state", to_string(AttemptState::cancelled)}}
                                         .dump());
  answer.job_id = attempt->job_id;
  answer.attempt_id = id;
  co_return answer;
}

}  // namespace onejob
