#include "harness/real/black_box_recorder.hpp"

#include <utility>

#include <algorithm>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/check/black_box_jsonl.hpp"

namespace onejob::real {
namespace {

using nlohmann::json;
namespace bb = check::black_box;

Headers bearer(const std::string& token, const std::string& key) {
  Headers headers{{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}};
  if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
  return headers;
}

// What a client of `onejob serve` reads in an answer's body.
void read_body(const std::string& text, bb::Response& response) {
  const json body = json::parse(text, nullptr, false);
  if (!body.is_object()) return;
  if (const auto id = body.find("job_id"); id != body.end()) {
    if (id->is_number_integer()) response.job = std::to_string(id->get<std::int64_t>());
    if (id->is_string()) response.job = id->get<std::string>();
  }
  if (const auto status = body.find("status"); status != body.end() && status->is_string()) {
    response.job_status = status->get<std::string>();
  }
  if (const auto result = body.find("result"); result != body.end() && !result->is_null()) {
    response.result = *result;
  }
  if (const auto error = body.find("error"); error != body.end() && error->is_string()) {
    response.error = error->get<std::string>();
  }
}

bb::Request make_request(const std::string& owner, const std::string& action) {
  bb::Request request;
  request.owner = owner;
  request.action = action;
  return request;
}

json parsed_or_text(const std::string& text) {
  json value = json::parse(text, nullptr, false);
  return value.is_discarded() ? json(text) : value;
}

}  // namespace

BlackBoxRecorder::BlackBoxRecorder() : origin_(std::chrono::steady_clock::now()) {}

std::int64_t BlackBoxRecorder::us_of(std::chrono::steady_clock::time_point at) const {
  return std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::microseconds>(at - origin_).count());
}
std::int64_t BlackBoxRecorder::now_us() const { return us_of(std::chrono::steady_clock::now()); }

HttpReply BlackBoxRecorder::exchange(bb::Request request, HttpConnection& connection,
                                     const std::string& method, const std::string& path,
                                     const Headers& headers, const std::string& body) {
  {
    std::lock_guard lock(mutex_);
    request.id = "r" + std::to_string(++requests_);
    request.t_us = now_us();
    request.line = ++lines_;
    history_.requests.push_back(request);
  }
  HttpReply reply = connection.send(method, path, headers, body);
  bb::Response response;
  response.id = request.id;
  if (reply.answered()) {
    response.status = reply.status;
    read_body(reply.body, response);
  }
  std::lock_guard lock(mutex_);
  response.t_us = now_us();
  response.line = ++lines_;
  history_.responses.push_back(std::move(response));
  return reply;
}

HttpReply BlackBoxRecorder::create(HttpConnection& connection, const std::string& owner,
                                   const std::string& token, const std::string& key,
                                   const std::string& body) {
  bb::Request request = make_request(owner, "create");
  request.key = key;
  request.body = parsed_or_text(body);
  return exchange(std::move(request), connection, "POST", "/jobs", bearer(token, key), body);
}

HttpReply BlackBoxRecorder::read(HttpConnection& connection, const std::string& owner,
                                 const std::string& token, const std::string& job) {
  bb::Request request = make_request(owner, "read");
  request.job = job;
  return exchange(std::move(request), connection, "GET", "/jobs/" + job, bearer(token, ""), "");
}

HttpReply BlackBoxRecorder::retry(HttpConnection& connection, const std::string& owner,
                                  const std::string& token, const std::string& key,
                                  const std::string& job, const std::string& body) {
  bb::Request request = make_request(owner, "retry");
  request.job = job;
  return exchange(std::move(request), connection, "POST", "/jobs/" + job + "/attempts",
                  bearer(token, key), body);
}

HttpReply BlackBoxRecorder::cancel(HttpConnection& connection, const std::string& owner,
                                   const std::string& token, const std::string& key,
                                   const std::string& job, std::int64_t attempt) {
  bb::Request request = make_request(owner, "cancel");
  request.job = job;
  return exchange(std::move(request), connection, "POST",
                  "/attempts/" + std::to_string(attempt) + "/cancel", bearer(token, key), "");
}

void BlackBoxRecorder::quiet() {
  std::lock_guard lock(mutex_);
  history_.quiet_from_us = now_us();
  quiet_line_ = ++lines_;
}

void BlackBoxRecorder::add_executions(const ProviderStub& stub) {
  const auto executions = stub.executions();
  std::lock_guard lock(mutex_);
  for (const auto& execution : executions) {
    bb::Execution e;
    e.t_us = us_of(execution.started);
    e.provider = stub.name();
    e.provider_key = execution.key;
    e.purpose = execution.purpose;
    e.input = parsed_or_text(execution.input);
    e.outcome = std::string(sim::to_string(execution.outcome));
    if (execution.ended) e.ended_us = std::max(e.t_us, us_of(*execution.ended));
    if (!execution.output.empty()) e.output = parsed_or_text(execution.output);
    e.line = ++lines_;
    history_.executions.push_back(std::move(e));
  }
}

bb::History BlackBoxRecorder::history() const {
  std::lock_guard lock(mutex_);
  return history_;
}

std::string BlackBoxRecorder::jsonl() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::uint64_t, std::string>> lines;
  for (const auto& r : history_.requests) lines.emplace_back(r.line, bb::to_jsonl(r));
  for (const auto& r : history_.responses) lines.emplace_back(r.line, bb::to_jsonl(r));
  for (const auto& e : history_.executions) lines.emplace_back(e.line, bb::to_jsonl(e));
  if (history_.quiet_from_us)
    lines.emplace_back(quiet_line_, bb::quiet_jsonl(*history_.quiet_from_us));
  std::ranges::sort(lines);
  std::string text;
  for (const auto& [number, line] : lines) text += line + "\n";
  return text;
}

}  // namespace onejob::real
