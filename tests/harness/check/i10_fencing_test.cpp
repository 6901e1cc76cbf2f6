#include <utility>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

constexpr std::uint64_t kClaim = 3;  // worker-1's claim in lease_taken_over()

// worker-1 claims job 1's attempt 1 (token 1, event kClaim); its lease expires and the reconciler
// takes the attempt over (RUNNING -> UNKNOWN, token 2).
void lease_taken_over(HistoryBuilder& h) {
  insert_job(h, {});
  h.add(kStore, claimed(1, 1, "worker-1", 1)).add(kStore, taken_over(1, 1, 2));
}

// worker-1's late write with its old token, as a store that did not check the fence commits it:
// the attempt keeps the reconciler's lease.
events::CommitAttemptTransition stale_write(S from, S to) {
  auto write = fenced_write(1, 1, from, to, "worker-1", 1);
  write.token = 2;
  write.lease_owner = "reconciler";
  return write;
}

BOOST_AUTO_TEST_SUITE(i10_fencing)

BOOST_AUTO_TEST_CASE(a_holders_own_writes_pass) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1, "worker-1", 1));
  win(h, {.by = "worker-1", .token = 1});
  require_none(check_fencing(h.model()));
}

BOOST_AUTO_TEST_CASE(a_late_write_refused_after_a_takeover_passes) {
  HistoryBuilder h;
  lease_taken_over(h);
  // worker-1's late write is refused; the reconciler and an operator write out of band.
  h.add(kStore, fenced_out(1, 1, "worker-1"))
      .add(kStore, unfenced_write(1, 1, S::unknown, S::cancelled, "operator", 2, "reconciler"));
  require_none(check_fencing(h.model()));
}

BOOST_AUTO_TEST_CASE(a_workers_write_committed_after_a_takeover_is_a_violation) {
  HistoryBuilder h;
  lease_taken_over(h);
  const auto late = h.add(kStore, stale_write(S::unknown, S::failed)).last_seq();
  const auto violations = find_invariant("I10")->check(h.model());
  require_one(violations, "I10.write_after_takeover", late);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{kClaim});
}

BOOST_AUTO_TEST_CASE(a_late_completion_after_a_takeover_and_a_cancel_is_a_violation) {
  HistoryBuilder h;
  lease_taken_over(h);
  // An operator cancels the attempt; worker-1's late result then lands although it was fenced.
  operator_cancel(h, 1, 1, S::unknown, 2, "reconciler");
  const auto late = h.add(kStore, stale_write(S::cancelled, S::discarded)).last_seq();
  require_one(check_fencing(h.model()), "I10.write_after_takeover", late);
}

BOOST_AUTO_TEST_CASE(a_write_after_a_takeover_that_kept_the_token_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1, "worker-1", 1));
  // The reconciler moves the expired attempt to UNKNOWN without bumping the token: the store
  // cannot fence worker-1 any more, but its lease is over all the same.
  const auto takeover = h.add(kStore, taken_over(1, 1, 1)).last_seq();
  const auto late =
      h.add(kStore, fenced_write(1, 1, S::unknown, S::failed, "worker-1", 1)).last_seq();
  const auto violations = check_fencing(h.model());
  BOOST_TEST_REQUIRE(violations.size() == 2u, describe(violations));
  BOOST_TEST(violations[0].clause == "I10.lease_not_handed_over");
  BOOST_TEST(violations[0].event_seq.value_or(0) == takeover);
  BOOST_TEST(violations[1].clause == "I10.write_after_takeover");
  BOOST_TEST(violations[1].event_seq.value_or(0) == late);
}

BOOST_AUTO_TEST_CASE(a_takeover_that_leaves_the_lease_with_its_holder_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1, "worker-1", 1));
  auto kept = taken_over(1, 1, 2);
  kept.lease_owner = "worker-1";  // the store forgot to hand the lease over
  const auto seq = h.add(kStore, kept).last_seq();
  require_one(check_fencing(h.model()), "I10.lease_not_handed_over", seq);
}

// worker-1 claims attempt 1 with a lease to 10 s; the reconciler takes it over at `when`.
std::vector<Violation> takeover_at(Duration when, std::uint64_t* takeover_seq = nullptr) {
  HistoryBuilder h;
  insert_job(h, {});
  auto claim = claimed(1, 1, "worker-1", 1);
  claim.lease_expires_at = Instant(std::chrono::seconds(10));
  h.add(kStore, claim);
  const auto seq = h.at(when).add(kStore, taken_over(1, 1, 2)).last_seq();
  if (takeover_seq) *takeover_seq = seq;
  return check_fencing(h.model());
}

BOOST_AUTO_TEST_CASE(a_takeover_once_the_lease_ran_out_passes) {
  require_none(takeover_at(std::chrono::seconds(10)));
  require_none(takeover_at(std::chrono::seconds(11)));
}

BOOST_AUTO_TEST_CASE(a_takeover_of_a_lease_still_running_is_a_violation) {
  std::uint64_t seq = 0;
  const auto violations = takeover_at(std::chrono::milliseconds(9999), &seq);
  require_one(violations, "I10.takeover_before_expiry", seq);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{kClaim});
  BOOST_TEST(violations[0].message.find("worker-1") != std::string::npos, violations[0].message);
}

BOOST_AUTO_TEST_CASE(a_worker_writing_under_another_workers_lease_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  const auto claim = h.add(kStore, claimed(1, 1, "worker-2", 1)).last_seq();
  // worker-1 took up worker-2's RUNNING attempt and wrote it under worker-2's token: the store's
  // fence cannot tell the two writers apart.
  const auto foreign =
      h.add(kStore, fenced_write(1, 1, S::running, S::unknown, "worker-1", 1)).last_seq();
  const auto violations = check_fencing(h.model());
  require_one(violations, "I10.foreign_lease_written", foreign);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{claim});
}

BOOST_AUTO_TEST_CASE(a_token_no_claim_handed_out_is_foreign_too_but_not_for_the_reconciler) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1, "worker-2", 1))
      .add(kStore, fenced_write(1, 1, S::running, S::unknown, "worker-2", 1));
  // The reconciler settles an UNKNOWN attempt under the token it found: out of band, as an
  // operator's write; a worker naming a token nobody was handed is not.
  h.add(kStore, fenced_write(1, 1, S::unknown, S::failed, "reconciler", 1));
  require_none(check_fencing(h.model()));
  HistoryBuilder g;
  insert_job(g, {});
  // Token 0 is the attempt's own before any claim, so the write is not stale: only foreign.
  const auto made_up =
      g.add(kStore, fenced_write(1, 1, S::starting, S::failed, "worker-1", 0)).last_seq();
  require_one(check_fencing(g.model()), "I10.foreign_lease_written", made_up);
}

BOOST_AUTO_TEST_CASE(i10_a_refusal_for_the_wrong_reason_is_a_violation) {
  // worker-1 claimed attempt 1 under token 1; the reconciler took the lease over (token 2).
  const auto refused = [](std::string refusal, std::int64_t fence, std::string from) {
    HistoryBuilder h;
    insert_job(h, {});
    h.add(kStore, claimed(1, 1, "worker-1", 1)).add(kStore, taken_over(1, 1));
    h.add(kStore, events::StoreRefused{.operation = "update_attempt",
                                       .refusal = std::move(refusal),
                                       .job_id = 1,
                                       .attempt_id = 1,
                                       .wanted = S::unknown,
                                       .by = "worker-1",
                                       .fence = fence,
                                       .from = std::move(from)});
    return std::pair{check_fencing(h.model()), h.last_seq()};
  };
  require_none(refused("fenced", 1, "RUNNING").first);
  require_none(refused("state", 2, "RUNNING").first);  // UNKNOWN now: not a state it allows
  for (const auto& [refusal, fence, from] :
       {std::tuple{"state", 1, "RUNNING"}, std::tuple{"fenced", 2, "RUNNING"},
        std::tuple{"state", 2, "RUNNING,UNKNOWN"}}) {
    const auto [violations, seq] = refused(refusal, fence, from);
    require_one(violations, "I10.refusal_misjudged", seq);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
