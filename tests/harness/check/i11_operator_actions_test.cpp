// I11 on hand-made histories, beside new_rules_test.cpp's: a refusal whose grounds held when the
// node made it is no refused replay, shown passing where they held and failing where they did not;
// a retry naming no provider retries the provider of the job's latest attempt; a key is refused as
// reused only once its owner recorded it.
#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

BOOST_AUTO_TEST_SUITE(i11_operator_actions)

// Two identical retries of job 1 naming alpha, under one key at one instant. Request 3 reaches
// api-1 first and is refused 422 provider_not_certified; request 2 records the key. When alpha's
// certification passed only between the two (the refusal read it before), the refusal told the
// truth when it was made; with alpha certified all along, the same 422 refused a replay.
BOOST_AUTO_TEST_CASE(a_twin_refused_while_its_provider_was_uncertified_passes) {
  for (const bool certified_all_along : {false, true}) {
    BOOST_TEST_CONTEXT("certified all along: " << certified_all_along) {
      HistoryBuilder h;
      first_attempt_failed(h);
      if (certified_all_along) certify(h, "alpha", true);
      for (const std::int64_t request : {2, 3}) {
        auto sent = retry_sent(request, 1, "op-1");
        sent.body = R"({"provider":"alpha"})";
        h.add("ops", sent);
      }
      const auto [recorder, twin] = retry_twins(422, "provider_not_certified");
      api_request(h, twin);
      if (!certified_all_along) certify(h, "alpha", true);
      api_request(h, recorder);
      insert_keyed_retry(h, "op-1");
      api_response(h, recorder);
      const auto answered = api_response(h, twin).last_seq();
      const auto violations = check_operator_actions(h.model());
      if (certified_all_along) {
        require_one(violations, "I11.replay_refused", answered);
      } else {
        require_no(violations, "I11.replay_refused");
      }
    }
  }
}

// Job 1 ran on alpha and failed over to beta, which failed too. Request 2 retries it naming no
// provider, and its 201 names attempt 3, which the store inserted on `retried_on`. With `race`, a
// failover onto gamma was inserted after the send and before the retry.
std::pair<std::vector<Violation>, std::uint64_t> bodiless_retry(const std::string& retried_on,
                                                                bool race) {
  HistoryBuilder h;
  first_attempt_failed(h);
  h.add(kStore, attempt_inserted(1, 2, 2, "beta", AttemptOrigin::failover, "worker-1"));
  h.add(kStore, claimed(1, 2, "worker-1", 1))
      .add(kStore, fenced_write(1, 2, S::running, S::failed, "worker-1", 1));
  h.add("ops", retry_sent(2, 1, "op-1"));
  std::int64_t next = 3;
  if (race) {
    h.add(kStore, attempt_inserted(1, 3, 3, "gamma", AttemptOrigin::failover, "worker-1"));
    h.add(kStore, fenced_write(1, 3, S::starting, S::failed, "worker-1", 0));
    next = 4;
  }
  auto retry = attempt_inserted(1, next, next, retried_on, AttemptOrigin::explicit_retry, "api-1");
  retry.action_owner = "alice";
  retry.action_key = "op-1";
  h.add(kStore, retry);
  const auto seq = h.add("ops", events::ClientReceived{.request = 2,
                                                       .send = 1,
                                                       .status = 201,
                                                       .body_digest = "aa",
                                                       .job_id = 1,
                                                       .attempt_id = next,
                                                       .shown_state = "STARTING",
                                                       .shown_attempt_no = next,
                                                       .shown_provider = retried_on})
                       .last_seq();
  return {check_operator_actions(h.model()), seq};
}

BOOST_AUTO_TEST_CASE(a_retry_naming_no_provider_retries_the_latest_attempts) {
  require_no(bodiless_retry("beta", false).first, "I11.unbacked_success");
  const auto [violations, seq] = bodiless_retry("alpha", false);
  require_one(violations, "I11.unbacked_success", seq);
  // The node may have read the attempts before or after the failover that raced the retry.
  require_no(bodiless_retry("beta", true).first, "I11.unbacked_success");
  require_no(bodiless_retry("gamma", true).first, "I11.unbacked_success");
  const auto [raced, raced_seq] = bodiless_retry("alpha", true);
  require_one(raced, "I11.unbacked_success", raced_seq);
}

// Job 1's attempt failed and alice's retry recorded key op-1 (`recorded_first`: before request 3,
// a retry under op-1 by `owner` answered 422 idempotency_key_reused; otherwise after it).
std::pair<std::vector<Violation>, std::uint64_t> refused_as_reused(const std::string& owner,
                                                                   bool recorded_first) {
  HistoryBuilder h;
  first_attempt_failed(h);
  if (recorded_first) insert_keyed_retry(h, "op-1");
  const ApiCall refused{.request = 3,
                        .route = "create_attempt",
                        .owner = owner,
                        .key = "op-1",
                        .status = 422,
                        .asks = 1,
                        .error = "idempotency_key_reused"};
  const auto seq = api_exchange(h, refused).last_seq();
  if (!recorded_first) insert_keyed_retry(h, "op-1");
  return {check_operator_actions(h.model()), seq};
}

// Request 2 retries job 1 under op-1; api-1 handles its send (once, or twice when the balancer
// retried it on api-1 too) and records the key; its 201 is marked replayed when `marked`.
std::pair<std::vector<Violation>, std::uint64_t> first_retry(bool marked, bool handled_twice) {
  HistoryBuilder h;
  first_attempt_failed(h);
  h.add("ops", retry_sent(2, 1, "op-1"));
  const ApiCall call{.request = 2, .route = "create_attempt", .key = "op-1", .job_id = 1};
  api_request(h, call);
  if (handled_twice) {
    ApiCall again = call;
    again.lb_try = 2;
    api_exchange(h, again);
  }
  insert_keyed_retry(h, "op-1");
  api_response(h, call);
  events::ClientReceived got{.request = 2,
                             .send = 1,
                             .status = 201,
                             .body_digest = "aa",
                             .job_id = 1,
                             .attempt_id = 2,
                             .shown_state = "STARTING",
                             .shown_attempt_no = 2,
                             .shown_provider = "alpha"};
  if (marked) got.replayed = true;
  const auto seq = h.add("ops", got).last_seq();
  return {check_operator_actions(h.model()), seq};
}

BOOST_AUTO_TEST_CASE(the_answer_of_the_send_that_recorded_the_key_is_not_marked_replayed) {
  require_none(first_retry(/*marked=*/false, /*handled_twice=*/false).first);
  const auto [violations, seq] = first_retry(/*marked=*/true, /*handled_twice=*/false);
  require_one(violations, "I11.first_marked_replayed", seq);
  // Handled twice (the second exchange answered first, finding the key): either may be the answer.
  require_no(first_retry(/*marked=*/true, /*handled_twice=*/true).first,
             "I11.first_marked_replayed");
}

BOOST_AUTO_TEST_CASE(a_key_is_refused_as_reused_only_once_its_owner_recorded_it) {
  require_no(refused_as_reused("alice", true).first, "I11.free_key_refused");
  for (const auto& [owner, recorded_first] :
       {std::pair{"bob", true}, std::pair{"alice", false}, std::pair{"bob", false}}) {
    const auto [violations, seq] = refused_as_reused(owner, recorded_first);
    require_one(violations, "I11.free_key_refused", seq);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
