#include "harness/check/i8_liveness.hpp"

#include <chrono>

#include <boost/test/unit_test.hpp>

#include "tests/support/histories_late.hpp"

namespace onejob::check {
namespace {

using namespace test::late;
using std::chrono::minutes;

const std::string kBody = create_body("classify", "alpha", R"({"text":"please refund me"})");

// Job `job_id` of alice with its initial attempt `attempt_id` claimed.
void add_running_job(TimedHistoryBuilder& h, std::int64_t job_id, std::int64_t attempt_id) {
  // Built in steps: g++ 12 -O2 reports a false -Wrestrict on `"k" + std::to_string(...)` here.
  std::string key = "k";
  key += std::to_string(job_id);
  h.add("store", store_job_inserted(job_id, "alice", key, attempt_id))
      .add("api-1", job_created(job_id, "alice", key, kBody))
      .add("api-1", attempt_created(job_id, attempt_id, 1, "alpha", "initial"))
      .add("worker-1", attempt_state(job_id, attempt_id, "STARTING", "RUNNING"));
}

BOOST_AUTO_TEST_SUITE(i8_liveness)

BOOST_AUTO_TEST_CASE(completed_failed_and_blocked_jobs_pass) {
  TimedHistoryBuilder h;
  add_running_job(h, 1, 1);
  h.add("worker-1", attempt_state(1, 1, "RUNNING", "SUCCEEDED"))
      .add("worker-1", job_completed(1, 1, R"({"confidence":0.9,"label":"billing"})"));
  add_running_job(h, 2, 2);
  h.add("worker-1", attempt_state(2, 2, "RUNNING", "FAILED"))
      .add("worker-1", job_failed(2, "no contract-certified provider left to fail over to"));
  add_running_job(h, 3, 3);
  h.add("reconciler", attempt_state(3, 3, "RUNNING", "UNKNOWN", "reconciler"));
  // Job 4's commit reply was lost; the store's row is all the API ever had of it.
  h.add("store", store_job_inserted(4, "alice", "k4", 4))
      .add("worker-1", attempt_state(4, 4, "STARTING", "RUNNING"))
      .add("worker-1", attempt_state(4, 4, "RUNNING", "SUCCEEDED"))
      .add("worker-1", job_completed(4, 4, R"({"confidence":0.9,"label":"billing"})"))
      .at(minutes(10))
      .add("world", run_end());
  BOOST_TEST(check_liveness(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_history_without_run_end_is_not_judged) {
  TimedHistoryBuilder h;
  add_running_job(h, 1, 1);
  BOOST_TEST(check_liveness(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_job_whose_attempt_is_still_running_at_run_end_is_a_violation) {
  TimedHistoryBuilder h;
  add_running_job(h, 1, 1);
  h.at(minutes(10)).add("world", run_end());
  const auto violations = check_liveness(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I8");
  BOOST_TEST(violations[0].event_seq.value_or(0) == h.last_seq());
  BOOST_TEST(violations[0].message.find("job 1 (created at event #1) is unfinished at run end: "
                                        "attempt 1 is still RUNNING") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_job_known_only_to_the_store_never_claimed_is_a_violation) {
  TimedHistoryBuilder h;
  h.add("store", store_job_inserted(1, "alice", "k", 1)).at(minutes(10)).add("world", run_end());
  const auto violations = check_liveness(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 2u);
  BOOST_TEST(violations[0].message.find("attempt 1 is still STARTING") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_job_with_no_live_attempt_neither_completed_nor_failed_is_stuck) {
  TimedHistoryBuilder h;
  add_running_job(h, 1, 1);
  h.add("worker-1", attempt_state(1, 1, "RUNNING", "FAILED"))
      .add("api-1", attempt_created(1, 2, 2, "beta", "explicit"))
      .add("api-1", attempt_state(1, 2, "STARTING", "CANCELLED", "api"))
      .at(minutes(10))
      .add("world", run_end());
  const auto violations = check_liveness(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].invariant == "I8");
  BOOST_TEST(violations[0].event_seq.value_or(0) == h.last_seq());
  BOOST_TEST(violations[0].message.find("is stuck at run end") != std::string::npos);
  BOOST_TEST(violations[0].message.find("1 FAILED, 2 CANCELLED") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_attempt_whose_settling_write_lost_its_reply_is_not_judged) {
  // The completion may have committed: the store may hold a completed job the history never saw.
  TimedHistoryBuilder h;
  add_running_job(h, 1, 1);
  h.add("worker-1", provider_reply(1, 1, "alpha"))
      .add("worker-1", worker_store_error("worker-1", 1, "maybe_committed", "complete_attempt"));
  add_running_job(h, 2, 2);
  h.add("worker-1", provider_reply(2, 2, "alpha"))
      .add("worker-1", node_crash(), /*injected=*/true)
      .at(minutes(10))
      .add("world", run_end());
  BOOST_TEST(check_liveness(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_crashed_workers_attempt_the_reconciler_never_took_over_is_a_violation) {
  TimedHistoryBuilder h;
  add_running_job(h, 1, 1);
  h.add("worker-1", node_crash(), /*injected=*/true).at(minutes(10)).add("world", run_end());
  const auto violations = check_liveness(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == h.last_seq());
  BOOST_TEST(violations[0].message.find("attempt 1 is still RUNNING") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(indirect_facts_fill_in_transitions_whose_reply_was_lost) {
  TimedHistoryBuilder h;
  // Job 1: claim and lease takeover both lost their replies; the reconciler's query shows the
  // attempt UNKNOWN, so the job is blocked, not unfinished.
  h.add("store", store_job_inserted(1, "alice", "k1", 1))
      .add("reconciler", reconciler_status(1, 1, "not_found"));
  // Job 2: the operator's cancel lost its reply; a late settlement finds the attempt CANCELLED
  // and nothing else is left to finish the job.
  add_running_job(h, 2, 2);
  h.add("api-1", cancel_request("r9.1.1", "alice", 2))
      .add("api-1", cancel_response("r9.1.1", 503, "alice"))
      .add("worker-1", write_refused(2, 2, "CANCELLED", "SUCCEEDED"))
      .at(minutes(10))
      .add("world", run_end());
  const auto violations = check_liveness(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].message.find("job 2 (created at event #3) is stuck") !=
             std::string::npos);
  BOOST_TEST(violations[0].message.find("2 CANCELLED") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_failover_that_never_ran_leaves_a_stuck_job) {
  // The attempt failed, then failing over could not read the store: nothing retries it.
  TimedHistoryBuilder h;
  add_running_job(h, 1, 1);
  h.add("worker-1", attempt_state(1, 1, "RUNNING", "FAILED"))
      .add("worker-1", worker_store_error("worker-1", 1, "unavailable", "load_job"))
      .at(minutes(10))
      .add("world", run_end());
  const auto violations = check_liveness(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].message.find("is stuck at run end") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_failover_or_job_failure_that_may_have_committed_unseen_is_not_judged) {
  TimedHistoryBuilder h;
  add_running_job(h, 1, 1);
  h.add("worker-1", attempt_state(1, 1, "RUNNING", "FAILED"))
      .add("worker-1", worker_store_error("worker-1", 1, "maybe_committed", "fail_job"));
  // The reconciler resolves job 2's attempt as failed; its failover's reply is lost.
  add_running_job(h, 2, 2);
  h.add("reconciler", attempt_state(2, 2, "RUNNING", "UNKNOWN", "reconciler"))
      .add("reconciler", reconciler_status(2, 2, "failed"))
      .add("reconciler", attempt_state(2, 2, "UNKNOWN", "FAILED", "reconciler"))
      .add("net.node_store",
           Event("store.fault")
               .with("node", "reconciler")
               .with("operation", "insert_attempt")
               .with("fault", "reply lost")
               .with("outcome", "maybe_committed"),
           /*injected=*/true)
      .at(minutes(10))
      .add("world", run_end());
  BOOST_TEST(check_liveness(h.history()).empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
