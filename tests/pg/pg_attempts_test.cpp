// PgStore's attempts against PostgreSQL: the one-live-attempt index, numbering, claims under
// leases, guarded and fenced updates (completion and the rest: pg_completion_test.cpp). Each
// expectation is what MemoryStore (the reference) does; where PostgreSQL necessarily differs, the
// test says so.
#include <utility>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <pqxx/pqxx>

#include "tests/pg/pg_fixture.hpp"

namespace onejob::pg_test {
namespace {

using S = AttemptState;

std::vector<AttemptId> ids_of(const std::vector<Attempt>& attempts) {
  std::vector<AttemptId> ids;
  for (const Attempt& attempt : attempts) ids.push_back(attempt.id);
  return ids;
}

// A raw attempt row, bypassing PgStore. finished_at_us follows the schema's rule (set exactly
// when not live) so that only the constraint under test can object.
void insert_raw_attempt(pqxx::transaction_base& tx, JobId job_id, int attempt_no,
                        const std::string& state) {
  const bool live = state == "STARTING" || state == "RUNNING" || state == "UNKNOWN";
  tx.exec_params0(
      "INSERT INTO attempts (job_id, attempt_no, provider, provider_key, origin, state,"
      " created_at_us, finished_at_us) VALUES ($1, $2, 'provider-z', 'raw', 'explicit', $3, 1,"
      " CASE WHEN $4 THEN NULL ELSE 2 END)",
      job_id, attempt_no, state, live);
}

bool names_live_index(const pqxx::unique_violation& e) {
  return names_constraint(e, "attempts_one_live_per_job");
}

bool is_not_illegal_transition(const std::logic_error& e) {
  return dynamic_cast<const IllegalTransition*>(&e) == nullptr;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(pg_attempts, PgFixture)

// ---- the one-live-attempt index ----------------------------------------------------------

// The database itself, with no application code involved, refuses a second live attempt.
BOOST_AUTO_TEST_CASE(database_refuses_a_second_live_attempt) {
  const Created created = create_job(store(), "key-1");  // its attempt 1 is STARTING
  for (const char* state : {"STARTING", "RUNNING", "UNKNOWN"}) {
    BOOST_TEST_CONTEXT("second attempt " << state) {
      pqxx::work tx{raw()};
      BOOST_CHECK_EXCEPTION(insert_raw_attempt(tx, created.job.id, 2, state),
                            pqxx::unique_violation, names_live_index);
    }
  }
  // Finished attempts are not limited.
  {
    pqxx::work tx{raw()};
    insert_raw_attempt(tx, created.job.id, 2, "FAILED");
    insert_raw_attempt(tx, created.job.id, 3, "CANCELLED");
    tx.commit();
  }
  BOOST_TEST(count_attempts(raw(), created.job.id) == 3);
}

BOOST_AUTO_TEST_CASE(insert_attempt_is_refused_while_an_attempt_is_live) {
  const Created created = create_job(store(), "key-1");
  const JobId job_id = created.job.id;
  const AttemptId first = created.first.id;

  auto check_refused = [&](std::string_view live_state) {
    BOOST_TEST_CONTEXT("blocking attempt " << live_state) {
      BOOST_TEST(to_string(find(store(), first).state) == live_state);
      const InsertAttemptResult refused = add_attempt(store(), job_id);
      BOOST_TEST(outcome_name(refused.outcome) == "live_attempt_exists");
      BOOST_TEST(!refused.attempt.has_value());
      BOOST_REQUIRE(refused.blocking.has_value());
      BOOST_TEST(*refused.blocking == first);
      BOOST_TEST(count_attempts(raw(), job_id) == 1);
    }
  };
  check_refused("STARTING");
  const Attempt running = claim(store(), "w1", 1000);
  check_refused("RUNNING");
  BOOST_TEST(
      outcome_name(update(store(), first, {S::running}, S::unknown, running.lease_token).outcome) ==
      "applied");
  check_refused("UNKNOWN");

  BOOST_TEST(outcome_name(update(store(), first, {S::unknown}, S::failed, std::nullopt, "refused")
                              .outcome) == "applied");
  const InsertAttemptResult inserted = add_attempt(store(), job_id, "provider-b", 600);
  BOOST_TEST(outcome_name(inserted.outcome) == "inserted");
  BOOST_TEST(!inserted.blocking.has_value());
  BOOST_REQUIRE(inserted.attempt.has_value());
  const Attempt& second = *inserted.attempt;
  BOOST_TEST(second.job_id == job_id);
  BOOST_TEST(second.attempt_no == 2);
  BOOST_TEST(second.provider == "provider-b");
  BOOST_TEST(second.provider_key == std::to_string(job_id) + ":2");
  BOOST_TEST(to_string(second.origin) == "failover");
  BOOST_TEST(to_string(second.state) == "STARTING");
  BOOST_TEST(second.lease_token == 0);
  BOOST_TEST(us_of(second.created_at) == 600);
  BOOST_TEST(!second.finished_at.has_value());
  BOOST_TEST(to_string(load(store(), job_id).status) == "pending");
}

// A refused insert_attempt is refused before the INSERT runs, so it spends no attempt id: ids
// advance as MemoryStore's do, which a scenario's trace on PostgreSQL relies on to equal its
// trace on MemoryStore. (A refused insert_job spends a job id in both.)
BOOST_AUTO_TEST_CASE(a_refused_insert_attempt_spends_no_attempt_id) {
  const Created created = create_job(store(), "key-1");
  BOOST_TEST(outcome_name(add_attempt(store(), created.job.id).outcome) == "live_attempt_exists");
  update(store(), created.first.id, {S::starting}, S::failed, std::nullopt, "unsendable");
  const InsertAttemptResult inserted = add_attempt(store(), created.job.id);
  BOOST_REQUIRE(inserted.attempt.has_value());
  BOOST_TEST(inserted.attempt->id == created.first.id + 1);
  BOOST_TEST(inserted.attempt->attempt_no == 2);
}

BOOST_AUTO_TEST_CASE(attempt_no_is_max_plus_one_within_its_job) {
  const Created a = create_job(store(), "key-a");
  const Created b = create_job(store(), "key-b");
  AttemptId a_live = a.first.id;
  AttemptId b_live = b.first.id;
  for (int round = 2; round <= 4; ++round) {
    update(store(), a_live, {S::starting}, S::failed, std::nullopt, "refused");
    const InsertAttemptResult next_a = add_attempt(store(), a.job.id);
    BOOST_REQUIRE(next_a.attempt.has_value());
    BOOST_TEST(next_a.attempt->attempt_no == round);
    BOOST_TEST(next_a.attempt->provider_key ==
               std::to_string(a.job.id) + ":" + std::to_string(round));
    a_live = next_a.attempt->id;
    if (round == 3) {
      update(store(), b_live, {S::starting}, S::cancelled, std::nullopt, "operator");
      const InsertAttemptResult next_b = add_attempt(store(), b.job.id);
      BOOST_REQUIRE(next_b.attempt.has_value());
      BOOST_TEST(next_b.attempt->attempt_no == 2);
      b_live = next_b.attempt->id;
    }
  }
  std::vector<int> numbers;
  for (const Attempt& attempt : run(store().list_attempts(a.job.id))) {
    numbers.push_back(attempt.attempt_no);
  }
  BOOST_TEST(numbers == (std::vector<int>{1, 2, 3, 4}), boost::test_tools::per_element());
  BOOST_TEST(run(store().list_attempts(b.job.id)).size() == 2u);
  BOOST_TEST(run(store().list_attempts(999'999)).empty());
}

BOOST_AUTO_TEST_CASE(insert_attempt_on_a_missing_or_completed_job_writes_nothing) {
  const InsertAttemptResult missing = add_attempt(store(), 999'999);
  BOOST_TEST(outcome_name(missing.outcome) == "job_not_found");
  BOOST_TEST(!missing.attempt.has_value());
  BOOST_TEST(!missing.blocking.has_value());

  const Created created = create_job(store(), "key-1");
  const Attempt running = claim(store(), "w1", 1000);
  BOOST_TEST(outcome_name(
                 complete(store(), running, 1, {S::running}, running.lease_token, "out").outcome) ==
             "won");
  const InsertAttemptResult completed = add_attempt(store(), created.job.id);
  BOOST_TEST(outcome_name(completed.outcome) == "job_completed");
  BOOST_TEST(!completed.attempt.has_value());
  BOOST_TEST(!completed.blocking.has_value());
  BOOST_TEST(count_attempts(raw(), created.job.id) == 1);
  BOOST_TEST(to_string(load(store(), created.job.id).status) == "succeeded");
}

// An operator's retry reopens a failed job (as MemoryStore, it resets only the status; the failure
// reason stays until a winner clears it); a failover onto it is refused and writes nothing.
BOOST_AUTO_TEST_CASE(insert_attempt_reopens_a_failed_job) {
  const Created created = create_job(store(), "key-1");
  update(store(), created.first.id, {S::starting}, S::failed, std::nullopt, "refused");
  BOOST_TEST(run(store().fail_job(created.job.id, "every provider refused", at_us(550))));
  BOOST_TEST(to_string(load(store(), created.job.id).status) == "failed");

  BOOST_TEST(outcome_name(add_attempt(store(), created.job.id).outcome) == "job_failed");
  BOOST_TEST(count_attempts(raw(), created.job.id) == 1);
  BOOST_TEST(to_string(load(store(), created.job.id).status) == "failed");
  const InsertAttemptResult retried =
      run(store().insert_attempt(NewAttempt{.job_id = created.job.id,
                                            .provider = "provider-b",
                                            .origin = AttemptOrigin::explicit_retry,
                                            .created_at = at_us(600)}));
  BOOST_TEST(outcome_name(retried.outcome) == "inserted");
  const Job reopened = load(store(), created.job.id);
  BOOST_TEST(to_string(reopened.status) == "pending");
  BOOST_TEST(reopened.failure_reason == "every provider refused");
  BOOST_TEST(reopened.version == 1);
}

BOOST_AUTO_TEST_CASE(idle_jobs_are_pending_without_a_winner_or_a_live_attempt) {
  const Created busy = create_job(store(), "key-busy");
  const Created idle = create_job(store(), "key-idle");
  update(store(), idle.first.id, {S::starting}, S::cancelled, std::nullopt, "operator");
  const auto found = run(store().find_idle_jobs());
  BOOST_REQUIRE(found.size() == 1u);
  BOOST_TEST(found[0].id == idle.job.id);
  BOOST_TEST(busy.job.id != idle.job.id);
}

// ---- claims and leases -------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(claim_takes_the_oldest_starting_attempt_and_bumps_its_token) {
  const Created a = create_job(store(), "key-a");
  const Created b = create_job(store(), "key-b");

  const Attempt first = claim(store(), "w1", 1000);
  BOOST_TEST(first.id == a.first.id);
  BOOST_TEST(to_string(first.state) == "RUNNING");
  BOOST_TEST(first.lease_owner == "w1");
  BOOST_TEST(first.lease_token == 1);
  BOOST_TEST(us_of(first.lease_expires_at) == 1000);
  BOOST_TEST(!first.finished_at.has_value());
  BOOST_TEST(first.outcome_reason.empty());

  const Attempt second = claim(store(), "w2", 2000);
  BOOST_TEST(second.id == b.first.id);
  BOOST_TEST(second.lease_owner == "w2");
  BOOST_TEST(second.lease_token == 1);
  BOOST_TEST(!run(store().claim_next_attempt("w3", at_us(10), at_us(3000))).has_value());

  BOOST_TEST(ids_of(run(store().find_attempts_in_state(S::running))) ==
                 (std::vector<AttemptId>{a.first.id, b.first.id}),
             boost::test_tools::per_element());
  BOOST_TEST(run(store().find_attempts_in_state(S::starting)).empty());
  // The claim is committed, not just returned.
  BOOST_TEST(find(store(), a.first.id).lease_owner == "w1");
}

// FOR UPDATE SKIP LOCKED: a worker passes over an attempt another transaction holds.
BOOST_AUTO_TEST_CASE(a_claim_skips_an_attempt_another_transaction_holds) {
  const Created a = create_job(store(), "key-a");
  const Created b = create_job(store(), "key-b");
  {
    pqxx::work holder{raw()};
    holder.exec_params1("SELECT id FROM attempts WHERE id = $1 FOR UPDATE", a.first.id);
    BOOST_TEST(claim(store(), "w1", 1000).id == b.first.id);
    BOOST_TEST(!run(store().claim_next_attempt("w2", at_us(10), at_us(1000))).has_value());
    holder.commit();
  }
  BOOST_TEST(claim(store(), "w2", 1000).id == a.first.id);
}

// Real concurrency: two connections, two threads, claiming as fast as they can.
BOOST_AUTO_TEST_CASE(two_workers_on_two_connections_never_claim_one_attempt) {
  constexpr int kJobs = 40;
  std::set<AttemptId> created;
  for (int i = 0; i < kJobs; ++i) {
    created.insert(create_job(store(), "key-" + std::to_string(i)).first.id);
  }
  PgStore other{pg_url()};
  std::vector<Attempt> claimed_by_1;
  std::vector<Attempt> claimed_by_2;
  auto drain = [](PgStore* store, const char* worker, std::vector<Attempt>* claimed) {
    while (auto attempt = run(store->claim_next_attempt(worker, at_us(10), at_us(1000)))) {
      claimed->push_back(*attempt);
    }
  };
  std::thread first{drain, &store(), "w1", &claimed_by_1};
  std::thread second{drain, &other, "w2", &claimed_by_2};
  first.join();
  second.join();

  std::set<AttemptId> claimed;
  for (const auto* batch : {&claimed_by_1, &claimed_by_2}) {
    for (const Attempt& attempt : *batch) {
      BOOST_TEST(claimed.insert(attempt.id).second, "attempt " << attempt.id << " claimed twice");
      BOOST_TEST(attempt.lease_token == 1);
    }
  }
  BOOST_TEST(claimed == created);
  BOOST_TEST_MESSAGE("w1 claimed " << claimed_by_1.size() << ", w2 " << claimed_by_2.size());
}

BOOST_AUTO_TEST_CASE(expired_leases_are_running_attempts_at_or_past_their_lease) {
  const Created a = create_job(store(), "key-a");
  const Created b = create_job(store(), "key-b");
  const Created c = create_job(store(), "key-c");
  const Created d = create_job(store(), "key-d");
  claim(store(), "w1", 100);  // a
  claim(store(), "w1", 200);  // b
  claim(store(), "w1", 50);   // c, then no longer RUNNING
  update(store(), c.first.id, {S::running}, S::unknown, 1, "deadline passed");
  // d stays STARTING: it has no lease at all.

  // The reconciler's sweep reads the same list in a statement of its own: the two agree at every
  // instant, the lease's own instant included.
  auto expired_at = [&](std::int64_t now) {
    const auto listed = ids_of(run(store().find_expired_leases(at_us(now))));
    BOOST_TEST(ids_of(run(store().find_sweep_work(at_us(now))).expired) == listed,
               boost::test_tools::per_element());
    return listed;
  };
  BOOST_TEST(expired_at(99).empty());
  BOOST_TEST(expired_at(100) == (std::vector<AttemptId>{a.first.id}),
             boost::test_tools::per_element());
  BOOST_TEST(expired_at(5000) == (std::vector<AttemptId>{a.first.id, b.first.id}),
             boost::test_tools::per_element());
  BOOST_TEST(ids_of(run(store().find_attempts_in_state(S::starting))) ==
                 (std::vector<AttemptId>{d.first.id}),
             boost::test_tools::per_element());
  BOOST_TEST(ids_of(run(store().find_attempts_in_state(S::unknown))) ==
                 (std::vector<AttemptId>{c.first.id}),
             boost::test_tools::per_element());
}

// ---- guarded updates ---------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(update_attempt_with_a_stale_fence_writes_nothing) {
  const Created created = create_job(store(), "key-1");
  const Attempt running = claim(store(), "w1", 1000);
  // The fence is checked before the state: a fenced writer learns nothing else.
  for (const std::vector<AttemptState>& from :
       {std::vector<AttemptState>{S::running}, std::vector<AttemptState>{S::starting}}) {
    const UpdateAttemptResult fenced =
        update(store(), created.first.id, from, S::failed, running.lease_token - 1, "late");
    BOOST_TEST(outcome_name(fenced.outcome) == "fenced");
    BOOST_REQUIRE(fenced.before.has_value());
    BOOST_TEST(to_string(*fenced.before) == "RUNNING");
    BOOST_REQUIRE(fenced.attempt.has_value());
    BOOST_TEST(to_string(fenced.attempt->state) == "RUNNING");
  }
  const Attempt stored = find(store(), created.first.id);
  BOOST_TEST(to_string(stored.state) == "RUNNING");
  BOOST_TEST(stored.outcome_reason.empty());
}

BOOST_AUTO_TEST_CASE(update_attempt_reports_state_mismatch_and_not_found) {
  const Created created = create_job(store(), "key-1");
  const UpdateAttemptResult mismatch =
      update(store(), created.first.id, {S::running, S::unknown}, S::failed, std::nullopt);
  BOOST_TEST(outcome_name(mismatch.outcome) == "state_mismatch");
  BOOST_REQUIRE(mismatch.before.has_value());
  BOOST_TEST(to_string(*mismatch.before) == "STARTING");
  BOOST_REQUIRE(mismatch.attempt.has_value());
  BOOST_TEST(mismatch.attempt->id == created.first.id);
  BOOST_TEST(to_string(find(store(), created.first.id).state) == "STARTING");

  const UpdateAttemptResult missing =
      update(store(), 999'999, {S::starting}, S::failed, std::nullopt);
  BOOST_TEST(outcome_name(missing.outcome) == "not_found");
  BOOST_TEST(!missing.attempt.has_value());
  BOOST_TEST(!missing.before.has_value());
}

BOOST_AUTO_TEST_CASE(update_attempt_applies_and_finishes_only_when_leaving_live_states) {
  const Created created = create_job(store(), "key-1");
  const Attempt running = claim(store(), "w1", 1000);

  const UpdateAttemptResult unknown = update(store(), created.first.id, {S::running}, S::unknown,
                                             running.lease_token, "deadline passed", 300);
  BOOST_TEST(outcome_name(unknown.outcome) == "applied");
  BOOST_REQUIRE(unknown.before.has_value());
  BOOST_TEST(to_string(*unknown.before) == "RUNNING");
  BOOST_REQUIRE(unknown.attempt.has_value());
  BOOST_TEST(to_string(unknown.attempt->state) == "UNKNOWN");
  BOOST_TEST(unknown.attempt->outcome_reason == "deadline passed");
  BOOST_TEST(!unknown.attempt->finished_at.has_value());  // UNKNOWN is still live
  BOOST_TEST(unknown.attempt->lease_token == 1);
  BOOST_TEST(unknown.attempt->lease_owner == "w1");

  // An empty reason keeps the previous one.
  const UpdateAttemptResult failed =
      update(store(), created.first.id, {S::unknown}, S::failed, std::nullopt, "", 400);
  BOOST_TEST(outcome_name(failed.outcome) == "applied");
  BOOST_REQUIRE(failed.attempt.has_value());
  BOOST_TEST(to_string(failed.attempt->state) == "FAILED");
  BOOST_TEST(failed.attempt->outcome_reason == "deadline passed");
  BOOST_REQUIRE(failed.attempt->finished_at.has_value());
  BOOST_TEST(us_of(*failed.attempt->finished_at) == 400);

  const Attempt stored = find(store(), created.first.id);
  BOOST_TEST(to_string(stored.state) == "FAILED");
  BOOST_REQUIRE(stored.finished_at.has_value());
  BOOST_TEST(us_of(*stored.finished_at) == 400);
}

BOOST_AUTO_TEST_CASE(take_over_bumps_the_token_and_fences_the_previous_holder) {
  const Created created = create_job(store(), "key-1");
  const Attempt running = claim(store(), "w1", 100);
  BOOST_TEST(running.lease_token == 1);

  const UpdateAttemptResult taken =
      update(store(), created.first.id, {S::running}, S::unknown, std::nullopt, "lease expired",
             150, std::string{"reconciler"});
  BOOST_TEST(outcome_name(taken.outcome) == "applied");
  BOOST_REQUIRE(taken.attempt.has_value());
  BOOST_TEST(taken.attempt->lease_owner == "reconciler");
  BOOST_TEST(taken.attempt->lease_token == 2);

  // The worker that lost its lease comes back: fenced, whatever state it names.
  BOOST_TEST(outcome_name(update(store(), created.first.id, {S::unknown}, S::failed,
                                 running.lease_token, "late failure")
                              .outcome) == "fenced");
  BOOST_TEST(
      outcome_name(complete(store(), running, 1, {S::unknown}, running.lease_token, "x").outcome) ==
      "fenced");
  BOOST_TEST(outcome_name(update(store(), created.first.id, {S::unknown}, S::failed, 2, "refused")
                              .outcome) == "applied");
}

BOOST_AUTO_TEST_CASE(an_illegal_transition_throws_and_writes_nothing) {
  const Created created = create_job(store(), "key-1");
  claim(store(), "w1", 1000);
  BOOST_CHECK_THROW(update(store(), created.first.id, {S::running}, S::starting, 1, "back"),
                    IllegalTransition);
  BOOST_CHECK_THROW(update(store(), created.first.id, {S::running}, S::running, 1, "again"),
                    IllegalTransition);
  const Attempt stored = find(store(), created.first.id);
  BOOST_TEST(to_string(stored.state) == "RUNNING");
  BOOST_TEST(stored.outcome_reason.empty());

  update(store(), created.first.id, {S::running}, S::failed, 1, "refused");
  BOOST_CHECK_THROW(update(store(), created.first.id, {S::failed}, S::cancelled, std::nullopt),
                    IllegalTransition);
  // The guard comes first: a failing guard is an outcome, never an exception.
  BOOST_TEST(outcome_name(update(store(), created.first.id, {S::running}, S::starting, std::nullopt)
                              .outcome) == "state_mismatch");
}

BOOST_AUTO_TEST_CASE(update_attempt_never_sets_succeeded_or_discarded) {
  const Created created = create_job(store(), "key-1");
  const Attempt running = claim(store(), "w1", 1000);
  for (const AttemptState to : {S::succeeded, S::discarded}) {
    BOOST_CHECK_EXCEPTION(update(store(), running.id, {S::running}, to, 1), std::logic_error,
                          is_not_illegal_transition);
    // Refused before any lookup, as MemoryStore does.
    BOOST_CHECK_EXCEPTION(update(store(), 999'999, {S::running}, to, 1), std::logic_error,
                          is_not_illegal_transition);
  }
  BOOST_TEST(to_string(find(store(), created.first.id).state) == "RUNNING");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob::pg_test
