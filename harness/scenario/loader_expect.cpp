// The scenario's judgment: `expect:`, `invariants:` and `requires:`.
#include <algorithm>

#include <yaml-cpp/yaml.h>

#include "harness/check/invariant.hpp"
#include "harness/check/marks.hpp"
#include "harness/scenario/loader_sections.hpp"

namespace onejob::scenario::loading {
namespace {

// A request of the timeline, by its 1-based number.
int request_number(const YamlReader& reader, const YAML::Node& node, const ScenarioSpec& spec) {
  const int count = static_cast<int>(request_count(spec));
  // A generated load may make the timeline longer than a written one can be.
  const int request = reader.small_integer(node, "request", 1, std::max(kMaxRequests, count));
  if (request > count) {
    reader.fail(node, "request " + std::to_string(request) +
                          " does not exist (the timeline sends " + std::to_string(count) + ")");
  }
  return request;
}

}  // namespace

void read_expectations(const YamlReader& reader, const YAML::Node& node, ScenarioSpec& spec) {
  YamlMap expect(reader, node, "expect",
                 {"responses", "same_job_id", "jobs", "final", "attempts", "discarded",
                  "executions", "marks"});
  if (auto marks = expect.get("marks")) {
    reader.expect_sequence(*marks, "expect.marks");
    for (const auto& item : *marks) {
      auto name = reader.string(item, "mark");
      if (!check::is_mark(name)) {
        std::string known;
        for (const auto& mark : check::all_marks()) {
          known += (known.empty() ? "" : ", ") + std::string(mark.name);
        }
        reader.fail(item, "unknown mark \"" + name + "\" (known: " + known + ")");
      }
      spec.expect.marks.push_back({std::move(name), reader.pos(item)});
    }
  }
  if (auto final_jobs = expect.get("final")) {
    spec.expect.final_jobs = read_final_jobs(reader, *final_jobs, spec);
  }
  const std::pair<const char*, std::optional<CountExpectation>*> counts[] = {
      {"attempts", &spec.expect.attempts},
      {"discarded", &spec.expect.discarded},
      {"executions", &spec.expect.executions}};
  for (const auto& [key, slot] : counts) {
    if (auto value = expect.get(key)) {
      *slot =
          CountExpectation{reader.small_integer(*value, key, 0, kMaxRequests), reader.pos(*value)};
    }
  }
  if (auto responses = expect.get("responses")) {
    reader.expect_sequence(*responses, "expect.responses");
    for (const auto& item : *responses) {
      YamlMap response(reader, item, "expected response", {"request", "status"});
      ResponseExpectation expectation{
          request_number(reader, response.require("request"), spec), {}, reader.pos(item)};
      const auto status = response.require("status");
      if (status.IsSequence()) {
        for (const auto& code : status) {
          expectation.statuses.push_back(reader.small_integer(code, "status", 100, 599));
        }
        if (expectation.statuses.empty()) reader.fail(status, "status: expected at least one code");
      } else {
        expectation.statuses.push_back(reader.small_integer(status, "status", 100, 599));
      }
      spec.expect.responses.push_back(std::move(expectation));
    }
  }
  if (auto groups = expect.get("same_job_id")) {
    reader.expect_sequence(*groups, "expect.same_job_id");
    for (const auto& group : *groups) {
      reader.expect_sequence(group, "same_job_id group");
      if (group.size() < 2) reader.fail(group, "same_job_id group: expected at least two requests");
      SameJobExpectation expectation{{}, reader.pos(group)};
      for (const auto& request : group)
        expectation.requests.push_back(request_number(reader, request, spec));
      spec.expect.same_job_id.push_back(std::move(expectation));
    }
  }
  if (auto jobs = expect.get("jobs")) {
    spec.expect.jobs = reader.small_integer(
        *jobs, "jobs", 0, std::max(kMaxRequests, static_cast<int>(request_count(spec))));
    spec.expect.jobs_pos = reader.pos(*jobs);
  }
}

void read_invariants(const YamlReader& reader, const YAML::Node& node, ScenarioSpec& spec) {
  if (node.IsScalar() && node.Scalar() == "all") {
    for (const auto& invariant : check::all_invariants())
      spec.invariants.emplace_back(invariant.id);
    return;
  }
  reader.expect_sequence(node, "invariants (a list of ids, or all)");
  for (const auto& item : node) {
    auto id = reader.string(item, "invariant");
    if (check::find_invariant(id) == nullptr) {
      std::string known;
      for (const auto& invariant : check::all_invariants()) {
        known += (known.empty() ? "" : ", ") + std::string(invariant.id);
      }
      reader.fail(item, "unknown invariant \"" + id + "\" (known: " + known + ")");
    }
    if (std::ranges::find(spec.invariants, id) != spec.invariants.end()) {
      reader.fail(item, "invariant \"" + id + "\" is listed twice");
    }
    spec.invariants.push_back(std::move(id));
  }
}

// The safety clauses whose promise the scenario's story is about (the promise table's "scenarios
// that require it"): registered clauses of rules the scenario checks.
void read_requires(const YamlReader& reader, const YAML::Node& node, ScenarioSpec& spec) {
  reader.expect_sequence(node, "requires (a list of clauses such as I5.two_winners)");
  for (const auto& item : node) {
    auto clause = reader.string(item, "clause");
    if (!check::is_safety_clause(clause)) {
      reader.fail(item, "unknown clause \"" + clause +
                            "\" (the promise table in harness/README.md lists every clause)");
    }
    const std::string rule = clause.substr(0, clause.find('.'));
    if (rule != "log" && std::ranges::find(spec.invariants, rule) == spec.invariants.end()) {
      reader.fail(item, "requires " + clause + ", but the scenario does not check " + rule);
    }
    if (std::ranges::find(spec.required, clause) != spec.required.end()) {
      reader.fail(item, "clause \"" + clause + "\" is listed twice");
    }
    spec.required.push_back(std::move(clause));
  }
}

}  // namespace onejob::scenario::loading
