// POST /jobs and GET /jobs/{id}.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "system/events/api_events.hpp"
#include "system/service/api_endpoints.hpp"
#include "system/service/canonical_json.hpp"
#include "system/service/json_document.hpp"
#include "system/service/settlement.hpp"

namespace onejob {
namespace {

using nlohmann::json;

struct CreateBody {
  std::string operation;
  std::string provider;
  std::vector<std::string> failover;
  std::string input_json;
};

// {"operation", "provider", "input", optional "failover": [provider, ...]}. Anything else is
// refused rather than ignored: an ignored field would still be part of the fingerprint the
// client believes it sent.
std::variant<CreateBody, std::string> parse_create_body(const SystemConfig& config,
                                                        const json& body) {
  if (!body.is_object()) return std::string("body must be a JSON object");
  for (const auto& [name, value] : body.items()) {
    if (name != "operation" && name != "provider" && name != "input" && name != "failover") {
      return "unknown field \"" + name + "\"";
    }
  }
  CreateBody parsed;
  auto operation = body.find("operation");
  if (operation == body.end() || !operation->is_string()) {
    return std::string("\"operation\" must be a string");
  }
  parsed.operation = operation->get<std::string>();
  if (!is_known_operation(parsed.operation)) {
    return "unknown operation \"" + parsed.operation +
           "\" (expected classify, summarize or extract)";
  }
  auto provider = body.find("provider");
  if (provider == body.end() || !provider->is_string()) {
    return std::string("\"provider\" must be a string");
  }
  parsed.provider = provider->get<std::string>();
  if (config.find_provider(parsed.provider) == nullptr) {
    return "unknown provider \"" + parsed.provider + "\"";
  }
  if (auto failover = body.find("failover"); failover != body.end()) {
    if (!failover->is_array()) return std::string("\"failover\" must be a list of providers");
    std::set<std::string> seen{parsed.provider};
    for (const auto& name : *failover) {
      if (!name.is_string() || config.find_provider(name.get<std::string>()) == nullptr) {
        return "\"failover\" names an unknown provider " + name.dump();
      }
      if (!seen.insert(name.get<std::string>()).second) {
        return "\"failover\" repeats provider " + name.dump();
      }
      parsed.failover.push_back(name.get<std::string>());
    }
  }
  if (!body.contains("input")) return std::string("\"input\" is required");
  auto input = validate_input_document(parsed.operation, body["input"]);
  if (auto* bad = std::get_if<ContractViolation>(&input)) return bad->reason;
  parsed.input_json = std::get<ContractOk>(input).canonical;
  return parsed;
}

ApiAnswer job_answer(int status, const Job& job) {
  auto answer = ApiAnswer::json(
      status,
      JsonObjectText().integer("job_id", job.id).string("status", to_string(job.status)).done());
  answer.response.headers.emplace_back("Location", "/jobs/" + std::to_string(job.id));
  answer.job_id = job.id;
  return answer;
}

}  // namespace

bool is_valid_idempotency_key(std::string_view key) {
  constexpr std::size_t kMaxIdempotencyKeyLength = 255;
  if (key.empty() || key.size() > kMaxIdempotencyKeyLength) return false;
  return std::ranges::all_of(key, [](char c) { return c >= 0x20 && c <= 0x7e; });
}

Async<ApiAnswer> create_job(SystemContext& context, const Request& request) {
  const auto key = find_header(request.headers, "Idempotency-Key");
  if (!key) {
    co_return ApiAnswer::failure(400, "idempotency_key_missing",
                                 "POST /jobs requires an Idempotency-Key header");
  }
  // Defect key-limit-off-by-one: a limit of 254.
  if (!is_valid_idempotency_key(*key) ||
      (context.config.defects.has(Defect::key_limit_off_by_one) && key->size() == 255)) {
    co_return ApiAnswer::failure(400, "idempotency_key_invalid",
                                 "Idempotency-Key must be 1-255 printable ASCII characters");
  }
  auto canonical = parse_canonical_json(request.body);
  if (auto* error = std::get_if<JsonError>(&canonical)) {
    co_return ApiAnswer::failure(400, "invalid_json", error->message);
  }
  const auto& payload = std::get<ParsedJson>(canonical).canonical;
  auto body = parse_create_body(context.config, std::get<ParsedJson>(canonical).document);
  if (auto* error = std::get_if<std::string>(&body)) {
    co_return ApiAnswer::failure(400, "invalid_body", *error);
  }
  auto& fields = std::get<CreateBody>(body);
  const Defects& defects = context.config.defects;
  // The fingerprint covers the endpoint as well as the body: the same key on another endpoint
  // is another request.
  std::string fingerprint = request.method + " " + request.path + "\n" + payload;
  if (defects.has(Defect::fingerprint_without_provider)) {
    auto without = json::parse(payload);
    without.erase("provider");
    without.erase("failover");
    fingerprint = request.method + " " + request.path + "\n" + compact_json(without);
  }
  auto replay = [&](const Job& existing) {
    if (existing.request_fingerprint != fingerprint && !defects.has(Defect::ignore_fingerprint)) {
      return ApiAnswer::failure(422, "idempotency_key_reused",
                                "this Idempotency-Key was used with a different request");
    }
    return job_answer(200, existing);
  };
  // Defect check-then-insert: a lookup first, which races with a concurrent create of the key.
  if (defects.has(Defect::check_then_insert)) {
    if (auto existing = co_await context.store.find_job_by_key(request.principal, *key)) {
      co_return replay(*existing);
    }
  }

  // Insert first and let the unique constraint decide: a lookup before the insert would race
  // with a concurrent create of the same key.
  NewJob new_job{
      .owner_id = request.principal,
      .idempotency_key = *key,
      .request_fingerprint = fingerprint,
      .operation = fields.operation,
      .target_provider = fields.provider,
      .failover = fields.failover,
      .input_json = fields.input_json,
      .payload_json = payload,
      .created_at = context.clock.now(),
  };
  std::optional<InsertJobResult> inserted;
  if (defects.has(Defect::lost_create)) {
    // Defect lost-create: acknowledged whatever became of the insert.
    try {
      inserted = co_await context.store.insert_job(std::move(new_job));
    } catch (const StoreError&) {
      co_return ApiAnswer::json(
          201, JsonObjectText().string("status", to_string(JobStatus::pending)).done());
    }
  } else {
    inserted = co_await context.store.insert_job(std::move(new_job));
  }
  if (inserted->outcome == InsertJobResult::Outcome::inserted) {
    const Job& job = *inserted->job;
    events::emit(
        context.events,
        events::JobCreated{.job_id = job.id, .owner = job.owner_id, .key = job.idempotency_key});
    emit_attempt_created(context.events, *inserted->initial_attempt);
    co_return job_answer(201, job);
  }
  auto existing = co_await context.store.find_job_by_key(request.principal, *key);
  if (!existing) {
    // Under the schema's semantics a violated unique constraint means the row is committed and
    // visible to this next statement; jobs are never deleted.
    co_return ApiAnswer::failure(500, "internal", "conflicting job is not visible");
  }
  co_return replay(*existing);
}

Async<ApiAnswer> get_job(SystemContext& context, const Request& request, JobId id) {
  auto job = co_await context.store.find_job(request.principal, id);
  if (!job) co_return ApiAnswer::failure(404, "not_found", "no such job");
  const auto attempts = co_await context.store.list_attempts(id);
  // The result is parsed before anything is written, as when the answer was one document.
  const auto result = job->status == JobStatus::succeeded
                          ? std::optional<json>(json::parse(job->result))
                          : std::nullopt;
  const bool blocked = std::ranges::any_of(
      attempts, [](const Attempt& attempt) { return attempt.state == AttemptState::unknown; });
  std::vector<std::string> shown;
  for (const auto& attempt : attempts) {
    // Attempt results are never shown: a discarded result must not be visible to a reader.
    JsonObjectText entry;
    entry.integer("attempt_id", attempt.id)
        .integer("attempt_no", attempt.attempt_no)
        .string("origin", to_string(attempt.origin))
        .string("provider", attempt.provider)
        .string("reason", attempt.outcome_reason);
    // Defect read-shows-attempt-results: the attempt's stored output, as the text it is kept in.
    if (context.config.defects.has(Defect::read_shows_attempt_results) && !attempt.result.empty()) {
      entry.string("result", attempt.result);
    }
    shown.push_back(entry.string("state", to_string(attempt.state)).done());
  }
  JsonObjectText body;
  body.texts("attempts", shown).boolean("blocked", blocked);
  if (job->completed_by) {
    body.integer("completed_by", *job->completed_by);
  } else {
    body.null("completed_by");
  }
  body.strings("failover", job->failover);
  if (job->status == JobStatus::failed) body.string("failure_reason", job->failure_reason);
  body.integer("job_id", job->id)
      .string("operation", job->operation)
      .string("provider", job->target_provider);
  if (result) body.text("result", compact_json(*result));
  body.string("status", to_string(job->status)).integer("version", job->version);
  auto answer = ApiAnswer::json(200, body.done());
  answer.job_id = job->id;
  co_return answer;
}

}  // namespace onejob
