#include "harness/check/i6_certified_failover.hpp"

#include <boost/test/unit_test.hpp>

#include "tests/support/histories_late.hpp"

namespace onejob::check {
namespace {

using namespace test::late;

const std::string kRefund = R"({"text":"please refund me"})";
const std::string kGoodLabel = R"({"confidence":0.9,"label":"billing"})";

// Job 1 (alice, "k"): alpha is asked for, beta is the certified fallback.
TimedHistoryBuilder job_with_failover_to_beta() {
  TimedHistoryBuilder h;
  h.add("certifier", certification_recorded("beta", true))
      .add("store", store_job_inserted(1, "alice", "k", 1))
      .add("api-1",
           job_created(1, "alice", "k", create_body("classify", "alpha", kRefund, {"beta"})))
      .add("api-1", attempt_created(1, 1, 1, "alpha", "initial"))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"))
      .add("worker-1", attempt_state(1, 1, "RUNNING", "FAILED"));
  return h;
}

BOOST_AUTO_TEST_SUITE(i6_certified_failover)

BOOST_AUTO_TEST_CASE(a_failover_to_a_certified_provider_with_a_valid_result_passes) {
  auto h = job_with_failover_to_beta();
  h.add("worker-1", attempt_created(1, 2, 2, "beta", "failover"))
      .add("worker-1", output_rejected(1, 2, "beta", R"({"label":"billing","notes":"x"})"))
      .add("worker-1", attempt_state(1, 2, "RUNNING", "FAILED"))
      .add("api-1", attempt_created(1, 3, 3, "beta", "explicit"))
      .add("worker-1", job_completed(1, 3, kGoodLabel));
  BOOST_TEST(check_certified_failover(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(an_initial_attempt_on_an_uncertified_provider_is_not_judged) {
  TimedHistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k", create_body("classify", "alpha", kRefund)))
      .add("api-1", attempt_created(1, 1, 1, "alpha", "initial"))
      .add("worker-1", job_completed(1, 1, kGoodLabel));
  BOOST_TEST(check_certified_failover(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_failover_to_a_provider_never_certified_is_a_violation) {
  auto h = job_with_failover_to_beta();
  h.add("worker-1", attempt_created(1, 2, 2, "gamma", "failover"));
  const auto offending = h.last_seq();
  const auto violations = check_certified_failover(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I6");
  BOOST_TEST(violations[0].event_seq.value_or(0) == offending);
  BOOST_TEST(violations[0].message.find("\"gamma\", which has no contract certification") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_failover_after_the_latest_certification_failed_is_a_violation) {
  auto h = job_with_failover_to_beta();
  h.add("certifier", certification_recorded("beta", false));
  const auto failed_certification = h.last_seq();
  h.add("worker-1", attempt_created(1, 2, 2, "beta", "failover"));
  const auto offending = h.last_seq();
  const auto violations = check_certified_failover(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I6");
  BOOST_TEST(violations[0].event_seq.value_or(0) == offending);
  BOOST_TEST(violations[0].message.find("latest certification (event #" +
                                        std::to_string(failed_certification) + ") failed") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_certification_recorded_after_the_attempt_does_not_count) {
  auto h = job_with_failover_to_beta();
  h.add("api-1", attempt_created(1, 2, 2, "gamma", "explicit"));
  const auto offending = h.last_seq();
  h.add("certifier", certification_recorded("gamma", true));
  const auto violations = check_certified_failover(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == offending);
  BOOST_TEST(violations[0].message.find("explicit attempt 2 of job 1") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_failover_after_a_certification_whose_reply_was_lost_is_not_judged) {
  // The store may have kept gamma's certification; the history has no verdict for it.
  auto h = job_with_failover_to_beta();
  h.add("certifier", certification_store_error("gamma"))
      .add("worker-1", attempt_created(1, 2, 2, "gamma", "failover"));
  BOOST_TEST(check_certified_failover(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_result_with_a_hallucinated_key_is_a_violation) {
  TimedHistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k", create_body("classify", "alpha", kRefund)))
      .add("api-1", attempt_created(1, 1, 1, "alpha", "initial"))
      .add("worker-1", job_completed(1, 1, R"({"confidence":0.9,"label":"billing","notes":"x"})"));
  const auto offending = h.last_seq();
  const auto violations = check_certified_failover(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I6");
  BOOST_TEST(violations[0].event_seq.value_or(0) == offending);
  BOOST_TEST(violations[0].message.find("breaks the classify contract: unexpected top-level key "
                                        "\"notes\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_summary_as_long_as_its_input_is_a_violation) {
  TimedHistoryBuilder h;
  h.add("api-1",
        job_created(1, "bob", "k", create_body("summarize", "alpha", R"({"text":"short"})")))
      .add("worker-1", job_completed(1, 1, R"({"summary":"short"})"));
  const auto violations = check_certified_failover(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 2u);
  BOOST_TEST(violations[0].message.find("not a summary") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_job_known_from_the_store_is_judged_by_its_create_responses_request) {
  // The commit reply was lost: no job.created; the client's retry learns the job id.
  TimedHistoryBuilder h;
  h.add("store", store_job_inserted(1, "alice", "k", 1))
      .add("worker-1", job_completed(1, 1, R"({"label":"refund"})"));
  const auto offending = h.last_seq();
  h.add("api-1", create_response_with_request(200, 1, "alice", "k",
                                              create_body("classify", "alpha", kRefund)));
  const auto violations = check_certified_failover(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == offending);
  BOOST_TEST(violations[0].message.find("classify contract") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_completion_by_an_attempt_whose_output_was_rejected_is_a_violation) {
  TimedHistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k", create_body("classify", "alpha", kRefund)))
      .add("api-1", attempt_created(1, 1, 1, "alpha", "initial"))
      .add("worker-1", output_rejected(1, 1, "alpha", "Sure! It is billing."));
  const auto rejection = h.last_seq();
  h.add("reconciler", job_completed(1, 1, kGoodLabel));
  const auto offending = h.last_seq();
  const auto violations = check_certified_failover(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I6");
  BOOST_TEST(violations[0].event_seq.value_or(0) == offending);
  BOOST_TEST(violations[0].message.find("whose output was rejected (event #" +
                                        std::to_string(rejection) + ")") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_result_for_a_job_whose_request_is_unknown_is_not_judged) {
  TimedHistoryBuilder h;
  h.add("store", store_job_inserted(1, "alice", "k", 1))
      .add("worker-1", job_completed(1, 1, "not even JSON"));
  BOOST_TEST(check_certified_failover(h.history()).empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
