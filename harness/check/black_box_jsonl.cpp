#include "harness/check/black_box_jsonl.hpp"

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <string_view>

namespace onejob::check::black_box {
namespace {

constexpr std::size_t kMaxLineBytes = 4 << 20;  // a line past this is refused, not read
constexpr int kMaxDepth = 256;                  // JSON nesting: past this is refused

// How deep `text` nests arrays and objects (brackets inside strings do not count), stopping once
// past `limit`.
int nesting(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// One line's object, read field by field; what is left unread at the end is an unknown field.
class Fields {
 public:
  Fields(const nlohmann::json& object, std::string where)
      : object_(object), where_(std::move(where)) {}

  [[noreturn]] void fail(std::string_view field, std::string_view what) const {
    throw HistoryError(where_ + ": field \"" + std::string(field) + "\": " + std::string(what));
  }

  const nlohmann::json* find(const char* field) {
    const auto it = object_.find(field);
    if (it == object_.end()) return nullptr;
    used_.insert(field);
    return &*it;
  }
  const nlohmann::json& need(const char* field) {
    const nlohmann::json* value = find(field);
    if (!value) fail(field, "missing");
    return *value;
  }

  std::string text(const char* field) {
    const auto& value = need(field);
    if (!value.is_string()) fail(field, "expected a string");
    return value.get<std::string>();
  }
  std::optional<std::string> maybe_text(const char* field) {
    const nlohmann::json* value = find(field);
    if (!value || value->is_null()) return std::nullopt;
    if (!value->is_string()) fail(field, "expected a string or null");
    return value->get<std::string>();
  }
  std::optional<bool> maybe_bool(const char* field) {
    const nlohmann::json* value = find(field);
    if (!value || value->is_null()) return std::nullopt;
    if (!value->is_boolean()) fail(field, "expected true, false or null");
    return value->get<bool>();
  }
  std::int64_t micros(const char* field) {
    const auto& value = need(field);
    if (!value.is_number_integer() || value.get<std::int64_t>() < 0) {
      fail(field, "expected microseconds, an integer >= 0");
    }
    return value.get<std::int64_t>();
  }
  std::optional<std::int64_t> maybe_micros(const char* field) {
    const nlohmann::json* value = find(field);
    if (!value || value->is_null()) return std::nullopt;
    if (!value->is_number_integer() || value->get<std::int64_t>() < 0) {
      fail(field, "expected microseconds, an integer >= 0, or null");
    }
    return value->get<std::int64_t>();
  }
  // A job id: a string, or an integer (kept as its decimal text).
  std::optional<std::string> maybe_job(const char* field) {
    const nlohmann::json* value = find(field);
    if (!value || value->is_null()) return std::nullopt;
    if (value->is_string()) return value->get<std::string>();
    if (value->is_number_integer()) return std::to_string(value->get<std::int64_t>());
    fail(field, "expected a job id, a string or an integer");
  }
  std::optional<nlohmann::json> maybe_json(const char* field) {
    const nlohmann::json* value = find(field);
    if (!value) return std::nullopt;
    return *value;
  }

  void no_other_fields() const {
    for (const auto& [key, value] : object_.items()) {
      if (!used_.contains(key)) fail(key, "unknown field");
    }
  }

 private:
  const nlohmann::json& object_;
  std::string where_;
  std::set<std::string> used_;
};

Request read_request(Fields& f) {
  Request r;
  r.id = f.text("id");
  if (r.id.empty()) f.fail("id", "empty");
  r.client = f.maybe_text("client").value_or("");
  r.owner = f.text("owner");
  r.action = f.text("action");
  if (r.action != "create" && r.action != "read" && r.action != "retry" && r.action != "cancel") {
    f.fail("action", "expected create, read, retry or cancel, found \"" + r.action + "\"");
  }
  r.key = f.maybe_text("key");
  r.body = f.maybe_json("body");
  r.job = f.maybe_job("job");
  r.attempt = f.maybe_job("attempt");
  if (r.attempt && r.action != "cancel") f.fail("attempt", "only a cancel names an attempt");
  if (r.action == "create") {
    if (!r.key) f.fail("key", "a create needs its idempotency key");
    if (!r.body) f.fail("body", "a create needs its body");
    if (r.job) f.fail("job", "a create names no job");
  } else if (!r.job) {
    f.fail("job", "a " + r.action + " needs the job it acts on");
  }
  return r;
}

Response read_response(Fields& f) {
  Response r;
  r.id = f.text("id");
  if (const nlohmann::json* status = f.find("status"); status && !status->is_null()) {
    if (!status->is_number_integer() || status->get<std::int64_t>() < 100 ||
        status->get<std::int64_t>() > 599) {
      f.fail("status", "expected an HTTP status (100 to 599), or null for no response");
    }
    r.status = status->get<int>();
  }
  r.job = f.maybe_job("job");
  r.job_status = f.maybe_text("job_status");
  r.result = f.maybe_json("result");
  r.error = f.maybe_text("error");
  r.attempt = f.maybe_job("attempt");
  r.body = f.maybe_json("body");
  r.replayed = f.maybe_bool("replayed");
  r.attempt_state = f.maybe_text("attempt_state");
  r.location = f.maybe_text("location");
  if (const nlohmann::json* attempts = f.find("attempts"); attempts && !attempts->is_null()) {
    if (!attempts->is_array()) f.fail("attempts", "expected an array of attempts");
    r.attempts.emplace();
    for (const auto& item : *attempts) {
      if (!item.is_object() || !item.contains("attempt") || !item.contains("live") ||
          !item["live"].is_boolean() ||
          !(item["attempt"].is_string() || item["attempt"].is_number_integer()) ||
          (item.contains("state") && !item["state"].is_string())) {
        f.fail("attempts", "expected {\"attempt\": id, \"state\": text, \"live\": true|false}");
      }
      const auto& id = item["attempt"];
      r.attempts->push_back(
          {id.is_string() ? id.get<std::string>() : std::to_string(id.get<std::int64_t>()),
           item.value("state", std::string()), item["live"].get<bool>()});
    }
  }
  if (!r.status && (r.job || r.job_status || r.result || r.error || r.attempt || r.body ||
                    r.replayed || r.attempt_state || r.attempts || r.location)) {
    f.fail("status", "a response with no status (nothing came back) shows nothing");
  }
  return r;
}

Execution read_execution(Fields& f, std::int64_t t_us) {
  Execution e;
  e.t_us = t_us;
  e.provider = f.text("provider");
  e.provider_key = f.text("provider_key");
  e.purpose = f.maybe_text("purpose").value_or("attempt");
  if (e.purpose != "attempt" && e.purpose != "certification") {
    f.fail("purpose", "expected attempt or certification");
  }
  if (auto input = f.maybe_json("input")) {
    e.input = std::move(*input);
  } else if (e.purpose == "attempt") {
    f.fail("input", "an attempt's execution needs the input the provider received");
  }
  e.outcome = f.text("outcome");
  e.output = f.maybe_json("output");
  e.ended_us = f.maybe_micros("ended_us");
  if (e.ended_us && *e.ended_us < e.t_us) f.fail("ended_us", "before the execution started");
  return e;
}

void read_line(const std::string& line, const std::string& where, History& history,
               std::uint64_t number, std::set<std::string>& ids) {
  if (nesting(line, kMaxDepth) > kMaxDepth) {
    throw HistoryError(where + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  nlohmann::json object;
  try {
    object = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& error) {
    // error.byte: the 1-based byte of the line where parsing stopped.
    std::string message = error.what();
    if (const auto colon = message.find("syntax error"); colon != std::string::npos) {
      message = message.substr(colon);
    }
    throw HistoryError(where + ":" + std::to_string(std::max<std::size_t>(error.byte, 1)) + ": " +
                       message);
  }
  if (!object.is_object()) throw HistoryError(where + ":1: expected a JSON object");
  Fields f(object, where);
  const std::string kind = f.text("kind");
  const std::int64_t t_us = f.micros("t_us");
  if (kind == "request") {
    Request r = read_request(f);
    r.line = number;
    r.t_us = t_us;
    if (!ids.insert(r.id).second) f.fail("id", "request \"" + r.id + "\" appears twice");
    history.requests.push_back(std::move(r));
  } else if (kind == "response") {
    Response r = read_response(f);
    r.line = number;
    r.t_us = t_us;
    history.responses.push_back(std::move(r));
  } else if (kind == "execution") {
    Execution e = read_execution(f, t_us);
    e.line = number;
    history.executions.push_back(std::move(e));
  } else if (kind == "quiet") {
    if (history.quiet_from_us) f.fail("kind", "a second quiet line");
    history.quiet_from_us = t_us;
  } else if (kind == "policy") {
    // A policy line declares something, so one read before left its mark.
    if (history.attempt_limit || history.conflict_status || history.created_location) {
      f.fail("kind", "a second policy line");
    }
    if (const nlohmann::json* limit = f.find("attempt_limit")) {
      if (!limit->is_number_integer() || limit->get<std::int64_t>() < 1 ||
          limit->get<std::int64_t>() > 1'000'000) {
        f.fail("attempt_limit", "expected an integer from 1 to 1000000");
      }
      history.attempt_limit = limit->get<int>();
    }
    if (const nlohmann::json* status = f.find("conflict_status")) {
      if (!status->is_number_integer() || status->get<std::int64_t>() < 400 ||
          status->get<std::int64_t>() > 499) {
        f.fail("conflict_status", "expected a 4xx HTTP status (400 to 499)");
      }
      history.conflict_status = status->get<int>();
    }
    if (const nlohmann::json* location = f.find("created_location")) {
      if (!location->is_string() ||
          location->get_ref<const std::string&>().find("{job}") == std::string::npos) {
        f.fail("created_location", "expected a text naming the job as {job}, e.g. \"/jobs/{job}\"");
      }
      history.created_location = location->get<std::string>();
    }
    if (!history.attempt_limit && !history.conflict_status && !history.created_location) {
      f.fail("kind",
             "a policy line declares attempt_limit, conflict_status or created_location (one or "
             "more)");
    }
  } else {
    f.fail("kind",
           "expected request, response, execution, quiet or policy, found \"" + kind + "\"");
  }
  f.no_other_fields();
}

template <typename Json>
std::string dump(const Json& line) {
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

History read_jsonl(std::istream& in, const std::string& name) {
  History history;
  std::set<std::string> ids;
  std::string line;
  std::uint64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = name + ":" + std::to_string(number);
    if (line.size() > kMaxLineBytes) {
      throw HistoryError(where + ": line longer than " + std::to_string(kMaxLineBytes) + " bytes");
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    read_line(line, where, history, number, ids);
  }
  if (in.bad()) throw HistoryError(name + ": read error");
  for (const auto& response : history.responses) {
    if (!ids.contains(response.id)) {
      throw HistoryError(name + ":" + std::to_string(response.line) +
                         ": field \"id\": a response to request \"" + response.id +
                         "\", which the history does not have");
    }
  }
  return history;
}

History read_jsonl_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw HistoryError(path + ": cannot open");
  auto history = read_jsonl(in, path);
  // A file that records nothing (empty, blank, or a policy line alone) would pass every rule:
  // a recorder that failed to write must not read as a clean run.
  if (history.requests.empty() && history.responses.empty() && history.executions.empty()) {
    throw HistoryError(path + ": no requests, responses or executions: nothing to judge");
  }
  return history;
}

std::string to_jsonl(const Request& r) {
  nlohmann::ordered_json line = {{"kind", "request"},  {"t_us", r.t_us},   {"id", r.id},
                                 {"client", r.client}, {"owner", r.owner}, {"action", r.action}};
  if (r.key) line["key"] = *r.key;
  if (r.body) line["body"] = *r.body;
  if (r.job) line["job"] = *r.job;
  if (r.attempt) line["attempt"] = *r.attempt;
  return dump(line);
}

std::string to_jsonl(const Response& r) {
  nlohmann::ordered_json line = {{"kind", "response"}, {"t_us", r.t_us}, {"id", r.id}};
  line["status"] = r.status ? nlohmann::json(*r.status) : nlohmann::json(nullptr);
  if (r.job) line["job"] = *r.job;
  if (r.job_status) line["job_status"] = *r.job_status;
  if (r.result) line["result"] = *r.result;
  if (r.error) line["error"] = *r.error;
  if (r.attempt) line["attempt"] = *r.attempt;
  if (r.body) line["body"] = *r.body;
  if (r.replayed) line["replayed"] = *r.replayed;
  if (r.attempt_state) line["attempt_state"] = *r.attempt_state;
  if (r.location) line["location"] = *r.location;
  if (r.attempts) {
    line["attempts"] = nlohmann::ordered_json::array();
    for (const auto& a : *r.attempts) {
      line["attempts"].push_back({{"attempt", a.id}, {"state", a.state}, {"live", a.live}});
    }
  }
  return dump(line);
}

std::string to_jsonl(const Execution& e) {
  nlohmann::ordered_json line = {{"kind", "execution"},    {"t_us", e.t_us},
                                 {"provider", e.provider}, {"provider_key", e.provider_key},
                                 {"purpose", e.purpose},   {"input", e.input},
                                 {"outcome", e.outcome}};
  if (e.output) line["output"] = *e.output;
  line["ended_us"] = e.ended_us ? nlohmann::json(*e.ended_us) : nlohmann::json(nullptr);
  return dump(line);
}

std::string policy_jsonl(std::optional<int> attempt_limit, std::optional<int> conflict_status,
                         const std::optional<std::string>& created_location) {
  nlohmann::ordered_json line = {{"kind", "policy"}, {"t_us", 0}};
  if (attempt_limit) line["attempt_limit"] = *attempt_limit;
  if (conflict_status) line["conflict_status"] = *conflict_status;
  if (created_location) line["created_location"] = *created_location;
  return dump(line);
}

std::string quiet_jsonl(std::int64_t t_us) {
  return dump(nlohmann::json{{"kind", "quiet"}, {"t_us", t_us}});
}

nlohmann::ordered_json finding_json(const Finding& finding) {
  return {{"rule", finding.rule},
          {"clause", finding.clause},
          {"safety", is_safety(finding)},
          {"message", finding.message},
          {"lines", finding.lines}};
}

}  // namespace onejob::check::black_box
