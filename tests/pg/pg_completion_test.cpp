// PgStore's completion against PostgreSQL: the compare-and-swap (first result wins, the late one
// is DISCARDED, guards write nothing, an illegal transition rolls the job back), fail_job,
// provider certifications, what the schema refuses on its own, and action keys. Each
// expectation is what MemoryStore (the reference) does; where PostgreSQL necessarily differs,
// the test says so.
#include <utility>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <pqxx/pqxx>

#include "tests/pg/pg_fixture.hpp"

namespace onejob::pg_test {
namespace {

using S = AttemptState;

}  // namespace

BOOST_FIXTURE_TEST_SUITE(pg_completion, PgFixture)
// ---- completion: the compare-and-swap ----------------------------------------------------

// A cancelled attempt's late result still competes; first to return wins, the other is kept
// as DISCARDED with its own bytes, and the job's version moves exactly once.
BOOST_AUTO_TEST_CASE(complete_attempt_first_wins_and_the_late_one_is_discarded) {
  const Created created = create_job(store(), "key-1");
  const JobId job_id = created.job.id;
  const Attempt slow = claim(store(), "w1", 1000);
  update(store(), slow.id, {S::running}, S::cancelled, std::nullopt, "operator", 200);
  // A second try cancelled before any worker claimed it: it will offer the job's current
  // version, and still lose, because completed_by is set by then.
  const InsertAttemptResult never_claimed = add_attempt(store(), job_id);
  BOOST_REQUIRE(never_claimed.attempt.has_value());
  const Attempt idle = *never_claimed.attempt;
  update(store(), idle.id, {S::starting}, S::cancelled, std::nullopt, "operator", 250);
  const InsertAttemptResult retry = add_attempt(store(), job_id);
  BOOST_REQUIRE(retry.attempt.has_value());
  const Attempt fast = claim(store(), "w2", 2000);
  BOOST_TEST(fast.id == retry.attempt->id);

  const CompleteAttemptResult won =
      complete(store(), fast, 1, {S::running, S::unknown}, fast.lease_token, "{\"w\":3}", 700);
  BOOST_TEST(outcome_name(won.outcome) == "won");
  BOOST_REQUIRE(won.before.has_value());
  BOOST_TEST(to_string(*won.before) == "RUNNING");
  BOOST_REQUIRE(won.job.has_value());
  BOOST_TEST(to_string(won.job->status) == "succeeded");
  BOOST_TEST(won.job->version == 2);
  BOOST_REQUIRE(won.job->completed_by.has_value());
  BOOST_TEST(*won.job->completed_by == fast.id);
  BOOST_TEST(won.job->result == "{\"w\":3}");
  BOOST_TEST(won.job->failure_reason.empty());
  BOOST_REQUIRE(won.attempt.has_value());
  BOOST_TEST(to_string(won.attempt->state) == "SUCCEEDED");
  BOOST_TEST(won.attempt->outcome_reason == "won");
  BOOST_TEST(won.attempt->result == "{\"w\":3}");
  BOOST_REQUIRE(won.attempt->finished_at.has_value());
  BOOST_TEST(us_of(*won.attempt->finished_at) == 700);

  struct Late {
    Attempt attempt;
    std::int64_t expected_version;
    std::string result;
  };
  for (const Late& late : {Late{slow, 1, "{\"l\":1}"}, Late{idle, 2, "{\"l\":2}"}}) {
    BOOST_TEST_CONTEXT("late attempt " << late.attempt.attempt_no) {
      const CompleteAttemptResult lost = complete(store(), late.attempt, late.expected_version,
                                                  {S::cancelled}, std::nullopt, late.result, 800);
      BOOST_TEST(outcome_name(lost.outcome) == "lost");
      BOOST_REQUIRE(lost.before.has_value());
      BOOST_TEST(to_string(*lost.before) == "CANCELLED");
      BOOST_REQUIRE(lost.attempt.has_value());
      BOOST_TEST(to_string(lost.attempt->state) == "DISCARDED");
      BOOST_TEST(lost.attempt->outcome_reason == "lost to attempt " + std::to_string(fast.id));
      BOOST_TEST(lost.attempt->result == late.result);
      // finished_at moves from the cancel to the discard, as MemoryStore::set_state does.
      BOOST_REQUIRE(lost.attempt->finished_at.has_value());
      BOOST_TEST(us_of(*lost.attempt->finished_at) == 800);
      BOOST_REQUIRE(lost.job.has_value());
      BOOST_TEST(lost.job->version == 2);
      BOOST_TEST(lost.job->result == "{\"w\":3}");
    }
  }
  // Read back with plain SQL: the job holds the winner's bytes, version bumped once.
  pqxx::nontransaction tx{raw()};
  const pqxx::row row = tx.exec_params1(
      "SELECT result, version, completed_by, status FROM jobs WHERE id = $1", job_id);
  BOOST_TEST(row["result"].as<std::string>() == "{\"w\":3}");
  BOOST_TEST(row["version"].as<std::int64_t>() == 2);
  BOOST_TEST(row["completed_by"].as<AttemptId>() == fast.id);
  BOOST_TEST(row["status"].as<std::string>() == "succeeded");
  // The winner cannot complete twice.
  BOOST_TEST(
      outcome_name(complete(store(), fast, 2, {S::running}, fast.lease_token, "again").outcome) ==
      "state_mismatch");
}

BOOST_AUTO_TEST_CASE(complete_attempt_guards_write_nothing) {
  const Created created = create_job(store(), "key-1");
  const Attempt running = claim(store(), "w1", 1000);

  const CompleteAttemptResult fenced = complete(store(), running, 1, {S::running}, 7, "x");
  BOOST_TEST(outcome_name(fenced.outcome) == "fenced");
  BOOST_REQUIRE(fenced.job.has_value());
  BOOST_TEST(fenced.job->version == 1);
  BOOST_REQUIRE(fenced.attempt.has_value());
  BOOST_TEST(to_string(fenced.attempt->state) == "RUNNING");
  BOOST_REQUIRE(fenced.before.has_value());

  const CompleteAttemptResult mismatch =
      complete(store(), running, 1, {S::unknown, S::cancelled}, std::nullopt, "x");
  BOOST_TEST(outcome_name(mismatch.outcome) == "state_mismatch");
  BOOST_REQUIRE(mismatch.job.has_value());
  BOOST_REQUIRE(mismatch.before.has_value());
  BOOST_TEST(to_string(*mismatch.before) == "RUNNING");

  Attempt wrong_job = running;
  wrong_job.job_id = created.job.id + 1;
  const CompleteAttemptResult not_found =
      complete(store(), wrong_job, 1, {S::running}, std::nullopt, "x");
  BOOST_TEST(outcome_name(not_found.outcome) == "not_found");
  BOOST_TEST(!not_found.job.has_value());
  BOOST_TEST(!not_found.attempt.has_value());
  BOOST_TEST(!not_found.before.has_value());
  Attempt missing = running;
  missing.id = 999'999;
  BOOST_TEST(outcome_name(complete(store(), missing, 1, {S::running}, std::nullopt, "x").outcome) ==
             "not_found");

  const Job job = load(store(), created.job.id);
  BOOST_TEST(job.version == 1);
  BOOST_TEST(!job.completed_by.has_value());
  BOOST_TEST(job.result.empty());
  const Attempt stored = find(store(), running.id);
  BOOST_TEST(to_string(stored.state) == "RUNNING");
  BOOST_TEST(stored.result.empty());
}

// No winner yet, but the caller's version is stale: zero rows, so the attempt loses, to
// nobody. That is MemoryStore's rule too.
BOOST_AUTO_TEST_CASE(complete_attempt_with_a_stale_version_loses_to_none) {
  const Created created = create_job(store(), "key-1");
  const Attempt running = claim(store(), "w1", 1000);
  const CompleteAttemptResult lost = complete(store(), running, 5, {S::running}, 1, "bytes");
  BOOST_TEST(outcome_name(lost.outcome) == "lost");
  BOOST_REQUIRE(lost.attempt.has_value());
  BOOST_TEST(to_string(lost.attempt->state) == "DISCARDED");
  BOOST_TEST(lost.attempt->outcome_reason == "lost to attempt none");
  BOOST_TEST(lost.attempt->result == "bytes");
  const Job job = load(store(), created.job.id);
  BOOST_TEST(to_string(job.status) == "pending");
  BOOST_TEST(job.version == 1);
  BOOST_TEST(!job.completed_by.has_value());
}

// The transaction rolls back: the job's compare-and-swap, already executed when the attempt's
// transition turns out illegal, is undone. (MemoryStore has written the job by then; see the
// report accompanying this test.)
BOOST_AUTO_TEST_CASE(complete_attempt_with_an_illegal_transition_rolls_back) {
  const Created created = create_job(store(), "key-1");
  BOOST_CHECK_THROW(complete(store(), created.first, 1, {S::starting}, std::nullopt, "early"),
                    IllegalTransition);
  const Job job = load(store(), created.job.id);
  BOOST_TEST(to_string(job.status) == "pending");
  BOOST_TEST(job.version == 1);
  BOOST_TEST(!job.completed_by.has_value());
  BOOST_TEST(job.result.empty());
  const Attempt stored = find(store(), created.first.id);
  BOOST_TEST(to_string(stored.state) == "STARTING");
  BOOST_TEST(stored.result.empty());
}

// ---- fail_job ----------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(fail_job_only_when_pending_without_winner_or_live_attempt) {
  BOOST_TEST(!run(store().fail_job(999'999, "gone", at_us(1))));

  const Created a = create_job(store(), "key-a");
  BOOST_TEST(!run(store().fail_job(a.job.id, "too early", at_us(1))));  // attempt 1 is live
  BOOST_TEST(to_string(load(store(), a.job.id).status) == "pending");
  update(store(), a.first.id, {S::starting}, S::failed, std::nullopt, "refused");
  BOOST_TEST(run(store().fail_job(a.job.id, "every provider refused", at_us(2))));
  const Job failed = load(store(), a.job.id);
  BOOST_TEST(to_string(failed.status) == "failed");
  BOOST_TEST(failed.failure_reason == "every provider refused");
  BOOST_TEST(failed.version == 1);
  BOOST_TEST(!run(store().fail_job(a.job.id, "again", at_us(3))));  // no longer pending
  BOOST_TEST(load(store(), a.job.id).failure_reason == "every provider refused");

  const Created b = create_job(store(), "key-b");
  const Attempt running = claim(store(), "w1", 1000);
  BOOST_TEST(running.job_id == b.job.id);
  complete(store(), running, 1, {S::running}, 1, "out");
  BOOST_TEST(!run(store().fail_job(b.job.id, "too late", at_us(4))));
  BOOST_TEST(to_string(load(store(), b.job.id).status) == "succeeded");
}

// ---- certifications ----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(latest_recorded_certification_wins) {
  BOOST_TEST(!run(store().latest_certification("beta")).has_value());
  const std::vector<std::string> reasons{"schema: unexpected key \"x\"", "back\\slash, comma"};
  run(store().record_certification(
      Certification{.provider = "beta", .passed = false, .reasons = reasons, .at = at_us(10)}));
  run(store().record_certification(
      Certification{.provider = "alpha", .passed = true, .reasons = {}, .at = at_us(5)}));

  std::optional<Certification> beta = run(store().latest_certification("beta"));
  BOOST_REQUIRE(beta.has_value());
  BOOST_TEST(beta->provider == "beta");
  BOOST_TEST(!beta->passed);
  BOOST_TEST(beta->reasons == reasons, boost::test_tools::per_element());
  BOOST_TEST(us_of(beta->at) == 10);

  // Last recorded, not latest `at`: exactly MemoryStore's order.
  run(store().record_certification(
      Certification{.provider = "beta", .passed = true, .reasons = {}, .at = at_us(3)}));
  beta = run(store().latest_certification("beta"));
  BOOST_REQUIRE(beta.has_value());
  BOOST_TEST(beta->passed);
  BOOST_TEST(beta->reasons.empty());
  BOOST_TEST(us_of(beta->at) == 3);
  const std::optional<Certification> alpha = run(store().latest_certification("alpha"));
  BOOST_REQUIRE(alpha.has_value());
  BOOST_TEST(alpha->passed);
}

// ---- what the schema refuses on its own --------------------------------------------------

BOOST_AUTO_TEST_CASE(database_refuses_a_winner_from_another_job_or_without_success) {
  const Created a = create_job(store(), "key-a");
  const Created b = create_job(store(), "key-b");
  {
    pqxx::work tx{raw()};
    BOOST_CHECK_THROW(tx.exec_params0("UPDATE jobs SET status = 'succeeded', completed_by = $2"
                                      " WHERE id = $1",
                                      a.job.id, b.first.id),
                      pqxx::foreign_key_violation);
  }
  {
    pqxx::work tx{raw()};
    BOOST_CHECK_THROW(
        tx.exec_params0("UPDATE jobs SET status = 'succeeded' WHERE id = $1", a.job.id),
        pqxx::check_violation);
  }
  {
    pqxx::work tx{raw()};
    BOOST_CHECK_THROW(
        tx.exec_params0("UPDATE attempts SET state = 'DONE' WHERE id = $1", a.first.id),
        pqxx::check_violation);
  }
  {
    pqxx::work tx{raw()};
    BOOST_CHECK_THROW(
        tx.exec_params0("UPDATE attempts SET state = 'FAILED' WHERE id = $1", a.first.id),
        pqxx::check_violation);  // leaves the live states without a finished_at
  }
}

// A reason PostgreSQL text cannot hold (a NUL byte, invalid UTF-8) is refused and nothing is
// written; a write refused for its state never sends it (the memory store's twin:
// text_postgresql_cannot_hold_is_refused_as_there).
BOOST_AUTO_TEST_CASE(an_unstorable_reason_is_refused_only_when_it_would_be_written) {
  const auto rejected = [](const StoreError& e) { return e.kind() == StoreError::Kind::rejected; };
  const Created created = create_job(store(), "key-1");
  AttemptUpdate failure{.attempt_id = created.first.id,
                        .from = {S::starting},
                        .to = S::failed,
                        .fence = {},
                        .take_over_as = {},
                        .reason = "refused: ",
                        .at = Instant{}};
  failure.reason += '\0';
  BOOST_CHECK_EXCEPTION(run(store().update_attempt(failure)), StoreError, rejected);
  failure.reason = "refused: \xe2\x82";
  BOOST_CHECK_EXCEPTION(run(store().update_attempt(failure)), StoreError, rejected);
  BOOST_TEST(to_string(run(store().find_attempt(created.first.id))->state) == "STARTING");
  failure.from = {S::running};
  BOOST_TEST(outcome_name(run(store().update_attempt(failure)).outcome) == "state_mismatch");
  BOOST_CHECK_EXCEPTION(run(store().fail_job(created.job.id, "\xff", Instant{})), StoreError,
                        rejected);
  failure.from = {S::starting};
  failure.reason = "refused: caf\xc3\xa9";
  BOOST_TEST(outcome_name(run(store().update_attempt(failure)).outcome) == "applied");
}

BOOST_AUTO_TEST_CASE(an_action_key_is_recorded_with_its_effect_and_replays_it) {
  const Created created = create_job(store(), "key-1");
  const ActionKey cancel_key{"alice", "op-1", "POST /attempts/1/cancel\n"};
  AttemptUpdate cancel{.attempt_id = created.first.id,
                       .from = {S::starting},
                       .to = S::cancelled,
                       .fence = {},
                       .take_over_as = {},
                       .reason = "operator",
                       .at = Instant{},
                       .key = cancel_key};
  BOOST_TEST(outcome_name(run(store().update_attempt(cancel)).outcome) == "applied");
  // The same key again: nothing written, the recorded effect returned.
  const UpdateAttemptResult again = run(store().update_attempt(cancel));
  BOOST_TEST(outcome_name(again.outcome) == "key_exists");
  BOOST_REQUIRE(again.recorded.has_value());
  BOOST_TEST(again.recorded->attempt_id == created.first.id);
  BOOST_TEST(again.recorded->request_fingerprint == cancel_key.request_fingerprint);

  NewAttempt retry{.job_id = created.job.id,
                   .provider = "provider-b",
                   .origin = AttemptOrigin::explicit_retry,
                   .created_at = Instant{},
                   .key = ActionKey{"alice", "op-2", "POST /jobs/1/attempts\n"}};
  const InsertAttemptResult inserted = run(store().insert_attempt(retry));
  BOOST_TEST(outcome_name(inserted.outcome) == "inserted");
  BOOST_REQUIRE(inserted.attempt.has_value());
  const InsertAttemptResult replayed = run(store().insert_attempt(retry));
  BOOST_TEST(outcome_name(replayed.outcome) == "key_exists");
  BOOST_REQUIRE(replayed.recorded.has_value());
  BOOST_TEST(replayed.recorded->attempt_id == inserted.attempt->id);
  BOOST_TEST(count_attempts(raw(), created.job.id) == 2);
  const auto found = run(store().find_action("alice", "op-2"));
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(found->attempt_id == inserted.attempt->id);
  BOOST_TEST(!run(store().find_action("bob", "op-2")).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob::pg_test
