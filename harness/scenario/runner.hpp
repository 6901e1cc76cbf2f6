#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "system/ports/store.hpp"
#include "system/service/defects.hpp"

#include "harness/check/invariant.hpp"
#include "harness/scenario/spec.hpp"
#include "harness/sim/trace.hpp"

namespace onejob::scenario {

struct RunOptions {
  std::optional<std::uint64_t> seed;  // overrides the scenario's seed
  // The store under test; MemoryStore when empty.
  std::function<std::unique_ptr<Store>()> make_store;
  // End the run once nothing is left to happen (World::run), instead of at its full length.
  bool stop_when_quiescent = false;
  // Hash the trace's JSON Lines (trace_hash); a fuzz case that is only judged skips it.
  bool trace_text = true;
  // Named defects the system runs with (the embedded store included); none by default.
  Defects defects{};
  // Fold the history and run the rules; a run made only to compare its history with another's
  // (the fuzzer's determinism check) skips them and has no marks or job ends.
  bool judge = true;
};

struct RunResult {
  std::string name;
  std::string file;
  std::uint64_t seed = 0;
  Defects defects;  // what the system ran with
  sim::History history;
  // FNV-1a 64 of the history's JSON Lines (sim::render_jsonl renders them when they are
  // needed: reports, --diff; a history of millions of events is not held twice).
  std::string trace_hash;
  Duration simulated{0};          // simulated time the run covered
  std::uint64_t loop_events = 0;  // handlers the simulation loop ran
  // Invariant violations first (in checker order), then the log's agreement with the store,
  // then failed expectations and availability.
  std::vector<check::Violation> violations;
  check::MarkCounts marks;              // coverage marks the run reached
  std::map<std::string, int> job_ends;  // jobs by where they stand at the end (JobEnd names)

  bool passed() const { return violations.empty(); }
};

// Runs one scenario in a fresh simulated world and judges its history. A pure function of
// (build, spec, seed): no wall clock, no global state, no threads.
RunResult run_scenario(const ScenarioSpec& spec, const RunOptions& options = {});

// The determinism invariant: two runs of one scenario with one seed must produce byte-identical
// traces. Returns the violation (naming the first event where they part) when they do not.
std::optional<check::Violation> compare_runs(const RunResult& first, const RunResult& second);

}  // namespace onejob::scenario
