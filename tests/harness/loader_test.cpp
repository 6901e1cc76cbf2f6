#include "harness/scenario/loader.hpp"

#include <string>

#include <boost/test/unit_test.hpp>

namespace onejob::scenario {
namespace {

const std::string kValid = R"(name: two-clicks
description: two creates
seed: 9
clients:
  - {name: browser, owner: alice}
network:
  client_lb:
    latency: {min: 1ms, max: 2s}
timeline:
  - at: 0ms
    create_job:
      client: browser
      key: k1
      body: {operation: classify, provider: alpha, input: {n: 1, s: "1", ok: true, none: null}}
  - at: 1h
    create_job: {client: browser, raw_body: "not json"}
expect:
  responses:
    - {request: 1, status: 201}
    - {request: 2, status: [400, 422]}
  same_job_id: [[1, 2]]
  jobs: 1
invariants: [I1]
)";

// Replaces the first occurrence of `from` in the valid scenario.
std::string variant(const std::string& from, const std::string& to) {
  std::string text = kValid;
  const auto at = text.find(from);
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, "fixture lacks: " << from);
  return text.replace(at, from.size(), to);
}

// The "file:line:col: message" of loading `text`, or "" when it loads.
std::string error_of(const std::string& text) {
  try {
    parse_scenario(text, "s.yaml");
  } catch (const ScenarioError& error) {
    return error.what();
  }
  return "";
}

void check_error(const std::string& text, const std::string& location, const std::string& words) {
  const auto error = error_of(text);
  BOOST_TEST_CONTEXT(error) {
    BOOST_TEST(error.rfind("s.yaml:" + location + ": ", 0) == 0u);
    BOOST_TEST(error.find(words) != std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE(scenario_loader)

BOOST_AUTO_TEST_CASE(loads_every_field) {
  const auto spec = parse_scenario(kValid, "s.yaml");
  BOOST_TEST(spec.name == "two-clicks");
  BOOST_TEST(spec.seed == 9u);
  BOOST_TEST(spec.clients.size() == 1u);
  BOOST_TEST(spec.clients[0].owner == "alice");
  BOOST_TEST(spec.network.client_lb.latency.min.count() == 1'000);
  BOOST_TEST(spec.network.client_lb.latency.max.count() == 2'000'000);
  BOOST_REQUIRE(spec.timeline.size() == 2u);
  BOOST_TEST(spec.timeline[0].create_job.key.value_or("") == "k1");
  // Plain scalars become JSON numbers, booleans and null; quoted ones stay strings.
  BOOST_TEST(
      spec.timeline[0].create_job.body ==
      R"({"input":{"n":1,"none":null,"ok":true,"s":"1"},"operation":"classify","provider":"alpha"})");
  BOOST_TEST(spec.timeline[1].at.count() == 3'600'000'000);
  BOOST_TEST(!spec.timeline[1].create_job.key.has_value());
  BOOST_TEST(spec.timeline[1].create_job.body == "not json");
  BOOST_TEST(spec.timeline[1].request == 2);
  BOOST_TEST(spec.expect.responses[1].statuses == (std::vector<int>{400, 422}));
  BOOST_TEST(spec.expect.same_job_id[0].requests == (std::vector<int>{1, 2}));
  BOOST_TEST(spec.expect.jobs.value_or(-1) == 1);
  BOOST_TEST(spec.invariants == (std::vector<std::string>{"I1"}));
}

BOOST_AUTO_TEST_CASE(invariants_default_to_all) {
  const auto spec = parse_scenario(variant("invariants: [I1]\n", ""), "s.yaml");
  BOOST_TEST(spec.invariants == (std::vector<std::string>{"I1"}));
}

BOOST_AUTO_TEST_CASE(yaml_syntax_error_names_the_place) {
  check_error(variant("  - {name: browser, owner: alice}", "  - {name: browser, owner: alice"),
              "10:3", "invalid YAML");
}

BOOST_AUTO_TEST_CASE(unknown_keys_are_refused_with_the_allowed_ones) {
  check_error(variant("seed: 9", "seed: 9\nseeds: 3"), "4:1",
              "unknown key \"seeds\" in scenario (expected one of: name, description, seed");
  check_error(variant("      key: k1", "      key: k1\n      kee: k2"), "14:7",
              "unknown key \"kee\" in create_job");
}

BOOST_AUTO_TEST_CASE(wrong_types_are_refused) {
  check_error(variant("seed: 9", "seed: nine"), "3:7", "seed: expected a non-negative integer");
  check_error(variant("seed: 9", "seed: -1"), "3:7", "non-negative integer");
  check_error(variant("name: two-clicks", "name: [a]"), "1:7",
              "name: expected a string, found a list");
  check_error(variant("  - {name: browser, owner: alice}", "  - browser"), "5:5",
              "client: expected a mapping");
  check_error(variant("{request: 1, status: 201}", "{request: 1, status: 999}"), "19:28",
              "status: expected an integer from 100 to 599");
}

BOOST_AUTO_TEST_CASE(bad_durations_are_refused) {
  check_error(variant("at: 1h", "at: 1 hour"), "15:9", "expected a duration such as 250ms");
  check_error(variant("at: 1h", "at: 5"), "15:9", "units: us, ms, s, m, h");
  check_error(variant("max: 2s", "max: 99999999999999999999h"), "8:30", "expected a duration");
  check_error(variant("{min: 1ms, max: 2s}", "{min: 3s, max: 2s}"), "8:14", "max is less than min");
}

BOOST_AUTO_TEST_CASE(dangling_names_and_impossible_references_are_refused) {
  check_error(variant("      client: browser", "      client: phone"), "12:15",
              "client \"phone\" is not defined under clients");
  check_error(variant("same_job_id: [[1, 2]]", "same_job_id: [[1, 3]]"), "21:21",
              "request 3 does not exist (the timeline sends 2)");
  check_error(variant("invariants: [I1]", "invariants: [I42]"), "23:14",
              "unknown invariant \"I42\"");
}

BOOST_AUTO_TEST_CASE(impossible_timelines_are_refused) {
  // The second entry (at 1h) would run before the first (now at 2h).
  check_error(variant("at: 0ms", "at: 2h"), "15:9", "timeline must be in time order");
  check_error("name: a\nseed: 1\nclients: [{name: b, owner: o}]\ntimeline: []\n", "4:11",
              "timeline: expected at least one action");
}

BOOST_AUTO_TEST_CASE(repeated_keys_and_extra_documents_are_refused) {
  check_error(variant("seed: 9", "seed: 9\nseed: 10"), "4:1", "repeated key \"seed\"");
  check_error(kValid + "---\nname: other\n", "25:1", "expected one YAML document, found 2");
  check_error("", "1:1", "empty scenario");
}

BOOST_AUTO_TEST_CASE(missing_required_keys_name_the_enclosing_mapping) {
  check_error(variant("seed: 9\n", ""), "1:1", "scenario: missing required key \"seed\"");
}

BOOST_AUTO_TEST_CASE(an_unreadable_file_is_a_scenario_error) {
  BOOST_CHECK_THROW(load_scenario_file("/nonexistent/x.yaml"), ScenarioError);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::scenario
