#include <chrono>

#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

// Job 1: attempt 1 (worker-1) is cancelled by an operator while running; attempt 2 (worker-2,
// the operator's retry) runs and alpha executes it with kBilling. Nobody has completed yet.
void cancel_and_retry(HistoryBuilder& h) {
  insert_job(h, {});
  h.add(kStore, claimed(1, 1))
      .add("alpha", executed(1, 1, "ok", kOther, kSoon))
      .add(kStore, unfenced_write(1, 1, S::running, S::cancelled, "operator"))
      .add(kStore, attempt_inserted(1, 2, 2, "alpha", AttemptOrigin::explicit_retry, "api-1"))
      .add(kStore, claimed(1, 2, "worker-2"))
      .add("alpha", executed(1, 2, "ok", kBilling, kSoon));
}

// Job 1's attempt 1 runs; alpha executes it with kBilling (event 4).
void run_attempt_1(HistoryBuilder& h) {
  insert_job(h, {});
  h.add(kStore, claimed(1, 1)).add("alpha", executed(1, 1, "ok", kBilling, kSoon));
}

BOOST_AUTO_TEST_SUITE(i5_one_winner)

BOOST_AUTO_TEST_CASE(one_winner_a_discarded_loser_and_a_faithful_read_pass) {
  HistoryBuilder h;
  cancel_and_retry(h);
  h.add("browser", get_sent(2, "alice", 1))
      .add("browser", read_received(2, 1, "running", std::nullopt, std::nullopt));
  win(h, {.attempt_id = 2, .by = "worker-2"});
  // The cancelled attempt's late result loses to attempt 2.
  lose(h, {.attempt_id = 1, .result = kOther, .from = S::cancelled}, 2, kBilling);
  // The reader's JSON has its keys in another order: the same result.
  h.add("browser", get_sent(3, "alice", 1))
      .add("browser", read_received(3, 1, "succeeded", 2,
                                    json_digest(R"({"label": "billing", "confidence": 0.9})")));
  require_none(check_one_winner(h.model()));
}

BOOST_AUTO_TEST_CASE(a_second_winning_compare_and_swap_is_a_violation) {
  HistoryBuilder h;
  cancel_and_retry(h);
  const auto first = win(h, {.attempt_id = 2, .by = "worker-2"}).last_seq() - 1;
  const auto second =
      win(h, {.attempt_id = 1, .result = kOther, .from = S::cancelled}).last_seq() - 1;
  const auto violations = find_invariant("I5")->check(h.model());
  require_one(violations, "I5.two_winners", second);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{first});
}

BOOST_AUTO_TEST_CASE(a_win_that_does_not_move_the_version_from_1_to_2_is_a_violation) {
  HistoryBuilder h;
  run_attempt_1(h);
  auto cas = cas_won(1, 1, kBilling);
  cas.expected_version = 2;
  cas.version = 3;
  const auto won = h.add(kStore, cas).last_seq();
  h.add(kStore, fenced_write(1, 1, S::running, S::succeeded));
  require_one(check_one_winner(h.model()), "I5.version_not_bumped_once", won);
}

BOOST_AUTO_TEST_CASE(a_win_whose_job_result_is_not_the_offered_output_is_a_violation) {
  HistoryBuilder h;
  run_attempt_1(h);
  auto cas = cas_won(1, 1, kBilling);
  cas.job_result = kOther;
  const auto won = h.add(kStore, cas).last_seq();
  h.add(kStore, fenced_write(1, 1, S::running, S::succeeded));
  require_one(check_one_winner(h.model()), "I5.result_not_offered", won);
}

BOOST_AUTO_TEST_CASE(a_loss_when_the_job_had_no_winner_is_a_violation) {
  HistoryBuilder h;
  run_attempt_1(h);
  const auto lost = lose(h, {.attempt_id = 1}, 0, "").last_seq() - 1;
  require_one(check_one_winner(h.model()), "I5.lost_without_winner", lost);
}

BOOST_AUTO_TEST_CASE(a_loser_that_took_over_the_job_is_a_violation) {
  HistoryBuilder h;
  cancel_and_retry(h);
  const auto won = win(h, {.attempt_id = 2, .by = "worker-2"}).last_seq() - 1;
  // The job now names attempt 1 and its result although attempt 1 lost.
  const auto lost =
      lose(h, {.attempt_id = 1, .result = kOther, .from = S::cancelled}, 1, kOther).last_seq() - 1;
  const auto violations = check_one_winner(h.model());
  require_one(violations, "I5.loser_reached_job", lost);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{won});
}

// Attempt 1's provider produced kOther for it; attempt 2 wins with kBilling; the store records
// `recorded` as attempt 1's discarded result. Returns the violations and the losing CAS's seq.
std::pair<std::vector<Violation>, std::uint64_t> loser_recorded_as(const std::string& recorded) {
  HistoryBuilder h;
  cancel_and_retry(h);
  win(h, {.attempt_id = 2, .by = "worker-2"});
  const auto lost =
      lose(h, {.attempt_id = 1, .result = recorded, .from = S::cancelled}, 2, kBilling).last_seq();
  return {check_one_winner(h.model()), lost - 1};
}

BOOST_AUTO_TEST_CASE(a_loser_recorded_with_bytes_not_its_own_is_a_violation) {
  // Its own output with the keys in another order is the same JSON value.
  require_none(loser_recorded_as(R"({"label": "other", "confidence": 0.8})").first);
  // The store keeping no bytes for the loser (an empty result) is not its output either.
  for (const std::string& recorded :
       {kBilling, std::string(R"({"confidence":0.4,"label":"other"})"), std::string()}) {
    const auto [violations, lost] = loser_recorded_as(recorded);
    require_one(violations, "I5.discarded_not_own", lost);
  }
}

BOOST_AUTO_TEST_CASE(a_loser_whose_provider_never_executed_it_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, attempt_inserted(1, 2, 2, "alpha", AttemptOrigin::explicit_retry, "api-1"));
  h.add("alpha", executed(1, 2, "ok", kBilling, kSoon));
  win(h, {.attempt_id = 2, .by = "worker-2"});
  const auto lost = lose(h, {.attempt_id = 1, .result = kOther}, 2, kBilling).last_seq() - 1;
  require_one(check_one_winner(h.model()), "I5.discarded_not_own", lost);
}

BOOST_AUTO_TEST_CASE(a_winner_that_does_not_become_succeeded_is_a_violation) {
  HistoryBuilder h;
  run_attempt_1(h);
  const auto won = h.add(kStore, cas_won(1, 1, kBilling)).last_seq();
  h.add(kStore, fenced_write(1, 1, S::running, S::failed));
  require_one(check_one_winner(h.model()), "I5.state_after_cas", won);
}

BOOST_AUTO_TEST_CASE(an_attempt_succeeding_without_a_compare_and_swap_is_a_violation) {
  HistoryBuilder h;
  run_attempt_1(h);
  const auto succeeded = h.add(kStore, fenced_write(1, 1, S::running, S::succeeded)).last_seq();
  require_one(check_one_winner(h.model()), "I5.settled_without_cas", succeeded);
}

BOOST_AUTO_TEST_CASE(a_read_showing_a_result_other_than_the_winners_output_is_a_violation) {
  HistoryBuilder h;
  run_attempt_1(h);
  const auto won = win(h, {.attempt_id = 1}).last_seq() - 1;
  h.add("browser", get_sent(2, "alice", 1));
  const auto read =
      h.add("browser", read_received(2, 1, "succeeded", 1, json_digest(kOther))).last_seq();
  const auto violations = check_one_winner(h.model());
  require_one(violations, "I5.read_wrong_result", read);
  BOOST_TEST(violations[0].evidence == (std::vector<std::uint64_t>{won, 4}));
}

BOOST_AUTO_TEST_CASE(a_read_showing_the_wrong_winner_is_a_violation) {
  HistoryBuilder h;
  cancel_and_retry(h);
  win(h, {.attempt_id = 2, .by = "worker-2"});
  h.add("browser", get_sent(2, "alice", 1));
  const auto read =
      h.add("browser", read_received(2, 1, "succeeded", 1, json_digest(kOther))).last_seq();
  require_one(check_one_winner(h.model()), "I5.read_wrong_winner", read);
}

BOOST_AUTO_TEST_CASE(a_read_showing_a_winner_beside_another_status_is_a_violation) {
  for (const char* shown : {"pending", "failed"}) {
    BOOST_TEST_CONTEXT(shown) {
      HistoryBuilder h;
      run_attempt_1(h);
      h.add("browser", get_sent(2, "alice", 1));
      const auto read = h.add("browser", read_received(2, 1, shown, 1, std::nullopt)).last_seq();
      require_one(check_one_winner(h.model()), "I5.read_wrong_winner", read);
    }
  }
  // The same reads without completed_by are not this rule's business.
  HistoryBuilder h;
  run_attempt_1(h);
  h.add("browser", get_sent(2, "alice", 1));
  h.add("browser", read_received(2, 1, "pending", std::nullopt, std::nullopt));
  BOOST_TEST(check_one_winner(h.model()).empty());
}

BOOST_AUTO_TEST_CASE(a_read_showing_success_before_any_win_is_a_violation) {
  HistoryBuilder h;
  run_attempt_1(h);
  h.add("browser", get_sent(2, "alice", 1));
  const auto read =
      h.add("browser", read_received(2, 1, "succeeded", 1, json_digest(kBilling))).last_seq();
  win(h, {.attempt_id = 1});
  require_one(check_one_winner(h.model()), "I5.read_winner_unknown_to_store", read);
}

BOOST_AUTO_TEST_CASE(a_read_that_began_after_the_win_showing_pending_is_a_violation) {
  HistoryBuilder h;
  run_attempt_1(h);
  win(h, {.attempt_id = 1});
  const ApiCall get{.request = 2, .route = "get_job", .status = 200, .job_id = 1};
  h.add("browser", get_sent(2, "alice", 1));
  api_exchange(h, get);
  const auto read =
      h.add("browser", read_received(2, 1, "pending", std::nullopt, std::nullopt)).last_seq();
  require_one(check_one_winner(h.model()), "I5.read_after_win_not_won", read);
}

BOOST_AUTO_TEST_CASE(a_read_that_began_before_the_win_may_show_pending) {
  HistoryBuilder h;
  run_attempt_1(h);
  const ApiCall get{.request = 2, .route = "get_job", .status = 200, .job_id = 1};
  h.add("browser", get_sent(2, "alice", 1));
  api_request(h, get);
  win(h, {.attempt_id = 1});
  api_response(h, get);
  h.add("browser", read_received(2, 1, "pending", std::nullopt, std::nullopt));
  require_none(check_one_winner(h.model()));
}

// A 200 read of job 1 in request `request` showing it succeeded by attempt 2 with kBilling, with
// `nested` (the digests of the objects nested in its body) as its client recorded them.
events::ClientReceived read_with_nested(std::int64_t request, std::int64_t winner,
                                        const std::string& result, std::string nested) {
  auto got = read_received(request, 1, "succeeded", winner, json_digest(result));
  got.nested_digests = std::move(nested);
  return got;
}

BOOST_AUTO_TEST_CASE(a_read_showing_a_discarded_result_nested_in_its_body_is_a_violation) {
  HistoryBuilder h;
  cancel_and_retry(h);  // attempt 1's execution is event 4
  win(h, {.attempt_id = 2, .by = "worker-2"});
  lose(h, {.attempt_id = 1, .result = kOther, .from = S::cancelled}, 2, kBilling);
  // An attempt entry and the loser's output (its keys in another order: the same object).
  const std::string nested = *json_digest(R"({"attempt_id":1,"state":"DISCARDED"})") + "," +
                             *json_digest(R"({"label": "other", "confidence": 0.8})");
  h.add("browser", get_sent(2, "alice", 1));
  const auto read = h.add("browser", read_with_nested(2, 2, kBilling, nested)).last_seq();
  const auto violations = check_one_winner(h.model());
  require_one(violations, "I5.discarded_result_shown", read);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{4});
}

BOOST_AUTO_TEST_CASE(nested_objects_that_are_no_attempts_output_pass) {
  HistoryBuilder h;
  cancel_and_retry(h);
  win(h, {.attempt_id = 2, .by = "worker-2"});
  lose(h, {.attempt_id = 1, .result = kOther, .from = S::cancelled}, 2, kBilling);
  h.add("browser", get_sent(2, "alice", 1))
      .add("browser", read_with_nested(2, 2, kBilling,
                                       *json_digest(R"({"attempt_id":1,"state":"DISCARDED"})")));
  require_none(check_one_winner(h.model()));
}

BOOST_AUTO_TEST_CASE(the_winners_output_may_be_shown_nested_only_once_it_won) {
  HistoryBuilder h;
  run_attempt_1(h);  // attempt 1's execution (kBilling) is event 4
  h.add("browser", get_sent(2, "alice", 1));
  auto early = read_received(2, 1, "running", std::nullopt, std::nullopt);
  early.nested_digests = *json_digest(kBilling);
  const auto before = h.add("browser", early).last_seq();
  win(h, {.attempt_id = 1});
  h.add("browser", get_sent(3, "alice", 1))
      .add("browser", read_with_nested(3, 1, kBilling, *json_digest(kBilling)));
  const auto violations = check_one_winner(h.model());
  require_one(violations, "I5.discarded_result_shown", before);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{4});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
