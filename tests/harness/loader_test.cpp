#include "harness/scenario/loader.hpp"

#include <utility>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"
#include "harness/scenario/yaml_reader.hpp"
#include "harness/scenario/yaml_writer.hpp"

#include "tests/support/scenario_text.hpp"

namespace onejob::scenario {
namespace {

using test::check_error;
using test::error_of;
using test::replace_first;

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

// Every key of the language, topology and faults included; sections in an order that differs
// from the order the loader reads them in.
const std::string kFull = R"(name: everything
seed: 7
faults:
  - {at: 5s, crash: worker-1}
  - {at: 20s, restart: worker-1}
  - {from: 1s, until: 10s, partition: node_store, nodes: [worker-1, api-1], direction: both}
  - {from: 2s, until: 3s, partition: worker_provider, nodes: [beta, worker-2], direction: requests}
  - {from: 0s, until: 1h, partition: client_lb, nodes: [browser], direction: responses}
  - {at: 1s, crash: reconciler}
topology: {api_nodes: 2, workers: 2, reconciler: true}
duration: 1h
swarm: true
policy:
  attempt_deadline: 10s
  lease: 30s
  reconcile_period: 5s
  status_timeout: 4s
  worker_poll: 100ms
  worker_capacity: 8
  attempt_limit: 3
  client_timeout: 6s
  client_retries: 2
  lb_timeout: 3s
  lb_retries: 1
providers:
  - name: alpha
    latency: {min: 10ms, max: 50ms}
    certify: true
    max_prompt_tokens: 1000000
    prompt_template: "Operation: {{operation}}\nInput: {{input}}"
    default: {outcome: error, latency: 2s}
    script:
      - hang
      - {outcome: ok, latency: 30s}
      - malformed
      - hallucinated_key
      - wrong_operation
  - name: beta
    latency: 20ms
    default: ok
network:
  client_lb: {latency: 5ms, drop_request: 10%, drop_response: 0.1, duplicate: 1%, reorder: 2.5%, reorder_window: 40ms}
  lb_api: {latency: {min: 1ms, max: 3ms}, drop_response: 100%}
  node_store: {latency: 1ms, commit_unknown: 2%}
  worker_provider: {duplicate: 0, reorder: 1}
clients:
  - {name: browser, owner: alice}
timeline:
  - at: 0ms
    create_job: {client: browser, key: k1, body: {operation: classify, provider: alpha, input: {}}}
)";

// Replaces the first occurrence of `from` in the valid scenario.
std::string variant(const std::string& from, const std::string& to) {
  return replace_first(kValid, from, to);
}

// Replaces the first occurrence of `from` in the full scenario.
std::string full_variant(const std::string& from, const std::string& to) {
  return replace_first(kFull, from, to);
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
  std::vector<std::string> all;
  for (const auto& invariant : check::all_invariants()) all.emplace_back(invariant.id);
  BOOST_TEST(spec.invariants == all);
  BOOST_TEST(all.size() > 1u);
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
  check_error(variant("seed: 9", "seed: 18446744073709551616"), "3:7",
              "seed: 18446744073709551616 is too large for a 64-bit count");
  check_error(variant("name: two-clicks", "name: [a]"), "1:7",
              "name: expected a string, found a list");
  check_error(variant("  - {name: browser, owner: alice}", "  - browser"), "5:5",
              "client: expected a mapping");
  check_error(variant("{request: 1, status: 201}", "{request: 1, status: 999}"), "19:28",
              "status: expected an integer from 100 to 599");
}

BOOST_AUTO_TEST_CASE(pad_to_makes_a_body_exactly_that_long) {
  const auto spec = parse_scenario(
      variant("raw_body: \"not json\"}", "raw_body: \"not json\", pad_to: 100}"), "s.yaml");
  const auto& body = spec.timeline.at(1).create_job.body;
  BOOST_TEST(body.size() == 100u);
  BOOST_TEST(body == "not json" + std::string(92, ' '));
  // Shorter than the body itself, over 2 MiB for one body, or over 8 MiB in all.
  check_error(variant("raw_body: \"not json\"}", "raw_body: \"not json\", pad_to: 7}"), "16:65",
              "pad_to: expected 8 to 2097152 bytes");
  check_error(variant("raw_body: \"not json\"}", "raw_body: \"not json\", pad_to: 2097153}"),
              "16:65", "pad_to: expected 8 to 2097152 bytes");
  std::string many;
  for (int i = 0; i < 5; ++i) {
    many += "  - {at: 2h, create_job: {client: browser, raw_body: \"x\", pad_to: 2097152}}\n";
  }
  check_error(variant("expect:\n", many + "expect:\n"), "21:67",
              "padded by more than 8388608 bytes");
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

BOOST_AUTO_TEST_CASE(new_sections_default_to_the_struct_defaults) {
  const auto spec = parse_scenario(kValid, "s.yaml");
  const ScenarioSpec defaults;
  BOOST_TEST(!spec.duration.has_value());
  BOOST_TEST(!spec.swarm);
  BOOST_TEST(spec.topology.api_nodes == defaults.topology.api_nodes);
  BOOST_TEST(spec.topology.workers == defaults.topology.workers);
  BOOST_TEST(spec.topology.reconciler == defaults.topology.reconciler);
  BOOST_TEST(spec.policy.lease.count() == defaults.policy.lease.count());
  BOOST_TEST(spec.policy.client_retries == defaults.policy.client_retries);
  BOOST_TEST(spec.network.node_store.latency.max.count() ==
             defaults.network.node_store.latency.max.count());
  BOOST_TEST(spec.network.client_lb.drop_request == 0u);
  BOOST_TEST(spec.node_faults.empty());
  BOOST_TEST(spec.partitions.empty());
}

BOOST_AUTO_TEST_CASE(loads_topology_policy_and_duration) {
  const auto spec = parse_scenario(kFull, "s.yaml");
  BOOST_TEST(spec.duration.value_or(Duration(0)).count() == 3'600'000'000);
  BOOST_TEST(spec.swarm);
  BOOST_TEST(spec.topology.api_nodes == 2);
  BOOST_TEST(spec.topology.workers == 2);
  BOOST_TEST(spec.topology.reconciler);
  const auto& policy = spec.policy;
  BOOST_TEST(policy.attempt_deadline.count() == 10'000'000);
  BOOST_TEST(policy.lease.count() == 30'000'000);
  BOOST_TEST(policy.reconcile_period.count() == 5'000'000);
  BOOST_TEST(policy.status_timeout.count() == 4'000'000);
  BOOST_TEST(policy.worker_poll.count() == 100'000);
  BOOST_TEST(policy.worker_capacity == 8);
  BOOST_TEST(policy.attempt_limit == 3);
  BOOST_TEST(policy.client_timeout.count() == 6'000'000);
  BOOST_TEST(policy.client_retries == 2);
  BOOST_TEST(policy.lb_timeout.count() == 3'000'000);
  BOOST_TEST(policy.lb_retries == 1);
}

BOOST_AUTO_TEST_CASE(
    recertifications_load_in_time_order_and_change_the_default_from_their_instant) {
  const std::string with =
      full_variant("    latency: 20ms\n    default: ok\n",
                   "    latency: 20ms\n    default: ok\n"
                   "    recertify: [{at: 30s, default: malformed}, {at: 1m}]\n");
  const auto spec = parse_scenario(with, "s.yaml");
  const auto& beta = spec.providers.at(1);
  BOOST_REQUIRE(beta.recertify.size() == 2u);
  BOOST_TEST(beta.recertify[0].at.count() == 30'000'000);
  BOOST_TEST((beta.recertify[0].default_call->outcome == ProviderOutcome::malformed));
  BOOST_TEST(beta.recertify[1].at.count() == 60'000'000);
  BOOST_TEST(!beta.recertify[1].default_call.has_value());
  BOOST_TEST((beta.default_at(std::chrono::seconds(29)).outcome == ProviderOutcome::ok));
  BOOST_TEST((beta.default_at(std::chrono::seconds(30)).outcome == ProviderOutcome::malformed));
  BOOST_TEST((beta.default_at(std::chrono::hours(1)).outcome == ProviderOutcome::malformed));
  // Written back (a repro file), it loads as the same scenario.
  BOOST_TEST(to_yaml(parse_scenario(to_yaml(spec), "again.yaml")) == to_yaml(spec));
  BOOST_TEST(to_yaml(spec).find("recertify:") != std::string::npos);
  check_error(
      full_variant("    default: ok\n", "    default: ok\n    recertify: [{at: 2s}, {at: 2s}]\n"),
      "41:32", "recertify at: expected a later instant than the item before");
  check_error(
      full_variant("    default: ok\n", "    default: ok\n    recertify: [{at: 2s, when: 1s}]\n"),
      "41:26", "unknown key \"when\" in recertify item");
}

BOOST_AUTO_TEST_CASE(plausible_on_lists_operations_once_each_and_is_written_back) {
  const auto spec = parse_scenario(
      full_variant("    default: ok\n", "    default: ok\n    plausible_on: [extract, classify]\n"),
      "s.yaml");
  BOOST_TEST(
      (spec.providers.at(1).plausible_on == std::vector<std::string>{"extract", "classify"}));
  BOOST_TEST(spec.providers.at(0).plausible_on.empty());
  BOOST_TEST(to_yaml(parse_scenario(to_yaml(spec), "again.yaml")) == to_yaml(spec));
  BOOST_TEST(to_yaml(spec).find("plausible_on: [extract, classify]") != std::string::npos);
  check_error(full_variant("    default: ok\n", "    default: ok\n    plausible_on: [translate]\n"),
              "41:20", "plausible_on item: expected an operation the API offers");
  check_error(
      full_variant("    default: ok\n", "    default: ok\n    plausible_on: [extract, extract]\n"),
      "41:29", "plausible_on item: \"extract\" is listed twice");
  check_error(full_variant("    default: ok\n", "    default: ok\n    plausible_on: extract\n"),
              "41:19", "plausible_on: expected a list");
}

BOOST_AUTO_TEST_CASE(loads_providers_with_scripts_and_outcomes) {
  const auto spec = parse_scenario(kFull, "s.yaml");
  BOOST_REQUIRE(spec.providers.size() == 2u);
  const auto& alpha = spec.providers[0];
  BOOST_TEST(alpha.name == "alpha");
  BOOST_TEST(alpha.latency.min.count() == 10'000);
  BOOST_TEST(alpha.latency.max.count() == 50'000);
  BOOST_TEST(alpha.certify);
  BOOST_TEST(alpha.max_prompt_tokens == 1'000'000u);
  BOOST_TEST(alpha.prompt_template.value_or("") == "Operation: {{operation}}\nInput: {{input}}");
  BOOST_TEST((alpha.default_call.outcome == ProviderOutcome::error));
  BOOST_REQUIRE(alpha.default_call.latency.has_value());
  BOOST_TEST(alpha.default_call.latency->min.count() == 2'000'000);
  BOOST_TEST(alpha.default_call.latency->max.count() == 2'000'000);
  BOOST_REQUIRE(alpha.script.size() == 5u);
  BOOST_TEST((alpha.script[0].outcome == ProviderOutcome::hang));
  BOOST_TEST(!alpha.script[0].latency.has_value());
  BOOST_TEST((alpha.script[1].outcome == ProviderOutcome::ok));
  BOOST_TEST(alpha.script[1].latency.value_or(LatencySpec{}).min.count() == 30'000'000);
  BOOST_TEST((alpha.script[2].outcome == ProviderOutcome::malformed));
  BOOST_TEST((alpha.script[3].outcome == ProviderOutcome::hallucinated_key));
  BOOST_TEST((alpha.script[4].outcome == ProviderOutcome::wrong_operation));
  const auto& beta = spec.providers[1];
  const ProviderSpec defaults;
  BOOST_TEST(beta.latency.min.count() == 20'000);
  BOOST_TEST(beta.latency.max.count() == 20'000);
  BOOST_TEST(!beta.certify);
  BOOST_TEST(beta.max_prompt_tokens == defaults.max_prompt_tokens);
  BOOST_TEST(!beta.prompt_template.has_value());
  BOOST_TEST((beta.default_call.outcome == ProviderOutcome::ok));
  BOOST_TEST(!beta.default_call.latency.has_value());
  BOOST_TEST(beta.script.empty());
}

BOOST_AUTO_TEST_CASE(loads_every_network_link) {
  const auto spec = parse_scenario(kFull, "s.yaml");
  const auto& client_lb = spec.network.client_lb;
  BOOST_TEST(client_lb.latency.min.count() == 5'000);
  BOOST_TEST(client_lb.latency.max.count() == 5'000);
  BOOST_TEST(client_lb.drop_request == 100'000u);
  BOOST_TEST(client_lb.drop_response == 100'000u);
  BOOST_TEST(client_lb.duplicate == 10'000u);
  BOOST_TEST(client_lb.reorder == 25'000u);
  BOOST_TEST(client_lb.reorder_window.count() == 40'000);
  BOOST_TEST(client_lb.commit_unknown == 0u);
  const auto& lb_api = spec.network.lb_api;
  BOOST_TEST(lb_api.latency.min.count() == 1'000);
  BOOST_TEST(lb_api.latency.max.count() == 3'000);
  BOOST_TEST(lb_api.drop_request == 0u);
  BOOST_TEST(lb_api.drop_response == kPpmOne);
  BOOST_TEST(lb_api.reorder_window.count() == LinkSpec{}.reorder_window.count());
  const auto& node_store = spec.network.node_store;
  BOOST_TEST(node_store.latency.max.count() == 1'000);
  BOOST_TEST(node_store.commit_unknown == 20'000u);
  const auto& worker_provider = spec.network.worker_provider;
  BOOST_TEST(worker_provider.duplicate == 0u);
  BOOST_TEST(worker_provider.reorder == kPpmOne);
  BOOST_TEST(worker_provider.latency.max.count() == LinkSpec{}.latency.max.count());
}

BOOST_AUTO_TEST_CASE(loads_faults_in_file_order) {
  const auto spec = parse_scenario(kFull, "s.yaml");
  BOOST_REQUIRE(spec.node_faults.size() == 3u);
  BOOST_TEST(spec.node_faults[0].at.count() == 5'000'000);
  BOOST_TEST((spec.node_faults[0].kind == NodeFaultSpec::Kind::crash));
  BOOST_TEST(spec.node_faults[0].node == "worker-1");
  BOOST_TEST(spec.node_faults[0].pos.line == 4);
  BOOST_TEST(spec.node_faults[0].pos.column == 5);
  BOOST_TEST(spec.node_faults[1].at.count() == 20'000'000);
  BOOST_TEST((spec.node_faults[1].kind == NodeFaultSpec::Kind::restart));
  BOOST_TEST(spec.node_faults[1].node == "worker-1");
  BOOST_TEST(spec.node_faults[2].node == "reconciler");
  BOOST_TEST(spec.node_faults[2].at.count() == 1'000'000);
  BOOST_REQUIRE(spec.partitions.size() == 3u);
  const auto& store = spec.partitions[0];
  BOOST_TEST((store.link == LinkKind::node_store));
  BOOST_TEST(store.nodes == (std::vector<std::string>{"worker-1", "api-1"}));
  BOOST_TEST((store.direction == PartitionSpec::Direction::both));
  BOOST_TEST(store.from.count() == 1'000'000);
  BOOST_TEST(store.until.count() == 10'000'000);
  BOOST_TEST(store.pos.line == 6);
  const auto& provider = spec.partitions[1];
  BOOST_TEST((provider.link == LinkKind::worker_provider));
  BOOST_TEST(provider.nodes == (std::vector<std::string>{"beta", "worker-2"}));
  BOOST_TEST((provider.direction == PartitionSpec::Direction::requests));
  const auto& client = spec.partitions[2];
  BOOST_TEST((client.link == LinkKind::client_lb));
  BOOST_TEST(client.nodes == (std::vector<std::string>{"browser"}));
  BOOST_TEST((client.direction == PartitionSpec::Direction::responses));
  BOOST_TEST(client.until.count() == 3'600'000'000);
}

BOOST_AUTO_TEST_CASE(partition_direction_defaults_to_both) {
  const auto spec = parse_scenario(full_variant(", direction: requests}", "}"), "s.yaml");
  BOOST_TEST((spec.partitions[1].direction == PartitionSpec::Direction::both));
}

BOOST_AUTO_TEST_CASE(probabilities_round_to_the_nearest_ppm) {
  BOOST_TEST(parse_probability("2.5%").ppm.value_or(1) == 25'000u);
  BOOST_TEST(parse_probability("0.1").ppm.value_or(1) == 100'000u);
  BOOST_TEST(parse_probability("0").ppm.value_or(1) == 0u);
  BOOST_TEST(parse_probability("1").ppm.value_or(1) == kPpmOne);
  BOOST_TEST(parse_probability("100%").ppm.value_or(1) == kPpmOne);
  BOOST_TEST(parse_probability("0.0000004").ppm.value_or(1) == 0u);
  BOOST_TEST(parse_probability("0.0000006").ppm.value_or(0) == 1u);
  BOOST_TEST(parse_probability("0.00005%").ppm.value_or(1) == 1u);
  for (const char* bad :
       {"", "%", "ten", "10 %", "0.1%%", "nan", "inf", "+0.1", "1.5", "-1%", "100.1%", "0x1"}) {
    BOOST_TEST_CONTEXT(bad) { BOOST_TEST(!parse_probability(bad).ppm.has_value()); }
  }
}

BOOST_AUTO_TEST_CASE(unknown_key_inside_policy_is_refused) {
  check_error(full_variant("  lb_retries: 1\n", "  lb_retries: 1\n  lb_retry: 2\n"), "25:3",
              "unknown key \"lb_retry\" in policy (expected one of: attempt_deadline, lease,");
}

BOOST_AUTO_TEST_CASE(unknown_outcome_name_is_refused) {
  check_error(full_variant("      - malformed", "      - explode"), "35:9",
              "script item: unknown outcome \"explode\" (expected one of: ok, error, malformed, "
              "hallucinated_key, wrong_operation, hang, plausible, garbled_refusal, "
              "garbled_answer)");
  check_error(full_variant("default: ok", "default: fine"), "40:14",
              "default: unknown outcome \"fine\"");
  check_error(full_variant("{outcome: error,", "{outcome: errors,"), "31:24",
              "default outcome: unknown outcome \"errors\"");
}

BOOST_AUTO_TEST_CASE(probability_over_100_percent_is_refused) {
  check_error(full_variant("drop_request: 10%", "drop_request: 150%"), "42:43",
              "network.client_lb.drop_request: 150% is more than 100%");
  check_error(full_variant("drop_response: 0.1", "drop_response: 1.5"), "42:63",
              "network.client_lb.drop_response: 1.5 is more than 1");
  check_error(full_variant("drop_request: 10%", "drop_request: -1%"), "42:43", "is negative");
  check_error(full_variant("drop_request: 10%", "drop_request: often"), "42:43",
              "expected a probability: a percentage such as 10% or 2.5%, or a number from 0 to 1");
}

BOOST_AUTO_TEST_CASE(commit_unknown_on_a_non_store_link_is_refused) {
  check_error(full_variant("{duplicate: 0, reorder: 1}", "{duplicate: 0, commit_unknown: 1%}"),
              "45:51",
              "network.worker_provider.commit_unknown: only allowed on network.node_store");
}

BOOST_AUTO_TEST_CASE(lease_not_longer_than_attempt_deadline_is_refused) {
  check_error(full_variant("lease: 30s", "lease: 10s"), "15:10",
              "policy.lease: expected longer than policy.attempt_deadline (10s), found 10s");
  // Without a lease of its own, the default lease is judged at the deadline that outgrows it.
  check_error(replace_first(full_variant("  lease: 30s\n", ""), "attempt_deadline: 10s",
                            "attempt_deadline: 90s"),
              "14:21",
              "expected longer than policy.attempt_deadline (90s), found 1m (the default)");
}

BOOST_AUTO_TEST_CASE(crash_of_an_unknown_node_is_refused) {
  check_error(full_variant("{at: 5s, crash: worker-1}", "{at: 5s, crash: worker-3}"), "4:21",
              "crash: unknown node \"worker-3\" (the topology has: api-1, api-2, worker-1, "
              "worker-2, reconciler)");
  check_error(full_variant("reconciler: true}", "reconciler: false}"), "9:21",
              "crash: unknown node \"reconciler\"");
}

BOOST_AUTO_TEST_CASE(impossible_crash_restart_timelines_are_refused) {
  check_error(full_variant("  - {at: 5s, crash: worker-1}\n", ""), "4:5",
              "impossible timeline: restart of worker-1 at 20s, but it is not crashed then");
  // In time order the restart (20s) comes before the crash (25s), whatever the file order.
  check_error(full_variant("{at: 5s, crash: worker-1}", "{at: 25s, crash: worker-1}"), "5:5",
              "impossible timeline: restart of worker-1 at 20s");
  check_error(
      full_variant("{at: 20s, restart: worker-1}", "{at: 20s, crash: worker-1}"), "5:5",
      "impossible timeline: crash of worker-1 at 20s, but it is already crashed (since 5s)");
}

BOOST_AUTO_TEST_CASE(fault_with_two_kinds_or_none_is_refused) {
  check_error(
      full_variant("{at: 5s, crash: worker-1}", "{at: 5s, crash: worker-1, restart: api-1}"), "4:5",
      "fault: expected exactly one of crash, restart, partition or pause, found crash, restart");
  check_error(full_variant("{at: 5s, crash: worker-1}", "{at: 5s}"), "4:5",
              "expected exactly one of crash, restart, partition or pause, found none");
  check_error(
      full_variant("{at: 5s, crash: worker-1}", "{at: 5s, crash: worker-1, nodes: [api-1]}"),
      "4:31", "unknown key \"nodes\" in crash fault (expected one of: at, crash)");
}

BOOST_AUTO_TEST_CASE(pause_faults_load_and_bad_ones_are_refused) {
  const auto spec = parse_scenario(
      full_variant("{at: 1s, crash: reconciler}", "{from: 2s, until: 4s, pause: reconciler}"),
      "s.yaml");
  BOOST_REQUIRE_EQUAL(spec.pauses.size(), 1u);
  BOOST_TEST(spec.pauses[0].node == "reconciler");
  BOOST_TEST(spec.pauses[0].from.count() == 2'000'000);
  BOOST_TEST(spec.pauses[0].until.count() == 4'000'000);
  check_error(full_variant("{at: 1s, crash: reconciler}", "{from: 2s, until: 4s, pause: lb}"),
              "9:34", "pause: unknown node \"lb\" (the topology has: ");
  check_error(full_variant("{at: 1s, crash: reconciler}", "{from: 2s, until: 2s, pause: api-1}"),
              "9:23", "until: expected a time after from (2s), found 2s");
  check_error(full_variant("{at: 1s, crash: reconciler}",
                           "{from: 2s, until: 9s, pause: api-1}\n  - {from: 8s, until: 12s, "
                           "pause: api-1}"),
              "10:5", "pause: api-1 is already paused from 2s until 9s");
  check_error(full_variant("{at: 1s, crash: reconciler}", "{at: 2s, pause: api-1}"), "9:6",
              "unknown key \"at\" in pause fault (expected one of: from, until, pause)");
}

BOOST_AUTO_TEST_CASE(connection_reset_loads_on_every_link) {
  const auto spec =
      parse_scenario(full_variant("lb_api: {latency: {min: 1ms, max: 3ms}, drop_response: 100%}",
                                  "lb_api: {latency: {min: 1ms, max: 3ms}, reset: 100%}"),
                     "s.yaml");
  BOOST_TEST(spec.network.lb_api.reset == 1'000'000u);
  check_error(full_variant("lb_api: {latency: {min: 1ms, max: 3ms}, drop_response: 100%}",
                           "lb_api: {latency: {min: 1ms, max: 3ms}, reset: 101%}"),
              "43:50", "network.lb_api.reset:");
}

BOOST_AUTO_TEST_CASE(partition_until_not_after_from_is_refused) {
  check_error(full_variant("{from: 1s, until: 10s,", "{from: 1s, until: 1s,"), "6:23",
              "until: expected a time after from (1s), found 1s");
}

BOOST_AUTO_TEST_CASE(partition_of_a_node_not_on_the_link_is_refused) {
  check_error(full_variant("nodes: [browser]", "nodes: [api-1]"), "8:57",
              "nodes: \"api-1\" is not on this link (its nodes: browser)");
  check_error(full_variant("partition: node_store", "partition: store"), "6:39",
              "partition: unknown link \"store\"");
}

BOOST_AUTO_TEST_CASE(a_provider_named_like_a_node_is_refused) {
  // worker_provider partitions list workers and providers together, so the names must differ.
  check_error(full_variant("  - name: beta", "  - name: worker-2"), "38:11",
              "provider name: \"worker-2\" is already the name of a node");
}

BOOST_AUTO_TEST_CASE(faults_after_the_end_of_the_run_are_refused) {
  check_error(full_variant("{at: 20s, restart", "{at: 2h, restart"), "5:10",
              "at: 2h is after the end of the run (duration: 1h)");
}

BOOST_AUTO_TEST_CASE(api_nodes_out_of_range_are_refused) {
  check_error(full_variant("{api_nodes: 2,", "{api_nodes: 0,"), "10:23",
              "topology.api_nodes: expected an integer from 1 to 16");
  check_error(full_variant("workers: 2,", "workers: 17,"), "10:35",
              "topology.workers: expected an integer from 0 to 16");
}

BOOST_AUTO_TEST_CASE(booleans_and_prompt_templates_are_checked) {
  check_error(full_variant("swarm: true", "swarm: yes"), "12:8", "swarm: expected true or false");
  check_error(full_variant("{{operation}}\\nInput: {{input}}", "{{operation}}"), "30:22",
              "prompt_template: expected the {{input}} placeholder");
  check_error(full_variant("duration: 1h", "duration: 0s"), "11:11",
              "duration: expected more than 0");
}

BOOST_AUTO_TEST_CASE(times_and_run_sizes_past_the_limits_are_refused) {
  check_error(replace_first(kValid, "seed: 9", "seed: 9\nduration: 999999999h"), "4:11",
              "duration: expected at most 720h (the longest simulated span), found 999999999h");
  check_error(
      replace_first(kValid, "seed: 9", "seed: 9\nduration: 700h\npolicy: {worker_poll: 1us}"),
      "4:11", "the run would wake its workers and reconciler");
}

BOOST_AUTO_TEST_CASE(a_document_starting_with_a_comma_is_refused_before_yaml_cpp_sees_it) {
  // yaml-cpp 0.7 exhausts memory on these; the fuzzer found the first.
  check_error(",ame: x\n", "1:1", "a document cannot start with ','");
  check_error("# comment\n\n  ,a\n", "3:3", "a document cannot start with ','");
  // A top-level block sequence followed by a line starting with ',' (libFuzzer's find).
  check_error("- &a4*a\n, ", "1:1", "scenario: expected a mapping, found a list");
  check_error("---\n  - a\n  ,", "2:3", "scenario: expected a mapping, found a list");
  // Quoted scalars that make yaml-cpp allocate without bound (libFuzzer's find): refused once
  // parsing has allocated 256 MB.
  check_error("\n" + std::string(34, '"') + ",\"\"\"\"-midp", "1:1",
              "invalid YAML: parsing it took more than 256 MB");
  check_error(kValid + "--- ,a\n", "24:5", "a document cannot start with ','");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::scenario
