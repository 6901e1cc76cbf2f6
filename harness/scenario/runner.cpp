#include "harness/scenario/runner.hpp"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <memory>

#include "system/adapters/memory_store.hpp"
#include "system/domain/check.hpp"

#include "harness/events/commit_events.hpp"
#include "harness/scenario/expectations.hpp"
#include "harness/scenario/world.hpp"

namespace onejob::scenario {
namespace {

// The ids of the commit log's job inserts, ascending, each once.
std::vector<std::int64_t> committed_job_ids(const sim::History& history) {
  std::vector<std::int64_t> ids;
  history.visit_kinds(
      {&events::kind_name<events::CommitJobInserted>()}, [&ids](const sim::TraceEvent& recorded) {
        if (auto job = events::from_event<events::CommitJobInserted>(recorded.event)) {
          ids.push_back(job->job_id);
        }
      });
  std::ranges::sort(ids);
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

RunResult run_scenario(const ScenarioSpec& spec, const RunOptions& requested) {
  // The scenario's own defects and stop rule add to the options'.
  RunOptions options = requested;
  options.defects |= spec.defects;
  options.stop_when_quiescent = options.stop_when_quiescent || spec.stop_when_quiescent;
  RunResult result;
  result.name = spec.name;
  result.file = spec.file;
  result.seed = options.seed.value_or(spec.seed);
  result.defects = options.defects;
  // The embedded store checks its indexes against its rows after every write, and all of them
  // once the run is over.
  MemoryStore* memory = nullptr;
  std::unique_ptr<Store> store;
  if (options.make_store) {
    store = options.make_store();
  } else {
    auto embedded = std::make_unique<MemoryStore>(options.defects, /*check_indexes=*/true);
    memory = embedded.get();
    store = std::move(embedded);
  }
  auto world = std::make_unique<World>(spec, result.seed, std::move(store), options.defects);
  std::optional<check::Violation> aborted;
  try {
    world->run(options.stop_when_quiescent);
    if (memory != nullptr) memory->check_all_indexes();
  } catch (const std::exception& error) {
    aborted = check::violation("run.exception", std::string("the run aborted: ") + error.what());
  } catch (const AssertionFailure& failure) {
    aborted = check::violation("run.assertion", "the run aborted: " + failure.what());
  }
  result.history = world->trace().take();
  if (options.trace_text) result.trace_hash = sim::hash_jsonl(result.history);
  result.simulated = world->end().time_since_epoch();
  result.loop_events = world->loop_events();
  if (aborted) {
    result.violations.push_back(std::move(*aborted));
  }
  // What clients received, and the store's rows of every job the commit log inserted: read now,
  // so the world (its nodes and store) is freed before the history is folded. The simulation
  // winds down before the rows are read, so the rows do not add to it at the run's peak.
  auto received = world->take_received();
  world->wind_down();
  if (!options.judge) return result;
  auto rows =
      std::make_unique<check::StoreRows>(world->read_rows(committed_job_ids(result.history)));
  world.reset();

  const auto model = check::fold_history(result.history);
  // What judges the rows first, so they are freed before the invariants run; violations are
  // reported invariants first all the same.
  auto against_rows = check::check_store_agrees(model, *rows);
  auto expected = check_expectations(spec, received, model, *rows);
  rows.reset();
  received = decltype(received)();  // freed, not just emptied
  auto add = [&result](std::vector<check::Violation> found) {
    result.violations.insert(result.violations.end(), std::make_move_iterator(found.begin()),
                             std::make_move_iterator(found.end()));
  };
  for (const auto& id : spec.invariants) add(check::find_invariant(id)->check(model));
  add(std::move(against_rows));
  add(std::move(expected));
  result.marks = model.marks;
  for (const auto& [id, job] : model.jobs)
    ++result.job_ends[std::string(to_string(model.end_of(job)))];
  return result;
}

std::optional<check::Violation> compare_runs(const RunResult& first, const RunResult& second) {
  // Event by event, rendering only events that differ in memory: the runs differ where their
  // JSON lines do.
  const std::size_t common = std::min(first.history.size(), second.history.size());
  std::uint64_t event = 1;
  while (event <= common) {
    const bool same =
        first.history.same_event(event - 1, second.history, event - 1) ||
        sim::to_json_line(first.history[event - 1]) == sim::to_json_line(second.history[event - 1]);
    if (!same) break;
    ++event;
  }
  if (event > common && first.history.size() == second.history.size()) return std::nullopt;
  const auto hash = [](const RunResult& run) {
    return run.trace_hash.empty() ? sim::hash_jsonl(run.history) : run.trace_hash;
  };
  return check::violation("determinism.traces_differ",
                          "a second run with seed " + std::to_string(first.seed) + " gave trace " +
                              hash(second) + " instead of " + hash(first) +
                              "; they first differ at event " + std::to_string(event),
                          event <= first.history.size() ? std::optional(event) : std::nullopt);
}

}  // namespace onejob::scenario
