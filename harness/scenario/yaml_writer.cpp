#include "harness/scenario/yaml_writer.hpp"

#include <algorithm>
#include <cstdio>

#include "harness/scenario/yaml_reader.hpp"

namespace onejob::scenario {
namespace {

// A YAML scalar keeping every byte: single-quoted (quotes doubled), or double-quoted with \xNN
// escapes when the text holds a control character (0x00-0x1f, 0x7f), which YAML cannot carry
// unescaped.
std::string yaml_quoted(std::string_view text) {
  const bool control = std::ranges::any_of(
      text, [](char c) { return (static_cast<unsigned char>(c) < 0x20) || c == 0x7f; });
  if (!control) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  }
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02x", byte);
      out += escape;
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string duration(Duration value) { return format_duration(value); }

std::string latency(const LatencySpec& range) {
  if (range.min == range.max) return duration(range.min);
  return "{min: " + duration(range.min) + ", max: " + duration(range.max) + "}";
}

std::string probability(Ppm ppm) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f%%", static_cast<double>(ppm) / 10'000.0);
  return text;
}

std::string link(const LinkSpec& spec, const sim::LinkInfo& info) {
  std::string out = "{latency: " + latency(spec.latency);
  for (const auto& fault : kFaultRates) {
    if (fault.store_only && info.kind != LinkKind::node_store) continue;
    out += ", " + std::string(fault.name) + ": " + probability(spec.*fault.rate);
    if (fault.rate == &LinkSpec::reorder)
      out += ", reorder_window: " + duration(spec.reorder_window);
  }
  return out + "}";
}

std::string call(const ProviderCallSpec& spec) {
  std::string out = "{outcome: " + std::string(to_string(spec.outcome));
  if (spec.latency) out += ", latency: " + latency(*spec.latency);
  return out + "}";
}

void write_policy(std::string& out, const ScenarioPolicy& p) {
  out += "policy:\n";
  out += "  attempt_deadline: " + duration(p.attempt_deadline) + "\n";
  out += "  lease: " + duration(p.lease) + "\n";
  out += "  reconcile_period: " + duration(p.reconcile_period) + "\n";
  out += "  status_timeout: " + duration(p.status_timeout) + "\n";
  out += "  worker_poll: " + duration(p.worker_poll) + "\n";
  out += "  worker_idle_poll: " + duration(p.worker_idle_poll) + "\n";
  out += "  worker_capacity: " + std::to_string(p.worker_capacity) + "\n";
  out += "  attempt_limit: " + std::to_string(p.attempt_limit) + "\n";
  out += "  client_timeout: " + duration(p.client_timeout) + "\n";
  out += "  client_retries: " + std::to_string(p.client_retries) + "\n";
  out += "  lb_timeout: " + duration(p.lb_timeout) + "\n";
  out += "  lb_retries: " + std::to_string(p.lb_retries) + "\n";
}

// An action's key as a flow mapping's entry: its text, null for none, nothing for the default.
std::string action_key(const TimelineEntry& e) {
  if (e.keyless) return ", key: null";
  return e.action_key ? ", key: " + yaml_quoted(*e.action_key) : std::string();
}

void write_providers(std::string& out, const std::vector<ProviderSpec>& providers) {
  if (providers.empty()) return;
  out += "providers:\n";
  for (const auto& p : providers) {
    out += "  - name: " + p.name + "\n";
    out += "    latency: " + latency(p.latency) + "\n";
    out += std::string("    certify: ") + (p.certify ? "true" : "false") + "\n";
    out += "    max_prompt_tokens: " + std::to_string(p.max_prompt_tokens) + "\n";
    if (p.prompt_template) out += "    prompt_template: " + yaml_quoted(*p.prompt_template) + "\n";
    out += "    default: " + call(p.default_call) + "\n";
    if (!p.plausible_on.empty()) {
      std::string list;
      for (const auto& operation : p.plausible_on) list += (list.empty() ? "" : ", ") + operation;
      out += "    plausible_on: [" + list + "]\n";
    }
    if (!p.script.empty()) {
      out += "    script:\n";
      for (const auto& c : p.script) out += "      - " + call(c) + "\n";
    }
    if (!p.recertify.empty()) {
      out += "    recertify:\n";
      for (const auto& r : p.recertify) {
        out += "      - {at: " + duration(r.at);
        if (r.default_call) out += ", default: " + call(*r.default_call);
        out += "}\n";
      }
    }
  }
}

void write_faults(std::string& out, const ScenarioSpec& spec) {
  if (spec.node_faults.empty() && spec.partitions.empty() && spec.pauses.empty()) return;
  out += "faults:\n";
  for (const auto& f : spec.node_faults) {
    out += "  - {at: " + duration(f.at) + ", " + std::string(name_of(kNodeFaultKinds, f.kind)) +
           ": " + f.node + "}\n";
  }
  for (const auto& p : spec.partitions) {
    std::string nodes;
    for (const auto& node : p.nodes) nodes += (nodes.empty() ? "" : ", ") + node;
    out += "  - {from: " + duration(p.from) + ", until: " + duration(p.until) +
           ", partition: " + std::string(sim::link_info(p.link).name) + ", nodes: [" + nodes +
           "], direction: " + std::string(name_of(sim::kPartitionDirections, p.direction)) + "}\n";
  }
  for (const auto& p : spec.pauses) {
    out += "  - {from: " + duration(p.from) + ", until: " + duration(p.until) +
           ", pause: " + p.node + "}\n";
  }
}

// A body that ends in a long run of spaces (a body padded to a byte limit) is written as its
// text and pad_to, so a repro of a 1 MiB body stays a small file that loads back byte for byte.
void write_create_body(std::string& out, const std::string& body) {
  constexpr std::size_t kShortestPadding = 64;
  const auto kept = body.find_last_not_of(' ') + 1;  // 0 when the body is all spaces
  if (body.size() - kept < kShortestPadding) {
    out += "      raw_body: " + yaml_quoted(body) + "\n";
    return;
  }
  out += "      raw_body: " + yaml_quoted(body.substr(0, kept)) + "\n";
  out += "      pad_to: " + std::to_string(body.size()) + "\n";
}

// Every request, a load's written out one by one.
void write_timeline(std::string& out, const ScenarioSpec& spec) {
  out += "timeline:\n";
  TimelineEntry room;
  for (std::size_t request = 1; request <= request_count(spec); ++request) {
    const TimelineEntry& e = request_entry(spec, request, room);
    out += "  - at: " + duration(e.at) + "\n";
    switch (e.kind) {
      case TimelineEntry::Kind::create_job:
        out += "    create_job:\n      client: " + e.create_job.client + "\n";
        if (e.create_job.key) out += "      key: " + yaml_quoted(*e.create_job.key) + "\n";
        write_create_body(out, e.create_job.body);
        break;
      case TimelineEntry::Kind::get_job:
        out += "    get_job: {client: " + e.client +
               ", request: " + std::to_string(e.target_request) +
               (e.method ? ", method: " + *e.method : std::string()) +
               (e.path ? ", path: " + yaml_quoted(*e.path) : std::string()) + "}\n";
        break;
      case TimelineEntry::Kind::retry:
        out += "    retry: {client: " + e.client +
               ", request: " + std::to_string(e.target_request) +
               (e.provider ? ", provider: " + *e.provider : std::string()) +
               (e.retry_body ? ", raw_body: " + yaml_quoted(*e.retry_body) : std::string()) +
               action_key(e) + "}\n";
        break;
      case TimelineEntry::Kind::cancel:
        out += "    cancel: {client: " + e.client +
               ", request: " + std::to_string(e.target_request) +
               ", attempt: " + std::to_string(e.attempt_no) + action_key(e) + "}\n";
        break;
    }
  }
}

}  // namespace

std::string to_yaml(const ScenarioSpec& spec, std::string_view comment) {
  std::string out;
  std::size_t start = 0;
  while (start < comment.size()) {
    const auto end = std::min(comment.find('\n', start), comment.size());
    out += "# " + std::string(comment.substr(start, end - start)) + "\n";
    start = end + 1;
  }
  out += "name: " + spec.name + "\n";
  if (!spec.description.empty()) out += "description: " + yaml_quoted(spec.description) + "\n";
  out += "seed: " + std::to_string(spec.seed) + "\n";
  if (spec.duration) out += "duration: " + duration(*spec.duration) + "\n";
  if (spec.quiet) out += "quiet: " + duration(*spec.quiet) + "\n";
  out += std::string("swarm: ") + (spec.swarm ? "true" : "false") + "\n";
  if (spec.stop_when_quiescent) out += "stop_when_quiescent: true\n";
  if (spec.defects.any()) {
    std::string names;
    for (const auto& info : all_defects()) {
      if (spec.defects.has(info.defect))
        names += (names.empty() ? "" : ", ") + std::string(info.name);
    }
    out += "defects: [" + names + "]\n";
  }
  out += "topology: {api_nodes: " + std::to_string(spec.topology.api_nodes) +
         ", workers: " + std::to_string(spec.topology.workers) +
         ", reconciler: " + (spec.topology.reconciler ? "true" : "false") + "}\n";
  write_policy(out, spec.policy);
  write_providers(out, spec.providers);
  out += "clients:\n";
  for (const auto& c : spec.clients) {
    out += "  - {name: " + c.name + ", owner: " + yaml_quoted(c.owner) + "}\n";
  }
  out += "network:\n";
  for (const auto& each : kLinks) {
    out += "  " + std::string(each.name) + ": " + link(spec.network.*each.spec, each) + "\n";
  }
  write_faults(out, spec);
  write_timeline(out, spec);
  out += "invariants: all\n";
  return out;
}

}  // namespace onejob::scenario
