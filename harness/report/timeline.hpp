#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "harness/scenario/runner.hpp"

namespace onejob::report {

// One self-contained HTML document of a run (no network: inline CSS, SVG and script):
//   - the seed, the trace hash, the verdict and the replay command at the top;
//   - every violation with its first offending event and the events that led to it, marked
//     (id "violation-marker") where the lanes and the job view draw that event;
//   - the coverage marks the run reached;
//   - lanes per node (clients, load balancer, API nodes, workers, reconciler, certifier, store,
//     providers) on the simulated-time axis, messages as arrows, injected faults drawn apart;
//     drawn by the script for the visible window only, aggregated per pixel column when dense,
//     so a history of 100,000 events stays responsive; zoom, pan and filters by job and node;
//   - per job: its attempts as bars through their states, the compare-and-swap winner, the
//     discarded results, the provider executions, operator cancels and the store's commits.
// `replay`: the command line that reruns the scenario, printed at the top. The lanes hold at most
// `max_lane_events` events: a longer run's page holds the window around its first offending
// event (or its start) and says so; the other sections cover the whole run.
inline constexpr std::size_t kMaxLaneEvents = 250'000;
std::string timeline_html(const scenario::RunResult& result, std::string_view replay,
                          std::size_t max_lane_events = kMaxLaneEvents);

// Writes REPORT_DIR/html/<scenario name>.html (the name made safe for a file name) and returns
// its path. Throws std::runtime_error when it cannot be written.
std::filesystem::path write_timeline(const std::filesystem::path& report_dir,
                                     const scenario::RunResult& result, std::string_view replay);

// The inline style sheet and script of the page (timeline_page.cpp).
std::string_view timeline_style();
std::string_view timeline_script();

}  // namespace onejob::report
