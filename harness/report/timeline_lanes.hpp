#pragma once

// The timeline page's data (timeline_lanes.cpp): what its sections and its script draw.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/runner.hpp"

namespace onejob::report::timeline {

inline std::int64_t micros(Instant at) { return at.time_since_epoch().count(); }

// One lane per node, in display order: clients, load balancer, API nodes, workers, reconciler,
// certifier, store, providers, others. A node's role comes from the events it records.
struct Lanes {
  std::vector<std::string> names;
  std::vector<std::string_view> roles;  // "client", "lb", "api", ...
  std::map<std::string, int, std::less<>> index;

  int of(std::string_view node) const {
    auto found = index.find(node);
    return found == index.end() ? -1 : found->second;
  }
};
Lanes build_lanes(const sim::History& history);

// An event's fields as "name=value ...", each string cut at 60 bytes, the whole near 200.
std::string short_text(const Event& event);

// What the run's violations point at: their first offending events, the events they cite, and
// the jobs either names.
struct ViolationIndex {
  std::set<std::uint64_t> offending;
  std::set<std::uint64_t> evidence;
  std::set<std::int64_t> jobs;
};
ViolationIndex index_violations(const scenario::RunResult& result);

// The events the page's lanes hold: all of them, or `most` around the first offending event
// (from the start when there is none).
struct Window {
  std::size_t first = 0;  // index into the history
  std::size_t count = 0;
};
Window page_window(const scenario::RunResult& result, std::size_t most);

// The script's data as JSON text safe inside a <script> element: {"first", "lanes", "kinds",
// "events": [[t_us, lane, kind, flags, job, attempt, peer lane, text]...], "edges": [[from, to,
// kind]...]} for the events of `window` (indexes relative to its first).
std::string page_data_json(const scenario::RunResult& result, const Lanes& lanes,
                           const ViolationIndex& violations, Window window);

}  // namespace onejob::report::timeline
