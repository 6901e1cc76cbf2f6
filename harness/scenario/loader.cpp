#include "harness/scenario/loader.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "harness/check/api_routes.hpp"
#include "harness/check/invariant.hpp"
#include "harness/scenario/loader_sections.hpp"
#include "harness/scenario/parse_budget.hpp"
#include "harness/scenario/yaml_reader.hpp"

namespace onejob::scenario {
namespace {

// A run's size limits, so that the largest valid scenario still runs in seconds and well under
// 256 MB: timeline steps, and periodic wake-ups of workers and the reconciler over the run.
constexpr std::int64_t kMaxWakeups = 20'000'000;
// The file itself: its size, and its values once aliases are expanded, and their nesting.
constexpr std::size_t kMaxScenarioBytes = 1 << 20;  // 1 MiB
constexpr std::size_t kMaxPaddedBody = 2 << 20;     // pad_to: one body, 2 MiB
constexpr std::size_t kMaxPaddingBytes = 8 << 20;   // pad_to: all bodies of a scenario, 8 MiB
constexpr std::size_t kMaxYamlValues = 200'000;
constexpr int kMaxYamlDepth = 100;
// Bytes the YAML library may allocate, in all, to parse one file (a 1 MiB file needs far less).
constexpr std::size_t kMaxParseBytes = std::size_t{256} << 20;

// In the order the error message lists them; the names are spec.cpp's.
constexpr ProviderOutcome kOutcomes[] = {
    ProviderOutcome::ok,
    ProviderOutcome::error,
    ProviderOutcome::malformed,
    ProviderOutcome::hallucinated_key,
    ProviderOutcome::wrong_operation,
    ProviderOutcome::hang,
    ProviderOutcome::plausible,
    ProviderOutcome::garbled_refusal,
    ProviderOutcome::garbled_answer,
};

bool is_valid_name(std::string_view name) {
  return !name.empty() && name.size() <= 100 && std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

class Loader {
 public:
  Loader(const std::string& file, std::uint64_t max_load_jobs)
      : reader_(file), max_load_jobs_(max_load_jobs) {}

  ScenarioSpec load(const YAML::Node& root);

 private:
  Duration positive_duration(const YAML::Node& node, std::string_view what);
  // The run must fit the time budget: its end within kMaxSpan, and the periodic wake-ups of its
  // workers and reconciler over that span at most kMaxWakeups (reported at `where`).
  void check_run_size(const YAML::Node& where);
  void load_topology(const YAML::Node& node);
  void load_policy(const YAML::Node& node);
  void load_providers(const YAML::Node& node);
  ProviderSpec load_provider(const YAML::Node& node);
  ProviderCallSpec load_provider_call(const YAML::Node& node, const std::string& what);
  ProviderOutcome load_outcome(const YAML::Node& node, const std::string& what);
  void load_clients(const YAML::Node& node);
  void load_defects(const YAML::Node& node);
  void load_timeline(const YAML::Node& node);
  CreateJobAction load_create_job(const YAML::Node& node);

  YamlReader reader_;
  std::uint64_t max_load_jobs_;
  ScenarioSpec spec_;
  std::size_t padded_bytes_ = 0;  // create bodies' padding (pad_to), in all
};

void Loader::load_defects(const YAML::Node& node) {
  reader_.expect_sequence(node, "defects (a list of defect names such as skip-contract)");
  for (const auto& item : node) {
    const std::string name = reader_.string(item, "defect");
    const auto defect = find_defect(name);
    if (!defect) {
      reader_.fail(item, "unknown defect \"" + name + "\" ('onejob defects' lists them)");
    }
    if (spec_.defects.has(*defect)) reader_.fail(item, "defect \"" + name + "\" is listed twice");
    spec_.defects.set(*defect);
  }
}

ScenarioSpec Loader::load(const YAML::Node& root) {
  YamlMap top(reader_, root, "scenario",
              {"name", "description", "seed", "duration", "quiet", "swarm", "stop_when_quiescent",
               "defects", "topology", "policy", "providers", "clients", "load", "network", "faults",
               "timeline", "expect", "invariants", "requires"});
  spec_.file = reader_.file();
  const auto name = top.require("name");
  spec_.name = reader_.string(name, "name");
  spec_.name_pos = reader_.pos(name);
  if (!is_valid_name(spec_.name)) {
    reader_.fail(name, "name: expected 1-100 characters from [A-Za-z0-9._-]");
  }
  if (auto description = top.get("description")) {
    spec_.description = reader_.string(*description, "description");
  }
  spec_.seed = reader_.unsigned_integer(top.require("seed"), "seed");
  // Sections are read in this order whatever their order in the file: later ones check names
  // and times against earlier ones (faults against duration, topology, clients and providers).
  if (auto duration = top.get("duration")) {
    spec_.duration = positive_duration(*duration, "duration");
  }
  if (auto quiet = top.get("quiet")) spec_.quiet = positive_duration(*quiet, "quiet");
  if (auto swarm = top.get("swarm")) spec_.swarm = reader_.boolean(*swarm, "swarm");
  if (auto stop = top.get("stop_when_quiescent")) {
    spec_.stop_when_quiescent = reader_.boolean(*stop, "stop_when_quiescent");
  }
  if (auto defects = top.get("defects")) load_defects(*defects);
  if (auto topology = top.get("topology")) load_topology(*topology);
  if (auto policy = top.get("policy")) load_policy(*policy);
  if (auto providers = top.get("providers")) load_providers(*providers);
  const auto load = top.get("load");
  // With a load, the named clients and the written timeline are optional: it brings its own.
  if (auto clients = top.get("clients"); clients || !load) load_clients(top.require("clients"));
  std::optional<loading::LoadSpec> generated;
  if (load) generated = loading::read_load(reader_, *load, spec_, max_load_jobs_);
  if (auto network = top.get("network")) spec_.network = loading::read_network(reader_, *network);
  if (auto faults = top.get("faults")) loading::read_faults(reader_, *faults, spec_);
  if (auto timeline = top.get("timeline"); timeline || !load) {
    load_timeline(top.require("timeline"));
  }
  if (generated) loading::expand_load(*generated, spec_);
  if (auto expect = top.get("expect")) loading::read_expectations(reader_, *expect, spec_);
  if (auto invariants = top.get("invariants")) {
    loading::read_invariants(reader_, *invariants, spec_);
  } else {
    for (const auto& invariant : check::all_invariants()) {
      spec_.invariants.emplace_back(invariant.id);
    }
  }
  if (auto required = top.get("requires")) loading::read_requires(reader_, *required, spec_);
  if (auto duration = top.get("duration")) {
    check_run_size(*duration);
  } else {
    check_run_size(load && !top.get("timeline") ? *load : top.require("timeline"));
  }
  return std::move(spec_);
}

void Loader::check_run_size(const YAML::Node& where) {
  const Duration end = run_end(spec_);
  if (end > kMaxSpan) {
    reader_.fail(where, "the run would last " + format_duration(end) +
                            " of simulated time; at most " + format_duration(kMaxSpan));
  }
  const auto& policy = spec_.policy;
  const std::int64_t wakeups = end / policy.worker_poll * spec_.topology.workers +
                               (spec_.topology.reconciler ? end / policy.reconcile_period : 0);
  if (wakeups > kMaxWakeups) {
    reader_.fail(where, "the run would wake its workers and reconciler " + std::to_string(wakeups) +
                            " times over " + format_duration(end) + " (policy.worker_poll " +
                            format_duration(policy.worker_poll) + ", reconcile_period " +
                            format_duration(policy.reconcile_period) + "); at most " +
                            std::to_string(kMaxWakeups) + ": shorten the run or poll less often");
  }
}

Duration Loader::positive_duration(const YAML::Node& node, std::string_view what) {
  const Duration value = reader_.duration(node, what);
  if (value <= Duration(0)) reader_.fail(node, std::string(what) + ": expected more than 0");
  return value;
}

void Loader::load_topology(const YAML::Node& node) {
  YamlMap topology(reader_, node, "topology", {"api_nodes", "workers", "reconciler"});
  if (auto api_nodes = topology.get("api_nodes")) {
    spec_.topology.api_nodes = reader_.small_integer(*api_nodes, "topology.api_nodes", 1, 16);
  }
  if (auto workers = topology.get("workers")) {
    spec_.topology.workers = reader_.small_integer(*workers, "topology.workers", 0, 16);
  }
  if (auto reconciler = topology.get("reconciler")) {
    spec_.topology.reconciler = reader_.boolean(*reconciler, "topology.reconciler");
  }
}

void Loader::load_policy(const YAML::Node& node) {
  YamlMap map(reader_, node, "policy",
              {"attempt_deadline", "lease", "reconcile_period", "status_timeout", "worker_poll",
               "worker_idle_poll", "worker_capacity", "attempt_limit", "client_timeout",
               "client_retries", "lb_timeout", "lb_retries"});
  auto& policy = spec_.policy;
  const auto read_duration = [&](std::string_view key, Duration& field) {
    if (auto value = map.get(key)) field = positive_duration(*value, "policy." + std::string(key));
  };
  const auto read_count = [&](std::string_view key, int& field, int min, int max) {
    if (auto value = map.get(key)) {
      field = reader_.small_integer(*value, "policy." + std::string(key), min, max);
    }
  };
  read_duration("attempt_deadline", policy.attempt_deadline);
  read_duration("lease", policy.lease);
  read_duration("reconcile_period", policy.reconcile_period);
  read_duration("status_timeout", policy.status_timeout);
  read_duration("worker_poll", policy.worker_poll);
  read_duration("worker_idle_poll", policy.worker_idle_poll);
  read_count("worker_capacity", policy.worker_capacity, 1, 64);
  read_count("attempt_limit", policy.attempt_limit, 1, 100);
  read_duration("client_timeout", policy.client_timeout);
  read_count("client_retries", policy.client_retries, 0, 10);
  read_duration("lb_timeout", policy.lb_timeout);
  read_count("lb_retries", policy.lb_retries, 0, 10);
  // A lease that expires before the attempt's own deadline would hand a live attempt to a
  // second worker.
  if (policy.lease <= policy.attempt_deadline) {
    const auto lease = map.get("lease");
    reader_.fail(lease ? *lease : map.require("attempt_deadline"),
                 "policy.lease: expected longer than policy.attempt_deadline (" +
                     format_duration(policy.attempt_deadline) + "), found " +
                     format_duration(policy.lease) + (lease ? "" : " (the default)"));
  }
}

void Loader::load_providers(const YAML::Node& node) {
  reader_.expect_sequence(node, "providers");
  for (const auto& item : node) spec_.providers.push_back(load_provider(item));
}

ProviderSpec Loader::load_provider(const YAML::Node& node) {
  YamlMap provider(reader_, node, "provider",
                   {"name", "latency", "certify", "max_prompt_tokens", "prompt_template", "default",
                    "plausible_on", "script", "recertify"});
  const auto name = provider.require("name");
  ProviderSpec spec;
  spec.name = reader_.string(name, "provider name");
  if (!is_valid_name(spec.name)) {
    reader_.fail(name, "provider name: expected 1-100 characters from [A-Za-z0-9._-]");
  }
  if (std::ranges::find(spec_.providers, spec.name, &ProviderSpec::name) != spec_.providers.end()) {
    reader_.fail(name, "provider \"" + spec.name + "\" is defined twice");
  }
  // Partitions on worker_provider name workers and providers in one list.
  const auto nodes = topology_nodes(spec_.topology);
  if (std::ranges::find(nodes, spec.name) != nodes.end()) {
    reader_.fail(name, "provider name: \"" + spec.name + "\" is already the name of a node");
  }
  if (auto latency = provider.get("latency")) spec.latency = reader_.latency(*latency, "latency");
  if (auto certify = provider.get("certify")) spec.certify = reader_.boolean(*certify, "certify");
  if (auto tokens = provider.get("max_prompt_tokens")) {
    spec.max_prompt_tokens =
        static_cast<std::size_t>(reader_.small_integer(*tokens, "max_prompt_tokens", 1, 1'000'000));
  }
  if (auto prompt = provider.get("prompt_template")) {
    spec.prompt_template = reader_.string(*prompt, "prompt_template");
    if (spec.prompt_template->find("{{input}}") == std::string::npos) {
      reader_.fail(*prompt,
                   "prompt_template: expected the {{input}} placeholder (without it the "
                   "provider never sees the input)");
    }
  }
  if (auto call = provider.get("default")) spec.default_call = load_provider_call(*call, "default");
  if (auto wrong = provider.get("plausible_on")) {
    reader_.expect_sequence(*wrong, "plausible_on");
    for (const auto& item : *wrong) {
      auto operation = reader_.string(item, "plausible_on item");
      if (std::ranges::find(check::kOperations, operation) == std::end(check::kOperations)) {
        std::string offered;
        for (const auto offer : check::kOperations) {
          offered += (offered.empty() ? "" : ", ") + std::string(offer);
        }
        reader_.fail(item, "plausible_on item: expected an operation the API offers (" + offered +
                               "), got \"" + operation + "\"");
      }
      if (std::ranges::find(spec.plausible_on, operation) != spec.plausible_on.end()) {
        reader_.fail(item, "plausible_on item: \"" + operation + "\" is listed twice");
      }
      spec.plausible_on.push_back(std::move(operation));
    }
  }
  if (auto script = provider.get("script")) {
    reader_.expect_sequence(*script, "script");
    for (const auto& call : *script) spec.script.push_back(load_provider_call(call, "script item"));
  }
  if (auto recertify = provider.get("recertify")) {
    reader_.expect_sequence(*recertify, "recertify");
    for (const auto& item : *recertify) {
      YamlMap entry(reader_, item, "recertify item", {"at", "default"});
      const auto at = entry.require("at");
      sim::RecertificationSpec later{.at = reader_.duration(at, "recertify at"),
                                     .default_call = {}};
      if (!spec.recertify.empty() && later.at <= spec.recertify.back().at) {
        reader_.fail(at, "recertify at: expected a later instant than the item before");
      }
      if (auto call = entry.get("default")) {
        later.default_call = load_provider_call(*call, "recertify default");
      }
      spec.recertify.push_back(std::move(later));
    }
  }
  return spec;
}

ProviderCallSpec Loader::load_provider_call(const YAML::Node& node, const std::string& what) {
  ProviderCallSpec call;
  if (node.IsScalar()) {
    call.outcome = load_outcome(node, what);
    return call;
  }
  if (!node.IsMap()) {
    reader_.fail(node, what + ": expected an outcome name or {outcome: ..., latency: ...}");
  }
  YamlMap map(reader_, node, what, {"outcome", "latency"});
  call.outcome = load_outcome(map.require("outcome"), what + " outcome");
  if (auto latency = map.get("latency")) {
    call.latency = reader_.latency(*latency, what + " latency");
  }
  return call;
}

ProviderOutcome Loader::load_outcome(const YAML::Node& node, const std::string& what) {
  const auto name = reader_.string(node, what);
  if (auto outcome = parse_provider_outcome(name)) return *outcome;
  std::string expected;
  for (auto known : kOutcomes) {
    expected += (expected.empty() ? "" : ", ") + std::string(to_string(known));
  }
  reader_.fail(node,
               what + ": unknown outcome \"" + name + "\" (expected one of: " + expected + ")");
}

void Loader::load_clients(const YAML::Node& node) {
  reader_.expect_sequence(node, "clients");
  if (node.size() == 0) reader_.fail(node, "clients: expected at least one client");
  for (const auto& item : node) {
    YamlMap client(reader_, item, "client", {"name", "owner"});
    ClientSpec spec{reader_.string(client.require("name"), "client name"),
                    reader_.string(client.require("owner"), "client owner")};
    if (!is_valid_name(spec.name)) {
      reader_.fail(client.require("name"),
                   "client name: expected 1-100 characters from [A-Za-z0-9._-]");
    }
    if (spec.owner.empty())
      reader_.fail(client.require("owner"), "client owner: must not be empty");
    for (const auto& other : spec_.clients) {
      if (other.name == spec.name) {
        reader_.fail(client.require("name"), "client \"" + spec.name + "\" is defined twice");
      }
    }
    spec_.clients.push_back(std::move(spec));
  }
}

void Loader::load_timeline(const YAML::Node& node) {
  reader_.expect_sequence(node, "timeline");
  if (node.size() == 0) reader_.fail(node, "timeline: expected at least one action");
  for (const auto& item : node) {
    std::vector<std::string_view> keys = {"at"};
    for (const auto& action : kTimelineActions) keys.push_back(action.name);
    YamlMap entry(reader_, item, "timeline entry", keys);
    TimelineEntry timeline_entry;
    timeline_entry.pos = reader_.pos(item);
    timeline_entry.at = reader_.duration(entry.require("at"), "at");
    if (!spec_.timeline.empty() && timeline_entry.at < spec_.timeline.back().at) {
      reader_.fail(entry.require("at"),
                   "at: the timeline must be in time order (this entry is earlier than the one "
                   "before it)");
    }
    int actions = 0;
    for (const auto& [kind, key] : kTimelineActions) {
      auto value = entry.get(key);
      if (!value) continue;
      if (++actions > 1) reader_.fail(item, "timeline entry: expected exactly one action");
      timeline_entry.kind = kind;
      if (kind == TimelineEntry::Kind::create_job) {
        timeline_entry.create_job = load_create_job(*value);
        timeline_entry.client = timeline_entry.create_job.client;
      } else {
        loading::read_job_action(reader_, *value, timeline_entry, spec_);
      }
    }
    if (actions == 0) {
      reader_.fail(item, "timeline entry: expected one of create_job, get_job, retry, cancel");
    }
    timeline_entry.request = static_cast<int>(spec_.timeline.size()) + 1;
    if (timeline_entry.request > loading::kMaxRequests) {
      reader_.fail(item, "timeline: more than " + std::to_string(loading::kMaxRequests) +
                             " steps, the most a scenario may have");
    }
    spec_.timeline.push_back(std::move(timeline_entry));
  }
}

CreateJobAction Loader::load_create_job(const YAML::Node& node) {
  YamlMap create(reader_, node, "create_job", {"client", "key", "body", "raw_body", "pad_to"});
  CreateJobAction action;
  const auto client = create.require("client");
  action.client = reader_.string(client, "client");
  auto known = std::ranges::find(spec_.clients, action.client, &ClientSpec::name);
  if (known == spec_.clients.end()) {
    reader_.fail(client, "client \"" + action.client + "\" is not defined under clients");
  }
  if (auto key = create.get("key")) action.key = reader_.string(*key, "key");
  auto body = create.get("body");
  auto raw_body = create.get("raw_body");
  if (body && raw_body) reader_.fail(node, "create_job: give either body or raw_body, not both");
  if (!body && !raw_body) reader_.fail(node, "create_job: missing required key \"body\"");
  if (body) {
    try {
      action.body = reader_.json(*body).dump();
    } catch (const nlohmann::json::type_error&) {
      reader_.fail(*body, "body: text is not valid UTF-8");
    }
  } else {
    action.body = reader_.string(*raw_body, "raw_body");
  }
  if (auto pad = create.get("pad_to")) {
    // Trailing spaces are JSON whitespace: the body means the same at any length, so a limit on
    // bytes can be met exactly (the API's body limit is 1 MiB; a scenario file is at most 1 MiB).
    const std::uint64_t target = reader_.unsigned_integer(*pad, "pad_to");
    if (target < action.body.size() || target > kMaxPaddedBody) {
      reader_.fail(*pad, "pad_to: expected " + std::to_string(action.body.size()) + " to " +
                             std::to_string(kMaxPaddedBody) +
                             " bytes (from the body's own size up to 2 MiB)");
    }
    padded_bytes_ += target - action.body.size();
    if (padded_bytes_ > kMaxPaddingBytes) {
      reader_.fail(*pad, "pad_to: the scenario's bodies would be padded by more than " +
                             std::to_string(kMaxPaddingBytes) + " bytes in all");
    }
    action.body.resize(target, ' ');
  }
  return action;
}

}  // namespace

// yaml-cpp 0.7 allocates without bound on a document whose first token is a ',' (",a"), and on a
// top-level block sequence followed by a line that starts with ',' ("- a\n," and its indented
// forms): both found by fuzzing. Refuse those shapes before yaml-cpp sees them. A document that
// starts as a block sequence is never a scenario (one is a mapping), so it is refused whole.
void refuse_leading_flow_entry(const std::string& text, const std::string& file) {
  bool document_start = true;
  int line_number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    std::string_view line(text.data() + start, end - start);
    ++line_number;
    std::size_t column = line.find_first_not_of(" \t\r");
    std::string_view rest = column == std::string_view::npos ? "" : line.substr(column);
    if (column == 0 && rest.starts_with("---")) {
      document_start = true;
      column = line.find_first_not_of(" \t\r", 3);
      rest = column == std::string_view::npos ? "" : line.substr(column);
    }
    if (document_start && !rest.empty() && !rest.starts_with('#') && !rest.starts_with('%')) {
      if (rest.starts_with(',')) {
        throw ScenarioError(file, {line_number, static_cast<int>(column) + 1},
                            "invalid YAML: a document cannot start with ','");
      }
      if (rest == "-" || rest.starts_with("- ") || rest.starts_with("-\t")) {
        throw ScenarioError(file, {line_number, static_cast<int>(column) + 1},
                            "scenario: expected a mapping, found a list");
      }
      document_start = false;
    }
    start = end + 1;
  }
}

namespace {

// Every value of the document, aliases expanded as the loader will expand them (an alias is
// read again wherever it is used), counted against kMaxYamlValues, and nested at most
// kMaxYamlDepth deep: a small file cannot make the loader do unbounded work.
void count_values(const YAML::Node& node, const std::string& file, std::size_t& budget, int depth) {
  if (depth > kMaxYamlDepth) {
    throw ScenarioError(file, YamlReader(file).pos(node),
                        "nested deeper than " + std::to_string(kMaxYamlDepth) + " levels");
  }
  if (budget == 0) {
    throw ScenarioError(file, YamlReader(file).pos(node),
                        "more than " + std::to_string(kMaxYamlValues) +
                            " values once aliases are expanded; a scenario may have at most that");
  }
  --budget;
  if (node.IsSequence()) {
    for (const auto& item : node) count_values(item, file, budget, depth + 1);
  } else if (node.IsMap()) {
    for (const auto& item : node) {
      count_values(item.first, file, budget, depth + 1);
      count_values(item.second, file, budget, depth + 1);
    }
  }
}

void count_values(const YAML::Node& root, const std::string& file) {
  std::size_t budget = kMaxYamlValues;
  count_values(root, file, budget, 0);
}

}  // namespace

YAML::Node parse_yaml_document(const std::string& yaml_text, const std::string& file,
                               std::string_view what) {
  if (yaml_text.size() > kMaxScenarioBytes) {
    throw ScenarioError(file, {0, 0},
                        "the text is larger than " + std::to_string(kMaxScenarioBytes) +
                            " bytes, the most a " + std::string(what) + " may have");
  }
  refuse_leading_flow_entry(yaml_text, file);
  std::vector<YAML::Node> documents;
  try {
    const AllocationBudget budget(kMaxParseBytes);
    documents = YAML::LoadAll(yaml_text);
  } catch (const std::bad_alloc&) {
    throw ScenarioError(file, {1, 1},
                        "invalid YAML: parsing it took more than " +
                            std::to_string(kMaxParseBytes >> 20) +
                            " MB (the YAML library loops on some malformed input)");
  } catch (const YAML::DeepRecursion& error) {
    throw ScenarioError(
        file, {error.mark.line + 1, error.mark.column + 1},
        "invalid YAML: nested too deeply (more than " + std::to_string(error.depth()) + " levels)");
  } catch (const YAML::Exception& error) {
    throw ScenarioError(file, {error.mark.line + 1, error.mark.column + 1},
                        "invalid YAML: " + error.msg);
  }
  if (documents.empty() || documents.front().IsNull()) {
    throw ScenarioError(file, {1, 1}, "empty " + std::string(what) + ": expected a mapping");
  }
  if (documents.size() > 1) {
    throw ScenarioError(file, YamlReader(file).pos(documents[1]),
                        "expected one YAML document, found " + std::to_string(documents.size()));
  }
  count_values(documents.front(), file);
  return documents.front();
}

ScenarioSpec parse_scenario(const std::string& yaml_text, const std::string& file,
                            std::uint64_t max_load_jobs) {
  const YAML::Node document = parse_yaml_document(yaml_text, file, "scenario");
  try {
    return Loader(file, max_load_jobs).load(document);
  } catch (const YAML::Exception& error) {
    // Conversions inside yaml-cpp itself; report them as bad input rather than crash.
    throw ScenarioError(file, {error.mark.line + 1, error.mark.column + 1}, error.msg);
  }
}

std::string read_yaml_file(const std::string& path) {
  // A device, a FIFO or a directory is never read: /dev/zero never ends, a FIFO may block.
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status)) {
    throw ScenarioError(path, {0, 0}, "no such file or directory");
  }
  if (!std::filesystem::is_regular_file(status)) {
    throw ScenarioError(path, {0, 0},
                        "not a regular file (a scenario is a *.yaml file, not a device, FIFO or "
                        "folder)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path, {0, 0}, "cannot read the file");
  std::string text(kMaxScenarioBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw ScenarioError(path, {0, 0}, "cannot read the file");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxScenarioBytes) {
    throw ScenarioError(path, {0, 0},
                        "the file is larger than " + std::to_string(kMaxScenarioBytes) +
                            " bytes, the most a scenario may have");
  }
  return text;
}

ScenarioSpec load_scenario_file(const std::string& path) {
  return parse_scenario(read_yaml_file(path), path);
}

}  // namespace onejob::scenario
