#include "harness/check/i5_one_winner.hpp"

#include <boost/test/unit_test.hpp>

#include "tests/support/histories.hpp"
#include "tests/support/histories_attempts.hpp"

namespace onejob::check {
namespace {

using test::HistoryBuilder;
using test::attempts::attempt_state;
using test::attempts::job_cas;
using test::attempts::job_completed;
using test::attempts::result_discarded;

const std::string kBilling = R"({"confidence":0.9,"label":"billing"})";
const std::string kOther = R"({"confidence":0.8,"label":"other"})";

bool mentions(const Violation& violation, std::string_view text) {
  return violation.message.find(text) != std::string::npos;
}

// Attempt `attempt_id` wins job `job_id`, as Settlement reports it.
void win(HistoryBuilder& h, std::int64_t job_id, std::int64_t attempt_id) {
  h.add("worker-1", job_cas(job_id, attempt_id, 1, true, attempt_id))
      .add("worker-1", attempt_state(job_id, attempt_id, "RUNNING", "SUCCEEDED", "won"))
      .add("worker-1", job_completed(job_id, attempt_id, kBilling));
}

// Attempt `attempt_id` loses job `job_id` to `winner` (0: nobody won).
void lose(HistoryBuilder& h, std::int64_t job_id, std::int64_t attempt_id, std::int64_t winner,
          std::string from = "RUNNING") {
  h.add("worker-1", job_cas(job_id, attempt_id, 1, false, winner))
      .add("worker-1", attempt_state(job_id, attempt_id, from, "DISCARDED", "lost"))
      .add("worker-1", result_discarded(job_id, attempt_id, winner, kOther));
}

BOOST_AUTO_TEST_SUITE(i5_one_winner)

BOOST_AUTO_TEST_CASE(one_winner_and_recorded_losers_pass) {
  HistoryBuilder h;
  win(h, 1, 1);
  lose(h, 1, 2, 1);
  // A failed job has no winner; a cancelled attempt's late answer loses to nobody.
  lose(h, 2, 3, 0, "CANCELLED");
  // The winner's own events were lost with its reply; the loser still names it.
  lose(h, 3, 5, 4);
  BOOST_TEST(check_one_winner(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_second_winning_compare_and_swap_is_a_violation) {
  HistoryBuilder h;
  win(h, 1, 1);
  h.add("worker-2", job_cas(1, 2, 1, true, 2));
  const auto violations = check_one_winner(h.history());
  BOOST_REQUIRE(!violations.empty());
  BOOST_TEST(violations[0].invariant == "I5");
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[0], "which was already won (event #1): two winners"));
}

BOOST_AUTO_TEST_CASE(winning_after_a_loser_named_another_winner_is_a_violation) {
  HistoryBuilder h;
  // Attempt 1's own events were lost with its reply; attempt 2's loss names it.
  lose(h, 1, 2, 1);
  h.add("worker-3", job_cas(1, 3, 1, true, 3));
  const auto violations = check_one_winner(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[0], "whose winner was already attempt 1 (event #1)"));
}

BOOST_AUTO_TEST_CASE(a_winning_cas_that_names_another_attempt_is_a_violation) {
  HistoryBuilder h;
  h.add("worker-1", job_cas(1, 1, 1, true, 2));
  const auto violations = check_one_winner(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 1u);
  BOOST_TEST(mentions(violations[0], "but names winner 2"));
}

BOOST_AUTO_TEST_CASE(a_second_completion_is_a_violation) {
  HistoryBuilder h;
  win(h, 1, 1);
  h.add("worker-1", job_completed(1, 1, kBilling));
  const auto violations = check_one_winner(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[0], "already completed by attempt 1"));
}

BOOST_AUTO_TEST_CASE(a_version_bumped_other_than_once_is_a_violation) {
  HistoryBuilder h;
  h.add("worker-1", job_cas(1, 1, 2, true, 1))
      .add("worker-1", attempt_state(1, 1, "RUNNING", "SUCCEEDED", "won"))
      .add("worker-1", job_completed(1, 1, kBilling, 3));
  const auto violations = check_one_winner(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 3u);
  BOOST_TEST(mentions(violations[0], "at version 3"));
}

BOOST_AUTO_TEST_CASE(a_loser_naming_another_winner_is_a_violation) {
  HistoryBuilder h;
  win(h, 1, 1);
  h.add("worker-2", job_cas(1, 2, 1, false, 7))
      .add("worker-2", attempt_state(1, 2, "RUNNING", "DISCARDED", "lost"))
      .add("worker-2", result_discarded(1, 2, 1, kOther))
      .add("worker-3", job_cas(1, 3, 1, false, 1))
      .add("worker-3", attempt_state(1, 3, "RUNNING", "DISCARDED", "lost"))
      .add("worker-3", result_discarded(1, 3, 0, kOther));
  const auto violations = check_one_winner(h.history());
  BOOST_REQUIRE(violations.size() == 2u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[0], "names winner 7, but its winner is attempt 1"));
  BOOST_TEST(violations[1].event_seq.value_or(0) == 9u);
  BOOST_TEST(mentions(violations[1], "result.discarded of job 1 names winner 0"));
}

BOOST_AUTO_TEST_CASE(a_loser_without_a_discard_record_is_a_violation_at_its_cas) {
  HistoryBuilder h;
  win(h, 1, 1);
  h.add("worker-2", job_cas(1, 2, 1, false, 1))
      .add("worker-2", attempt_state(1, 2, "RUNNING", "DISCARDED", "lost"));
  // A later violation does not hide the earlier one: violations come in history order.
  h.add("worker-1", job_completed(1, 1, kBilling));
  const auto violations = check_one_winner(h.history());
  BOOST_REQUIRE(violations.size() == 2u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[0], "no result.discarded records it"));
  BOOST_TEST(violations[1].event_seq.value_or(0) == 6u);
}

BOOST_AUTO_TEST_CASE(a_loser_that_never_became_discarded_is_a_violation) {
  HistoryBuilder h;
  win(h, 1, 1);
  h.add("worker-2", job_cas(1, 2, 1, false, 1)).add("worker-2", result_discarded(1, 2, 1, kOther));
  const auto violations = check_one_winner(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[0], "never became DISCARDED"));
}

BOOST_AUTO_TEST_CASE(a_loser_that_succeeds_is_a_violation) {
  HistoryBuilder h;
  win(h, 1, 1);
  h.add("worker-2", job_cas(1, 2, 1, false, 1))
      .add("worker-2", attempt_state(1, 2, "RUNNING", "SUCCEEDED", "lost"))
      .add("worker-2", result_discarded(1, 2, 1, kOther));
  const auto violations = check_one_winner(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 5u);
  BOOST_TEST(mentions(violations[0],
                      "attempt 2 became SUCCEEDED, but the winner of job 1 is "
                      "attempt 1"));
}

BOOST_AUTO_TEST_CASE(completing_with_a_discarded_result_is_a_violation) {
  HistoryBuilder h;
  lose(h, 1, 2, 0);
  h.add("worker-1", job_cas(1, 1, 1, true, 1))
      .add("worker-1", attempt_state(1, 1, "RUNNING", "SUCCEEDED", "won"))
      .add("worker-1", job_completed(1, 2, kOther));
  const auto violations = check_one_winner(h.history());
  BOOST_REQUIRE(violations.size() == 2u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 6u);
  BOOST_TEST(mentions(violations[0], "but its winner is attempt 1"));
  BOOST_TEST(violations[1].event_seq.value_or(0) == 6u);
  BOOST_TEST(mentions(violations[1], "whose result was discarded (event #2)"));
}

BOOST_AUTO_TEST_CASE(discarding_the_winners_result_is_a_violation) {
  HistoryBuilder h;
  win(h, 1, 1);
  h.add("worker-1", result_discarded(1, 1, 1, kBilling));
  const auto violations = check_one_winner(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[0], "the winner of job 1, recorded discarded"));
}

BOOST_AUTO_TEST_CASE(completing_without_any_winning_compare_and_swap_is_a_violation) {
  HistoryBuilder h;
  h.add("worker-1", job_completed(1, 1, kBilling));
  const auto violations = check_one_winner(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 1u);
  BOOST_TEST(mentions(violations[0], "no compare-and-swap was won"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
