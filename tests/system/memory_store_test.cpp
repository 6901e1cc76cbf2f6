#include "system/adapters/memory_store.hpp"

#include <algorithm>
#include <map>
#include <string>

#include <boost/test/unit_test.hpp>

#include "system/adapters/sequence_table.hpp"
#include "system/domain/check.hpp"

#include "tests/support/instants.hpp"
#include "tests/support/run_sync.hpp"

namespace onejob {
namespace {

using test::run_sync;
using S = AttemptState;

NewJob new_job(std::string owner, std::string key, std::string fingerprint = "POST /jobs\n{}") {
  return NewJob{.owner_id = std::move(owner),
                .idempotency_key = std::move(key),
                .request_fingerprint = std::move(fingerprint),
                .operation = "classify",
                .target_provider = "alpha",
                .failover = {"beta"},
                .input_json = R"({"text":"x"})",
                .payload_json = "{}",
                .created_at = Instant(Duration(42))};
}

using test::at;

struct StoreFixture {
  MemoryStore store;

  // A job with its initial attempt; returns the attempt.
  Attempt job_with_attempt(std::string key = "k1") {
    return *run_sync(store.insert_job(new_job("alice", std::move(key)))).initial_attempt;
  }
  Attempt claim(std::string worker = "w1") {
    return *run_sync(store.claim_next_attempt(std::move(worker), at(1), at(21)));
  }
  UpdateAttemptResult update(AttemptId id, std::vector<S> from, S to,
                             std::optional<std::int64_t> fence = std::nullopt,
                             std::optional<std::string> take_over = std::nullopt) {
    return run_sync(store.update_attempt(AttemptUpdate{.attempt_id = id,
                                                       .from = std::move(from),
                                                       .to = to,
                                                       .fence = fence,
                                                       .take_over_as = std::move(take_over),
                                                       .reason = "test",
                                                       .at = at(2)}));
  }
  CompleteAttemptResult complete(const Attempt& attempt, std::vector<S> from, std::string result,
                                 std::optional<std::int64_t> fence = std::nullopt) {
    return run_sync(store.complete_attempt(CompleteAttempt{.attempt_id = attempt.id,
                                                           .job_id = attempt.job_id,
                                                           .expected_version = 1,
                                                           .from = std::move(from),
                                                           .fence = fence,
                                                           .result = std::move(result),
                                                           .at = at(3)}));
  }
  // Drives `attempt` (STARTING, just created) into `state` through the store's own operations.
  Attempt drive(Attempt attempt, S state) {
    if (state == S::starting) return attempt;
    if (state == S::cancelled) return *update(attempt.id, {S::starting}, S::cancelled).attempt;
    attempt = claim();
    if (state == S::running) return attempt;
    return *update(attempt.id, {S::running}, state).attempt;  // unknown
  }
  Attempt retry(JobId job) {
    return *run_sync(store.insert_attempt({job, "beta", AttemptOrigin::explicit_retry, at(2)}))
                .attempt;
  }
};

BOOST_FIXTURE_TEST_SUITE(memory_store, StoreFixture)

// ---- jobs ------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(insert_commits_the_job_with_its_first_attempt) {
  auto result = run_sync(store.insert_job(new_job("alice", "k1")));
  BOOST_TEST((result.outcome == InsertJobResult::Outcome::inserted));
  BOOST_TEST(result.job->id == 1);
  BOOST_TEST(result.job->version == 1);
  BOOST_TEST(!result.job->completed_by.has_value());
  BOOST_TEST(result.job->failover == std::vector<std::string>{"beta"});
  BOOST_REQUIRE(result.initial_attempt.has_value());
  BOOST_TEST(result.initial_attempt->attempt_no == 1);
  BOOST_TEST(result.initial_attempt->provider == "alpha");
  BOOST_TEST(result.initial_attempt->provider_key == "1:1");
  BOOST_TEST(to_string(result.initial_attempt->state) == "STARTING");
}

BOOST_AUTO_TEST_CASE(duplicate_owner_key_is_a_unique_violation_that_writes_nothing) {
  run_sync(store.insert_job(new_job("alice", "k1", "first")));
  auto second = run_sync(store.insert_job(new_job("alice", "k1", "second")));
  BOOST_TEST((second.outcome == InsertJobResult::Outcome::unique_violation));
  BOOST_TEST(!second.job.has_value());
  BOOST_TEST(store.job_count() == 1u);
  BOOST_TEST(store.attempt_count() == 1u);
  BOOST_TEST(run_sync(store.find_job_by_key("alice", "k1"))->request_fingerprint == "first");
}

BOOST_AUTO_TEST_CASE(a_rejected_insert_still_consumes_an_id_like_a_sequence) {
  run_sync(store.insert_job(new_job("alice", "k1")));
  run_sync(store.insert_job(new_job("alice", "k1")));
  BOOST_TEST(run_sync(store.insert_job(new_job("alice", "k2"))).job->id == 3);
}

// As PgStore (tests/pg, a_nul_byte_is_refused_not_truncated): PostgreSQL text holds neither a NUL
// byte nor invalid UTF-8, so a value with one is refused and nothing is written. A write's new
// values are sent only once its checks pass: a write refused for its state never sends them.
BOOST_AUTO_TEST_CASE(text_postgresql_cannot_hold_is_refused_as_there) {
  const auto rejected = [](const StoreError& e) { return e.kind() == StoreError::Kind::rejected; };
  BOOST_CHECK_EXCEPTION(run_sync(store.insert_job(new_job("alice", std::string{"k\0a", 3}))),
                        StoreError, rejected);
  BOOST_CHECK_EXCEPTION(run_sync(store.insert_job(new_job("alice", "caf\xe9"))), StoreError,
                        rejected);
  BOOST_CHECK_EXCEPTION(run_sync(store.find_job_by_key("alice", std::string{"k\0b", 3})),
                        StoreError, rejected);
  NewJob nul_in_failover = new_job("alice", "k2");
  nul_in_failover.failover = {std::string{"be\0ta", 5}};
  BOOST_CHECK_EXCEPTION(run_sync(store.insert_job(nul_in_failover)), StoreError, rejected);
  BOOST_TEST(!run_sync(store.find_job_by_key("alice", "caf\xc3\xa9")).has_value());
  const Attempt attempt = job_with_attempt();
  claim();
  AttemptUpdate failure{.attempt_id = attempt.id,
                        .from = {S::running},
                        .to = S::failed,
                        .fence = {},
                        .take_over_as = {},
                        .reason = "refused: ",
                        .at = at(2)};
  failure.reason += '\0';
  BOOST_CHECK_EXCEPTION(run_sync(store.update_attempt(failure)), StoreError, rejected);
  BOOST_TEST((run_sync(store.find_attempt(attempt.id))->state == S::running));
  failure.from = {S::starting};
  BOOST_TEST((run_sync(store.update_attempt(failure)).outcome ==
              UpdateAttemptResult::Outcome::state_mismatch));
  BOOST_CHECK_EXCEPTION(run_sync(store.fail_job(attempt.job_id, "\xff", at(3))), StoreError,
                        rejected);
  BOOST_CHECK_EXCEPTION(
      run_sync(store.complete_attempt(CompleteAttempt{.attempt_id = attempt.id,
                                                      .job_id = attempt.job_id,
                                                      .expected_version = 1,
                                                      .from = {S::running},
                                                      .fence = {},
                                                      .result = std::string{"{\"a\":\"\0\"}", 9},
                                                      .at = at(3)})),
      StoreError, rejected);
  BOOST_TEST(!run_sync(store.load_job(attempt.job_id))->completed_by.has_value());
  failure.from = {S::running};
  failure.reason = "refused: caf\xc3\xa9";
  BOOST_TEST(
      (run_sync(store.update_attempt(failure)).outcome == UpdateAttemptResult::Outcome::applied));
}

BOOST_AUTO_TEST_CASE(reads_are_owner_scoped) {
  auto a = run_sync(store.insert_job(new_job("alice", "k1")));
  auto b = run_sync(store.insert_job(new_job("bob", "k1")));
  BOOST_TEST(a.job->id != b.job->id);
  BOOST_TEST(run_sync(store.find_job("alice", a.job->id)).has_value());
  BOOST_TEST(!run_sync(store.find_job("bob", a.job->id)).has_value());
  BOOST_TEST(!run_sync(store.find_job("alice", 999)).has_value());
  BOOST_TEST(run_sync(store.load_job(a.job->id)).has_value());
}

// ---- attempts --------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(one_live_attempt_per_job_is_enforced_by_the_store) {
  Attempt first = job_with_attempt();
  for (S live : {S::starting, S::running, S::unknown}) {
    if (live == S::running) claim();
    if (live == S::unknown) update(first.id, {S::running}, S::unknown);
    auto refused =
        run_sync(store.insert_attempt({first.job_id, "beta", AttemptOrigin::failover, at(5)}));
    BOOST_TEST((refused.outcome == InsertAttemptResult::Outcome::live_attempt_exists));
    BOOST_TEST(refused.blocking.value_or(0) == first.id);
  }
  update(first.id, {S::unknown}, S::cancelled);
  auto second =
      run_sync(store.insert_attempt({first.job_id, "beta", AttemptOrigin::failover, at(5)}));
  BOOST_TEST((second.outcome == InsertAttemptResult::Outcome::inserted));
  BOOST_TEST(second.attempt->attempt_no == 2);
  BOOST_TEST(second.attempt->provider_key == "1:2");
  BOOST_TEST(run_sync(store.list_attempts(first.job_id)).size() == 2u);
}

BOOST_AUTO_TEST_CASE(no_attempt_after_a_winner_and_none_for_a_missing_job) {
  Attempt first = claim(job_with_attempt().lease_owner);
  complete(first, {S::running}, "{}");
  auto refused =
      run_sync(store.insert_attempt({first.job_id, "beta", AttemptOrigin::failover, at(5)}));
  BOOST_TEST((refused.outcome == InsertAttemptResult::Outcome::job_completed));
  auto missing = run_sync(store.insert_attempt({77, "beta", AttemptOrigin::failover, at(5)}));
  BOOST_TEST((missing.outcome == InsertAttemptResult::Outcome::job_not_found));
}

// Only an operator's retry reopens a failed job: a failover onto it is refused and writes nothing.
BOOST_AUTO_TEST_CASE(a_failed_job_is_reopened_by_a_retry_never_by_a_failover) {
  Attempt first = claim(job_with_attempt().lease_owner);
  update(first.id, {S::running}, S::failed);
  BOOST_TEST(run_sync(store.fail_job(first.job_id, "no provider left", at(5))));
  auto refused =
      run_sync(store.insert_attempt({first.job_id, "beta", AttemptOrigin::failover, at(6)}));
  BOOST_TEST((refused.outcome == InsertAttemptResult::Outcome::job_failed));
  BOOST_TEST(run_sync(store.list_attempts(first.job_id)).size() == 1u);
  BOOST_TEST((run_sync(store.load_job(first.job_id))->status == JobStatus::failed));
  auto retried =
      run_sync(store.insert_attempt({first.job_id, "beta", AttemptOrigin::explicit_retry, at(7)}));
  BOOST_TEST((retried.outcome == InsertAttemptResult::Outcome::inserted));
  BOOST_TEST((run_sync(store.load_job(first.job_id))->status == JobStatus::pending));
}

BOOST_AUTO_TEST_CASE(claims_take_the_oldest_starting_attempt_once_with_a_fresh_token) {
  Attempt a = job_with_attempt("k1");
  Attempt b = job_with_attempt("k2");
  Attempt first = claim("w1");
  Attempt second = claim("w2");
  BOOST_TEST(first.id == a.id);
  BOOST_TEST(second.id == b.id);
  BOOST_TEST(first.lease_owner == "w1");
  BOOST_TEST(first.lease_token == 1);
  BOOST_TEST(to_string(first.state) == "RUNNING");
  BOOST_TEST(!run_sync(store.claim_next_attempt("w3", at(1), at(21))).has_value());
  BOOST_TEST(run_sync(store.find_expired_leases(at(20))).empty());
  BOOST_TEST(run_sync(store.find_expired_leases(at(21))).size() == 2u);
}

BOOST_AUTO_TEST_CASE(the_fence_rejects_a_writer_whose_lease_was_taken_over) {
  Attempt held = claim(job_with_attempt().lease_owner);
  auto takeover = update(held.id, {S::running}, S::unknown, held.lease_token, "reconciler");
  BOOST_TEST((takeover.outcome == UpdateAttemptResult::Outcome::applied));
  BOOST_TEST(takeover.attempt->lease_token == held.lease_token + 1);
  BOOST_TEST(takeover.attempt->lease_owner == "reconciler");
  // The old holder believes the attempt is UNKNOWN too; the fence, not the state, refuses it.
  auto stale = complete(held, {S::unknown}, "{}", held.lease_token);
  BOOST_TEST((stale.outcome == CompleteAttemptResult::Outcome::fenced));
  BOOST_TEST(!stale.job->completed_by.has_value());
  auto stale_update = update(held.id, {S::unknown}, S::failed, held.lease_token);
  BOOST_TEST((stale_update.outcome == UpdateAttemptResult::Outcome::fenced));
  BOOST_TEST(to_string(stale_update.attempt->state) == "UNKNOWN");
  auto current = complete(held, {S::unknown}, "{}", takeover.attempt->lease_token);
  BOOST_TEST((current.outcome == CompleteAttemptResult::Outcome::won));
}

BOOST_AUTO_TEST_CASE(a_guard_on_the_wrong_state_writes_nothing) {
  Attempt attempt = job_with_attempt();
  auto result = update(attempt.id, {S::running}, S::unknown);
  BOOST_TEST((result.outcome == UpdateAttemptResult::Outcome::state_mismatch));
  BOOST_TEST(to_string(*result.before) == "STARTING");
  BOOST_TEST(
      (update(999, {S::running}, S::unknown).outcome == UpdateAttemptResult::Outcome::not_found));
}

// ---- the transition table ----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(every_transition_of_the_table_is_applied_by_the_store) {
  int key = 0;
  for (const auto& [from, to] : legal_attempt_transitions()) {
    BOOST_TEST_CONTEXT(to_string(from) << " -> " << to_string(to)) {
      Attempt first = job_with_attempt("table-" + std::to_string(++key));
      S reached{};
      if (to == S::discarded && from == S::cancelled) {
        // The cancelled attempt's late result arrives after a retry has won.
        Attempt cancelled = drive(first, S::cancelled);
        Attempt winner = drive(retry(first.job_id), S::running);
        complete(winner, {S::running}, R"({"winner":true})");
        auto result = complete(cancelled, {S::cancelled}, R"({"late":true})");
        BOOST_TEST(result.job->result == R"({"winner":true})");
        BOOST_TEST(result.attempt->result == R"({"late":true})");
        reached = result.attempt->state;
      } else if (to == S::discarded) {
        // An earlier, cancelled attempt wins while this one is live; this one's result loses.
        Attempt early = drive(first, S::cancelled);
        Attempt attempt = drive(retry(first.job_id), from);
        complete(early, {S::cancelled}, R"({"winner":true})");
        auto result = complete(attempt, {from}, R"({"mine":true})");
        BOOST_TEST(result.job->result == R"({"winner":true})");
        BOOST_TEST(result.attempt->result == R"({"mine":true})");
        reached = result.attempt->state;
      } else if (to == S::succeeded) {
        auto result = complete(drive(first, from), {from}, R"({"mine":true})");
        BOOST_TEST(result.job->result == R"({"mine":true})");
        reached = result.attempt->state;
      } else {
        auto result = update(drive(first, from).id, {from}, to);
        BOOST_TEST((result.outcome == UpdateAttemptResult::Outcome::applied));
        BOOST_TEST((result.before == from));
        reached = result.attempt->state;
        // A re-driven attempt is claimable again: cancel it, so the next case's claim gets its
        // own attempt.
        if (to == S::starting) update(first.id, {S::starting}, S::cancelled);
      }
      BOOST_TEST((reached == to));
    }
  }
}

BOOST_AUTO_TEST_CASE(an_illegal_transition_is_a_programming_error) {
  Attempt attempt = drive(job_with_attempt("dead"), S::running);
  update(attempt.id, {S::running}, S::failed);
  BOOST_CHECK_THROW(update(attempt.id, {S::failed}, S::running), IllegalTransition);
  Attempt fresh = job_with_attempt("fresh");
  BOOST_CHECK_THROW(update(fresh.id, {S::starting}, S::unknown), IllegalTransition);
  // Only the compare-and-swap decides a winner or a loser.
  Attempt running = claim();
  BOOST_CHECK_THROW(update(running.id, {S::running}, S::succeeded), std::logic_error);
  BOOST_CHECK_THROW(update(running.id, {S::running}, S::discarded), std::logic_error);
}

// ---- the compare-and-swap ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(first_result_wins_and_bumps_the_version_once_the_second_is_discarded) {
  Attempt first = claim(job_with_attempt().lease_owner);
  update(first.id, {S::running}, S::cancelled);
  Attempt second = drive(retry(first.job_id), S::running);
  auto won = complete(second, {S::running}, R"({"from":"second"})");
  BOOST_TEST((won.outcome == CompleteAttemptResult::Outcome::won));
  BOOST_TEST(won.job->version == 2);
  BOOST_TEST(won.job->completed_by.value_or(0) == second.id);
  BOOST_TEST(to_string(won.job->status) == "succeeded");
  auto lost = complete(first, {S::cancelled}, R"({"from":"first"})");
  BOOST_TEST((lost.outcome == CompleteAttemptResult::Outcome::lost));
  BOOST_TEST(to_string(lost.attempt->state) == "DISCARDED");
  BOOST_TEST(lost.attempt->result == R"({"from":"first"})");
  BOOST_TEST(lost.job->version == 2);
  BOOST_TEST(lost.job->completed_by.value_or(0) == second.id);
  BOOST_TEST(lost.job->result == R"({"from":"second"})");
}

BOOST_AUTO_TEST_CASE(fail_job_only_without_winner_or_live_attempt) {
  Attempt attempt = job_with_attempt();
  BOOST_TEST(!run_sync(store.fail_job(attempt.job_id, "nothing left", at(3))));
  claim();
  update(attempt.id, {S::running}, S::failed);
  BOOST_TEST(run_sync(store.fail_job(attempt.job_id, "nothing left", at(3))));
  BOOST_TEST(to_string(run_sync(store.load_job(attempt.job_id))->status) == "failed");
  BOOST_TEST(!run_sync(store.fail_job(attempt.job_id, "again", at(3))));
  // An explicit retry reopens a failed job.
  auto retry = run_sync(
      store.insert_attempt({attempt.job_id, "beta", AttemptOrigin::explicit_retry, at(4)}));
  BOOST_TEST((retry.outcome == InsertAttemptResult::Outcome::inserted));
  BOOST_TEST(to_string(run_sync(store.load_job(attempt.job_id))->status) == "pending");
}

BOOST_AUTO_TEST_CASE(the_latest_certification_decides) {
  BOOST_TEST(!run_sync(store.latest_certification("beta")).has_value());
  run_sync(store.record_certification({"beta", true, {}, at(1)}));
  run_sync(store.record_certification({"beta", false, {"case 1: wrong label"}, at(2)}));
  auto latest = run_sync(store.latest_certification("beta"));
  BOOST_TEST(!latest->passed);
  BOOST_TEST(latest->reasons == std::vector<std::string>{"case 1: wrong label"});
}

BOOST_AUTO_TEST_CASE(idle_jobs_are_pending_without_a_winner_or_a_live_attempt) {
  Attempt busy = job_with_attempt("busy");
  Attempt idle = drive(job_with_attempt("idle"), S::cancelled);
  const auto found = run_sync(store.find_idle_jobs());
  BOOST_REQUIRE(found.size() == 1u);
  BOOST_TEST(found[0].id == idle.job_id);
  BOOST_TEST(busy.job_id != idle.job_id);
}

// The sweep's one read holds what the three reads it replaces hold, each idle job by its
// latest attempt.
BOOST_AUTO_TEST_CASE(sweep_work_is_expired_leases_unknown_attempts_and_idle_jobs_latest) {
  Attempt a = job_with_attempt("a");
  Attempt b = job_with_attempt("b");
  Attempt c = job_with_attempt("c");
  Attempt d = job_with_attempt("d");
  Attempt e = job_with_attempt("e");
  BOOST_REQUIRE(claim("w1").id == a.id);  // RUNNING, lease until 21s
  const Attempt unknown = drive(b, S::unknown);
  const Attempt cancelled = drive(c, S::cancelled);
  // e: its first attempt cancelled, an operator's retry cancelled too: idle, latest = the retry.
  drive(e, S::cancelled);
  const Attempt second = drive(retry(e.job_id), S::cancelled);
  BOOST_REQUIRE(second.attempt_no == 2);
  // d stays STARTING: in no list.
  BOOST_TEST(run_sync(store.find_sweep_work(at(20))).expired.empty());
  const auto work = run_sync(store.find_sweep_work(at(21)));
  BOOST_REQUIRE(work.expired.size() == 1u);
  BOOST_TEST(work.expired[0].id == a.id);
  BOOST_REQUIRE(work.unknown.size() == 1u);
  BOOST_TEST(work.unknown[0].id == unknown.id);
  BOOST_REQUIRE(work.idle.size() == 2u);
  BOOST_TEST(work.idle[0].id == cancelled.id);
  BOOST_TEST(work.idle[1].id == second.id);
  BOOST_TEST((run_sync(store.find_attempt(d.id))->state == S::starting));
}

// A sweep's any_live is exactly whether an attempt is STARTING, RUNNING or UNKNOWN: finished
// attempts (SUCCEEDED, FAILED, CANCELLED, DISCARDED) of jobs that are not idle leave the reconciler
// nothing to do, so it may wait for a ring.
BOOST_AUTO_TEST_CASE(sweep_work_counts_starting_running_and_unknown_attempts_as_live_and_no_other) {
  // Job a: its first attempt cancelled while running, a retry won, the first's late result
  // discarded.
  Attempt a1 = claim(job_with_attempt("a").lease_owner);
  update(a1.id, {S::running}, S::cancelled);
  BOOST_REQUIRE((complete(drive(retry(a1.job_id), S::running), {S::running}, "{}").outcome ==
                 CompleteAttemptResult::Outcome::won));
  BOOST_REQUIRE(to_string(complete(a1, {S::cancelled}, "{}").attempt->state) == "DISCARDED");
  // Job b: its attempt failed, then the job.
  Attempt b = claim(job_with_attempt("b").lease_owner);
  update(b.id, {S::running}, S::failed);
  BOOST_REQUIRE(run_sync(store.fail_job(b.job_id, "nothing left", at(3))));
  // Job c: its first attempt cancelled before any claim, a retry won.
  Attempt c1 = drive(job_with_attempt("c"), S::cancelled);
  BOOST_REQUIRE((complete(drive(retry(c1.job_id), S::running), {S::running}, "{}").outcome ==
                 CompleteAttemptResult::Outcome::won));
  const auto finished = run_sync(store.find_sweep_work(at(30)));
  BOOST_TEST(!finished.any_live);
  BOOST_TEST(finished.expired.empty());
  BOOST_TEST(finished.unknown.empty());
  BOOST_TEST(finished.idle.empty());
  // Job d through each live state, then cancelled: idle, nothing live.
  Attempt d = job_with_attempt("d");
  BOOST_TEST(run_sync(store.find_sweep_work(at(30))).any_live);  // STARTING
  d = claim();
  BOOST_TEST(run_sync(store.find_sweep_work(at(10))).any_live);  // RUNNING, its lease not out
  d = *update(d.id, {S::running}, S::unknown).attempt;
  BOOST_TEST(run_sync(store.find_sweep_work(at(30))).any_live);  // UNKNOWN
  update(d.id, {S::unknown}, S::cancelled);
  const auto idle = run_sync(store.find_sweep_work(at(30)));
  BOOST_TEST(!idle.any_live);
  BOOST_REQUIRE(idle.idle.size() == 1u);
  BOOST_TEST(idle.idle[0].id == d.id);
}

BOOST_AUTO_TEST_SUITE_END()

// The memory store's rows by id: a map's meaning for ids a sequence gives, gaps included.
BOOST_AUTO_TEST_SUITE(sequence_table)

BOOST_AUTO_TEST_CASE(rows_by_a_sequences_ids_keep_a_maps_meaning) {
  SequenceTable<std::int64_t, std::string> table;
  std::map<std::int64_t, std::string> model;
  BOOST_TEST(table.empty());
  BOOST_TEST(!table.contains(1));
  BOOST_TEST((table.find(1) == table.end()));
  const std::string& first = table.emplace(2, "two").first->second;  // id 1 refused: a gap
  model.emplace(2, "two");
  // Gaps of every length, and ids past each gap: all found, the gaps not.
  for (std::int64_t id = 3, gap = 0; id < 5'000; id += 1 + (gap++ % 4)) {
    const auto [row, fresh] = table.emplace(id, std::to_string(id));
    BOOST_TEST_REQUIRE(fresh);
    BOOST_TEST_REQUIRE(row->first == id);
    model.emplace(id, std::to_string(id));
  }
  BOOST_TEST(first == "two");  // a reference outlives the rows added after it
  BOOST_TEST(table.size() == model.size());
  for (std::int64_t id = -3; id < 5'010; ++id) {
    const auto found = model.find(id);
    BOOST_TEST_REQUIRE(table.contains(id) == (found != model.end()), id);
    if (found == model.end()) {
      BOOST_TEST_REQUIRE((table.find(id) == table.end()), id);
      BOOST_CHECK_THROW(table.at(id), std::out_of_range);
      continue;
    }
    BOOST_TEST_REQUIRE(table.find(id)->first == id);
    BOOST_TEST_REQUIRE(table.at(id) == found->second);
  }
  BOOST_TEST(std::equal(table.begin(), table.end(), model.begin(), model.end(),
                        [](const auto& a, const auto& b) { return a == b; }));
  // emplace keeps the first; operator[] finds, or makes an empty row at a new id.
  BOOST_TEST(!table.emplace(2, "again").second);
  BOOST_TEST(table.at(2) == "two");
  table[2] += "!";
  BOOST_TEST(table.at(2) == "two!");
  BOOST_TEST(table[6'000].empty());
  BOOST_TEST(table.size() == model.size() + 1);
  BOOST_TEST(!table.contains(5'999));
}

BOOST_AUTO_TEST_CASE(an_id_a_sequence_never_gives_is_a_programming_error) {
  SequenceTable<std::int64_t, int> table;
  BOOST_CHECK_THROW(table.emplace(0, 1), AssertionFailure);
  BOOST_CHECK_THROW(table.emplace(-4, 1), AssertionFailure);
  table.emplace(10, 1);
  BOOST_CHECK_THROW(table.emplace(9, 1), AssertionFailure);  // below the last
  BOOST_CHECK_THROW(table[3], AssertionFailure);
  BOOST_TEST(table.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
