#include <chrono>

#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

// Job 1's attempt 1 runs on alpha, which hangs; the reconciler takes the lease over (UNKNOWN).
void attempt_1_hangs(HistoryBuilder& h) {
  insert_job(h, {});
  h.add(kStore, claimed(1, 1))
      .add("alpha", executed(1, 1, "hang", "", std::nullopt))
      .add(kStore, taken_over(1, 1));
}

// An operator's retry, attempt 2 of job 1, is inserted and claimed by worker-2.
void retry(HistoryBuilder& h) {
  h.add(kStore, attempt_inserted(1, 2, 2, "alpha", AttemptOrigin::explicit_retry, "api-1"))
      .add(kStore, claimed(1, 2, "worker-2"));
}

BOOST_AUTO_TEST_SUITE(i9_side_effects)

BOOST_AUTO_TEST_CASE(executing_again_after_the_earlier_attempt_was_cancelled_passes) {
  HistoryBuilder h;
  attempt_1_hangs(h);
  operator_cancel(h, 1, 1, S::unknown, 2, "reconciler");
  retry(h);
  h.add("alpha", executed(1, 2, "ok", kBilling, kSoon));
  // Certification calls belong to no job: checking alpha twice is no repeated side effect.
  auto certification_call = executed(0, 0, "ok", kBilling, kSoon);
  certification_call.purpose = "certification";
  h.add("alpha", certification_call).add("alpha", certification_call);
  require_none(check_side_effects(h.model()));
}

BOOST_AUTO_TEST_CASE(a_provider_key_executed_twice_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  const auto first =
      h.add(kStore, claimed(1, 1)).add("alpha", executed(1, 1, "ok", kBilling, kSoon)).last_seq();
  const auto again = h.add("alpha", executed(1, 1, "ok", kBilling, kSoon)).last_seq();
  const auto violations = find_invariant("I9")->check(h.model());
  require_one(violations, "I9.executed_twice", again);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{first});
}

BOOST_AUTO_TEST_CASE(executing_while_the_earlier_attempt_is_unknown_is_a_violation) {
  HistoryBuilder h;
  attempt_1_hangs(h);
  // Nobody cancelled attempt 1: a timeout alone allows nothing.
  retry(h);
  const auto second = h.add("alpha", executed(1, 2, "ok", kBilling, kSoon)).last_seq();
  const auto violations = check_side_effects(h.model());
  require_one(violations, "I9.executed_beside_earlier", second);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{2});
}

BOOST_AUTO_TEST_CASE(executing_after_a_cancel_no_operator_asked_for_is_a_violation) {
  HistoryBuilder h;
  attempt_1_hangs(h);
  // The reconciler cancels the UNKNOWN attempt on its own and moves on: no operator asked.
  h.add(kStore, unfenced_write(1, 1, S::unknown, S::cancelled, "reconciler", 2, "reconciler"));
  retry(h);
  const auto second = h.add("alpha", executed(1, 2, "ok", kBilling, kSoon)).last_seq();
  require_one(check_side_effects(h.model()), "I9.executed_beside_earlier", second);
}

BOOST_AUTO_TEST_CASE(two_attempts_under_one_provider_key_are_a_violation) {
  // Jobs 1 and 2, each with its own key, pass.
  HistoryBuilder apart;
  insert_job(apart, {});
  insert_job(apart, {.job_id = 2, .attempt_id = 2, .key = "k-2"});
  require_none(check_side_effects(apart.model()));

  // Job 2's first attempt under job 1's key: alpha would answer it with job 1's work.
  HistoryBuilder h;
  insert_job(h, {});
  const auto first = h.last_seq();
  h.add(kStore, job_inserted({.job_id = 2, .attempt_id = 2, .key = "k-2"}));
  auto shared = attempt_inserted(2, 2, 1, "alpha");
  shared.provider_key = provider_key(1, 1);
  const auto second = h.add(kStore, shared).last_seq();
  const auto violations = check_side_effects(h.model());
  require_one(violations, "I9.key_shared", second);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{first});

  // A retry of job 1 under its first attempt's key, likewise.
  HistoryBuilder again;
  insert_job(again, {});
  auto reused = attempt_inserted(1, 2, 2, "alpha", AttemptOrigin::explicit_retry, "api-1");
  reused.provider_key = provider_key(1, 1);
  const auto retried = again.add(kStore, reused).last_seq();
  require_one(check_side_effects(again.model()), "I9.key_shared", retried);
}

BOOST_AUTO_TEST_CASE(a_provider_key_other_than_job_id_colon_attempt_no_is_a_violation) {
  for (const std::string key : {"1-2", "12", "1:1:2", "2:1", "1:2 "}) {
    HistoryBuilder h;
    insert_job(h, {});
    auto odd = attempt_inserted(1, 2, 2, "alpha", AttemptOrigin::explicit_retry, "api-1");
    odd.provider_key = key;
    const auto seq = h.add(kStore, odd).last_seq();
    require_one(check_side_effects(h.model()), "I9.key_format", seq);
  }
}

BOOST_AUTO_TEST_CASE(an_attempt_executed_at_another_provider_is_a_violation) {
  // Job 1's attempt 2 is beta's; alpha executes its key.
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1)).add(kStore, fenced_write(1, 1, S::running, S::failed));
  h.add(kStore, attempt_inserted(1, 2, 2, "beta", AttemptOrigin::failover));
  const auto inserted = h.last_seq();
  const auto seq = h.add("alpha", executed(1, 2, "ok", kBilling, kSoon)).last_seq();
  const auto violations = check_side_effects(h.model());
  require_one(violations, "I9.executed_elsewhere", seq);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{inserted});
  HistoryBuilder right;
  insert_job(right, {});
  right.add(kStore, claimed(1, 1)).add(kStore, fenced_write(1, 1, S::running, S::failed));
  right.add(kStore, attempt_inserted(1, 2, 2, "beta", AttemptOrigin::failover));
  right.add("beta", executed(1, 2, "ok", kBilling, kSoon));
  require_none(check_side_effects(right.model()));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
