// I14 on hand-made histories: what a node reports about its own writes matches the commit log,
// and it reports what reached it; each clause shown failing on the history that breaks it and
// passing on the one that keeps it.
#include <tuple>

#include <boost/test/unit_test.hpp>

#include "system/events/api_events.hpp"
#include "system/events/attempt_events.hpp"
#include "system/events/certification_events.hpp"
#include "system/events/reconciler_events.hpp"

#include "harness/check/i14_heard.hpp"
#include "harness/check/invariant.hpp"
#include "harness/sim/faulty_store.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

// I14 as the gate runs it, which reads only the kinds of event it asks for by type, checked on
// every history here against I14 reading every event: the same verdicts.
std::vector<Violation> judged(const HistoryModel& model) {
  auto verdicts = check_reports(model);
  const auto reading_all = i14::check_reports_reading_every_event(model);
  BOOST_TEST_REQUIRE(verdicts.size() == reading_all.size());
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    BOOST_TEST(verdicts[i].message == reading_all[i].message);
    BOOST_TEST(verdicts[i].event_seq.value_or(0) == reading_all[i].event_seq.value_or(0));
  }
  return verdicts;
}

BOOST_AUTO_TEST_SUITE(i14_reports)

BOOST_AUTO_TEST_CASE(i14_a_report_of_a_write_the_store_never_committed_is_a_violation) {
  HistoryBuilder h;
  claimed_and_called(h);
  require_none(judged(h.model()));
  const auto seq = h.add("worker-1", events::AttemptStateChanged{.job_id = 1,
                                                                 .attempt_id = 1,
                                                                 .from = S::running,
                                                                 .to = S::failed,
                                                                 .reason = "provider refused",
                                                                 .by = "worker-1"})
                       .last_seq();
  require_one(judged(h.model()), "I14.report_untrue", seq);
}

// A claim is reported with the lease expiry the store's row took, when the report gives one.
BOOST_AUTO_TEST_CASE(i14_a_claim_reported_with_another_lease_expiry_is_untrue) {
  const Instant expiry(std::chrono::seconds(30));
  const auto reported = [&](std::optional<Instant> lease_expires) {
    HistoryBuilder h;
    inserted_and_reported(h);
    auto claim = claimed(1, 1);
    claim.lease_expires_at = expiry;
    h.add(kStore, claim);
    const auto seq = h.add("worker-1", events::AttemptStateChanged{.job_id = 1,
                                                                   .attempt_id = 1,
                                                                   .from = S::starting,
                                                                   .to = S::running,
                                                                   .reason = "claimed",
                                                                   .by = "worker-1",
                                                                   .token = 1,
                                                                   .lease_expires = lease_expires})
                         .last_seq();
    return std::pair{judged(h.model()), seq};
  };
  require_none(reported(expiry).first);
  require_none(reported(std::nullopt).first);
  const auto [violations, seq] = reported(expiry + std::chrono::seconds(1));
  require_one(violations, "I14.report_untrue", seq);
}

events::ProviderDelivered reply_delivered(std::string outcome) {
  return events::ProviderDelivered{.call = std::string(events::kDeliveredReply),
                                   .provider = "alpha",
                                   .provider_key = provider_key(1, 1),
                                   .outcome = std::move(outcome)};
}

BOOST_AUTO_TEST_CASE(i14_every_write_and_reply_reported_passes) {
  HistoryBuilder h;
  claimed_and_called(h);
  h.add("worker-1", reply_delivered("answered"));
  h.add("worker-1", events::ProviderReplied{
                        .job_id = 1, .attempt_id = 1, .provider = "alpha", .reply = "answered"});
  end_quiescent(h);
  require_none(judged(h.model()));
}

BOOST_AUTO_TEST_CASE(i14_a_committed_write_its_writer_never_reports_is_a_violation) {
  HistoryBuilder h;
  claimed_and_called(h);
  const auto seq = h.add(kStore, job_failed(1, "worker-1")).last_seq();
  end_quiescent(h);
  require_one(judged(h.model()), "I14.report_missing", seq);
}

// An inserted job is reported by the API node that inserted it (job.created), with the owner
// and key of the row: the report engineers follow from a click to its job.
struct JobReported {
  std::vector<check::Violation> violations;
  std::uint64_t inserted = 0;  // the job's row
  std::uint64_t report = 0;    // the job.created, if any
};
JobReported job_reported(std::optional<events::JobCreated> report) {
  HistoryBuilder h;
  JobReported out;
  h.add(kStore, job_inserted({}));
  out.inserted = h.last_seq();
  h.add(kStore, attempt_inserted(1, 1, 1, "alpha", AttemptOrigin::initial, "api-1"));
  if (report) out.report = h.add("api-1", *report).last_seq();
  h.add("api-1", events::AttemptCreated{.job_id = 1,
                                        .attempt_id = 1,
                                        .attempt_no = 1,
                                        .provider = "alpha",
                                        .provider_key = provider_key(1, 1)});
  end_quiescent(h);
  out.violations = judged(h.model());
  return out;
}

BOOST_AUTO_TEST_CASE(i14_a_job_insert_is_reported_by_its_api_node_as_it_was_committed) {
  require_none(
      job_reported(events::JobCreated{.job_id = 1, .owner = "alice", .key = "k1"}).violations);
  const auto missing = job_reported(std::nullopt);
  require_one(missing.violations, "I14.report_missing", missing.inserted);
  for (const auto& untrue : {events::JobCreated{.job_id = 1, .owner = "alice", .key = "k2"},
                             events::JobCreated{.job_id = 1, .owner = "bob", .key = "k1"},
                             events::JobCreated{.job_id = 2, .owner = "alice", .key = "k1"}}) {
    const auto got = job_reported(untrue);
    BOOST_TEST_CONTEXT("job " << untrue.job_id << " " << untrue.owner << "/" << untrue.key) {
      // Untrue, and not the report the insert is owed (a wrong job id), or untrue only.
      BOOST_TEST_REQUIRE(!got.violations.empty(), describe(got.violations));
      BOOST_TEST(got.violations[0].clause == "I14.report_untrue", describe(got.violations));
      BOOST_TEST(got.violations[0].event_seq.value_or(0) == got.report);
      const bool owed_elsewhere = untrue.job_id != 1;
      BOOST_TEST(got.violations.size() == (owed_elsewhere ? 2u : 1u), describe(got.violations));
      if (owed_elsewhere && got.violations.size() == 2u) {
        BOOST_TEST(got.violations[1].clause == "I14.report_missing");
        BOOST_TEST(got.violations[1].event_seq.value_or(0) == got.inserted);
      }
    }
  }
}

// A recorded certification is reported by the node that recorded it (certification.recorded),
// with the verdict the store took: failover trusts that verdict.
BOOST_AUTO_TEST_CASE(i14_a_certification_is_reported_by_its_certifier_with_its_verdict) {
  const auto reported = [](std::optional<events::CertificationRecorded> report) {
    HistoryBuilder h;
    certify(h, "beta", true);
    const auto recorded = h.last_seq();
    if (report) h.add("certifier", *report);
    end_quiescent(h);
    return std::tuple{judged(h.model()), recorded, h.last_seq() - 1};
  };
  require_none(std::get<0>(
      reported(events::CertificationRecorded{.provider = "beta", .passed = true, .reasons = ""})));
  const auto [missing, recorded, unused] = reported(std::nullopt);
  require_one(missing, "I14.report_missing", recorded);
  // The opposite verdict is untrue, and leaves the one recorded unreported.
  const auto [wrong, write, report] = reported(
      events::CertificationRecorded{.provider = "beta", .passed = false, .reasons = "wrong label"});
  BOOST_TEST_REQUIRE(wrong.size() == 2u, describe(wrong));
  BOOST_TEST(wrong[0].clause == "I14.report_untrue");
  BOOST_TEST(wrong[0].event_seq.value_or(0) == report);
  BOOST_TEST(wrong[1].clause == "I14.report_missing");
  BOOST_TEST(wrong[1].event_seq.value_or(0) == write);
}

// A write the store refused on a node's connection (its lease token stale) is reported by that
// node (attempt.write_refused): the operator reading why an attempt did not move needs it.
BOOST_AUTO_TEST_CASE(i14_a_refused_write_is_reported_by_its_writer) {
  const auto reported = [](bool report) {
    HistoryBuilder h;
    claimed_and_called(h);
    const auto refused = h.add(kStore, fenced_out(1, 1)).last_seq();
    if (report) {
      h.add("worker-1", events::AttemptWriteRefused{.job_id = 1,
                                                    .attempt_id = 1,
                                                    .fenced = true,
                                                    .found = S::running,
                                                    .wanted = S::failed,
                                                    .by = "worker-1",
                                                    .token = 1});
    }
    end_quiescent(h);
    return std::pair{judged(h.model()), refused};
  };
  require_none(reported(true).first);
  const auto [missing, refused] = reported(false);
  require_one(missing, "I14.report_missing", refused);
}

// The report says what the store refused: the lease token the write carried and the state the
// attempt was in, by the commit log (RUNNING here, the write carrying token 1).
BOOST_AUTO_TEST_CASE(i14_a_refused_write_reported_with_another_state_or_token_is_untrue) {
  for (const auto& [found, token] :
       std::vector<std::pair<S, std::int64_t>>{{S::running, 1}, {S::failed, 1}, {S::running, 2}}) {
    HistoryBuilder h;
    claimed_and_called(h);
    h.add(kStore, fenced_out(1, 1));
    const auto report = h.add("worker-1", events::AttemptWriteRefused{.job_id = 1,
                                                                      .attempt_id = 1,
                                                                      .fenced = true,
                                                                      .found = found,
                                                                      .wanted = S::failed,
                                                                      .by = "worker-1",
                                                                      .token = token})
                            .last_seq();
    end_quiescent(h);
    BOOST_TEST_CONTEXT(to_string(found) << " " << token) {
      if (found == S::running && token == 1) {
        require_none(judged(h.model()));
      } else {
        auto violations = judged(h.model());
        std::erase_if(violations, [](const auto& v) { return v.clause == "I14.report_missing"; });
        require_one(violations, "I14.report_untrue", report);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(i14_a_write_whose_reply_was_lost_need_not_be_reported) {
  HistoryBuilder h;
  claimed_and_called(h);
  h.add(kStore, job_failed(1, "worker-1"));
  h.add("net.node_store", events::StoreFault{.node = "worker-1",
                                             .operation = "fail_job",
                                             .fault = "drop_response",
                                             .maybe_committed = true});
  h.add("worker-1", events::WorkerStoreError{.worker = "worker-1",
                                             .attempt_id = 1,
                                             .maybe_committed = true,
                                             .message = "",
                                             .retry_in_us = 0});
  end_quiescent(h);
  require_none(judged(h.model()));
}

BOOST_AUTO_TEST_CASE(i14_a_delivered_reply_never_reported_is_a_violation) {
  HistoryBuilder h;
  claimed_and_called(h);
  const auto seq = h.add("worker-1", reply_delivered("answered")).last_seq();
  // A report of another outcome is not the report of this one.
  h.add("worker-1", events::ProviderReplied{
                        .job_id = 1, .attempt_id = 1, .provider = "alpha", .reply = "rejected"});
  end_quiescent(h);
  require_one(judged(h.model()), "I14.report_missing", seq);
}

// A report answers the latest thing its node owes under its key before it: of two deliveries
// reported once in between, the second is unreported; reported once after both, the first is.
BOOST_AUTO_TEST_CASE(i14_a_report_answers_the_latest_thing_owed_before_it) {
  const auto replied = events::ProviderReplied{
      .job_id = 1, .attempt_id = 1, .provider = "alpha", .reply = "answered"};
  for (const bool report_between : {true, false}) {
    HistoryBuilder h;
    claimed_and_called(h);
    const auto first = h.add("worker-1", reply_delivered("answered")).last_seq();
    if (report_between) h.add("worker-1", replied);
    const auto second = h.add("worker-1", reply_delivered("answered")).last_seq();
    if (!report_between) h.add("worker-1", replied);
    end_quiescent(h);
    BOOST_TEST_CONTEXT("report between: " << report_between) {
      require_one(judged(h.model()), "I14.report_missing", report_between ? second : first);
    }
  }
}

// A missing report is named by what it would have said: the check matches reports as numbers,
// and its texts (an outcome, a provider) are numbered in a table of its own.
BOOST_AUTO_TEST_CASE(i14_a_missing_report_is_named_with_its_outcome_and_provider) {
  HistoryBuilder h;
  certify(h, "beta", false);
  claimed_and_called(h);
  h.add("worker-1", reply_delivered("answered"));
  h.add("worker-1", events::ProviderReplied{
                        .job_id = 1, .attempt_id = 1, .provider = "alpha", .reply = "rejected"});
  end_quiescent(h);
  const auto violations = judged(h.model());
  BOOST_TEST_REQUIRE(violations.size() == 2u, describe(violations));
  BOOST_TEST(violations[0].message ==
             "worker-1 never reported provider.reply answered for attempt 1 that reached it");
  BOOST_TEST(violations[1].message ==
             "certifier never reported certification.recorded of beta (failed) that reached it");
}

BOOST_AUTO_TEST_CASE(i14_a_status_answer_never_reported_is_a_violation) {
  const auto answered = [](std::optional<std::string> reported) {
    HistoryBuilder h;
    claimed_and_called(h);
    const auto seq =
        h.add("reconciler", events::ProviderDelivered{.call = std::string(events::kDeliveredStatus),
                                                      .provider = "alpha",
                                                      .provider_key = provider_key(1, 1),
                                                      .outcome = "not_found"})
            .last_seq();
    if (reported) {
      h.add("reconciler",
            events::ReconcilerStatus{
                .job_id = 1, .attempt_id = 1, .provider = "alpha", .status = *reported});
    }
    end_quiescent(h);
    return std::pair{judged(h.model()), seq};
  };
  require_none(answered("not_found").first);
  require_none(answered("unreachable").first);  // it came after the query's timeout
  const auto [violations, seq] = answered(std::nullopt);
  require_one(violations, "I14.report_missing", seq);
}

BOOST_AUTO_TEST_CASE(i14_a_status_report_names_what_the_provider_said) {
  // The reconciler reports `reported` after `delivered` reached it (nothing: the query timed out).
  const auto reported_after = [](std::optional<std::string> delivered, std::string reported) {
    HistoryBuilder h;
    claimed_and_called(h);
    if (delivered) {
      h.add("reconciler", events::ProviderDelivered{.call = std::string(events::kDeliveredStatus),
                                                    .provider = "alpha",
                                                    .provider_key = provider_key(1, 1),
                                                    .outcome = *delivered});
    }
    const auto seq =
        h.add("reconciler",
              events::ReconcilerStatus{
                  .job_id = 1, .attempt_id = 1, .provider = "alpha", .status = reported})
            .last_seq();
    end_quiescent(h);
    return std::pair{judged(h.model()), seq};
  };
  require_none(reported_after("completed", "completed").first);
  require_none(reported_after(std::nullopt, "unreachable").first);  // the query timed out
  for (const auto& [delivered, reported] :
       std::vector<std::pair<std::optional<std::string>, std::string>>{
           {std::nullopt, "running"}, {"not_found", "completed"}, {"running", "failed"}}) {
    const auto [violations, seq] = reported_after(delivered, reported);
    require_one(violations, "I14.report_untrue", seq);
  }
}

BOOST_AUTO_TEST_CASE(i14_a_reply_report_says_whether_it_came_after_the_deadline) {
  // worker-1 called alpha at 0 s with a 30 s deadline; the reply reaches it at `delivered_at`,
  // and it reports it `late` or not. With `paused`, worker-1 was frozen from 20 s to 35 s.
  using std::chrono::seconds;
  const auto reported = [](Duration delivered_at, bool late, bool paused) {
    HistoryBuilder h;
    claimed_and_called(h);
    if (paused)
      h.at(seconds(20)).add("worker-1", events::NodePaused{.until = Instant(seconds(35))});
    const bool during = paused && delivered_at < seconds(35);
    if (during) h.at(delivered_at).add("worker-1", reply_delivered("answered"));
    if (paused) h.at(seconds(35)).add("worker-1", events::NodeResumed{});
    if (!during) h.at(delivered_at).add("worker-1", reply_delivered("answered"));
    const auto seq = h.at(std::max<Duration>(delivered_at, seconds(35)))
                         .add("worker-1", events::ProviderReplied{.job_id = 1,
                                                                  .attempt_id = 1,
                                                                  .provider = "alpha",
                                                                  .reply = "answered",
                                                                  .late = late})
                         .last_seq();
    end_quiescent(h);
    return std::pair{judged(h.model()), seq};
  };
  require_none(reported(seconds(10), false, false).first);
  require_none(reported(seconds(40), true, false).first);
  require_none(reported(seconds(30), false, false).first);  // at the deadline: either
  require_none(reported(seconds(30), true, false).first);
  // Delivered before the deadline, but worker-1 froze before it and woke after the deadline:
  // it resumed with both at hand.
  require_none(reported(seconds(25), true, true).first);
  for (const auto& [at, late] :
       std::vector<std::pair<Duration, bool>>{{seconds(10), true}, {seconds(40), false}}) {
    const auto [violations, seq] = reported(at, late, false);
    require_one(violations, "I14.report_untrue", seq);
  }
  // Frozen across the deadline but the reply came after it resumed: late, plainly.
  const auto [after_resume, seq] = reported(seconds(36), false, true);
  require_one(after_resume, "I14.report_untrue", seq);
}

// alpha answers job 1's call with an output breaking the contract; worker-1 reports
// output.rejected naming `reported` (nothing: no report), then writes the attempt FAILED.
std::vector<Violation> rejected_then_failed(std::optional<std::string> reported) {
  const std::string output = R"({"label":"billing","note":"extra"})";
  HistoryBuilder h;
  claimed_and_called(h);
  h.add("alpha", executed(1, 1, "hallucinated_key", output, Instant(std::chrono::seconds(1))));
  h.add("worker-1", reply_delivered("answered"));
  h.add("worker-1", events::ProviderReplied{
                        .job_id = 1, .attempt_id = 1, .provider = "alpha", .reply = "answered"});
  if (reported) {
    h.add("worker-1", events::OutputRejected{.job_id = 1,
                                             .attempt_id = 1,
                                             .provider = "alpha",
                                             .reason = "an extra key",
                                             .output = *reported});
  }
  h.add(kStore, fenced_write(1, 1, S::running, S::failed));
  h.add("worker-1", events::AttemptStateChanged{.job_id = 1,
                                                .attempt_id = 1,
                                                .from = S::running,
                                                .to = S::failed,
                                                .reason = "output broke the contract",
                                                .by = "worker-1"});
  end_quiescent(h);
  return judged(h.model());
}

BOOST_AUTO_TEST_CASE(i14_an_output_refused_for_the_contract_is_reported_as_produced) {
  require_none(rejected_then_failed(R"({"label":"billing","note":"extra"})"));
  const auto unreported = rejected_then_failed(std::nullopt);
  BOOST_TEST_REQUIRE(unreported.size() == 1u, describe(unreported));
  BOOST_TEST(unreported[0].clause == "I14.report_missing");
  const auto other = rejected_then_failed(R"({"label":"billing"})");
  BOOST_TEST_REQUIRE(other.size() == 1u, describe(other));
  BOOST_TEST(other[0].clause == "I14.report_untrue");
}

BOOST_AUTO_TEST_CASE(i14_a_store_fault_a_worker_never_reports_is_a_violation) {
  const auto faulted = [](std::string node, bool reported) {
    HistoryBuilder h;
    claimed_and_called(h);
    const auto seq = h.add("net.node_store", events::StoreFault{.node = node,
                                                                .operation = "claim_next_attempt",
                                                                .fault = "drop_request",
                                                                .maybe_committed = false})
                         .last_seq();
    if (reported) {
      h.add(node, events::WorkerStoreError{.worker = node,
                                           .attempt_id = 0,
                                           .maybe_committed = false,
                                           .message = "",
                                           .retry_in_us = 0});
    }
    end_quiescent(h);
    return std::pair{judged(h.model()), seq};
  };
  require_none(faulted("worker-1", true).first);
  require_none(faulted("api-1", false).first);  // an API node answers 503 instead (I13)
  const auto [violations, seq] = faulted("worker-1", false);
  require_one(violations, "I14.report_missing", seq);
}

// The reconciler's report that its store answers again names the store errors it reported in a
// row: since it started, or since its last such report; none before it is no recovery.
BOOST_AUTO_TEST_CASE(i14_a_store_recovery_names_the_errors_reported_before_it) {
  const auto recovered = [](int errors, bool restarted, int failures) {
    HistoryBuilder h;
    h.add("reconciler", events::NodeStarted{.incarnation = 1});
    for (int i = 0; i < errors; ++i) {
      h.add("net.node_store", events::StoreFault{.node = "reconciler",
                                                 .operation = "list_live_attempts",
                                                 .fault = "drop_request",
                                                 .maybe_committed = false});
      h.add("reconciler", events::ReconcilerStoreError{.message = "", .retry_in_us = 1000});
      if (restarted && i == 0) {
        h.add("reconciler", events::NodeCrashed{});
        h.add("reconciler", events::NodeStarted{.incarnation = 2});
      }
    }
    const auto seq =
        h.add("reconciler", events::ReconcilerStoreRecovered{.failures = failures}).last_seq();
    end_quiescent(h);
    return std::pair{judged(h.model()), seq};
  };
  require_none(recovered(1, false, 1).first);
  require_none(recovered(3, false, 3).first);
  require_none(recovered(3, true, 2).first);  // the first error was the crashed incarnation's
  for (const auto& [errors, restarted, failures] :
       {std::tuple{0, false, 0}, {0, false, 1}, {2, false, 1}, {2, false, 3}, {3, true, 3}}) {
    const auto [violations, seq] = recovered(errors, restarted, failures);
    require_one(violations, "I14.report_untrue", seq);
  }
  // Two recoveries: the second counts only the errors after the first.
  HistoryBuilder h;
  h.add("reconciler", events::NodeStarted{.incarnation = 1});
  for (int i = 0; i < 2; ++i) {
    h.add("reconciler", events::ReconcilerStoreError{})
        .add("reconciler", events::ReconcilerStoreRecovered{.failures = 1});
  }
  require_none(judged(h.model()));
  const auto seq = h.add("reconciler", events::ReconcilerStoreRecovered{.failures = 1}).last_seq();
  require_one(judged(h.model()), "I14.report_untrue", seq);
}

BOOST_AUTO_TEST_CASE(i14_a_call_without_a_reported_claim_or_adoption_is_a_violation) {
  HistoryBuilder h;
  claimed_and_called(h);
  // A second call under the one claim: nothing reported gave the worker the attempt again.
  const auto seq = h.add("worker-1", provider_called(1, 1)).last_seq();
  end_quiescent(h);
  require_one(judged(h.model()), "I14.report_missing", seq);
  h.add("worker-1",
        events::WorkerAdopted{.worker = "worker-1", .job_id = 1, .attempt_id = 1, .token = 1});
  h.add("worker-1", provider_called(1, 1));
  require_one(judged(h.model()), "I14.report_missing", seq);
}

// A report naming an attempt names the attempt's own job and provider, and an adoption a lease
// token the store gave that worker: each report below is true but for the one name it gets wrong.
BOOST_AUTO_TEST_CASE(i14_a_report_naming_an_attempt_names_its_job_provider_and_lease) {
  const auto replied = [](std::int64_t job, std::string provider) {
    HistoryBuilder h;
    claimed_and_called(h);
    h.add("worker-1", reply_delivered("answered"));
    const auto seq = h.add("worker-1", events::ProviderReplied{.job_id = job,
                                                               .attempt_id = 1,
                                                               .provider = std::move(provider),
                                                               .reply = "answered"})
                         .last_seq();
    end_quiescent(h);
    return std::pair{judged(h.model()), seq};
  };
  require_none(replied(1, "alpha").first);
  const auto [other_job, job_seq] = replied(2, "alpha");
  require_one(other_job, "I14.report_misnamed", job_seq);
  const auto [other_provider, provider_seq] = replied(1, "beta");
  require_one(other_provider, "I14.report_misnamed", provider_seq);

  const auto adopted = [](std::int64_t token) {
    HistoryBuilder h;
    claimed_and_called(h);
    const auto seq = h.add("worker-1",
                           events::WorkerAdopted{
                               .worker = "worker-1", .job_id = 1, .attempt_id = 1, .token = token})
                         .last_seq();
    end_quiescent(h);
    return std::pair{judged(h.model()), seq};
  };
  require_none(adopted(1).first);
  const auto [other_token, token_seq] = adopted(7);
  require_one(other_token, "I14.report_misnamed", token_seq);
}

BOOST_AUTO_TEST_CASE(i14_a_store_error_report_must_name_a_fault_with_its_maybe_committed) {
  HistoryBuilder h;
  claimed_and_called(h);
  h.add("net.node_store", events::StoreFault{.node = "worker-1",
                                             .operation = "load_job",
                                             .fault = "partition",
                                             .maybe_committed = false});
  h.add("worker-1", events::WorkerStoreError{.worker = "worker-1",
                                             .attempt_id = 1,
                                             .maybe_committed = false,
                                             .message = "store partition during load_job"});
  require_none(judged(h.model()));
  const auto seq =
      h.add("worker-1", events::WorkerStoreError{.worker = "worker-1",
                                                 .attempt_id = 1,
                                                 .maybe_committed = true,
                                                 .message = "store partition during load_job"})
          .last_seq();
  require_one(judged(h.model()), "I14.report_untrue", seq);
}

events::ApiRequest get_request(std::string id) {
  return events::ApiRequest{.request_id = std::move(id),
                            .route = "get_job",
                            .method = "GET",
                            .path = "/jobs/1",
                            .owner = "alice",
                            .key = ""};
}

BOOST_AUTO_TEST_CASE(i14_a_crashed_node_that_records_anything_is_a_violation) {
  HistoryBuilder h;
  claimed_and_called(h);
  h.add("worker-1", events::NodeCrashed{});
  const auto seq = h.add("worker-1", reply_delivered("answered")).last_seq();
  require_one(judged(h.model()), "I14.acted_while_down", seq);
  // An event of a kind I14 reads nothing else of counts the same.
  h.add("api-1", events::NodeCrashed{});
  const auto request = h.add("api-1", get_request("r1")).last_seq();
  const auto both = judged(h.model());
  BOOST_TEST_REQUIRE(both.size() == 2u);
  BOOST_TEST(both[1].clause == "I14.acted_while_down");
  BOOST_TEST(both[1].event_seq.value_or(0) == request);
  h.add("api-1", events::NodeStarted{.incarnation = 2});
  h.add("worker-1", events::NodeStarted{.incarnation = 2});
  h.add("worker-1", events::WorkerStoreError{.worker = "worker-1",
                                             .attempt_id = 0,
                                             .maybe_committed = false,
                                             .message = "",
                                             .retry_in_us = 0});
  h.add("api-1", get_request("r2"));
  // Started again, neither node's later events count.
  BOOST_TEST(judged(h.model()).size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
