#pragma once

// The parts of the scenario loader that live outside loader.cpp. Internal to the loader: the
// public entry points are in loader.hpp.

#include <string>
#include <vector>

#include <yaml-cpp/node/node.h>

#include "harness/scenario/spec.hpp"
#include "harness/scenario/yaml_reader.hpp"

namespace onejob::scenario::loading {

// The most requests a timeline may send (a run must stay within seconds and memory).
inline constexpr int kMaxRequests = 5'000;

// The `network:` mapping: one optional entry per link, each key optional.
NetworkSpec read_network(const YamlReader& reader, const YAML::Node& node);

// The `faults:` list into spec.node_faults and spec.partitions, file order kept.
// REQUIRES: spec.duration, spec.topology, spec.clients and spec.providers already read, since
// fault times and node names are checked against them.
void read_faults(const YamlReader& reader, const YAML::Node& node, ScenarioSpec& spec);

// The value of a get_job / retry / cancel timeline entry into `entry` (client, target request,
// attempt number, provider). REQUIRES: spec.clients and the earlier timeline already read.
void read_job_action(const YamlReader& reader, const YAML::Node& node, TimelineEntry& entry,
                     const ScenarioSpec& spec);

// expect.final: the end state of the jobs of create_job requests.
std::vector<FinalJobExpectation> read_final_jobs(const YamlReader& reader, const YAML::Node& node,
                                                 const ScenarioSpec& spec);

// `expect:` into spec.expect. REQUIRES: spec.timeline already read.
void read_expectations(const YamlReader& reader, const YAML::Node& node, ScenarioSpec& spec);

// `invariants:` (a list of ids, or all) into spec.invariants.
void read_invariants(const YamlReader& reader, const YAML::Node& node, ScenarioSpec& spec);

// `requires:` into spec.required: registered safety clauses of rules the scenario checks.
// REQUIRES: spec.invariants already read.
void read_requires(const YamlReader& reader, const YAML::Node& node, ScenarioSpec& spec);

}  // namespace onejob::scenario::loading
