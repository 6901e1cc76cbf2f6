#include "system/service/api_handler.hpp"

#include <charconv>
#include <vector>

#include <nlohmann/json.hpp>

#include "system/events/api_events.hpp"
#include "system/service/api_endpoints.hpp"
#include "system/service/json_document.hpp"

namespace onejob {
namespace {

// The segments between slashes, empty ones included: "/jobs/1/" is three segments, the last
// empty, so it names no resource (one resource, one spelling).
std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> segments;
  if (!path.starts_with('/')) return segments;
  path.remove_prefix(1);
  for (;;) {
    const auto slash = path.find('/');
    segments.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return segments;
}

// A positive decimal id, digits only; anything else matches no resource.
std::optional<std::int64_t> parse_id(std::string_view text) {
  std::int64_t id = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc{} || end != text.data() + text.size() || id <= 0 || text[0] == '+') {
    return std::nullopt;
  }
  return id;
}

struct Route {
  std::string name;  // "create_job", ...; empty when nothing matched
  std::string method;
  std::int64_t id = 0;
};

Route match(std::string_view path) {
  const auto segments = split_path(path);
  if (segments.size() == 1 && segments[0] == "jobs") return {"create_job", "POST", 0};
  if (segments.size() >= 2 && segments.size() <= 3) {
    const auto id = parse_id(segments[1]);
    if (!id) return {};
    if (segments[0] == "jobs" && segments.size() == 2) return {"get_job", "GET", *id};
    if (segments[0] == "jobs" && segments[2] == "attempts") return {"create_attempt", "POST", *id};
    if (segments[0] == "attempts" && segments.size() == 3 && segments[2] == "cancel") {
      return {"cancel_attempt", "POST", *id};
    }
  }
  return {};
}

}  // namespace

std::string api_route_name(std::string_view path) {
  auto name = match(path).name;
  return name.empty() ? "unknown" : name;
}

namespace {

Async<ApiAnswer> route_request(SystemContext& context, const Request& request, const Route& route) {
  if (route.name.empty()) co_return ApiAnswer::failure(404, "not_found", "no such resource");
  if (request.method != route.method) {
    co_return ApiAnswer::failure(405, "method_not_allowed", "use " + route.method);
  }
  if (request.principal.empty()) {
    co_return ApiAnswer::failure(401, "unauthenticated", "no authenticated principal");
  }
  if (route.name == "create_job") co_return co_await create_job(context, request);
  if (route.name == "get_job") co_return co_await get_job(context, request, route.id);
  if (route.name == "create_attempt") co_return co_await create_attempt(context, request, route.id);
  co_return co_await cancel_attempt(context, request, route.id);
}

}  // namespace

ApiAnswer ApiAnswer::json(int status, std::string body) {
  return {Response{status, {{"Content-Type", "application/json"}}, std::move(body)}, {}, {}, {}};
}

ApiAnswer ApiAnswer::failure(int status, std::string error, std::string_view message,
                             std::string_view request_id) {
  JsonObjectText body(nlohmann::json::error_handler_t::replace);
  body.string("error", error).string("message", message);
  if (!request_id.empty()) body.string("request_id", request_id);
  auto answer = json(status, body.done());
  answer.error = std::move(error);
  return answer;
}

namespace {

ApiAnswer internal_failure(const Request& request) {
  return ApiAnswer::failure(500, "internal",
                            "the server failed to answer (request id " + request.request_id + ")",
                            request.request_id);
}

}  // namespace

Async<Response> ApiHandler::handle(Request request) {
  const auto key = find_header(request.headers, "Idempotency-Key").value_or("");
  const Route route = match(request.path);
  events::emit(context_.events, events::ApiRequest{.request_id = request.request_id,
                                                   .route = std::string(route.name),
                                                   .method = request.method,
                                                   .path = request.path,
                                                   .owner = request.principal,
                                                   .key = key});
  ApiAnswer answer;
  // What went wrong inside, for the node's own api.response event only: a client is told what
  // to do, never the store's or the program's internals (socket paths, SQL, server text).
  std::optional<std::string> detail;
  try {
    if (request.body.size() > kMaxBodyBytes) {
      answer = ApiAnswer::failure(413, "payload_too_large",
                                  "the body is " + std::to_string(request.body.size()) +
                                      " bytes; the limit is " + std::to_string(kMaxBodyBytes));
    } else {
      answer = co_await route_request(context_, request, route);
    }
  } catch (const StoreError& error) {
    detail = error.what();
    if (context_.config.defects.has(Defect::store_error_500)) {  // the defect
      answer = internal_failure(request);
    } else if (error.kind() == StoreError::Kind::rejected) {
      // Retrying cannot help: the store cannot hold a value of this request.
      answer = ApiAnswer::failure(
          400, "unstorable_value",
          "the store cannot hold a value of this request (request id " + request.request_id + ")",
          request.request_id);
    } else {
      // A read is simply asked again. A write may have committed: the same request with the
      // same key will say so (200).
      const bool read = request.method == "GET";
      answer = ApiAnswer::failure(
          503, "store_unavailable",
          std::string("the store is unavailable (request id ") + request.request_id + "); " +
              (read ? "retry the request" : "retry the same request with the same Idempotency-Key"),
          request.request_id);
      answer.response.headers.emplace_back("Retry-After", kStoreRetryAfterSeconds);
    }
  } catch (const std::exception& error) {
    // A bug, not the client's fault: the request still gets an answer.
    detail = error.what();
    answer = internal_failure(request);
  }
  if (stopped_) co_return std::move(answer.response);  // nobody is left to answer
  events::emit(context_.events,
               events::ApiResponse{
                   .request_id = request.request_id,
                   .route = std::string(route.name),
                   .status = answer.response.status,
                   .owner = request.principal,
                   .key = key,
                   .job_id = answer.job_id,
                   .attempt_id = answer.attempt_id,
                   .error = answer.error.empty() ? std::nullopt : std::optional(answer.error),
                   .detail = std::move(detail),
               });
  co_return std::move(answer.response);
}

}  // namespace onejob
