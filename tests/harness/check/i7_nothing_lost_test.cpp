#include "harness/check/i7_nothing_lost.hpp"

#include <utility>

#include <chrono>

#include <boost/test/unit_test.hpp>

#include "tests/support/histories_late.hpp"

namespace onejob::check {
namespace {

using namespace test::late;
using std::chrono::minutes;
using std::chrono::seconds;

const std::string kBody = create_body("classify", "alpha", R"({"text":"please refund me"})");

// Job 1 of alice, reported by the store and the API, with its initial attempt claimed.
TimedHistoryBuilder alices_job() {
  TimedHistoryBuilder h;
  h.add("store", store_job_inserted(1, "alice", "k", 1))
      .add("api-1", job_created(1, "alice", "k", kBody))
      .add("api-1", attempt_created(1, 1, 1, "alpha", "initial"))
      .add("browser", client_receive(1, 201, 1))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"));
  return h;
}

BOOST_AUTO_TEST_SUITE(i7_nothing_lost)

BOOST_AUTO_TEST_CASE(jobs_found_by_their_owner_and_hidden_from_others_pass) {
  auto h = alices_job();
  h.add("api-1", get_job_request("r2.1.1", "alice", 1))
      .add("api-1", get_job_response("r2.1.1", 200, "alice", 1))
      .add("api-2", get_job_request("r3.1.1", "bob", 1))
      .add("api-2", get_job_response("r3.1.1", 404, "bob", std::nullopt))
      // The commit reply was lost: only the store knows job 2 and its attempt.
      .add("store", store_job_inserted(2, "alice", "k2", 2))
      .add("browser", client_receive(2, 503, std::nullopt))
      .add("worker-1", attempt_state(2, 2, "STARTING", "RUNNING"))
      .add("browser", client_receive(2, 200, 2))
      .at(minutes(10))
      .add("store", store_job_inserted(3, "bob", "b", 3))
      .add("api-1", job_created(3, "bob", "b", kBody))
      .add("api-1", attempt_created(3, 3, 1, "alpha", "initial"))
      .at(minutes(10) + seconds(59))
      .add("world", run_end());  // job 3 is not picked up yet, but had under a minute
  BOOST_TEST(check_nothing_lost(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_job_the_api_created_without_an_initial_attempt_is_a_violation) {
  TimedHistoryBuilder h;
  h.add("store", store_job_inserted(1, "alice", "k", 1));
  const auto offending = h.last_seq();
  h.add("api-1", job_created(1, "alice", "k", kBody))
      .add("worker-1", attempt_state(1, 1, "STARTING", "RUNNING"));
  const auto violations = check_nothing_lost(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I7");
  BOOST_TEST(violations[0].event_seq.value_or(0) == offending);
  BOOST_TEST(violations[0].message.find("job 1 exists but has no attempt.created") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_job_never_picked_up_by_run_end_is_a_violation_at_run_end) {
  TimedHistoryBuilder h;
  h.add("store", store_job_inserted(1, "alice", "k", 1))
      .add("api-1", job_created(1, "alice", "k", kBody))
      .add("api-1", attempt_created(1, 1, 1, "alpha", "initial"))
      .at(minutes(10))
      .add("world", run_end());
  const auto violations = check_nothing_lost(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I7");
  BOOST_TEST(violations[0].event_seq.value_or(0) == h.last_seq());
  BOOST_TEST(violations[0].message.find("600s before the run ended) never had an attempt picked "
                                        "up") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_claim_whose_reply_was_lost_counts_as_picked_up_once_it_shows) {
  TimedHistoryBuilder h;
  h.add("store", store_job_inserted(1, "alice", "k", 1))
      .at(minutes(1))
      .add("reconciler", reconciler_status(1, 1, "not_found"))
      .at(minutes(10))
      .add("world", run_end());
  BOOST_TEST(check_nothing_lost(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_job_whose_attempt_a_lost_cancel_may_have_ended_is_not_judged) {
  // The cancel's write may have committed before any worker claimed the attempt.
  TimedHistoryBuilder h;
  h.add("store", store_job_inserted(1, "alice", "k", 1))
      .add("api-1", cancel_request("r2.1.1", "alice", 1))
      .add("api-1", cancel_response("r2.1.1", 503, "alice"))
      .at(minutes(10))
      .add("world", run_end());
  BOOST_TEST(check_nothing_lost(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_job_id_received_by_a_client_that_was_never_created_is_a_violation) {
  auto h = alices_job();
  h.add("browser", client_receive(2, 200, 7));
  const auto offending = h.last_seq();
  const auto violations = check_nothing_lost(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I7");
  BOOST_TEST(violations[0].event_seq.value_or(0) == offending);
  BOOST_TEST(violations[0].message.find("client received job 7 (status 200)") != std::string::npos);
  BOOST_TEST(violations[0].message.find("no such job was ever created") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_job_id_received_before_the_job_was_created_is_a_violation) {
  TimedHistoryBuilder h;
  h.add("browser", client_receive(1, 201, 1));
  h.add("store", store_job_inserted(1, "alice", "k", 1));
  const auto violations = check_nothing_lost(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 1u);
  BOOST_TEST(violations[0].message.find("before the job was created (event #2)") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_get_job_showing_another_owners_job_is_a_violation) {
  auto h = alices_job();
  h.add("api-2", get_job_request("r2.1.1", "bob", 1))
      .add("api-2", get_job_response("r2.1.1", 200, "bob", 1));
  const auto offending = h.last_seq();
  const auto violations = check_nothing_lost(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I7");
  BOOST_TEST(violations[0].event_seq.value_or(0) == offending);
  BOOST_TEST(violations[0].message.find("get_job by owner \"bob\" returned job 1 of owner "
                                        "\"alice\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_get_job_404_for_the_owners_existing_job_is_a_lost_job) {
  auto h = alices_job();
  h.add("api-2", get_job_request("r2.1.1", "alice", 1))
      .add("api-2", get_job_response("r2.1.1", 404, "alice", std::nullopt));
  const auto offending = h.last_seq();
  const auto violations = check_nothing_lost(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I7");
  BOOST_TEST(violations[0].event_seq.value_or(0) == offending);
  BOOST_TEST(violations[0].message.find("answered 404") != std::string::npos);
  BOOST_TEST(violations[0].message.find("lost job") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_get_job_404_racing_the_jobs_commit_is_not_judged) {
  // The read began before the commit; its answer may rightly miss the job.
  TimedHistoryBuilder h;
  h.add("api-2", get_job_request("r2.1.1", "alice", 1))
      .add("store", store_job_inserted(1, "alice", "k", 1))
      .add("api-2", get_job_response("r2.1.1", 404, "alice", std::nullopt));
  BOOST_TEST(check_nothing_lost(h.history()).empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
