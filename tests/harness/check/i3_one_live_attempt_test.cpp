#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

// Job 1's first attempt is claimed and fails; the failover's attempt 2 on beta is claimed.
void failed_over_to_beta(HistoryBuilder& h) {
  insert_job(h, {});
  h.add(kStore, claimed(1, 1))
      .add(kStore, fenced_write(1, 1, S::running, S::failed))
      .add(kStore, attempt_inserted(1, 2, 2, "beta", AttemptOrigin::failover))
      .add(kStore, claimed(1, 2));
}

BOOST_AUTO_TEST_SUITE(i3_one_live_attempt)

BOOST_AUTO_TEST_CASE(attempts_that_follow_one_another_pass) {
  HistoryBuilder h;
  insert_job(h, {});
  // Attempt 1 fails; failover inserts attempt 2, which goes UNKNOWN; an operator cancels it and
  // retries with attempt 3, which wins.
  h.add(kStore, claimed(1, 1))
      .add(kStore, fenced_write(1, 1, S::running, S::failed))
      .add(kStore, attempt_inserted(1, 2, 2, "beta", AttemptOrigin::failover))
      .add(kStore, claimed(1, 2))
      .add(kStore, taken_over(1, 2))
      .add(kStore, unfenced_write(1, 2, S::unknown, S::cancelled, "operator", 2, "reconciler"))
      .add(kStore, attempt_inserted(1, 3, 3, "beta", AttemptOrigin::explicit_retry, "api-1"))
      .add(kStore, claimed(1, 3));
  win(h, {.attempt_id = 3});
  require_none(check_one_live_attempt(h.model()));
}

BOOST_AUTO_TEST_CASE(an_attempt_inserted_while_another_runs_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1));
  const auto second =
      h.add(kStore, attempt_inserted(1, 2, 2, "beta", AttemptOrigin::failover)).last_seq();
  const auto violations = find_invariant("I3")->check(h.model());
  require_one(violations, "I3.two_live", second);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{2});
}

BOOST_AUTO_TEST_CASE(an_attempt_of_a_job_the_log_never_inserted_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  const auto orphan =
      h.add(kStore, attempt_inserted(7, 2, 1, "alpha", AttemptOrigin::explicit_retry, "api-1"))
          .last_seq();
  require_one(check_one_live_attempt(h.model()), "I3.attempt_of_unknown_job", orphan);
}

BOOST_AUTO_TEST_CASE(an_attempt_inserted_while_another_is_unknown_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1)).add(kStore, taken_over(1, 1));
  const auto retry =
      h.add(kStore, attempt_inserted(1, 2, 2, "alpha", AttemptOrigin::explicit_retry, "api-1"))
          .last_seq();
  require_one(check_one_live_attempt(h.model()), "I3.two_live", retry);
}

BOOST_AUTO_TEST_CASE(a_failed_attempt_made_live_again_beside_its_successor_is_a_violation) {
  HistoryBuilder h;
  failed_over_to_beta(h);
  // A broken store revives attempt 1.
  const auto revived =
      h.add(kStore, unfenced_write(1, 1, S::failed, S::running, "reconciler")).last_seq();
  const auto violations = check_one_live_attempt(h.model());
  // FAILED is final, so the step itself is illegal too.
  BOOST_TEST_REQUIRE(violations.size() == 2u, describe(violations));
  BOOST_TEST(violations[0].clause == "I3.illegal_step");
  BOOST_TEST(violations[1].clause == "I3.two_live");
  BOOST_TEST(violations[1].event_seq.value_or(0) == revived);
  BOOST_TEST(violations[1].evidence == std::vector<std::uint64_t>{5});
}

// Each step an attempt's life does not have, committed from the state the log gave the attempt:
// only illegal_step fires.
BOOST_AUTO_TEST_CASE(a_step_the_attempt_life_does_not_have_is_a_violation) {
  struct Case {
    const char* story;
    S from;
    S to;
  };
  const Case cases[] = {
      {"a failure undone", S::failed, S::cancelled},
      {"a discarded result revived for a re-drive", S::discarded, S::starting},
      {"a cancel turned into a failure", S::cancelled, S::failed},
      {"a cancelled attempt made UNKNOWN", S::cancelled, S::unknown},
      {"an unclaimed attempt made UNKNOWN", S::starting, S::unknown},
      {"a running attempt sent back to STARTING", S::running, S::starting},
      {"a win undone", S::succeeded, S::failed},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.story) {
      HistoryBuilder h;
      insert_job(h, {});
      // Bring attempt 1 to `c.from` along legal steps (SUCCEEDED and DISCARDED are written the
      // way the CAS's transition is, as a plain step here: this rule reads only from and to).
      if (c.from != S::starting) h.add(kStore, claimed(1, 1));
      if (c.from == S::cancelled) {
        h.add(kStore, unfenced_write(1, 1, S::running, S::cancelled, "operator"));
      } else if (c.from != S::starting && c.from != S::running) {
        h.add(kStore, fenced_write(1, 1, S::running, c.from));
      }
      const auto step = h.add(kStore, unfenced_write(1, 1, c.from, c.to, "reconciler")).last_seq();
      const auto violations = check_one_live_attempt(h.model());
      // A step back into a live state may also make two live attempts; none here (one attempt).
      require_one(violations, "I3.illegal_step", step);
    }
  }
}

BOOST_AUTO_TEST_CASE(every_step_the_design_names_passes) {
  // One attempt per path, each of the design's steps taken at least once.
  const std::vector<std::vector<S>> paths = {
      {S::starting, S::cancelled},
      {S::starting, S::failed},
      {S::starting, S::running, S::succeeded},
      {S::starting, S::running, S::discarded},
      {S::starting, S::running, S::failed},
      {S::starting, S::running, S::cancelled, S::succeeded},
      {S::starting, S::running, S::cancelled, S::discarded},
      {S::starting, S::running, S::unknown, S::succeeded},
      {S::starting, S::running, S::unknown, S::discarded},
      {S::starting, S::running, S::unknown, S::failed},
      {S::starting, S::running, S::unknown, S::cancelled},
      {S::starting, S::running, S::unknown, S::starting, S::running, S::succeeded},
  };
  for (std::size_t p = 0; p < paths.size(); ++p) {
    BOOST_TEST_CONTEXT("path " << p) {
      HistoryBuilder h;
      insert_job(h, {});
      for (std::size_t i = 1; i < paths[p].size(); ++i) {
        h.add(kStore, unfenced_write(1, 1, paths[p][i - 1], paths[p][i], "reconciler"));
      }
      require_none(check_one_live_attempt(h.model()));
    }
  }
}

// Jobs 1 and 2, each with its first attempt STARTING; worker-1 claims them in `order`.
std::pair<std::vector<Violation>, std::uint64_t> claims_in_order(std::vector<std::int64_t> order) {
  HistoryBuilder h;
  insert_job(h, {});
  insert_job(h, {.job_id = 2, .attempt_id = 2, .key = "k2"});
  std::uint64_t first = 0;
  for (const auto attempt : order) {
    h.add(kStore, claimed(attempt, attempt));
    if (first == 0) first = h.last_seq();
  }
  return {check_one_live_attempt(h.model()), first};
}

BOOST_AUTO_TEST_CASE(a_claim_passing_over_an_older_starting_attempt_is_a_violation) {
  require_none(claims_in_order({1, 2}).first);
  const auto [violations, seq] = claims_in_order({2, 1});
  require_one(violations, "I3.claim_not_oldest", seq);
  // An attempt re-driven to STARTING is waiting again, and older than a newer job's.
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1)).add(kStore, taken_over(1, 1));
  h.add(kStore, unfenced_write(1, 1, S::unknown, S::starting, "reconciler", 2, ""));
  insert_job(h, {.job_id = 2, .attempt_id = 2, .key = "k2"});
  const auto passed_over = h.add(kStore, claimed(2, 2)).last_seq();
  require_one(check_one_live_attempt(h.model()), "I3.claim_not_oldest", passed_over);
}

BOOST_AUTO_TEST_CASE(a_transition_whose_from_contradicts_the_log_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1));
  const auto write = h.add(kStore, fenced_write(1, 1, S::starting, S::failed)).last_seq();
  require_one(check_one_live_attempt(h.model()), "I3.moved_from_another_state", write);
}

BOOST_AUTO_TEST_CASE(a_transition_of_an_attempt_never_inserted_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  const auto write = h.add(kStore, fenced_write(1, 7, S::running, S::failed)).last_seq();
  require_one(check_one_live_attempt(h.model()), "I3.moved_never_inserted", write);
}

BOOST_AUTO_TEST_CASE(a_live_attempt_refusal_while_that_attempt_is_live_passes) {
  HistoryBuilder h;
  running_job(h, 1);
  h.add(kStore, taken_over(1, 1)).add(kStore, live_refused(1, 1));  // UNKNOWN still blocks
  require_none(check_one_live_attempt(h.model()));
}

BOOST_AUTO_TEST_CASE(a_live_attempt_refusal_when_nothing_is_live_is_a_violation) {
  // An operator cancelled the UNKNOWN attempt, yet the store still refuses a retry for it.
  HistoryBuilder h;
  running_job(h, 1);
  h.add(kStore, taken_over(1, 1));
  operator_cancel(h, 1, 1, S::unknown);
  const auto refused = h.add(kStore, live_refused(1, 1)).last_seq();
  require_one(check_one_live_attempt(h.model()), "I3.refused_without_live", refused);
}

// A won job is done: the failover or retry that slips past it after the win is caught, with the
// winning compare-and-swap as evidence; attempts before the win pass.
BOOST_AUTO_TEST_CASE(an_attempt_inserted_after_the_job_was_won_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1));
  win(h, {.attempt_id = 1});
  const auto won = h.last_seq() - 1;  // the compare-and-swap, then the SUCCEEDED write
  const auto late =
      h.add(kStore, attempt_inserted(1, 2, 2, "beta", AttemptOrigin::failover)).last_seq();
  const auto violations = check_one_live_attempt(h.model());
  require_one(violations, "I3.attempt_after_win", late);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{won});
  // The same insert before the win (after a failure) passes.
  HistoryBuilder before;
  failed_over_to_beta(before);
  win(before, {.attempt_id = 2});
  require_none(check_one_live_attempt(before.model()));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
