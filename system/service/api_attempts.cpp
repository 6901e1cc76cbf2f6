// POST /jobs/{id}/attempts and POST /attempts/{id}/cancel.
#include <nlohmann/json.hpp>

#include "system/service/api_endpoints.hpp"
#include "system/service/canonical_json.hpp"
#include "system/service/json_document.hpp"
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
  auto canonical = parse_canonical_json(request.body);
  if (auto* error = std::get_if<JsonError>(&canonical)) {
    return ApiAnswer::failure(400, "invalid_json", error->message);
  }
  const auto& body = std::get<ParsedJson>(canonical).document;
  if (!body.is_object() || body.size() != 1 || !body.contains("provider") ||
      !body["provider"].is_string()) {
    return ApiAnswer::failure(400, "invalid_body", "expected {\"provider\": name} or no body");
  }
  return body["provider"].get<std::string>();
}

// The answers of the two actions. A replay repeats its first answer byte for byte, so neither
// shows the attempt's state now (GET /jobs/{id} does): a retry answers the STARTING attempt it
// created, a cancel the attempt it cancelled.
std::string retry_body(const Attempt& attempt, AttemptState shown = AttemptState::starting) {
  return JsonObjectText()
      .integer("attempt_id", attempt.id)
      .integer("attempt_no", attempt.attempt_no)
      .integer("job_id", attempt.job_id)
      .string("provider", attempt.provider)
      .string("state", to_string(shown))
      .done();
}

std::string cancel_body(const Attempt& attempt) {
  return JsonObjectText()
      .integer("attempt_id", attempt.id)
      .integer("job_id", attempt.job_id)
      .string("state", to_string(AttemptState::cancelled))
      .done();
}

}  // namespace

std::variant<std::optional<ActionKey>, ApiAnswer> action_key(const Request& request) {
  const auto key = find_header(request.headers, "Idempotency-Key");
  if (!key) return std::optional<ActionKey>{};
  if (!is_valid_idempotency_key(*key)) {
    return ApiAnswer::failure(400, "idempotency_key_invalid",
                              "Idempotency-Key must be 1-255 printable ASCII characters");
  }
  std::string canonical;
  if (!request.body.empty()) {
    auto parsed = canonicalize_json(request.body);
    if (auto* error = std::get_if<JsonError>(&parsed)) {
      return ApiAnswer::failure(400, "invalid_json", error->message);
    }
    canonical = std::get<CanonicalJson>(parsed).bytes;
  }
  return std::optional<ActionKey>{
      ActionKey{.owner_id = request.principal,
                .idempotency_key = *key,
                .request_fingerprint = request.method + " " + request.path + "\n" + canonical}};
}

Async<ApiAnswer> replay_action(SystemContext& context, const ActionRecord& recorded,
                               const ActionKey& key, int status, bool cancel) {
  const Defects& defects = context.config.defects;
  // Defect action-key-ignores-request: any request replays the key's outcome.
  if (recorded.request_fingerprint != key.request_fingerprint &&
      !defects.has(Defect::action_key_ignores_request)) {
    co_return ApiAnswer::failure(422, "idempotency_key_reused",
                                 "this Idempotency-Key was used with a different request");
  }
  auto attempt = co_await context.store.find_attempt(recorded.attempt_id);
  if (!attempt) co_return ApiAnswer::failure(500, "internal", "the recorded attempt is missing");
  // Defect replay-current-state: a retry's replay shows the attempt's state now.
  auto body = cancel ? cancel_body(*attempt)
                     : retry_body(*attempt, defects.has(Defect::replay_current_state)
                                                ? attempt->state
                                                : AttemptState::starting);
  auto answer = ApiAnswer::json(status, std::move(body));
  if (!defects.has(Defect::replay_unmarked)) {
    answer.response.headers.emplace_back("Idempotent-Replayed", "true");
  }
  answer.job_id = attempt->job_id;
  answer.attempt_id = attempt->id;
  co_return answer;
}

// An operator action's Idempotency-Key, and the answer already due when there is one: 400 for
// a bad key or body, or the replay of what the key recorded (`status`, `cancel`: as for
// replay_action).
struct KeyedAction {
  std::optional<ActionKey> key;
  std::optional<ApiAnswer> answer;
};

Async<KeyedAction> keyed_action(SystemContext& context, const Request& request, int status,
                                bool cancel) {
  auto keyed = action_key(request);
  if (auto* refused = std::get_if<ApiAnswer>(&keyed))
    co_return KeyedAction{{}, std::move(*refused)};
  auto key = std::get<std::optional<ActionKey>>(std::move(keyed));
  if (key) {
    if (auto recorded = co_await context.store.find_action(key->owner_id, key->idempotency_key)) {
      ApiAnswer replay = co_await replay_action(context, *recorded, *key, status, cancel);
      co_return KeyedAction{std::move(key), std::move(replay)};
    }
  }
  co_return KeyedAction{std::move(key), std::nullopt};
}

Async<ApiAnswer> create_attempt(SystemContext& context, const Request& request, JobId id) {
  // Defect foreign-owner-retry: the job is loaded whatever its owner.
  std::optional<Job> job;
  if (context.config.defects.has(Defect::foreign_owner_retry)) {
    job = co_await context.store.load_job(id);
  } else {
    job = co_await context.store.find_job(request.principal, id);
  }
  if (!job) co_return ApiAnswer::failure(404, "not_found", "no such job");
  // With an Idempotency-Key, a replay gets the attempt its first request created, whatever
  // happened to the job since.
  auto keyed = co_await keyed_action(context, request, 201, false);
  if (keyed.answer) co_return std::move(*keyed.answer);
  const auto& key = keyed.key;
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
      .key = key,
  };
  auto inserted = co_await context.store.insert_attempt(std::move(new_attempt));
  using Outcome = InsertAttemptResult::Outcome;
  if (inserted.outcome == Outcome::key_exists && inserted.recorded) {
    co_return co_await replay_action(context, *inserted.recorded, *key, 201, false);
  }
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
  auto answer = ApiAnswer::json(201, retry_body(attempt));
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
  auto keyed = co_await keyed_action(context, request, 200, true);
  if (keyed.answer) co_return std::move(*keyed.answer);
  const auto& key = keyed.key;
  Settlement settlement(context);
  const Writer operator_writer{"api", std::nullopt};
  std::vector<AttemptState> live{AttemptState::starting, AttemptState::running,
                                 AttemptState::unknown};
  // Defect cancel-skips-unknown: an UNKNOWN attempt is not cancelled.
  if (context.config.defects.has(Defect::cancel_skips_unknown)) live.pop_back();
  AttemptUpdate cancel{.attempt_id = id,
                       .from = live,
                       .to = AttemptState::cancelled,
                       .fence = {},
                       .take_over_as = {},
                       .reason = "cancelled by " + request.principal,
                       .at = context.clock.now(),
                       .key = key};
  auto result = co_await settlement.transition(std::move(cancel), operator_writer);
  if (result.outcome == UpdateAttemptResult::Outcome::key_exists && result.recorded) {
    co_return co_await replay_action(context, *result.recorded, *key, 200, true);
  }
  if (result.outcome != UpdateAttemptResult::Outcome::applied) {
    const std::string state =
        result.attempt ? std::string(to_string(result.attempt->state)) : std::string("not live");
    auto answer = ApiAnswer::failure(
        409, "attempt_not_live",
        "attempt is " + state + "; only a STARTING, RUNNING or UNKNOWN attempt can be cancelled");
    answer.job_id = attempt->job_id;
    answer.attempt_id = id;
    co_return answer;
  }
  auto answer = ApiAnswer::json(200, cancel_body(*attempt));
  answer.job_id = attempt->job_id;
  answer.attempt_id = id;
  co_return answer;
}

}  // namespace onejob
