// Workers, the reconciler, failover and the compare-and-swap, end to end on MemoryStore with
// scripted providers and simulated time. Includes the four breakpoints of the seed article.
#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "system/service/settlement.hpp"

#include "tests/support/system_fixture.hpp"

namespace onejob {
namespace {

using std::chrono::seconds;
using test::json_int;
using test::json_string;
using test::Scripted;
using S = AttemptState;

struct FlowFixture : test::SystemFixture {
  Worker worker{context, "w1"};
  Reconciler reconciler{context};

  JobId create_job(const std::string& failover_json = "[]", const std::string& key = "k1") {
    auto response = create(key, "I was charged twice", "alpha", failover_json);
    BOOST_REQUIRE(response.status == 201);
    return json_int(response, "job_id");
  }
  S state_of(JobId job, int attempt_no) { return attempts(job).at(attempt_no - 1).state; }
  nlohmann::json view(JobId job) {
    return nlohmann::json::parse(request("GET", "/jobs/" + std::to_string(job)).body);
  }
  template <events::EventType T>
  std::size_t count() {
    return test::typed<T>(events.events).size();
  }
};

BOOST_FIXTURE_TEST_SUITE(attempt_flow, FlowFixture)

BOOST_AUTO_TEST_CASE(a_valid_answer_wins_the_cas_and_completes_the_job) {
  const JobId job = create_job();
  BOOST_TEST(run(worker.run_once()));
  BOOST_TEST(to_string(this->job(job)->status) == "succeeded");
  BOOST_TEST(this->job(job)->version == 2);
  BOOST_TEST(this->job(job)->result ==
             test::correct_output("classify", R"({"text":"I was charged twice"})"));
  BOOST_TEST((state_of(job, 1) == S::succeeded));
  BOOST_REQUIRE(providers.calls().size() == 1u);
  const auto& call = providers.calls()[0];
  BOOST_TEST(call.provider_key == "1:1");
  BOOST_TEST(call.temperature == 0.0);
  BOOST_TEST(call.prompt.find("Operation: classify") != std::string::npos);
  BOOST_TEST(count<events::JobCompleted>() == 1u);
  BOOST_TEST(view(job)["result"]["label"] == "billing");
}

BOOST_AUTO_TEST_CASE(nothing_to_claim_returns_false) { BOOST_TEST(!run(worker.run_once())); }

// Seed breakpoint: a timeout is UNKNOWN, not failed, and blocks new attempts until resolved.
BOOST_AUTO_TEST_CASE(timeout_is_unknown_and_blocks_retries_until_an_operator_cancels) {
  BOOST_TEST(certify("beta"));
  providers.script("alpha", Scripted::hang());
  const JobId job = create_job(R"(["beta"])");
  run(worker.run_once());
  BOOST_TEST((state_of(job, 1) == S::unknown));
  BOOST_TEST(to_string(this->job(job)->status) == "pending");  // not failed
  BOOST_TEST(view(job)["blocked"] == true);
  BOOST_TEST(attempts(job).size() == 1u);  // no automatic failover after a timeout
  auto refused = request("POST", "/jobs/1/attempts", R"({"provider":"beta"})");
  BOOST_TEST(refused.status == 409);
  BOOST_TEST(json_string(refused, "error") == "attempt_in_flight");

  BOOST_TEST(request("POST", "/attempts/1001/cancel").status == 200);
  BOOST_TEST(request("POST", "/jobs/1/attempts", R"({"provider":"beta"})").status == 201);
  run(worker.run_once());
  BOOST_TEST(this->job(job)->completed_by.value_or(0) == attempts(job)[1].id);
  BOOST_TEST(providers.calls().back().provider_key == "1:2");
}

BOOST_AUTO_TEST_CASE(a_timeout_never_fails_over_however_long_it_lasts) {
  BOOST_TEST(certify("beta"));
  providers.script("alpha", Scripted::hang());
  const JobId job = create_job(R"(["beta"])");
  start_worker(worker);
  start_reconciler(reconciler);
  loop.advance(std::chrono::hours(2));
  BOOST_TEST((state_of(job, 1) == S::unknown));
  BOOST_TEST(attempts(job).size() == 1u);
  BOOST_TEST(providers.calls_to("alpha") == 1u);  // never called again: no duplicate work
  BOOST_TEST(providers.calls_to("beta") == 4u);   // the certification suite only
  BOOST_TEST(count<events::ReconcilerStatus>() > 100u);
  worker.stop();
  reconciler.stop();
}

BOOST_AUTO_TEST_CASE(the_reconciler_brings_late_truth_to_the_same_cas) {
  providers.script("alpha", Scripted::hang());
  const JobId job = create_job();
  run(worker.run_once());
  providers.set_status("1:1", {ProviderStatus::Kind::running, {}, {}});
  run(reconciler.sweep_once());
  BOOST_TEST((state_of(job, 1) == S::unknown));
  providers.set_status(
      "1:1", {ProviderStatus::Kind::completed, R"({"label":"billing","confidence":0.8})", {}});
  run(reconciler.sweep_once());
  BOOST_TEST((state_of(job, 1) == S::succeeded));
  BOOST_TEST(this->job(job)->result == R"({"confidence":0.8,"label":"billing"})");
  BOOST_TEST(test::typed<events::ReconcilerStatus>(events.events).back().status == "completed");
}

BOOST_AUTO_TEST_CASE(the_reconciler_fails_over_when_the_provider_reports_failure) {
  BOOST_TEST(certify("beta"));
  providers.script("alpha", Scripted::hang());
  const JobId job = create_job(R"(["beta"])");
  run(worker.run_once());
  providers.set_status("1:1", {ProviderStatus::Kind::failed, {}, "out of memory"});
  run(reconciler.sweep_once());
  BOOST_TEST((state_of(job, 1) == S::failed));
  BOOST_TEST(attempts(job).at(1).provider == "beta");
  BOOST_TEST(to_string(attempts(job).at(1).origin) == "failover");
}

// Seed breakpoint: two attempts finish in reverse order; the second to return loses, even when
// it is the official primary.
BOOST_AUTO_TEST_CASE(reverse_order_completion_the_primary_returning_last_is_discarded) {
  config.policy.attempt_deadline = seconds(40);
  config.policy.lease = seconds(60);
  BOOST_TEST(certify("beta"));
  providers.script("alpha", Scripted::correct_after(seconds(30)));  // A: returns at ~30s
  providers.script("beta", Scripted::answer(R"({"label":"billing","confidence":0.6})",
                                            seconds(4)));  // B: returns at ~5s
  const JobId job = create_job();
  start_worker(worker);
  loop.advance(seconds(1));
  BOOST_TEST((state_of(job, 1) == S::running));
  BOOST_TEST(request("POST", "/attempts/1001/cancel").status == 200);
  BOOST_TEST(request("POST", "/jobs/1/attempts", R"({"provider":"beta"})").status == 201);
  loop.advance(seconds(60));
  worker.stop();
  const auto attempts = this->attempts(job);
  BOOST_TEST((attempts[1].state == S::succeeded));
  BOOST_TEST((attempts[0].state == S::discarded));
  BOOST_TEST(attempts[0].result ==
             test::correct_output("classify", R"({"text":"I was charged twice"})"));
  BOOST_TEST(this->job(job)->completed_by.value_or(0) == attempts[1].id);
  BOOST_TEST(this->job(job)->result == R"({"confidence":0.6,"label":"billing"})");
  BOOST_TEST(this->job(job)->version == 2);
  BOOST_TEST(count<events::ResultDiscarded>() == 1u);
  BOOST_TEST(view(job)["result"]["confidence"] == 0.6);  // the loser is never visible
}

BOOST_AUTO_TEST_CASE(a_cancelled_attempts_late_result_still_wins_when_it_is_first) {
  config.policy.attempt_deadline = seconds(40);
  config.policy.lease = seconds(60);
  BOOST_TEST(certify("beta"));
  providers.script("alpha", Scripted::correct_after(seconds(10)));
  providers.script("beta", Scripted::correct_after(seconds(20)));
  const JobId job = create_job();
  start_worker(worker);
  loop.advance(seconds(1));
  request("POST", "/attempts/1001/cancel");
  request("POST", "/jobs/1/attempts", R"({"provider":"beta"})");
  loop.advance(seconds(60));
  worker.stop();
  BOOST_TEST((state_of(job, 1) == S::succeeded));  // CANCELLED -> SUCCEEDED
  BOOST_TEST((state_of(job, 2) == S::discarded));
  BOOST_TEST(this->job(job)->completed_by.value_or(0) == attempts(job)[0].id);
}

BOOST_AUTO_TEST_CASE(a_late_answer_after_the_deadline_takes_the_same_cas) {
  providers.script("alpha", Scripted::correct_after(seconds(25)));  // deadline is 10s
  const JobId job = create_job();
  start_worker(worker);
  loop.advance(seconds(12));
  BOOST_TEST((state_of(job, 1) == S::unknown));
  loop.advance(seconds(20));
  worker.stop();
  BOOST_TEST((state_of(job, 1) == S::succeeded));
  const auto replies = test::typed<events::ProviderReplied>(events.events);
  BOOST_REQUIRE(replies.size() == 1u);
  BOOST_TEST(replies[0].late);
}

BOOST_AUTO_TEST_CASE(a_definitive_error_fails_over_to_the_next_certified_provider_only) {
  BOOST_TEST(certify("beta"));
  providers.script("alpha", Scripted::reject());
  const JobId job = create_job(R"(["gamma","beta"])");  // gamma was never certified
  run(worker.run_once());
  BOOST_TEST((state_of(job, 1) == S::failed));
  const auto skipped = test::typed<events::FailoverSkipped>(events.events);
  BOOST_REQUIRE(skipped.size() == 1u);
  BOOST_TEST(skipped[0].provider == "gamma");
  BOOST_TEST(attempts(job).at(1).provider == "beta");
  run(worker.run_once());
  BOOST_TEST(to_string(this->job(job)->status) == "succeeded");
  BOOST_TEST(providers.calls_to("gamma") == 0u);
}

BOOST_AUTO_TEST_CASE(without_a_certified_fallback_the_job_fails_and_no_attempt_starts) {
  providers.script("alpha", Scripted::reject());
  const JobId job = create_job(R"(["gamma"])");
  run(worker.run_once());
  BOOST_TEST(attempts(job).size() == 1u);
  BOOST_TEST(to_string(this->job(job)->status) == "failed");
  BOOST_TEST(view(job)["failure_reason"] == "no contract-certified provider left to fail over to");
}

BOOST_AUTO_TEST_CASE(an_output_that_breaks_the_contract_never_becomes_a_result) {
  BOOST_TEST(certify("beta"));
  providers.script("alpha",
                   Scripted::answer(R"({"label":"billing","confidence":0.9,"notes":"sure"})"));
  const JobId job = create_job(R"(["beta"])");
  run(worker.run_once());
  BOOST_TEST((state_of(job, 1) == S::failed));
  BOOST_TEST(attempts(job)[0].outcome_reason.find("\"notes\"") != std::string::npos);
  BOOST_TEST(count<events::OutputRejected>() == 1u);
  run(worker.run_once());
  BOOST_TEST(this->job(job)->result.find("notes") == std::string::npos);
  BOOST_TEST(this->job(job)->completed_by.value_or(0) == attempts(job)[1].id);
}

BOOST_AUTO_TEST_CASE(a_prompt_over_the_providers_limit_fails_without_a_call) {
  config.providers[0].max_prompt_tokens = 5;  // alpha
  const JobId job = create_job();
  run(worker.run_once());
  BOOST_TEST((state_of(job, 1) == S::failed));
  BOOST_TEST(attempts(job)[0].outcome_reason.find("over alpha's limit of 5") != std::string::npos);
  BOOST_TEST(providers.calls_to("alpha") == 0u);
}

BOOST_AUTO_TEST_CASE(a_crashed_workers_attempt_becomes_unknown_after_its_lease_never_failed) {
  BOOST_TEST(certify("beta"));
  providers.script("alpha", Scripted::correct_after(seconds(5)));
  const JobId job = create_job(R"(["beta"])");
  start_worker(worker);
  start_reconciler(reconciler);
  loop.advance(seconds(1));
  BOOST_TEST((state_of(job, 1) == S::running));
  worker.stop();  // the crash: its in-flight answer at 5s is lost with it
  loop.advance(seconds(17));
  BOOST_TEST((state_of(job, 1) == S::running));  // t=18s: the 20s lease has not expired
  loop.advance(seconds(7));
  reconciler.stop();
  const auto attempt = attempts(job).at(0);
  BOOST_TEST((attempt.state == S::unknown));
  BOOST_TEST(attempt.lease_owner == "reconciler");
  BOOST_TEST(attempt.outcome_reason.find("lease expired") != std::string::npos);
  BOOST_TEST(attempts(job).size() == 1u);  // never silently retried
  BOOST_TEST(count<events::JobCompleted>() == 0u);
}

BOOST_AUTO_TEST_CASE(a_stale_lease_holders_writes_are_refused_by_the_fence) {
  const JobId job = create_job();
  auto claimed = run(store.claim_next_attempt("w1", loop.now(), loop.now() + seconds(20)));
  // w1 called the provider, which is still working on it.
  providers.set_status(claimed->provider_key,
                       ProviderStatus{ProviderStatus::Kind::running, {}, {}});
  loop.advance(seconds(21));
  run(reconciler.sweep_once());  // takes the lease over: UNKNOWN, token bumped
  // w1 wakes up from a long pause with its answer, believing the attempt still RUNNING or,
  // like the reconciler, UNKNOWN: the state alone would let the second through; the fence does not.
  Settlement settlement(context);
  const Writer stale{"w1", claimed->lease_token};
  const auto job_row = *this->job(job);
  run(settlement.answered(*claimed, job_row, R"({"label":"billing","confidence":1})",
                          {S::running, S::unknown, S::cancelled}, stale));
  BOOST_TEST(!this->job(job)->completed_by.has_value());
  const auto refused = test::typed<events::AttemptWriteRefused>(events.events);
  BOOST_REQUIRE(refused.size() == 1u);
  BOOST_TEST(refused[0].fenced);
  BOOST_TEST((state_of(job, 1) == S::unknown));
}

BOOST_AUTO_TEST_CASE(a_never_sent_attempt_is_redriven_under_its_key_and_completes) {
  const JobId job = create_job();
  // A worker claims and is lost before it calls the provider: the provider never hears of it.
  run(store.claim_next_attempt("w1", loop.now(), loop.now() + seconds(20)));
  loop.advance(seconds(21));
  run(reconciler.sweep_once());  // takes the lease over, then finds no record: re-driven
  BOOST_TEST((state_of(job, 1) == S::starting));
  run(worker.run_once());
  BOOST_TEST((state_of(job, 1) == S::succeeded));
  BOOST_TEST(attempts(job).size() == 1u);  // the same attempt, under the same key
  BOOST_TEST(providers.calls().back().provider_key == "1:1");
}

BOOST_AUTO_TEST_CASE(a_transport_failure_after_sending_is_unknown_not_failed) {
  providers.script("alpha", {Scripted::Kind::maybe_delivered, {}, seconds(1)});
  const JobId job = create_job();
  run(worker.run_once());
  BOOST_TEST((state_of(job, 1) == S::unknown));
  BOOST_TEST(to_string(this->job(job)->status) == "pending");
}

BOOST_AUTO_TEST_CASE(the_attempt_limit_stops_failover) {
  config.policy.attempt_limit = 2;
  for (const char* name : {"beta", "gamma"}) BOOST_TEST(certify(name));
  providers.set_default("alpha", Scripted::reject());
  providers.set_default("beta", Scripted::reject());
  const JobId job = create_job(R"(["beta","gamma"])");
  run(worker.run_once());
  run(worker.run_once());
  BOOST_TEST(attempts(job).size() == 2u);
  BOOST_TEST(view(job)["failure_reason"] == "attempt limit of 2 reached");
}

BOOST_AUTO_TEST_CASE(the_reconciler_resumes_a_failover_a_store_fault_cut_short) {
  BOOST_TEST(certify("beta"));
  const JobId job = create_job(R"(["beta"])");
  // The attempt FAILED, but the failover that should follow never ran (its store calls failed).
  auto claimed = run(store.claim_next_attempt("w1", loop.now(), loop.now() + seconds(20)));
  AttemptUpdate failed{.attempt_id = claimed->id,
                       .from = {S::running},
                       .to = S::failed,
                       .fence = claimed->lease_token,
                       .take_over_as = {},
                       .reason = "provider refused",
                       .at = loop.now()};
  run(store.update_attempt(std::move(failed)));
  BOOST_TEST(run(store.find_idle_jobs()).size() == 1u);
  run(reconciler.sweep_once());
  BOOST_TEST(count<events::FailoverResumed>() == 1u);
  BOOST_REQUIRE(attempts(job).size() == 2u);
  BOOST_TEST(attempts(job)[1].provider == "beta");
  BOOST_TEST(run(store.find_idle_jobs()).empty());
  // An operator's cancel is not resumed: what follows is the operator's call.
  request("POST", "/attempts/" + std::to_string(attempts(job)[1].id) + "/cancel");
  run(reconciler.sweep_once());
  BOOST_TEST(attempts(job).size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
