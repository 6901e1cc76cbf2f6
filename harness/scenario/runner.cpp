#include "harness/scenario/runner.hpp"

#include <algorithm>
#include <exception>

#include "system/adapters/memory_store.hpp"

#include "harness/scenario/expectations.hpp"
#include "harness/scenario/world.hpp"

namespace onejob::scenario {

RunResult run_scenario(const ScenarioSpec& spec, const RunOptions& options) {
  RunResult result;
  result.name = spec.name;
  result.file = spec.file;
  result.seed = options.seed.value_or(spec.seed);
  result.defects = options.defects;
  auto store =
      options.make_store ? options.make_store() : std::make_unique<MemoryStore>(options.defects);
  World world(spec, result.seed, std::move(store), options.defects);
  std::optional<std::string> aborted;
  try {
    world.run(options.stop_when_quiescent);
  } catch (const std::exception& error) {
    aborted = error.what();
  }
  if (options.trace_text) {
    // Rendered once; the hash is of these very bytes.
    result.trace_jsonl = world.trace().to_jsonl();
    result.trace_hash = sim::hex64(sim::fnv1a64(result.trace_jsonl));
  }
  result.history = world.trace().take();
  result.simulated = world.end().time_since_epoch();
  result.loop_events = world.loop_events();
  if (aborted) {
    result.violations.push_back({"run", "the run aborted: " + *aborted, std::nullopt, {}});
  }
  const auto model = check::fold_history(result.history);
  auto add = [&result](std::vector<check::Violation> found) {
    result.violations.insert(result.violations.end(), std::make_move_iterator(found.begin()),
                             std::make_move_iterator(found.end()));
  };
  for (const auto& id : spec.invariants) add(check::find_invariant(id)->check(model));
  std::vector<std::int64_t> job_ids;
  for (const auto& [id, job] : model.jobs) job_ids.push_back(id);
  const auto rows = world.read_rows(job_ids);
  add(check::check_store_agrees(model, rows));
  add(check_expectations(spec, world.received(), model, rows));
  result.marks = model.marks;
  for (const auto& [id, job] : model.jobs)
    ++result.job_ends[std::string(to_string(model.end_of(job)))];
  return result;
}

std::optional<check::Violation> compare_runs(const RunResult& first, const RunResult& second) {
  if (first.trace_jsonl == second.trace_jsonl) return std::nullopt;
  const auto& a = first.trace_jsonl;
  const auto& b = second.trace_jsonl;
  std::uint64_t event = 1;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()) && a[i] == b[i]; ++i) {
    event += a[i] == '\n' ? 1 : 0;
  }
  return check::Violation{"determinism",
                          "a second run with seed " + std::to_string(first.seed) + " gave trace " +
                              second.trace_hash + " instead of " + first.trace_hash +
                              "; they first differ at event " + std::to_string(event),
                          event <= first.history.size() ? std::optional(event) : std::nullopt};
}

}  // namespace onejob::scenario
