#include "system/service/api_handler.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "system/service/canonical_json.hpp"

namespace onejob {
namespace {

constexpr std::size_t kMaxIdempotencyKeyLength = 255;
constexpr std::array<std::string_view, 3> kOperations = {"classify", "summarize", "extract"};

bool is_valid_idempotency_key(std::string_view key) {
  if (key.empty() || key.size() > kMaxIdempotencyKeyLength) return false;
  return std::ranges::all_of(key, [](char c) { return c >= 0x20 && c <= 0x7e; });
}

struct CreateBody {
  std::string operation;
  std::string provider;
};

// The create body is {"operation": one of kOperations, "provider": name, "input": any}; anything
// else is refused rather than ignored, because an ignored field would still be part of the
// fingerprint the client believes it sent.
std::variant<CreateBody, std::string> parse_create_body(const std::string& canonical) {
  const auto body = nlohmann::json::parse(canonical);
  if (!body.is_object()) return std::string("body must be a JSON object");
  for (const auto& [name, value] : body.items()) {
    if (name != "operation" && name != "provider" && name != "input") {
      return "unknown field \"" + name + "\"";
    }
  }
  auto operation = body.find("operation");
  if (operation == body.end() || !operation->is_string()) {
    return std::string("\"operation\" must be a string");
  }
  const auto& op = operation->get_ref<const std::string&>();
  if (std::ranges::find(kOperations, op) == kOperations.end()) {
    return "unknown operation \"" + op + "\" (expected classify, summarize or extract)";
  }
  auto provider = body.find("provider");
  if (provider == body.end() || !provider->is_string() ||
      provider->get_ref<const std::string&>().empty()) {
    return std::string("\"provider\" must be a non-empty string");
  }
  if (!body.contains("input") || body["input"].is_null()) {
    return std::string("\"input\" is required");
  }
  return CreateBody{op, provider->get<std::string>()};
}

}  // namespace

// Carries the job id and error code next to the serialized response, so reporting the response
// never re-parses its body.
struct ApiHandler::Answer {
  Response response;
  std::optional<JobId> job_id;
  std::string error;

  static Answer job(int status, const Job& job) {
    const nlohmann::json body = {{"job_id", job.id}, {"status", to_string(job.status)}};
    return {Response{status,
                     {{"Content-Type", "application/json"},
                      {"Location", "/jobs/" + std::to_string(job.id)}},
                     body.dump()},
            job.id, ""};
  }

  static Answer failure(int status, std::string error, std::string_view message) {
    const nlohmann::json body = {{"error", error}, {"message", message}};
    return {Response{status, {{"Content-Type", "application/json"}}, body.dump()}, std::nullopt,
            std::move(error)};
  }
};

Async<Response> ApiHandler::handle(Request request) {
  events_.emit(Event("api.request")
                   .with("request_id", request.request_id)
                   .with("method", request.method)
                   .with("path", request.path)
                   .with("owner", request.principal)
                   .with("key", find_header(request.headers, "Idempotency-Key").value_or("")));
  Answer answer;
  if (request.path != "/jobs") {
    answer = Answer::failure(404, "not_found", "no such resource");
  } else if (request.method != "POST") {
    answer = Answer::failure(405, "method_not_allowed", "use POST /jobs");
  } else if (request.principal.empty()) {
    answer = Answer::failure(401, "unauthenticated", "no authenticated principal");
  } else {
    answer = co_await create_job(request);
  }
  Event event("api.response");
  event.with("request_id", request.request_id)
      .with("status", answer.response.status)
      .with("owner", request.principal)
      .with("key", find_header(request.headers, "Idempotency-Key").value_or(""));
  if (answer.job_id) event.with("job_id", *answer.job_id);
  if (!answer.error.empty()) event.with("error", answer.error);
  events_.emit(std::move(event));
  co_return std::move(answer.response);
}

Async<ApiHandler::Answer> ApiHandler::create_job(const Request& request) {
  const auto key = find_header(request.headers, "Idempotency-Key");
  if (!key) {
    co_return Answer::failure(400, "idempotency_key_missing",
                              "POST /jobs requires an Idempotency-Key header");
  }
  if (!is_valid_idempotency_key(*key)) {
    co_return Answer::failure(400, "idempotency_key_invalid",
                              "Idempotency-Key must be 1-255 printable ASCII characters");
  }
  auto canonical = canonicalize_json(request.body);
  if (auto* error = std::get_if<JsonError>(&canonical)) {
    co_return Answer::failure(400, "invalid_json", error->message);
  }
  auto& payload = std::get<CanonicalJson>(canonical).bytes;
  auto body = parse_create_body(payload);
  if (auto* error = std::get_if<std::string>(&body)) {
    co_return Answer::failure(400, "invalid_body", *error);
  }
  auto& fields = std::get<CreateBody>(body);
  // The fingerprint covers the endpoint as well as the body: the same key on another endpoint
  // is another request.
  std::string fingerprint = request.method + " " + request.path + "\n" + payload;

  NewJob new_job{
      .owner_id = request.principal,
      .idempotency_key = *key,
      .request_fingerprint = fingerprint,
      .operation = fields.operation,
      .target_provider = fields.provider,
      .payload_json = payload,
      .created_at = clock_.now(),
  };
  // Insert first and let the unique constraint decide: a lookup before the insert would race
  // with a concurrent create of the same key.
  auto inserted = co_await store_.insert_job(std::move(new_job));
  if (inserted.outcome == InsertJobResult::Outcome::inserted) {
    const Job& job = *inserted.job;
    events_.emit(Event("job.created")
                     .with("job_id", job.id)
                     .with("owner", job.owner_id)
                     .with("key", job.idempotency_key)
                     .with("request", job.request_fingerprint));
    co_return Answer::job(201, job);
  }
  auto existing = co_await store_.find_job_by_key(request.principal, *key);
  if (!existing) {
    // Under the schema's semantics a violated unique constraint means the row is committed and
    // visible to this next statement; jobs are never deleted.
    co_return Answer::failure(500, "internal", "conflicting job is not visible");
  }
  if (existing->request_fingerprint != fingerprint) {
    co_return Answer::failure(422, "idempotency_key_reused",
                              "this Idempotency-Key was used with a different request");
  }
  co_return Answer::job(200, *existing);
}

}  // namespace onejob
