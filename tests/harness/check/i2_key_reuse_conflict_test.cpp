#include "harness/check/i2_key_reuse_conflict.hpp"

#include <boost/test/unit_test.hpp>

#include "tests/support/histories.hpp"
#include "tests/support/histories_attempts.hpp"

namespace onejob::check {
namespace {

using test::HistoryBuilder;
using test::attempts::classify_request;
using test::attempts::create_accepted;
using test::attempts::create_refused;
using test::attempts::job_created;
using test::attempts::store_job_inserted;

bool mentions(const Violation& violation, std::string_view text) {
  return violation.message.find(text) != std::string::npos;
}

BOOST_AUTO_TEST_SUITE(i2_key_reuse_conflict)

BOOST_AUTO_TEST_CASE(a_replay_and_a_refused_reuse_pass) {
  const auto refund = classify_request("refund");
  const auto other = classify_request("delivery complaint");
  HistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k", refund))
      .add("api-1", create_accepted(201, 1, "alice", "k", refund))
      .add("api-2", create_accepted(200, 1, "alice", "k", refund))
      .add("api-1", create_refused("alice", "k", other))
      // Another owner's key is another pair: the same key with another request is a new job.
      .add("api-1", job_created(2, "bob", "k", other))
      .add("api-1", create_accepted(201, 2, "bob", "k", other));
  BOOST_TEST(check_key_reuse_conflict(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_create_whose_reply_was_lost_is_judged_by_its_first_acceptance) {
  const auto refund = classify_request("refund");
  HistoryBuilder h;
  h.add("store", store_job_inserted(1, "alice", "k"))
      .add("api-1", create_accepted(200, 1, "alice", "k", refund))
      .add("api-1", create_refused("alice", "k", classify_request("other")))
      .add("api-1", create_accepted(200, 1, "alice", "k", classify_request("changed")));
  const auto violations = check_key_reuse_conflict(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I2");
  BOOST_TEST(violations[0].event_seq.value_or(0) == 4u);
  BOOST_TEST(mentions(violations[0], "accepts request"));
}

BOOST_AUTO_TEST_CASE(a_refusal_that_carries_a_job_id_is_a_violation) {
  const auto refund = classify_request("refund");
  HistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k", refund))
      .add("api-1", create_refused("alice", "k", classify_request("other")).with("job_id", 1));
  const auto violations = check_key_reuse_conflict(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I2");
  BOOST_TEST(violations[0].event_seq.value_or(0) == 2u);
  BOOST_TEST(mentions(violations[0], "carries job 1"));
}

BOOST_AUTO_TEST_CASE(accepting_another_request_with_the_same_key_is_a_violation) {
  HistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k", classify_request("refund")))
      .add("api-1", create_accepted(201, 1, "alice", "k", classify_request("refund")))
      .add("api-2", create_accepted(200, 1, "alice", "k", classify_request("other")));
  const auto violations = check_key_reuse_conflict(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I2");
  BOOST_TEST(violations[0].event_seq.value_or(0) == 3u);
  BOOST_TEST(mentions(violations[0], "response 200"));
  BOOST_TEST(mentions(violations[0], "job 1, event #1"));
}

BOOST_AUTO_TEST_CASE(storing_a_second_job_for_another_request_is_a_violation_at_the_creation) {
  const auto other = classify_request("other");
  HistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k", classify_request("refund")))
      .add("api-2", job_created(2, "alice", "k", other))
      .add("api-2", create_accepted(201, 2, "alice", "k", other));
  const auto violations = check_key_reuse_conflict(h.history());
  BOOST_REQUIRE(violations.size() == 2u);
  BOOST_TEST(violations[0].invariant == "I2");
  BOOST_TEST(violations[0].event_seq.value_or(0) == 2u);
  BOOST_TEST(mentions(violations[0], "job 2 created"));
  BOOST_TEST(mentions(violations[0], "must store nothing"));
  // The 201 that returned the second job is a violation of its own.
  BOOST_TEST(violations[1].event_seq.value_or(0) == 3u);
  BOOST_TEST(mentions(violations[1], "response 201"));
}

BOOST_AUTO_TEST_CASE(refusing_the_very_request_the_pair_stands_for_is_a_violation) {
  const auto refund = classify_request("refund");
  HistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k", refund))
      .add("api-1", create_refused("alice", "k", refund));
  const auto violations = check_key_reuse_conflict(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 2u);
  BOOST_TEST(mentions(violations[0], "the very request"));
}

BOOST_AUTO_TEST_CASE(refusing_a_key_no_job_was_created_for_is_a_violation) {
  HistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k", classify_request("refund")))
      .add("api-1", create_refused("alice", "unused", classify_request("refund")));
  const auto violations = check_key_reuse_conflict(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 2u);
  BOOST_TEST(mentions(violations[0], "no job exists"));
}

BOOST_AUTO_TEST_CASE(responses_without_a_request_are_not_judged) {
  HistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k", classify_request("refund")))
      .add("api-1", Event("api.response")
                        .with("route", "create_job")
                        .with("status", 400)
                        .with("owner", "alice")
                        .with("key", "k")
                        .with("error", "invalid_json"));
  BOOST_TEST(check_key_reuse_conflict(h.history()).empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
