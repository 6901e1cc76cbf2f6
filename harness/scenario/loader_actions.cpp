// Timeline actions on an existing job, and expectations about jobs' end states.
#include <algorithm>

#include <yaml-cpp/yaml.h>

#include "harness/check/api_routes.hpp"
#include "harness/scenario/loader_sections.hpp"

namespace onejob::scenario::loading {
namespace {

constexpr const char* kJobStatuses[] = {"pending", "succeeded", "failed", "blocked",
                                        "awaiting_operator"};

// An earlier create_job request of the timeline (numbers are 1-based, in file order).
int create_request(const YamlReader& reader, const YAML::Node& node, const ScenarioSpec& spec,
                   int before) {
  const int request = reader.small_integer(node, "request", 1, before - 1 > 0 ? before - 1 : 1);
  if (request >= before) {
    reader.fail(node, "request: expected an earlier create_job request (1 to " +
                          std::to_string(before - 1) + ")");
  }
  if (spec.timeline[request - 1].kind != TimelineEntry::Kind::create_job) {
    reader.fail(node, "request " + std::to_string(request) + " is not a create_job request");
  }
  return request;
}

// A row's name: the text itself, or a Named table's name.
std::string_view row_name(const char* name) { return name; }
template <typename E>
std::string_view row_name(const Named<E>& row) {
  return row.name;
}

template <typename Row, std::size_t N>
std::string one_of(const YamlReader& reader, const YAML::Node& node, std::string_view what,
                   const Row (&allowed)[N]) {
  auto value = reader.string(node, what);
  if (std::ranges::none_of(allowed, [&](const Row& row) { return row_name(row) == value; })) {
    std::string expected;
    for (const Row& row : allowed) {
      expected += (expected.empty() ? "" : ", ") + std::string(row_name(row));
    }
    reader.fail(node, std::string(what) + ": expected one of " + expected);
  }
  return value;
}

// The methods a route probe may send.
constexpr const char* kMethods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};

}  // namespace

void read_job_action(const YamlReader& reader, const YAML::Node& node, TimelineEntry& entry,
                     const ScenarioSpec& spec) {
  const bool cancel = entry.kind == TimelineEntry::Kind::cancel;
  const bool retry = entry.kind == TimelineEntry::Kind::retry;
  const std::string what(name_of(kTimelineActions, entry.kind));
  YamlMap action(
      reader, node, what,
      cancel  ? std::initializer_list<std::string_view>{"client", "request", "attempt", "key"}
      : retry ? std::initializer_list<std::string_view>{"client", "request", "provider", "key",
                                                        "raw_body"}
              : std::initializer_list<std::string_view>{"client", "request", "method", "path"});
  const auto client = action.require("client");
  entry.client = reader.string(client, "client");
  if (std::ranges::find(spec.clients, entry.client, &ClientSpec::name) == spec.clients.end()) {
    reader.fail(client, "client \"" + entry.client + "\" is not defined under clients");
  }
  const int this_request = static_cast<int>(spec.timeline.size()) + 1;
  entry.target_request = create_request(reader, action.require("request"), spec, this_request);
  if (cancel) entry.attempt_no = reader.small_integer(action.require("attempt"), "attempt", 1, 100);
  if (retry) {
    if (auto provider = action.get("provider"))
      entry.provider = reader.string(*provider, "provider");
    if (auto raw = action.get("raw_body")) {
      if (entry.provider) reader.fail(node, "retry: give either provider or raw_body, not both");
      entry.retry_body = reader.string(*raw, "raw_body");
    }
  }
  if (cancel || retry) {
    if (auto key = action.get("key")) {
      if (key->IsNull()) {
        entry.keyless = true;  // key: null, sent with no Idempotency-Key
      } else {
        entry.action_key = reader.string(*key, "key");
      }
    }
  }
  if (auto method = action.get("method"))
    entry.method = one_of(reader, *method, "method", kMethods);
  if (auto path = action.get("path")) {
    entry.path = reader.string(*path, "path");
    const bool printable =
        std::ranges::all_of(*entry.path, [](char c) { return c > 0x20 && c < 0x7f; });
    if (!entry.path->starts_with('/') || entry.path->size() > 2048 || !printable) {
      reader.fail(*path,
                  "path: expected \"/\" then at most 2047 printable ASCII characters, no spaces");
    }
  }
}

std::vector<FinalJobExpectation> read_final_jobs(const YamlReader& reader, const YAML::Node& node,
                                                 const ScenarioSpec& spec) {
  reader.expect_sequence(node, "expect.final");
  std::vector<FinalJobExpectation> found;
  const int requests = static_cast<int>(spec.timeline.size()) + 1;
  for (const auto& item : node) {
    YamlMap final_job(reader, item, "expected final job",
                      {"request", "status", "completed_by", "attempts"});
    FinalJobExpectation expectation;
    expectation.pos = reader.pos(item);
    expectation.request = create_request(reader, final_job.require("request"), spec, requests);
    if (auto status = final_job.get("status")) {
      if (status->IsSequence()) {  // any of these
        if (status->size() == 0) reader.fail(*status, "status: expected at least one status");
        for (const auto& each : *status) {
          expectation.statuses.push_back(one_of(reader, each, "status", kJobStatuses));
        }
      } else {
        expectation.statuses.push_back(one_of(reader, *status, "status", kJobStatuses));
      }
    }
    if (auto winner = final_job.get("completed_by")) {
      expectation.completed_by = reader.small_integer(*winner, "completed_by", 1, 100);
    }
    if (auto attempts = final_job.get("attempts")) {
      reader.expect_sequence(*attempts, "attempts");
      std::vector<std::string> states;
      for (const auto& state : *attempts)
        states.push_back(one_of(reader, state, "attempt state", check::kContractStates));
      expectation.attempts = std::move(states);
    }
    found.push_back(std::move(expectation));
  }
  return found;
}

}  // namespace onejob::scenario::loading
