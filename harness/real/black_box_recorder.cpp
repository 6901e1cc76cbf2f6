#include "harness/real/black_box_recorder.hpp"

#include <utility>

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/check/black_box_jsonl.hpp"

namespace onejob::real {
namespace {

using nlohmann::json;
namespace bb = check::black_box;

// The value at `pointer` in `body`, when there is one ("" is the whole body).
const json* at_pointer(const json& body, const std::string& pointer) {
  try {
    const json& value = body.at(json::json_pointer(pointer));
    return &value;
  } catch (const json::exception&) {
    return nullptr;
  }
}

// The id at `pointer` in `body` (a string, or an integer as its decimal text), if there is one.
std::optional<std::string> id_in(const json& body, const std::string& pointer) {
  const json* id = at_pointer(body, pointer);
  if (id && id->is_number_integer()) return std::to_string(id->get<std::int64_t>());
  if (id && id->is_string()) return id->get<std::string>();
  return std::nullopt;
}

// What a client reads in an answer's body, where the profile says it is, and the whole body for a
// read or an operator action (`request_action` read, retry or cancel); for an action's answer the
// attempt it names too, for a read's the job's attempts.
void read_body(const TargetProfile& profile, const std::string& text,
               const std::string& request_action, bb::Response& response) {
  const bool action = request_action == "retry" || request_action == "cancel";
  const json body = json::parse(text, nullptr, false);
  if (body.is_discarded()) return;
  if (action || request_action == "read") response.body = body;
  response.job = id_in(body, profile.job_id_pointer);
  if (const json* attempts =
          request_action == "read" ? at_pointer(body, profile.attempts_pointer) : nullptr;
      attempts && attempts->is_array() && !profile.attempt_state_pointer.empty()) {
    response.attempts.emplace();
    for (const auto& item : *attempts) {
      const auto id = id_in(item, profile.attempt_id_pointer);
      const json* state = at_pointer(item, profile.attempt_state_pointer);
      if (!id || !state || !state->is_string()) continue;
      const std::string word = state->get<std::string>();
      response.attempts->push_back({*id, word, profile.live_attempt_words.contains(word)});
    }
  }
  if (action) {
    response.attempt = id_in(body, profile.attempt_id_pointer);
    if (const json* state = profile.attempt_state_pointer.empty()
                                ? nullptr
                                : at_pointer(body, profile.attempt_state_pointer);
        state && state->is_string()) {
      response.attempt_state = profile.attempt_state_of(state->get<std::string>());
    }
  }
  if (const json* status = at_pointer(body, profile.status_pointer);
      status && status->is_string()) {
    response.job_status = profile.status_of(status->get<std::string>());
  }
  if (const json* result = at_pointer(body, profile.result_pointer); result && !result->is_null()) {
    response.result = *result;
  }
  if (const json* error = at_pointer(body, profile.error_pointer); error && error->is_string()) {
    response.error = error->get<std::string>();
  }
}

}  // namespace

std::optional<std::string> id_at(const std::string& body_text, const std::string& pointer) {
  const json body = json::parse(body_text, nullptr, false);
  if (body.is_discarded()) return std::nullopt;
  return id_in(body, pointer);
}

namespace {

bb::Request make_request(const std::string& client, const std::string& owner,
                         const std::string& action) {
  bb::Request request;
  request.client = client;
  request.owner = owner;
  request.action = action;
  return request;
}

json parsed_or_text(const std::string& text) {
  json value = json::parse(text, nullptr, false);
  return value.is_discarded() ? json(text) : value;
}

}  // namespace

BlackBoxRecorder::BlackBoxRecorder(TargetProfile profile, std::chrono::milliseconds timeout)
    : profile_(std::move(profile)), timeout_(timeout), origin_(std::chrono::steady_clock::now()) {}

std::int64_t BlackBoxRecorder::us_of(std::chrono::steady_clock::time_point at) const {
  return std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::microseconds>(at - origin_).count());
}
std::int64_t BlackBoxRecorder::now_us() const { return us_of(std::chrono::steady_clock::now()); }

HttpReply BlackBoxRecorder::exchange(bb::Request request, HttpConnection& connection,
                                     const Route& route, const std::string& job,
                                     const std::string& attempt, const std::string& credential,
                                     const std::string& key, const std::string& body,
                                     std::optional<std::chrono::milliseconds> wait) {
  Headers headers{{profile_.auth_header, profile_.auth_prefix + credential},
                  {"Content-Type", "application/json"}};
  if (!key.empty()) headers.emplace_back(profile_.key_header, key);
  const std::string path = substitute(substitute(route.path, "job", job), "attempt", attempt);
  {
    std::lock_guard lock(mutex_);
    request.id = "r" + std::to_string(++requests_);
    request.t_us = now_us();
    request.line = ++lines_;
    history_.requests.push_back(request);
  }
  HttpReply reply = connection.send(route.method, path, headers, body, wait.value_or(timeout_));
  bb::Response response;
  response.id = request.id;
  if (reply.answered()) {
    response.status = reply.status;
    const bool action = request.action == "retry" || request.action == "cancel";
    read_body(profile_, reply.body, request.action, response);
    if (request.action == "create") {
      response.location = find_header(reply.headers, "Location").value_or("");
    }
    if (action && !profile_.replay_header.empty()) {
      const auto mark = find_header(reply.headers, profile_.replay_header);
      response.replayed =
          mark && std::ranges::equal(*mark, std::string_view("true"), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) == b;
          });
    }
  }
  std::lock_guard lock(mutex_);
  response.t_us = now_us();
  response.line = ++lines_;
  history_.responses.push_back(std::move(response));
  return reply;
}

HttpReply BlackBoxRecorder::create(HttpConnection& connection, const std::string& owner,
                                   const std::string& credential, const std::string& key,
                                   const std::string& body, const std::string& client,
                                   std::optional<std::chrono::milliseconds> wait) {
  bb::Request request = make_request(client, owner, "create");
  request.key = key;
  request.body = parsed_or_text(body);
  return exchange(std::move(request), connection, profile_.create, "", "", credential, key, body,
                  wait);
}

HttpReply BlackBoxRecorder::read(HttpConnection& connection, const std::string& owner,
                                 const std::string& credential, const std::string& job,
                                 const std::string& client,
                                 std::optional<std::chrono::milliseconds> wait) {
  bb::Request request = make_request(client, owner, "read");
  request.job = job;
  return exchange(std::move(request), connection, profile_.read, job, "", credential, "", "", wait);
}

HttpReply BlackBoxRecorder::retry(HttpConnection& connection, const std::string& owner,
                                  const std::string& credential, const std::string& key,
                                  const std::string& job, const std::string& body,
                                  const std::string& client,
                                  std::optional<std::chrono::milliseconds> wait) {
  bb::Request request = make_request(client, owner, "retry");
  request.job = job;
  if (!key.empty()) request.key = key;
  if (!body.empty()) request.body = parsed_or_text(body);
  return exchange(std::move(request), connection, profile_.retry, job, "", credential, key, body,
                  wait);
}

HttpReply BlackBoxRecorder::cancel(HttpConnection& connection, const std::string& owner,
                                   const std::string& credential, const std::string& key,
                                   const std::string& job, const std::string& attempt,
                                   const std::string& client,
                                   std::optional<std::chrono::milliseconds> wait) {
  bb::Request request = make_request(client, owner, "cancel");
  request.job = job;
  request.attempt = attempt;
  if (!key.empty()) request.key = key;
  return exchange(std::move(request), connection, profile_.cancel, job, attempt, credential, key,
                  "", wait);
}

void BlackBoxRecorder::quiet() {
  std::lock_guard lock(mutex_);
  history_.quiet_from_us = now_us();
  quiet_line_ = ++lines_;
}

template <typename Declare>
void BlackBoxRecorder::declare(const Declare& what) {
  std::lock_guard lock(mutex_);
  what(history_);
  if (policy_line_ == 0) policy_line_ = ++lines_;
}

void BlackBoxRecorder::declare_attempt_limit(int limit) {
  declare([limit](bb::History& history) { history.attempt_limit = limit; });
}

void BlackBoxRecorder::declare_conflict_status(int status) {
  declare([status](bb::History& history) { history.conflict_status = status; });
}

void BlackBoxRecorder::declare_created_location(const std::string& location) {
  declare([&location](bb::History& history) { history.created_location = location; });
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
  if (history_.attempt_limit || history_.conflict_status || history_.created_location) {
    lines.emplace_back(policy_line_,
                       bb::policy_jsonl(history_.attempt_limit, history_.conflict_status,
                                        history_.created_location));
  }
  std::ranges::sort(lines);
  std::string text;
  for (const auto& [number, line] : lines) text += line + "\n";
  return text;
}

}  // namespace onejob::real
