// The black-box rules: a clean story passes every rule, and each rule fails, by its own clause,
// on a history that breaks its promise (and only there). The JSON Lines form and the page are
// tested in black_box_jsonl_test.cpp.
#include "harness/check/black_box.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "tests/harness/check/black_box_story.hpp"

namespace onejob::check::black_box {
namespace {

using nlohmann::json;
using namespace testing;  // NOLINT: the stories' vocabulary

}  // namespace

BOOST_AUTO_TEST_SUITE(black_box_rules)

BOOST_AUTO_TEST_CASE(a_clean_story_passes_every_rule) {
  const auto found = clauses(clean().history());
  BOOST_TEST(found.empty(), joined(found));
  BOOST_TEST(all_rules().size() == 17u);
}

BOOST_AUTO_TEST_CASE(b1_two_job_ids_for_one_key) {
  auto s = clean();
  s.create("r9", 200, "alice", "k1").answer("r9", 210, 201, "8");
  const auto found = clauses(s.history());
  BOOST_TEST(only(found, "B1.two_job_ids"), joined(found));
  // The same key of another owner is another job.
  auto other = clean();
  other.create("r9", 200, "bob", "k1").answer("r9", 210, 201, "8");
  BOOST_TEST(clauses(other.history()).empty(), joined(clauses(other.history())));
}

BOOST_AUTO_TEST_CASE(b2_a_reused_key_answered_with_the_old_job) {
  auto s = clean();
  s.create("r9", 200, "alice", "k1", json{{"input", {{"text", "another"}}}})
      .answer("r9", 210, 200, "7");
  const auto found = clauses(s.history());
  BOOST_TEST(only(found, "B2.other_payload_accepted"), joined(found));
  // Key order and spacing are not another payload.
  auto same = clean();
  same.create("r9", 200, "alice", "k1",
              json::parse(R"({"input":{"text":"please refund me"},"provider":"alpha",
                              "operation":"classify"})"))
      .answer("r9", 210, 200, "7");
  BOOST_TEST(clauses(same.history()).empty(), joined(clauses(same.history())));
}

BOOST_AUTO_TEST_CASE(b3_a_new_execution_while_the_first_may_still_run) {
  Story s;
  s.create("r1", 0, "alice", "k1")
      .answer("r1", 10, 201, "7")
      .execute(30, std::nullopt, "alpha", "p7-1", "hang", std::nullopt)
      .certify(1, 5, "beta", "ok")
      .execute(5000, 5100, "beta", "p7-2");
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B3.overlapping_executions"), joined(found));
  // After an acknowledged cancel, the new attempt may run.
  Story cancelled;
  cancelled.create("r1", 0, "alice", "k1")
      .answer("r1", 10, 201, "7")
      .execute(30, std::nullopt, "alpha", "p7-1", "hang", std::nullopt)
      .act("r2", 4000, "alice", "cancel", "7")
      .answer("r2", 4010, 200, "7")
      .certify(1, 5, "beta", "ok")
      .execute(5000, 5100, "beta", "p7-2");
  found = clauses(cancelled.history());
  BOOST_TEST(found.empty(), joined(found));
  // One that ended before the next began is no overlap (a failover after an error).
  Story failover;
  failover.create("r1", 0, "alice", "k1")
      .answer("r1", 10, 201, "7")
      .execute(30, 40, "alpha", "p7-1", "error", std::nullopt)
      .certify(1, 5, "beta", "ok")
      .execute(50, 60, "beta", "p7-2");
  found = clauses(failover.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b4_a_result_that_changes_or_a_success_undone) {
  auto s = clean();
  s.certify(1, 5, "beta", "ok")
      .execute(150, 160, "beta", "p7-2", "ok", kOther)
      .act("r9", 200, "alice", "read", "7")
      .answer("r9", 210, 200, "7", "succeeded", kOther);
  auto found = clauses(s.history());
  // (beta's execution overlaps nothing: alpha's ended at 60.)
  BOOST_TEST(only(found, "B4.result_changed"), joined(found));
  auto undone = clean();
  undone.act("r9", 200, "alice", "read", "7").answer("r9", 210, 200, "7", "running");
  found = clauses(undone.history());
  BOOST_TEST(only(found, "B4.success_undone"),
             joined(found));  // A read sent before the success was seen may show the earlier state,
                              // however late it arrives.
  auto slow = clean();
  slow.act("r9", 105, "alice", "read", "7").answer("r9", 400, 200, "7", "running");
  found = clauses(slow.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b5_a_result_no_execution_produced) {
  Story s;
  s.create("r1", 0, "alice", "k1")
      .answer("r1", 10, 201, "7")
      .execute(30, 60, "alpha", "p7-1", "ok", kBilling)
      .act("r3", 100, "alice", "read", "7")
      .answer("r3", 110, 200, "7", "succeeded", kOther);
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B5.result_not_executed"), joined(found));
  // Another job's execution does not count.
  Story other;
  other.create("r1", 0, "alice", "k1")
      .answer("r1", 10, 201, "7")
      .create("r2", 0, "alice", "k2", json{{"input", {{"text", "other"}}}})
      .answer("r2", 10, 201, "8")
      .execute(30, 60, "alpha", "p8-1", "ok", kBilling, json{{"text", "other"}})
      .act("r3", 100, "alice", "read", "7")
      .answer("r3", 110, 200, "7", "succeeded", kBilling);
  found = clauses(other.history());
  BOOST_TEST(only(found, "B5.result_not_executed"), joined(found));
}

BOOST_AUTO_TEST_CASE(b6_a_provider_key_executed_twice) {
  auto s = clean();
  s.execute(70, 80, "alpha", "p7-1");
  const auto found = clauses(s.history());
  BOOST_TEST(only(found, "B6.key_executed_twice"), joined(found));
}

BOOST_AUTO_TEST_CASE(b7_a_job_shown_failed_while_its_execution_runs) {
  Story s;
  s.create("r1", 0, "alice", "k1")
      .answer("r1", 10, 201, "7")
      .execute(30, std::nullopt, "alpha", "p7-1", "hang", std::nullopt)
      .act("r3", 100, "alice", "read", "7")
      .answer("r3", 110, 200, "7", "failed");
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B7.failed_while_running"), joined(found));
  // Failed after the execution answered an error is the truth.
  Story failed;
  failed.create("r1", 0, "alice", "k1")
      .answer("r1", 10, 201, "7")
      .execute(30, 40, "alpha", "p7-1", "error", std::nullopt)
      .act("r3", 100, "alice", "read", "7")
      .answer("r3", 110, 200, "7", "failed");
  found = clauses(failed.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b8_an_acknowledged_job_read_404_by_its_owner) {
  auto s = clean();
  s.act("r9", 200, "alice", "read", "7").answer("r9", 210, 404);
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B8.acknowledged_job_missing"), joined(found));
  // A read sent before the acknowledgement arrived may precede the commit.
  Story early;
  early.create("r1", 0, "alice", "k1")
      .act("r2", 5, "alice", "read", "7")
      .answer("r2", 6, 404)
      .answer("r1", 10, 201, "7");
  found = clauses(early.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b8_a_create_acknowledged_without_its_job) {
  Story s;
  s.create("r1", 0, "alice", "k1").answer("r1", 10, 201);
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B8.acknowledged_without_job"), joined(found));
  // Refused, unavailable or unanswered without a job: no finding.
  Story refused;
  refused.create("r1", 0, "alice", "k1").answer("r1", 10, 503);
  refused.create("r2", 20, "alice", "k2").answer("r2", 30, 422);
  refused.create("r3", 40, "alice", "k3").lost("r3", 50);
  found = clauses(refused.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b9_an_operator_key_answering_another_request) {
  auto s = clean();
  s.keyed("r10", 200, "retry", "op-1").acted("r10", 210, 201, "2");
  s.keyed("r11", 220, "cancel", "op-1", "2").acted("r11", 230, 200, "2");
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B9.key_answered_another_request"), joined(found));
  // Refused, as it must be: no finding.
  auto refused = clean();
  refused.keyed("r10", 200, "retry", "op-1").acted("r10", 210, 201, "2");
  refused.keyed("r11", 220, "cancel", "op-1", "2").acted("r11", 230, 422, std::nullopt);
  found = clauses(refused.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b9_a_replay_that_differs_from_the_first_answer) {
  auto s = clean();
  s.keyed("r10", 200, "retry", "op-1").acted("r10", 210, 201, "2");
  s.keyed("r11", 220, "retry", "op-1").acted("r11", 230, 201, "3");
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B9.replay_differs"), joined(found));
  auto status = clean();
  status.keyed("r10", 200, "retry", "op-1").acted("r10", 210, 201, "2");
  status.keyed("r11", 220, "retry", "op-1").acted("r11", 230, 200, "2");
  found = clauses(status.history());
  BOOST_TEST(only(found, "B9.replay_differs"), joined(found));
  // The same answer again (a double click, a resend): no finding.
  auto same = clean();
  same.keyed("r10", 200, "retry", "op-1").acted("r10", 210, 201, "2");
  same.keyed("r11", 201, "retry", "op-1").acted("r11", 230, 201, "2");
  found = clauses(same.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b9_an_acknowledged_action_refused_when_sent_again) {
  auto s = clean();
  s.keyed("r10", 200, "retry", "op-1").acted("r10", 210, 201, "2");
  s.keyed("r11", 220, "retry", "op-1").acted("r11", 230, 422, std::nullopt);
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B9.replay_refused"), joined(found));
  auto cancel = clean();
  cancel.keyed("r10", 200, "cancel", "op-1", "1").acted("r10", 210, 200, "1");
  cancel.keyed("r11", 220, "cancel", "op-1", "1").acted("r11", 230, 409, std::nullopt);
  found = clauses(cancel.history());
  BOOST_TEST(only(found, "B9.replay_refused"), joined(found));
  // Sent before the acknowledgement arrived (a double click whose twin may have met the action
  // in flight), refused for its credentials or its rate, or another request: no finding.
  auto allowed = clean();
  allowed.keyed("r10", 200, "retry", "op-1").acted("r10", 210, 201, "2");
  allowed.keyed("r11", 205, "retry", "op-1").acted("r11", 230, 409, std::nullopt);
  allowed.keyed("r12", 240, "retry", "op-1").acted("r12", 250, 429, std::nullopt);
  allowed.keyed("r13", 260, "cancel", "op-1", "2").acted("r13", 270, 422, std::nullopt);
  found = clauses(allowed.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b9_a_replay_whose_body_differs) {
  const json starting = {{"attempt_id", "2"}, {"state", "starting"}};
  const json running = {{"attempt_id", "2"}, {"state", "running"}};
  auto s = clean();
  s.keyed("r10", 200, "retry", "op-1").acted("r10", 210, 201, "2", starting);
  s.keyed("r11", 220, "retry", "op-1").acted("r11", 230, 201, "2", running);
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B9.replay_differs"), joined(found));
  // The same body again, or a body not recorded: no finding.
  auto same = clean();
  same.keyed("r10", 200, "retry", "op-1").acted("r10", 210, 201, "2", starting);
  same.keyed("r11", 220, "retry", "op-1").acted("r11", 230, 201, "2", starting);
  same.keyed("r12", 240, "retry", "op-1").acted("r12", 250, 201, "2");
  found = clauses(same.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b9_an_acknowledgement_that_misstates_what_the_action_did) {
  auto s = clean();
  s.keyed("r10", 200, "retry", "op-1").acted("r10", 210, 201, "2");
  s.shows("succeeded");  // a replay showing the state now
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B9.answer_misstates"), joined(found));
  auto cancel = clean();
  cancel.keyed("r10", 200, "cancel", "op-2", "1").acted("r10", 210, 200, "1");
  cancel.shows("running");
  found = clauses(cancel.history());
  BOOST_TEST(only(found, "B9.answer_misstates"), joined(found));
  // What each did, or a refusal showing the attempt as it is: no finding.
  auto right = clean();
  right.keyed("r10", 200, "retry", "op-1").acted("r10", 210, 201, "2");
  right.shows("starting");
  right.keyed("r11", 220, "cancel", "op-2", "2").acted("r11", 230, 200, "2");
  right.shows("cancelled");
  right.keyed("r12", 240, "cancel", "op-3", "1").acted("r12", 250, 409, "1");
  right.shows("succeeded");
  found = clauses(right.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b9_two_acknowledgements_without_the_replay_mark) {
  auto s = clean();
  s.keyed("r10", 200, "cancel", "op-2", "1").acted("r10", 210, 200, "1", {}, false);
  s.keyed("r11", 220, "cancel", "op-2", "1").acted("r11", 230, 200, "1", {}, false);
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B9.replay_unmarked"), joined(found));
  // The original unmarked and its replays marked (in whatever order they arrive), or a target
  // whose marks were not recorded: no finding.
  auto marked = clean();
  marked.keyed("r10", 200, "cancel", "op-2", "1").keyed("r11", 201, "cancel", "op-2", "1");
  marked.acted("r11", 210, 200, "1", {}, true).acted("r10", 230, 200, "1", {}, false);
  marked.keyed("r12", 240, "cancel", "op-2", "1").acted("r12", 250, 200, "1", {}, true);
  marked.keyed("r13", 260, "retry", "op-3").acted("r13", 270, 201, "2");
  marked.keyed("r14", 280, "retry", "op-3").acted("r14", 290, 201, "2");
  found = clauses(marked.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b9_a_refused_cancel_acknowledged_when_sent_again) {
  auto s = clean();
  s.keyed("r10", 200, "cancel", "op-2", "1").acted("r10", 210, 409, "1");
  s.keyed("r11", 220, "cancel", "op-2", "1").acted("r11", 230, 200, "1");
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B9.refused_then_acknowledged"), joined(found));
  // Refused twice; or a retry refused while an attempt ran and accepted after: no finding.
  auto twice = clean();
  twice.keyed("r10", 200, "cancel", "op-2", "1").acted("r10", 210, 409, "1");
  twice.keyed("r11", 220, "cancel", "op-2", "1").acted("r11", 230, 409, "1");
  twice.keyed("r12", 240, "retry", "op-3").acted("r12", 250, 409, std::nullopt);
  twice.keyed("r13", 260, "retry", "op-3").acted("r13", 270, 201, "2");
  found = clauses(twice.history());
  BOOST_TEST(found.empty(), joined(found));
  // Two clicks in flight at once (the refusal arrives after the twin was sent): not judged.
  auto racing = clean();
  racing.keyed("r10", 200, "cancel", "op-2", "1").keyed("r11", 201, "cancel", "op-2", "1");
  racing.acted("r10", 210, 409, "1").acted("r11", 230, 200, "1");
  found = clauses(racing.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b10_another_owners_job_acted_on) {
  auto s = clean();
  s.act("r9", 200, "bob", "retry", "7").answer("r9", 210, 201);
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B10.another_owners_job"), joined(found));
  // Refused (404 or 403), or the owner's own: no finding.
  auto refused = clean();
  refused.act("r9", 200, "bob", "cancel", "7").answer("r9", 210, 404);
  refused.act("r10", 220, "mallory", "read", "7").answer("r10", 230, 403);
  refused.act("r11", 240, "alice", "read", "7").answer("r11", 250, 200, "7", "succeeded", kBilling);
  found = clauses(refused.history());
  BOOST_TEST(found.empty(), joined(found));
}

// A job that failed on alpha and then ran on beta.
Story failed_over() {
  Story s;
  s.create("r1", 0, "alice", "k1").answer("r1", 10, 201, "7", "queued");
  s.execute(30, 40, "alpha", "7:1", "error", std::nullopt);
  return s;
}

BOOST_AUTO_TEST_CASE(b11_a_failover_to_a_provider_that_passed_no_contract) {
  auto never = failed_over();
  never.execute(100, 120, "beta", "7:2");
  auto found = clauses(never.history());
  BOOST_TEST(only(found, "B11.uncertified_failover"), joined(found));
  auto wrong = failed_over();
  wrong.certify(1, 5, "beta", "ok").certify(50, 60, "beta", "plausible");
  wrong.certify(90, 130, "beta", "ok");  // still running when beta executed: not the gate's
  wrong.execute(100, 120, "beta", "7:2");
  found = clauses(wrong.history());
  BOOST_TEST(only(found, "B11.uncertified_failover"), joined(found));
  // Certified before; or moved by an operator's retry: no finding.
  auto certified = failed_over();
  certified.certify(1, 5, "beta", "ok").execute(100, 120, "beta", "7:2");
  found = clauses(certified.history());
  BOOST_TEST(found.empty(), joined(found));
  auto moved = failed_over();
  moved.act("r2", 80, "alice", "retry", "7").answer("r2", 90, 201);
  moved.execute(100, 120, "beta", "7:2");
  found = clauses(moved.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b12_a_server_error_the_client_cannot_act_on) {
  auto s = clean();
  s.create("r9", 200, "alice", "k9").answer("r9", 210, 500);
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B12.undeclared_server_error"), joined(found));
  // Unavailable, or a gateway's, before the quiet phase: no finding.
  auto declared = clean();
  declared.create("r9", 200, "alice", "k9").answer("r9", 210, 503);
  declared.act("r10", 220, "alice", "read", "7").answer("r10", 230, 502);
  declared.act("r11", 240, "alice", "read", "7").answer("r11", 250, 504);
  found = clauses(declared.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b13_a_job_run_past_its_declared_attempt_limit) {
  auto s = failed_over();
  s.certify(1, 5, "beta", "ok").execute(100, 120, "beta", "7:2", "error", std::nullopt);
  s.certify(2, 6, "gamma", "ok").execute(200, 220, "gamma", "7:3");
  auto limited = s.history();
  limited.attempt_limit = 2;
  auto found = clauses(limited);
  BOOST_TEST(only(found, "B13.attempts_past_limit"), joined(found));
  // No declared limit, a limit not passed, or an operator's retry before the third: no finding.
  found = clauses(s.history());
  BOOST_TEST(found.empty(), joined(found));
  limited.attempt_limit = 3;
  found = clauses(limited);
  BOOST_TEST(found.empty(), joined(found));
  auto retried = failed_over();
  retried.certify(1, 5, "beta", "ok").execute(100, 120, "beta", "7:2", "error", std::nullopt);
  retried.act("r2", 150, "alice", "retry", "7").answer("r2", 160, 201);
  retried.certify(2, 6, "gamma", "ok").execute(200, 220, "gamma", "7:3");
  auto operated = retried.history();
  operated.attempt_limit = 2;
  found = clauses(operated);
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b14_a_cancel_refused_while_its_attempt_was_live) {
  // Job 7's only attempt hangs at its provider.
  const auto hanging = [] {
    Story story;
    story.create("r1", 0, "alice", "k1").answer("r1", 10, 201, "7", "queued");
    story.execute(30, std::nullopt, "alpha", "7:1", "hang", std::nullopt);
    return story;
  };
  const auto shows = [](Story& story, std::string id, std::int64_t t, std::string state,
                        bool live) {
    story.act(id, t, "alice", "read", "7").answer(id, t + 10, 200, "7", "running");
    story.listed({{"1", std::move(state), live}});
  };
  auto s = hanging();
  s.keyed("r10", 200, "cancel", "op-2", "1").acted("r10", 210, 409, "1");
  shows(s, "r11", 220, "UNKNOWN", true);
  auto found = clauses(s.history());
  BOOST_TEST(only(found, "B14.live_attempt_refused"), joined(found));
  // Finished when read after the refusal; or read live only before it (it may have finished in
  // between): no finding.
  auto finished = hanging();
  shows(finished, "r9", 180, "RUNNING", true);
  finished.keyed("r10", 200, "cancel", "op-2", "1").acted("r10", 210, 409, "1");
  shows(finished, "r11", 220, "CANCELLED", false);
  found = clauses(finished.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b17_a_finished_attempt_shown_live_again) {
  const auto created = [] {
    Story story;
    story.create("r1", 0, "alice", "k1").answer("r1", 10, 201, "7", "queued");
    story.execute(30, 40, "alpha", "7:1", "error", std::nullopt);
    return story;
  };
  const auto shows = [](Story& story, std::string id, std::int64_t sent, std::int64_t received,
                        std::string state, bool live) {
    story.act(id, sent, "alice", "read", "7").answer(id, received, 200, "7", "running");
    story.listed({{"1", std::move(state), live}});
  };
  // Shown FAILED, then RUNNING by a read sent after that answer arrived.
  auto revived = created();
  shows(revived, "r2", 100, 110, "FAILED", false);
  shows(revived, "r3", 120, 130, "RUNNING", true);
  auto found = clauses(revived.history());
  BOOST_TEST(only(found, "B17.finished_attempt_live"), joined(found));
  // A read sent before the finished answer arrived may have been answered earlier; a finished
  // attempt may move between finished states (a cancelled attempt's late result wins): no finding.
  auto overlapping = created();
  shows(overlapping, "r2", 100, 140, "CANCELLED", false);
  shows(overlapping, "r3", 120, 150, "RUNNING", true);
  shows(overlapping, "r4", 160, 170, "SUCCEEDED", false);
  found = clauses(overlapping.history());
  BOOST_TEST(found.empty(), joined(found));
}

BOOST_AUTO_TEST_CASE(b15_a_discarded_output_shown_in_an_answer) {
  // Two executions of job 7, one after the other: the second's output is the result; the read's
  // body lists the attempts, the first with its own output (as an object, then as a text holding
  // it).
  const auto story = [](json first_attempt) {
    Story s;
    s.create("r1", 0, "alice", "k1")
        .answer("r1", 10, 201, "7")
        .execute(30, 60, "alpha", "p7-1", "ok", kOther)
        .execute(65, 80, "alpha", "p7-2", "ok", kBilling)
        .act("r3", 100, "alice", "read", "7")
        .answer("r3", 110, 200, "7", "succeeded", kBilling);
    json body = {
        {"job_id", 7},
        {"result", kBilling},
        {"attempts", json::array({first_attempt, {{"attempt_id", 2}, {"result", kBilling}}})}};
    return std::pair(s, body);
  };
  for (const json& leaked : {kOther, json(kOther.dump())}) {
    auto [s, body] = story({{"attempt_id", 1}, {"result", leaked}});
    auto history = s.history();
    history.responses.back().body = body;
    const auto found = clauses(history);
    BOOST_TEST(only(found, "B15.output_shown_elsewhere"), joined(found));
  }
  // The result itself, shown again in the attempts list, and objects no provider produced pass.
  auto [s, body] = story({{"attempt_id", 1}, {"state", "discarded"}});
  auto history = s.history();
  history.responses.back().body = body;
  BOOST_TEST(clauses(history).empty(), joined(clauses(history)));
  // Before the job shows a result, no output may be shown at all.
  history.responses.back().result.reset();
  history.responses.back().job_status = "running";
  const auto found = clauses(history);
  BOOST_TEST(only(found, "B15.output_shown_elsewhere"), joined(found));
}

BOOST_AUTO_TEST_CASE(b16_a_created_job_named_elsewhere_or_nowhere) {
  const auto located = [](std::optional<std::string> location, int status = 201) {
    Story story;
    story.create("r1", 0, "alice", "k1").answer("r1", 10, status, "7", "queued");
    auto history = story.history();
    history.responses.back().location = std::move(location);
    history.created_location = "/jobs/{job}";
    return history;
  };
  // Another job's path, another shape, an absolute URI of another path, or no header at all.
  for (const std::string wrong :
       {"/jobs/8", "/job/7", "/jobs/7/", "http://127.0.0.1:8080/jobs/70", ""}) {
    const auto found = clauses(located(wrong));
    BOOST_TEST(only(found, "B16.location_wrong"), wrong << ": " << joined(found));
  }
  // The declared path, or an absolute URI of it, passes.
  for (const std::string right : {"/jobs/7", "https://jobs.example/jobs/7"}) {
    const auto found = clauses(located(right));
    BOOST_TEST(found.empty(), right << ": " << joined(found));
  }
  // Not judged: a replay's 200, a Location not recorded, or no declared path.
  BOOST_TEST(clauses(located("/jobs/8", 200)).empty());
  BOOST_TEST(clauses(located(std::nullopt)).empty());
  auto undeclared = located("/jobs/8");
  undeclared.created_location.reset();
  BOOST_TEST(clauses(undeclared).empty());
}

BOOST_AUTO_TEST_CASE(availability_is_reported_apart_from_safety) {
  auto s = clean();
  s.quiet(300)
      .act("r9", 400, "alice", "read", "7")
      .lost("r9", 500)
      .act("r10", 600, "alice", "read", "7")
      .answer("r10", 610, 503);
  const auto findings = judge(s.history());
  BOOST_REQUIRE_EQUAL(findings.size(), 2u);
  BOOST_TEST(findings[0].clause == "availability.unanswered");
  BOOST_TEST(findings[1].clause == "availability.server_error");
  BOOST_TEST(!is_safety(findings[0]));
  // Before the quiet phase a lost reply is a fault, not a finding.
  auto early = clean();
  early.act("r9", 200, "alice", "read", "7").lost("r9", 210);
  BOOST_TEST(judge(early.history()).empty());
}

BOOST_AUTO_TEST_CASE(each_finding_points_at_its_lines) {
  auto s = clean();
  s.create("r9", 200, "alice", "k1").answer("r9", 210, 201, "8");
  const auto findings = judge(s.history());
  BOOST_REQUIRE_EQUAL(findings.size(), 1u);
  // The second acknowledgement (line 13), then the first (line 2).
  BOOST_TEST(findings[0].lines == (std::vector<std::uint64_t>{13, 2}), findings[0].message);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob::check::black_box
