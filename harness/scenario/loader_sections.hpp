#pragma once

// The parts of the scenario loader that live outside loader.cpp. Internal to the loader: the
// public entry points are in loader.hpp.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/node/node.h>

#include "harness/scenario/spec.hpp"
#include "harness/scenario/yaml_reader.hpp"

namespace onejob::scenario::loading {

// The most requests a timeline may send (a run must stay within seconds and memory).
inline constexpr int kMaxRequests = 5'000;

// The `load:` statement: `jobs` creates from generated clients load-1..load-N (owners owner-1..
// owner-M, client c belonging to owner ((c - 1) mod M) + 1), job n (from 0) sent by client
// (n mod N) + 1 at start + n * every (random: plus a seeded draw below every), with the key
// and the body (bodies used in turn) where "{n}" stands for n; a `double_click` share of the
// jobs, spread evenly, sent again `double_click_after` later.
struct LoadSpec {
  std::uint64_t jobs = 0;
  int clients = 1;
  int owners = 1;
  Duration start{0};
  Duration every{0};
  bool random_arrivals = false;
  Ppm double_click = 0;
  Duration double_click_after = std::chrono::milliseconds(200);
  std::optional<std::string> key = "load-{n}";  // null in the file: creates without a key
  std::vector<std::string> bodies;              // JSON text, "{n}" not yet replaced
  SourcePos pos;
};

// Reads `load:` and adds its generated clients to spec.clients. REQUIRES: spec.seed,
// spec.providers and the named clients already read.
// At most `max_jobs` jobs (kMaxLoadJobs unless the caller lowers it).
LoadSpec read_load(const YamlReader& reader, const YAML::Node& node, ScenarioSpec& spec,
                   std::uint64_t max_jobs);

// Makes spec.load: the load's create_job steps, in time order, numbered after the written
// timeline's steps. REQUIRES: the written timeline already read.
void expand_load(const LoadSpec& load, ScenarioSpec& spec);

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
