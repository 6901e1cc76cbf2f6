#include "harness/sim/trace.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "harness/sim/rng.hpp"

namespace onejob::sim {

const TraceEvent& Trace::record(std::string node, Event event, bool injected) {
  events_.push_back(
      TraceEvent{events_.size() + 1, clock_.now(), std::move(node), std::move(event), injected});
  return events_.back();
}

std::string to_json_line(const TraceEvent& event) {
  // ordered_json keeps insertion order, so the line reads seq, time, node, kind, data.
  nlohmann::ordered_json line;
  line["seq"] = event.seq;
  line["t_us"] = event.at.time_since_epoch().count();
  line["node"] = event.node;
  line["kind"] = event.event.kind();
  if (event.injected) line["injected"] = true;
  nlohmann::ordered_json data = nlohmann::ordered_json::object();
  for (const auto& field : event.event.fields()) {
    const auto& name = field.first;  // a lambda may not capture a structured binding (clang)
    std::visit([&data, &name](const auto& v) { data[name] = v; }, field.second);
  }
  line["data"] = std::move(data);
  // Replace rather than throw on bytes that are not UTF-8: a trace must always be writable.
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string Trace::to_jsonl() const {
  std::string out;
  for (const auto& event : events_) {
    out += to_json_line(event);
    out += '\n';
  }
  return out;
}

std::string hex64(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string Trace::hash() const { return hex64(fnv1a64(to_jsonl())); }

}  // namespace onejob::sim
