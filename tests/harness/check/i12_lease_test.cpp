// I12's lease_length clause on hand-made histories: a claim's expiry against the lease the run
// recorded, from the claim's commit (the latest the worker can have sent it) and from the instant
// its claim loop was last seen moving (the earliest).
#include <chrono>
#include <tuple>

#include <boost/test/unit_test.hpp>

#include "system/events/reconciler_events.hpp"

#include "harness/check/invariant.hpp"
#include "harness/events/provider_events.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using namespace std::chrono_literals;

// worker-1 (started at 0) claims job 1's attempt 1 at 10 s, and job 2's attempt 2 at 11 s, with
// the expiries given; the lease is 2 s. Returns the violations and the second claim's seq.
std::pair<std::vector<Violation>, std::uint64_t> two_claims(Duration first_expiry,
                                                            Duration second_expiry) {
  HistoryBuilder h;
  h.add("world", short_policy());
  h.add("worker-1", events::NodeStarted{.incarnation = 1});
  insert_job(h, {});
  insert_job(h, {.job_id = 2, .attempt_id = 2, .key = "k2"});
  auto first = claimed(1, 1);
  first.lease_expires_at = Instant(first_expiry);
  h.at(10s).add(kStore, first);
  auto second = claimed(2, 2, "worker-1", 1);
  second.lease_expires_at = Instant(second_expiry);
  h.at(11s).add(kStore, second);
  return {check_policy(h.model()), h.last_seq()};
}

// The reconciler asks alpha for job 1's attempt 1 at 10 s (status_timeout 1 s); the transport
// delivers `delivered` (nothing when empty) at `delivered_at`, and the reconciler reports `status`
// at `reported_at`. Returns the violations of I12's status clauses and the report's seq.
std::pair<std::vector<Violation>, std::uint64_t> status_asked(Duration reported_at,
                                                              std::string status,
                                                              std::string delivered = "",
                                                              Duration delivered_at = 0s) {
  HistoryBuilder h;
  h.add("world", short_policy());
  insert_job(h, {});
  h.at(10s).add("reconciler", events::ProviderStatusAsked{.provider = "alpha",
                                                          .provider_key = provider_key(1, 1)});
  if (!delivered.empty()) {
    h.at(delivered_at)
        .add("reconciler", events::ProviderDelivered{.call = std::string(events::kDeliveredStatus),
                                                     .provider = "alpha",
                                                     .provider_key = provider_key(1, 1),
                                                     .outcome = std::move(delivered)});
  }
  const auto report =
      h.at(reported_at)
          .add("reconciler",
               events::ReconcilerStatus{
                   .job_id = 1, .attempt_id = 1, .provider = "alpha", .status = std::move(status)})
          .last_seq();
  auto violations = check_policy(h.model());
  std::erase_if(violations, [](const Violation& v) { return !v.clause.starts_with("I12.status"); });
  return {violations, report};
}

BOOST_AUTO_TEST_SUITE(i12_lease)

BOOST_AUTO_TEST_CASE(i12_a_status_query_waits_status_timeout_no_more_and_no_less) {
  require_none(status_asked(11s, "unreachable").first);  // given up at the timeout
  require_none(status_asked(10500ms, "completed", "completed", 10500ms).first);
  require_none(status_asked(10200ms, "unreachable", "unreachable", 10200ms).first);  // a reset
  auto [late, report] = status_asked(11s + 1ms, "unreachable");
  require_one(late, "I12.status_overdue", report);
  std::tie(late, report) = status_asked(12s, "completed", "completed", 12s);
  require_one(late, "I12.status_overdue", report);
  auto [early, given_up] = status_asked(10500ms, "unreachable");
  require_one(early, "I12.status_dropped", given_up);
  std::tie(early, given_up) = status_asked(11s, "unreachable", "failed", 10500ms);
  require_one(early, "I12.status_dropped", given_up);
}

BOOST_AUTO_TEST_CASE(i12_a_lease_from_between_the_loops_last_move_and_the_commit_passes) {
  // Sent at the commit, or as early as the previous claim's commit.
  require_none(two_claims(12s, 13s).first);
  require_none(two_claims(12s, 12s).first);
  require_none(two_claims(11500ms, 12500ms).first);
}

BOOST_AUTO_TEST_CASE(i12_a_lease_past_the_commit_plus_the_lease_is_a_violation) {
  const auto [violations, second] = two_claims(12s, 13s + 1ms);
  require_one(violations, "I12.lease_length", second);
}

BOOST_AUTO_TEST_CASE(i12_a_lease_shorter_than_the_lease_is_a_violation) {
  // The second claim was sent after the first one's commit at 10 s: it runs until 12 s at least.
  const auto [violations, second] = two_claims(12s, 12s - 1ms);
  require_one(violations, "I12.lease_length", second);
  // The first claim, sent after the worker's start at 0: a lease ending before 2 s.
  require_one(two_claims(2s - 1ms, 13s).first, "I12.lease_length", second - 1);
}

BOOST_AUTO_TEST_CASE(i12_a_claim_of_an_incarnation_after_a_crash_is_timed_from_its_start) {
  // worker-1 crashes after its claim at 10 s and starts again at 20 s: its next claim, committed
  // at 21 s, was sent after 20 s.
  HistoryBuilder h;
  h.add("world", short_policy());
  insert_job(h, {});
  insert_job(h, {.job_id = 2, .attempt_id = 2, .key = "k2"});
  auto first = claimed(1, 1);
  first.lease_expires_at = Instant(12s);
  h.at(10s).add(kStore, first);
  h.at(15s).add("worker-1", events::NodeCrashed{});
  h.at(20s).add("worker-1", events::NodeStarted{.incarnation = 2});
  auto second = claimed(2, 2);
  second.lease_expires_at = Instant(22s - 1ms);
  const auto seq = h.at(21s).add(kStore, second).last_seq();
  require_one(check_policy(h.model()), "I12.lease_length", seq);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
