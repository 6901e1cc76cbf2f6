#include <algorithm>
#include <chrono>

#include <boost/test/unit_test.hpp>

#include "system/events/attempt_events.hpp"
#include "system/events/certification_events.hpp"
#include "system/events/reconciler_events.hpp"

#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

// The job allows alpha, then beta, then gamma.
const std::string kFailoverBody =
    R"({"failover":["beta","gamma"],"input":{"text":"please refund me"},)"
    R"("operation":"classify","provider":"alpha"})";

// Job 1's attempt 1 on alpha (never certified: the client chose it) fails on alpha's error, and
// attempt 2 is inserted on `provider` with `origin`. Returns the insert's seq.
std::uint64_t move_on_to(HistoryBuilder& h, const std::string& provider,
                         AttemptOrigin origin = AttemptOrigin::failover) {
  insert_job(h, {.body = kFailoverBody});
  return h.add(kStore, claimed(1, 1))
      .add("alpha", executed(1, 1, "error", "", kSoon))
      .add(kStore, fenced_write(1, 1, S::running, S::failed))
      .add(kStore, attempt_inserted(1, 2, 2, provider, origin))
      .last_seq();
}

BOOST_AUTO_TEST_SUITE(i6_certified_failover)

BOOST_AUTO_TEST_CASE(failover_to_a_certified_provider_with_its_valid_output_as_result_passes) {
  HistoryBuilder h;
  certify(h, "beta", false);
  certify(h, "beta", true);
  move_on_to(h, "beta");
  h.add(kStore, claimed(1, 2)).add("beta", executed(1, 2, "ok", kBilling, kSoon));
  // The result equals beta's output as JSON (key order does not matter).
  win(h, {.attempt_id = 2, .result = R"({"label":"billing","confidence":0.9})"});
  require_none(check_certified_failover(h.model()));
}

BOOST_AUTO_TEST_CASE(failover_to_a_provider_never_certified_is_a_violation) {
  HistoryBuilder h;
  const auto failover = move_on_to(h, "beta");
  require_one(find_invariant("I6")->check(h.model()), "I6.uncertified_provider", failover);
}

BOOST_AUTO_TEST_CASE(failover_to_a_provider_whose_latest_certification_failed_is_a_violation) {
  HistoryBuilder h;
  certify(h, "beta", true);
  const auto failed_certification = h.add(kStore, certification("beta", false)).last_seq();
  const auto failover = move_on_to(h, "beta");
  const auto violations = check_certified_failover(h.model());
  require_one(violations, "I6.uncertified_provider", failover);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{failed_certification});
}

BOOST_AUTO_TEST_CASE(a_certification_committed_after_the_failover_does_not_count) {
  HistoryBuilder h;
  const auto failover = move_on_to(h, "beta");
  certify(h, "beta", true);
  require_one(check_certified_failover(h.model()), "I6.uncertified_provider", failover);
}

BOOST_AUTO_TEST_CASE(an_operator_retry_on_an_uncertified_provider_is_a_violation) {
  HistoryBuilder h;
  certify(h, "beta", true);
  const auto retry = move_on_to(h, "alpha", AttemptOrigin::explicit_retry);
  require_one(check_certified_failover(h.model()), "I6.uncertified_provider", retry);
}

BOOST_AUTO_TEST_CASE(a_winner_whose_provider_answered_the_wrong_operation_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  const std::string summary = R"({"summary":"the customer wants a refund"})";
  const auto execution = h.add(kStore, claimed(1, 1))
                             .add("alpha", executed(1, 1, "wrong_operation", summary, kSoon))
                             .last_seq();
  const auto won = win(h, {.result = summary}).last_seq() - 1;
  const auto violations = check_certified_failover(h.model());
  require_one(violations, "I6.invalid_output_won", won);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{execution});
}

BOOST_AUTO_TEST_CASE(a_result_other_than_the_providers_output_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1)).add("alpha", executed(1, 1, "ok", kBilling, kSoon));
  const auto won = win(h, {.result = kOther}).last_seq() - 1;
  require_one(check_certified_failover(h.model()), "I6.result_not_answered", won);
}

// The result is the provider's output as a JSON value: the same bytes, or the same value written
// in another key order and spacing.
BOOST_AUTO_TEST_CASE(the_providers_output_as_the_result_passes_byte_for_byte_or_reordered) {
  for (const std::string& result :
       {kBilling, std::string(R"({ "label": "billing", "confidence": 0.9 })")}) {
    HistoryBuilder h;
    insert_job(h, {});
    h.add(kStore, claimed(1, 1)).add("alpha", executed(1, 1, "ok", kBilling, kSoon));
    win(h, {.result = result});
    require_none(check_certified_failover(h.model()));
  }
}

BOOST_AUTO_TEST_CASE(a_result_no_provider_produced_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1));
  const auto won = win(h, {}).last_seq() - 1;
  require_one(check_certified_failover(h.model()), "I6.result_never_produced", won);
}

// Attempt 1 failed on alpha; the job failed (beta was not certified yet), then beta passed. A
// failover onto beta now reopens a failed job, which only an operator's retry may do; a retry on
// beta and a failover after it are fine.
BOOST_AUTO_TEST_CASE(a_failover_into_a_failed_job_is_a_violation) {
  for (const bool retried : {false, true}) {
    HistoryBuilder h;
    insert_job(h, {.body = kFailoverBody});
    h.add(kStore, claimed(1, 1)).add(kStore, fenced_write(1, 1, S::running, S::failed));
    h.add(kStore, job_failed(1));
    certify(h, "beta", true);
    if (retried) {
      h.add(kStore, attempt_inserted(1, 2, 2, "alpha", AttemptOrigin::explicit_retry, "api-1"))
          .add(kStore, claimed(1, 2, "worker-1", 2))
          .add(kStore, fenced_write(1, 2, S::running, S::failed, "worker-1", 2));
    }
    const auto failover = h.add(kStore, attempt_inserted(1, retried ? 3 : 2, retried ? 3 : 2,
                                                         "beta", AttemptOrigin::failover))
                              .last_seq();
    BOOST_TEST_CONTEXT("retried " << retried) {
      if (retried) {
        require_no(check_certified_failover(h.model()), "I6.failover_into_failed_job");
      } else {
        require_one(check_certified_failover(h.model()), "I6.failover_into_failed_job", failover);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_failover_while_the_previous_attempt_is_not_failed_is_a_violation) {
  HistoryBuilder h;
  certify(h, "beta", true);
  insert_job(h, {.body = kFailoverBody});
  const auto failover = h.add(kStore, claimed(1, 1))
                            .add(kStore, taken_over(1, 1))
                            .add(kStore, attempt_inserted(1, 2, 2, "beta", AttemptOrigin::failover))
                            .last_seq();
  require_one(check_certified_failover(h.model()), "I6.failover_before_failure", failover);
}

BOOST_AUTO_TEST_CASE(a_failover_to_a_provider_outside_the_jobs_order_is_a_violation) {
  HistoryBuilder h;
  certify(h, "delta", true);
  const auto failover = move_on_to(h, "delta");
  require_one(check_certified_failover(h.model()), "I6.failover_out_of_order", failover);
}

// The failover list is read as JSON: a key written with an escape names it just the same.
BOOST_AUTO_TEST_CASE(a_failover_list_is_read_however_its_key_is_written) {
  const auto failover_to_beta = [](const std::string& body) {
    HistoryBuilder h;
    certify(h, "beta", true);
    insert_job(h, {.body = body});
    const auto seq = h.add(kStore, claimed(1, 1))
                         .add("alpha", executed(1, 1, "error", "", kSoon))
                         .add(kStore, fenced_write(1, 1, S::running, S::failed))
                         .add(kStore, attempt_inserted(1, 2, 2, "beta", AttemptOrigin::failover))
                         .last_seq();
    return std::pair{check_certified_failover(h.model()), seq};
  };
  const std::string rest =
      R"("input":{"text":"please refund me"},"operation":"classify","provider":"alpha"})";
  require_none(failover_to_beta(R"({"fail\u006fver":["beta"],)" + rest).first);
  require_none(failover_to_beta(R"({"failover" : [ "beta" ],)" + rest).first);
  const auto [violations, seq] = failover_to_beta("{" + rest);
  require_one(violations, "I6.failover_out_of_order", seq);
}

BOOST_AUTO_TEST_CASE(a_failover_back_to_an_earlier_provider_is_a_violation) {
  HistoryBuilder h;
  certify(h, "gamma", true);
  move_on_to(h, "gamma");  // beta is not certified yet: gamma is the first certified after alpha
  certify(h, "beta", true);
  h.add(kStore, claimed(1, 2, "worker-1", 2))
      .add("gamma", executed(1, 2, "error", "", kSoon))
      .add(kStore, fenced_write(1, 2, S::running, S::failed, "worker-1", 2));
  const auto back =
      h.add(kStore, attempt_inserted(1, 3, 3, "beta", AttemptOrigin::failover)).last_seq();
  require_one(check_certified_failover(h.model()), "I6.failover_out_of_order", back);
}

// A failover takes the first certified provider after the failed one: gamma over beta only when
// beta lacked a passing certification at some point between alpha's failure and the insert.
BOOST_AUTO_TEST_CASE(a_failover_that_skips_a_certified_provider_is_a_violation) {
  {
    HistoryBuilder h;
    certify(h, "beta", true);
    certify(h, "gamma", true);
    const auto failover = move_on_to(h, "gamma");
    const auto violations = check_certified_failover(h.model());
    require_one(violations, "I6.failover_skipped_certified", failover);
    BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{failover - 1});
  }
  {  // beta never certified
    HistoryBuilder h;
    certify(h, "gamma", true);
    move_on_to(h, "gamma");
    require_none(check_certified_failover(h.model()));
  }
  {  // beta's certification failed between alpha's failure and the insert
    HistoryBuilder h;
    certify(h, "beta", true);
    certify(h, "gamma", true);
    insert_job(h, {.body = kFailoverBody});
    h.add(kStore, claimed(1, 1))
        .add("alpha", executed(1, 1, "error", "", kSoon))
        .add(kStore, fenced_write(1, 1, S::running, S::failed))
        .add(kStore, certification("beta", false))
        .add(kStore, attempt_inserted(1, 2, 2, "gamma", AttemptOrigin::failover));
    require_none(check_certified_failover(h.model()));
  }
}

// What a node reports of a failover: the provider it skipped (uncertified, later in the order than
// the failed one) and the failed attempt after which the reconciler resumed one.
BOOST_AUTO_TEST_CASE(a_failover_report_naming_what_it_did_not_do_is_a_violation) {
  for (const std::string& named :
       {std::string("beta"), std::string("alpha"), std::string("gamma")}) {
    HistoryBuilder h;
    certify(h, "gamma", true);  // beta never certified
    insert_job(h, {.body = kFailoverBody});
    h.add(kStore, claimed(1, 1))
        .add("alpha", executed(1, 1, "error", "", kSoon))
        .add(kStore, fenced_write(1, 1, S::running, S::failed));
    const auto report =
        h.add("worker-1",
              events::FailoverSkipped{.job_id = 1, .provider = named, .reason = "uncertified"})
            .last_seq();
    h.add(kStore, attempt_inserted(1, 2, 2, "gamma", AttemptOrigin::failover));
    BOOST_TEST_CONTEXT(named) {
      // beta: the skip a failover after alpha's failure made; alpha is the failed provider itself,
      // gamma was certified throughout.
      if (named == "beta") {
        require_none(check_certified_failover(h.model()));
      } else {
        require_one(check_certified_failover(h.model()), "I6.skip_misreported", report);
      }
    }
  }
  for (const std::int64_t attempt : {1, 2}) {
    HistoryBuilder h;
    certify(h, "beta", true);
    insert_job(h, {.body = kFailoverBody});
    h.add(kStore, claimed(1, 1))
        .add("alpha", executed(1, 1, "error", "", kSoon))
        .add(kStore, fenced_write(1, 1, S::running, S::failed));
    const auto report =
        h.add("reconciler", events::FailoverResumed{.job_id = 1, .attempt_id = attempt}).last_seq();
    h.add(kStore, attempt_inserted(1, 2, 2, "beta", AttemptOrigin::failover));
    BOOST_TEST_CONTEXT(attempt) {
      if (attempt == 1) {
        require_none(check_certified_failover(h.model()));
      } else {  // attempt 2 was not even inserted, let alone FAILED
        require_one(check_certified_failover(h.model()), "I6.resume_misreported", report);
      }
    }
  }
}

// A job fails once attempt_limit attempts were used or no certified provider was left after the
// failed one: alpha fails, and the job fails while beta is certified throughout.
BOOST_AUTO_TEST_CASE(a_job_failed_with_a_certified_provider_left_is_a_violation) {
  const auto alpha_failed_then_job = [](int limit, bool beta_certified) {
    HistoryBuilder h;
    auto recorded = short_policy();
    recorded.attempt_limit = limit;
    h.add("world", recorded);
    certify(h, "beta", beta_certified);
    insert_job(h, {.body = kFailoverBody});
    h.add(kStore, claimed(1, 1))
        .add("alpha", executed(1, 1, "error", "", kSoon))
        .add(kStore, fenced_write(1, 1, S::running, S::failed));
    const auto failed = h.last_seq();
    const auto job = h.add(kStore, job_failed(1)).last_seq();
    return std::tuple{check_certified_failover(h.model()), failed, job};
  };
  const auto [violations, failed, job] = alpha_failed_then_job(5, true);
  require_one(violations, "I6.job_failed_with_provider_left", job);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{failed});
  require_none(std::get<0>(alpha_failed_then_job(1, true)));   // the limit was reached
  require_none(std::get<0>(alpha_failed_then_job(5, false)));  // nobody certified was left
}

// The job's failure is judged after its latest attempt, not any earlier one: alpha failed with
// nothing certified after it, and the job failed; an operator's retry on delta (outside the order)
// failed once beta was certified, and the job failed again with beta left.
BOOST_AUTO_TEST_CASE(a_job_failure_is_judged_after_its_latest_failed_attempt) {
  const auto retried_then_failed = [](bool beta_certified) {
    HistoryBuilder h;
    h.add("world", short_policy());
    insert_job(h, {.body = kFailoverBody});
    h.add(kStore, claimed(1, 1))
        .add("alpha", executed(1, 1, "error", "", kSoon))
        .add(kStore, fenced_write(1, 1, S::running, S::failed))
        .add(kStore, job_failed(1));
    certify(h, "delta", true);
    h.add(kStore, attempt_inserted(1, 2, 2, "delta", AttemptOrigin::explicit_retry, "api-1"));
    certify(h, "beta", beta_certified);
    h.add(kStore, claimed(1, 2))
        .add("delta", executed(1, 2, "error", "", kSoon))
        .add(kStore, fenced_write(1, 2, S::running, S::failed));
    const auto job = h.add(kStore, job_failed(1)).last_seq();
    return std::pair{check_certified_failover(h.model()), job};
  };
  require_none(retried_then_failed(false).first);
  const auto [violations, job] = retried_then_failed(true);
  require_one(violations, "I6.job_failed_with_provider_left", job);
}

// beta answers its certification's summarize case (key cert:beta:0:2) with `outcome`; the
// certifier reports failing it with `why` for that case.
std::vector<check::Violation> refused_on(const std::string& outcome, const std::string& why) {
  HistoryBuilder h;
  h.add("beta", certification_call(outcome, h.now(), "summarize", "cert:beta:0:2"))
      .add("certifier", certification_heard("beta", "cert:beta:0:2"))
      .add(kStore, certification("beta", false))
      .add("certifier", events::CertificationRecorded{
                            .provider = "beta",
                            .passed = false,
                            .reasons = "case 2 (summarize): " + why +
                                       "; case 4 (extract): no answer within the deadline"});
  return check_certified_failover(h.model());
}

// A failing certification refused no right answer for its content: a case refused for what its
// answer said had a wrong answer (a timeout, a refusal or a lost transport is not judged).
BOOST_AUTO_TEST_CASE(a_certification_that_refused_a_right_answer_is_a_violation) {
  const std::string content = R"(expected the summary to mention "revenue", got "a; b")";
  require_one(refused_on("ok", content), "I6.certification_refused_right_answer", 4);
  require_none(refused_on("plausible", content));
  require_none(refused_on("malformed", content));
  require_none(refused_on("ok", "no answer within the deadline"));
  require_none(refused_on("ok", "transport failed: connection reset"));
  require_none(refused_on("ok", "provider refused: 503 model overloaded"));
}

BOOST_AUTO_TEST_CASE(a_certification_passed_on_a_plausible_but_wrong_answer_is_a_violation) {
  HistoryBuilder h;
  h.add("beta", certification_call("ok", h.now())).add("certifier", certification_heard("beta"));
  const auto wrong = h.add("beta", certification_call("plausible", h.now())).last_seq();
  certification_calls(h, "beta", "ok", "classify");  // the rest, right and heard
  const auto passed = h.add(kStore, certification("beta", true)).last_seq();
  const auto violations = check_certified_failover(h.model());
  require_one(violations, "I6.certified_on_failed_call", passed);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{wrong});
}

BOOST_AUTO_TEST_CASE(a_certification_passed_on_a_right_answer_nobody_heard_is_a_violation) {
  // The provider answered rightly and in time, but the reply was lost (a reset, a dropped
  // response): the certifier learned nothing from the call.
  HistoryBuilder h;
  const auto call = h.add("beta", certification_call("ok", h.now())).last_seq();
  certification_calls(h, "beta", "ok", "classify");  // the rest, right and heard
  const auto passed = h.add(kStore, certification("beta", true)).last_seq();
  const auto violations = check_certified_failover(h.model());
  require_one(violations, "I6.certified_on_failed_call", passed);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{call});
  // A reply lost to a reset transport is delivered as maybe_delivered: still not heard.
  HistoryBuilder reset;
  reset.add("beta", certification_call("ok", reset.now()));
  auto lost = certification_heard("beta");
  lost.outcome = "maybe_delivered";
  reset.add("certifier", lost);
  certification_calls(reset, "beta", "ok", "classify");
  const auto reset_passed = reset.add(kStore, certification("beta", true)).last_seq();
  require_one(check_certified_failover(reset.model()), "I6.certified_on_failed_call", reset_passed);
  // Heard: no violation.
  HistoryBuilder heard;
  certify(heard, "beta", true);
  require_none(check_certified_failover(heard.model()));
}

BOOST_AUTO_TEST_CASE(a_certification_passed_on_an_answer_heard_past_the_deadline_is_a_violation) {
  // attempt_deadline 1 s: the call was sent no later than it executed, so an answer heard more
  // than 1 s after the execution came after the call gave up (unless a pause of the certifier
  // held both until it resumed).
  const auto heard_after = [](Duration after, bool paused) {
    HistoryBuilder h;
    h.add("world", short_policy());
    const auto call = h.add("beta", certification_call("ok", h.now() + after)).last_seq();
    if (paused) h.add("certifier", events::NodePaused{});
    h.at(after).add("certifier", certification_heard("beta"));
    if (paused) h.add("certifier", events::NodeResumed{});
    certification_calls(h, "beta", "ok", "classify");  // the rest, right and heard in time
    const auto passed = h.add(kStore, certification("beta", true)).last_seq();
    return std::tuple{check_certified_failover(h.model()), call, passed};
  };
  const auto [late, call, passed] = heard_after(std::chrono::milliseconds(1001), false);
  require_one(late, "I6.certified_on_failed_call", passed);
  BOOST_TEST(late[0].evidence == std::vector<std::uint64_t>{call});
  require_none(std::get<0>(heard_after(std::chrono::milliseconds(1000), false)));
  require_none(std::get<0>(heard_after(std::chrono::milliseconds(1001), true)));
}

BOOST_AUTO_TEST_CASE(a_certification_passed_without_an_answer_is_a_violation) {
  HistoryBuilder h;
  h.add("beta", certification_call("ok", Instant(std::chrono::seconds(9))));  // answers later
  certification_calls(h, "beta", "ok", "classify");  // the rest, right and heard
  const auto passed = h.add(kStore, certification("beta", true)).last_seq();
  require_one(check_certified_failover(h.model()), "I6.certified_on_failed_call", passed);
  HistoryBuilder none;
  const auto empty = none.add(kStore, certification("gamma", true)).last_seq();
  require_one(check_certified_failover(none.model()), "I6.certified_without_call", empty);
}

BOOST_AUTO_TEST_CASE(wrong_answers_before_an_earlier_certification_or_in_a_failed_one_pass) {
  HistoryBuilder h;
  certify(h, "beta", false, "plausible");  // rightly failed
  certify(h, "beta", true);                // a later run, answered right
  certify(h, "gamma", false, "wrong_operation");
  require_none(check_certified_failover(h.model()));
}

BOOST_AUTO_TEST_CASE(a_plausible_output_can_win_an_initial_attempt) {
  // Only certification can tell a plausible answer from a right one: the job's CAS takes it.
  HistoryBuilder h;
  running_job(h, 1);
  h.add("alpha", executed(1, 1, "plausible", kBilling, kSoon));
  win(h, {.job_id = 1, .attempt_id = 1, .result = kBilling});
  require_none(check_certified_failover(h.model()));
}

BOOST_AUTO_TEST_CASE(a_certification_passed_without_every_operation_called_is_a_violation) {
  // Right, heard answers to every operation but `skipped`.
  for (const std::string skipped : {"", "summarize", "extract"}) {
    HistoryBuilder h;
    certification_calls(h, "beta", "ok", skipped);
    const auto passed = h.add(kStore, certification("beta", true)).last_seq();
    const auto violations = check_certified_failover(h.model());
    if (skipped.empty()) {
      require_none(violations);
    } else {
      require_one(violations, "I6.certified_untested_operation", passed);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
