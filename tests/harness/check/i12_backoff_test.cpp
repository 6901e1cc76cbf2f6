// I12's backoff clauses on hand-made histories: the waits a worker's claim loop, an attempt's
// loop and the reconciler report after store errors, judged against the backoff's formula, shown
// failing where a wait breaks it and passing where it keeps it.
#include <functional>

#include <boost/test/unit_test.hpp>

#include "system/events/reconciler_events.hpp"

#include "harness/check/invariant.hpp"
#include "harness/events/world_events.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;

BOOST_AUTO_TEST_SUITE(i12_backoff)

// A worker (base 1 s, cap 4 s) and the reconciler (base min(1 s, 5 s), cap min(4 s, 5 s)) report
// the waits `waits_ms` after their store errors; `between` runs after the second error, and the
// last error comes `waited_percent` of the wait before it after the one before. Returns the
// violations and the last error's seq.
std::pair<std::vector<Violation>, std::uint64_t> backoff_run(
    const std::string& node, std::int64_t attempt, const std::vector<std::int64_t>& waits_ms,
    const std::function<void(HistoryBuilder&)>& between = {},
    std::int64_t worker_poll_us = 1'000'000, std::int64_t waited_percent = 100) {
  HistoryBuilder h;
  auto policy = short_policy();
  policy.reconcile_period_us = 5'000'000;
  policy.store_backoff_cap_us = 4'000'000;
  policy.worker_poll_us = worker_poll_us;
  h.add("world", policy);
  insert_job(h, {});
  Duration since_start{};
  for (std::size_t i = 0; i < waits_ms.size(); ++i) {
    if (i == 2 && between) between(h);
    const std::int64_t wait_us = waits_ms[i] * 1000;
    h.at(since_start);
    since_start += Duration(wait_us * (i + 2 == waits_ms.size() ? waited_percent : 100) / 100);
    if (node == "reconciler") {
      h.add(node,
            events::ReconcilerStoreError{.message = "store partition", .retry_in_us = wait_us});
    } else {
      h.add(node, events::WorkerStoreError{.worker = node,
                                           .attempt_id = attempt,
                                           .message = "store partition",
                                           .retry_in_us = wait_us});
    }
  }
  return {check_policy(h.model()), h.last_seq()};
}

// Whether the run broke only the backoff, at its last error.
void require_backoff_broken(const std::pair<std::vector<Violation>, std::uint64_t>& run) {
  require_one(run.first, "I12.backoff_out_of_bounds", run.second);
}

BOOST_AUTO_TEST_CASE(i12_a_wait_outside_the_backoff_is_a_violation) {
  // Doubling from [0.5, 1] s up to the cap of 4 s, in the claim loop, an attempt's and the sweep.
  for (const std::int64_t loop : {0, 7}) {
    require_none(backoff_run("worker-1", loop, {500, 2000, 3999, 4000, 2000}).first);
    require_backoff_broken(backoff_run("worker-1", loop, {1000, 2000, 4001}));
    require_backoff_broken(backoff_run("worker-1", loop, {1001}));
    require_backoff_broken(backoff_run("worker-1", loop, {499}));
    require_backoff_broken(backoff_run("worker-1", loop, {900, 2001}));
  }
  require_none(backoff_run("reconciler", 0, {1000, 1500, 4000}).first);
  require_backoff_broken(backoff_run("reconciler", 0, {5000}));
  // An attempt's run ended by a store error waits for nothing: no wait to judge.
  require_none(backoff_run("worker-1", 7, {0}).first);
}

BOOST_AUTO_TEST_CASE(i12_a_claim_that_came_back_starts_the_backoff_over) {
  const auto claim = [](HistoryBuilder& h) { h.add(kStore, claimed(1, 1)); };
  const auto claim_lost = [&claim](HistoryBuilder& h) {
    claim(h);
    h.add("net.node_store", events::StoreFault{.node = "worker-1",
                                               .operation = "claim_next_attempt",
                                               .fault = "partition",
                                               .maybe_committed = true});
  };
  const auto restart = [](HistoryBuilder& h) {
    h.add("worker-1", events::NodeCrashed{}).add("worker-1", events::NodeStarted{.incarnation = 2});
  };
  // After two failures, a third wait of 1.5 s is in its range (up to 4 s) unless the loop
  // succeeded in between: a claim whose reply came back, or a new incarnation.
  require_none(backoff_run("worker-1", 0, {900, 1900, 1500}).first);
  require_none(backoff_run("worker-1", 0, {900, 1900, 1500}, claim_lost).first);
  require_backoff_broken(backoff_run("worker-1", 0, {900, 1900, 1500}, claim));
  require_backoff_broken(backoff_run("worker-1", 0, {900, 1900, 1500}, restart));
  // Another worker's claim proves nothing about worker-1's loop, nor a claim about an attempt's.
  require_none(backoff_run("worker-1", 0, {900, 1900, 1500}, [](HistoryBuilder& h) {
                 h.add(kStore, claimed(1, 1, "worker-2"));
               }).first);
  require_none(backoff_run("worker-1", 7, {900, 1900, 1500}, claim).first);
}

// The reconciler's sweep starts its count over after it reports a sweep that went through; another
// node's report proves nothing about it.
BOOST_AUTO_TEST_CASE(i12_a_sweep_that_went_through_starts_the_backoff_over) {
  const auto recovered = [](const std::string& node) {
    return
        [node](HistoryBuilder& h) { h.add(node, events::ReconcilerStoreRecovered{.failures = 2}); };
  };
  require_none(backoff_run("reconciler", 0, {900, 1900, 1500}).first);
  require_backoff_broken(backoff_run("reconciler", 0, {900, 1900, 1500}, recovered("reconciler")));
  require_none(backoff_run("reconciler", 0, {900, 1900, 900}, recovered("reconciler")).first);
  require_none(backoff_run("reconciler", 0, {900, 1900, 1500}, recovered("worker-1")).first);
}

BOOST_AUTO_TEST_CASE(i12_three_waits_at_the_ends_of_their_ranges_are_not_jittered) {
  // Base 1 s, cap 4 s: the ranges end at 0.5, 1, 2 and 4 s.
  const auto undrawn = [](const std::vector<std::int64_t>& waits_ms) {
    auto run = backoff_run("worker-1", 0, waits_ms);
    require_one(run.first, "I12.backoff_not_jittered", run.second);
  };
  undrawn({1000, 2000, 4000});
  undrawn({1000, 1000, 1000});
  undrawn({900, 500, 2000, 2000});
  require_none(backoff_run("worker-1", 0, {1000, 2000, 3000, 4000}).first);
  require_none(backoff_run("worker-1", 0, {1000, 2000}).first);
  // Another loop's waits do not count toward this one's.
  require_none(backoff_run("worker-1", 0, {1000, 2000}, [](HistoryBuilder& h) {
                 h.add("worker-1", events::WorkerStoreError{.worker = "worker-1",
                                                            .attempt_id = 7,
                                                            .message = "store partition",
                                                            .retry_in_us = 1'000'000});
               }).first);
  // Below a base of 2 ms three range ends in a row are too likely by chance to judge.
  require_none(backoff_run("worker-1", 0, {1, 1, 1}, {}, 1'000).first);
  auto run = backoff_run("worker-1", 0, {2, 2, 2}, {}, 2'000);
  require_one(run.first, "I12.backoff_not_jittered", run.second);
}

BOOST_AUTO_TEST_CASE(i12_waits_while_the_store_is_cut_off_grow) {
  // Every store call fails while a node_store partition cuts the node off, so its errors there are
  // failures in a row: base 1 s, cap 4 s, the j-th waits at least 0.5, 1, 2, 2 s. The errors
  // come at 0, 0.5 and 1.5 s.
  const auto cut = [](std::string node, Duration until) {
    return [node, until](HistoryBuilder& h) {
      h.add("world", events::RunPartition{.link = "node_store",
                                          .node = node,
                                          .direction = "requests",
                                          .from = Instant{},
                                          .until = Instant(until)});
    };
  };
  const Duration minute = std::chrono::minutes(1);
  for (const std::string node : {"worker-1", "reconciler"}) {
    require_none(backoff_run(node, 0, {500, 1000, 2100, 2000}, cut(node, minute)).first);
    auto run = backoff_run(node, 0, {500, 1000, 1999}, cut(node, minute));
    require_one(run.first, "I12.backoff_not_grown", run.second);
    // Without the window, once it is over, or on another node: no proof of failures in a row.
    require_none(backoff_run(node, 0, {500, 1000, 1999}).first);
    require_none(
        backoff_run(node, 0, {500, 1000, 1999}, cut(node, std::chrono::milliseconds(1400))).first);
    require_none(backoff_run(node, 0, {500, 1000, 1999}, cut("worker-2", minute)).first);
  }
  // An attempt's loops are not judged: two may retry at once.
  require_none(backoff_run("worker-1", 7, {500, 1000, 1999}, cut("worker-1", minute)).first);
}

BOOST_AUTO_TEST_CASE(i12_a_store_error_before_the_wait_reported_is_a_violation) {
  // The claim loop and the sweep meet their next error once their wait is over, not sooner.
  for (const std::string node : {"worker-1", "reconciler"}) {
    require_none(backoff_run(node, 0, {900, 1900, 2500}).first);
    auto run = backoff_run(node, 0, {900, 1900, 2500}, {}, 1'000'000, 99);
    require_one(run.first, "I12.backoff_not_waited", run.second);
  }
  // An attempt may have two loops retrying at once: its errors' spacing proves nothing.
  require_none(backoff_run("worker-1", 7, {900, 1900, 2500}, {}, 1'000'000, 50).first);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
