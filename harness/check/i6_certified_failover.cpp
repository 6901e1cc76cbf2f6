// I6 — automatic failover only to contract-certified providers; invalid output never becomes a
// result.
//
// What a provider produced is known from the provider itself: its scripted behaviour says
// whether the output honours the contract (ok) or breaks it (malformed, an extra top-level key,
// the wrong operation); the system's validator is never consulted. Checks, against the store's
// commit log:
//   - every attempt inserted by failover or by an operator's retry names a provider whose latest
//     committed certification before the insert passed;
//   - an automatic failover is never what reopens a failed job: once the store failed a job, only
//     an operator's retry makes it pending again (failover_into_failed_job);
//   - an automatic failover follows the job's previous attempt FAILED, onto a provider after the
//     failed one in the order the create asked for (its provider, then its failover list), the
//     first there that was certified: every provider it skipped lacked a passing certification
//     at some point between the failure and the insert (failover_skipped_certified); and every
//     provider a node reports skipping (failover.skipped) is one a failover after one of the job's
//     failures could pass over: later in its order than the failed provider, and without a
//     passing certification at some point between that failure and the report
//     (skip_misreported); every failover the reconciler reports resuming names an attempt of that
//     job the store had moved to FAILED (resume_misreported);
//   - a job fails only when its attempts reached attempt_limit (run.policy) or no provider after
//     the failed one in its order was certified throughout the span from the failure to the
//     job's failure (job_failed_with_provider_left);
//   - every winning compare-and-swap is by an attempt whose provider produced an output in the
//     contract's shape (ok, or "plausible": the right shape with the wrong content, which only
//     certification's known answers can tell), and its result equals that output as JSON;
//   - a certification that failed refused no right answer: a case the certifier reports refusing
//     for its answer's content had a wrong answer from the provider, by the provider's own record
//     (certification_refused_right_answer);
//   - every certification that passed was earned: the provider answered its certification
//     calls since its previous certification, and every answer was right (behaviour "ok") and
//     reached the caller (delivered as an answer, not lost to a reset transport) within
//     attempt_deadline of the call's execution, all a caller waits (unless a pause of the
//     certifier held the answer and the deadline until it resumed); and its suite
//     covered the contract: a call for each operation the API offers, each judged as above
//     (certified_untested_operation).
// Does not check:
//   - initial attempts: the client chose that provider, certified or not;
//   - that a certification which failed for a timeout, a refusal or a lost transport had to (a
//     failing provider may still be a good one: a timeout, a dropped call); only the cases it
//     refused for their content are judged (above).
#include <utility>

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "system/events/certification_events.hpp"
#include "system/events/reconciler_events.hpp"

#include "harness/check/api_routes.hpp"
#include "harness/check/invariant.hpp"
#include "harness/check/json_value.hpp"
#include "harness/check/provider_outcomes.hpp"

namespace onejob::check {
namespace {

// The providers the job's create allowed, in order: its provider, then its failover list, read
// from the stored request body.
std::vector<std::string> provider_order(const HistoryModel& model, const JobRecord& job) {
  std::vector<std::string> order{job.inserted.what.provider};
  auto failover = model.failover_of(job);
  order.insert(order.end(), std::make_move_iterator(failover.begin()),
               std::make_move_iterator(failover.end()));
  return order;
}

// The job's attempts that were FAILED before trace event `seq`, each with its move to FAILED:
// the failures an automatic failover, or the job's failure, at `seq` may have followed.
std::vector<std::pair<const AttemptRecord*, std::uint64_t>> failed_before(const HistoryModel& model,
                                                                          const JobRecord& job,
                                                                          std::uint64_t seq) {
  std::vector<std::pair<const AttemptRecord*, std::uint64_t>> out;
  for (const auto id : job.attempts) {
    const AttemptRecord* attempt = model.attempt(id);
    if (attempt == nullptr || attempt->inserted.seq > seq) break;
    const auto failed = std::ranges::find_if(attempt->steps, [](const At<Transition>& step) {
      return step.what.to == AttemptState::failed;
    });
    if (failed != attempt->steps.end() && failed->seq < seq) out.emplace_back(attempt, failed->seq);
  }
  return out;
}

// Where a failover after a failure on `failed` looks first in the job's order: after the
// provider's first place there, or from the start when the order does not list it.
std::size_t scan_start(const std::vector<std::string>& order, const std::string& failed) {
  const auto at = std::ranges::find(order, failed);
  return at == order.end() ? 0 : static_cast<std::size_t>(at - order.begin()) + 1;
}

// The first of order[from, to) whose latest certification passed throughout trace events
// [since, until]: a provider a failover over that span could not have found uncertified.
const std::string* certified_in(const HistoryModel& model, const std::vector<std::string>& order,
                                std::size_t from, std::size_t to, std::uint64_t since,
                                std::uint64_t until) {
  for (std::size_t i = from; i < to && i < order.size(); ++i) {
    if (model.certified_throughout(order[i], since, until)) return &order[i];
  }
  return nullptr;
}

// A failover takes the first certified provider after the failed one: one it skipped was
// uncertified at some point of its decision, between the failure and the insert. Judged only when
// some failure of the job before the insert is followed by the provider in the order, and when
// none of them explains the choice.
void check_failover_skips(const HistoryModel& model, const JobRecord& job,
                          const AttemptRecord& attempt, const std::vector<std::string>& order,
                          std::vector<Violation>& out) {
  const std::string& provider = attempt.inserted.what.provider.str();
  const std::string* skipped = nullptr;
  std::uint64_t evidence = 0;
  for (const auto& [failed, failed_seq] : failed_before(model, job, attempt.inserted.seq)) {
    const auto start = scan_start(order, failed->inserted.what.provider.str());
    const auto at =
        std::find(order.begin() + static_cast<std::ptrdiff_t>(start), order.end(), provider);
    if (at == order.end()) continue;
    const std::string* left =
        certified_in(model, order, start, static_cast<std::size_t>(at - order.begin()), failed_seq,
                     attempt.inserted.seq);
    if (left == nullptr) return;  // this failure explains the choice
    skipped = left;
    evidence = failed_seq;
  }
  if (skipped == nullptr) return;
  out.push_back(violation("I6.failover_skipped_certified",
                          "the store inserted failover " + attempt_ref(attempt.id()) + " of " +
                              job_ref(job.id()) + " on \"" + provider + "\", skipping \"" +
                              *skipped + "\", earlier in the job's order and certified throughout",
                          attempt.inserted.seq, {evidence}));
}

// The failover reports nodes make, judged by the commit log: every failover the reconciler reports
// resuming (reconciler.failover_resumed) names an attempt of that job which the store had moved to
// FAILED before the report; every provider a node reports skipping (failover.skipped) is one a
// failover of its job could pass over at that moment: later in the job's order than the provider of
// one of its attempts that had FAILED by then, and without a passing certification at some point
// between that failure and the report.
void check_failover_reports(const HistoryModel& model, std::vector<Violation>& out) {
  if (model.history == nullptr) return;
  model.history->visit_kinds(
      {&events::kind_name<events::FailoverSkipped>(),
       &events::kind_name<events::FailoverResumed>()},
      [&](const sim::TraceEvent& recorded) {
        if (const auto resumed = events::from_event<events::FailoverResumed>(recorded.event)) {
          const AttemptRecord* attempt = model.attempt(resumed->attempt_id);
          const bool failed =
              attempt != nullptr && attempt->job_id() == resumed->job_id &&
              std::ranges::any_of(attempt->steps, [&](const At<Transition>& step) {
                return step.what.to == AttemptState::failed && step.seq < recorded.seq;
              });
          if (!failed) {
            out.push_back(violation("I6.resume_misreported",
                                    recorded.node.str() + " reported resuming the failover of " +
                                        job_ref(resumed->job_id) + " after " +
                                        attempt_ref(resumed->attempt_id) +
                                        ", which the store had not moved to FAILED as that job's",
                                    recorded.seq, {}));
          }
          return;
        }
        const auto skip = events::from_event<events::FailoverSkipped>(recorded.event);
        if (!skip) return;
        const JobRecord* job = model.job(skip->job_id);
        if (job == nullptr) return;
        const auto order = provider_order(model, *job);
        for (const auto& [failed, failed_seq] : failed_before(model, *job, recorded.seq)) {
          const auto start = scan_start(order, failed->inserted.what.provider.str());
          const bool later = std::find(order.begin() + static_cast<std::ptrdiff_t>(start),
                                       order.end(), skip->provider) != order.end();
          if (later && !model.certified_throughout(skip->provider, failed_seq, recorded.seq)) {
            return;
          }
        }
        out.push_back(violation(
            "I6.skip_misreported",
            recorded.node.str() + " reported skipping \"" + skip->provider +
                "\" in a failover of " + job_ref(skip->job_id) +
                ", but no failure of the job had it later in the job's order while uncertified",
            recorded.seq, {}));
      });
}

// A job fails only once its attempts reached attempt_limit or no certified provider was left
// after the failed one: judged when fewer attempts than the limit were inserted and the job's
// latest attempt had failed, against the providers after that attempt's in the job's order (all
// of the order for one outside it, an operator's choice) certified throughout from its failure
// to the job's.
void check_job_failures(const HistoryModel& model, const JobRecord& job,
                        std::vector<Violation>& out) {
  if (job.failures.empty() || !model.policy) return;
  const int limit = model.policy->what.attempt_limit;
  const auto order = provider_order(model, job);
  for (const auto& failure : job.failures) {
    int used = 0;  // the attempts inserted before the failure, the latest of them
    const AttemptRecord* latest = nullptr;
    for (const auto id : job.attempts) {
      const AttemptRecord* attempt = model.attempt(id);
      if (attempt == nullptr || attempt->inserted.seq > failure.seq) continue;
      ++used;
      latest = attempt;
    }
    if (used >= limit || latest == nullptr) continue;
    const auto failed = std::ranges::find_if(latest->steps, [](const At<Transition>& step) {
      return step.what.to == AttemptState::failed;
    });
    if (failed == latest->steps.end() || failed->seq > failure.seq) continue;
    const std::uint64_t evidence = failed->seq;
    const std::string* left =
        certified_in(model, order, scan_start(order, latest->inserted.what.provider.str()),
                     order.size(), evidence, failure.seq);
    if (left == nullptr) continue;
    out.push_back(violation("I6.job_failed_with_provider_left",
                            "the store failed " + job_ref(job.id()) + " after " +
                                std::to_string(used) + " of its attempt_limit of " +
                                std::to_string(limit) + " attempts, with \"" + *left +
                                "\" left in its order and certified throughout",
                            failure.seq, {evidence}));
  }
}

// An automatic failover follows a definitive failure, to the next provider the job allows.
void check_failover_order(const HistoryModel& model, const AttemptRecord& attempt,
                          std::vector<Violation>& out) {
  const JobRecord* job = model.job(attempt.job_id());
  if (job == nullptr) return;
  const auto self = std::ranges::find(job->attempts, attempt.id());
  if (self == job->attempts.begin() || self == job->attempts.end()) return;
  const AttemptRecord& previous = model.attempts.at(*(self - 1));
  const std::string& provider = attempt.inserted.what.provider;
  const std::string what = "the store inserted failover " + attempt_ref(attempt.id()) + " of " +
                           job_ref(job->id()) + " on \"" + provider + "\"";
  // The job's latest failure before the insert, and whether any attempt reopened it since.
  const At<events::CommitJobFailed>* failure = nullptr;
  for (const auto& f : job->failures) {
    if (f.seq < attempt.inserted.seq) failure = &f;
  }
  if (failure != nullptr && previous.inserted.seq < failure->seq) {
    out.push_back(violation("I6.failover_into_failed_job",
                            what + " after the store had failed the job, with no operator's "
                                   "retry since: only an operator reopens a failed job",
                            attempt.inserted.seq, {failure->seq}));
    return;
  }
  const auto before = previous.state_before(attempt.inserted.seq);
  if (before != AttemptState::failed) {
    out.push_back(violation("I6.failover_before_failure",
                            what + " while the previous " + attempt_ref(previous.id()) + " was " +
                                std::string(to_string(before)) + ", not FAILED",
                            attempt.inserted.seq, {previous.inserted.seq}));
    return;
  }
  const auto order = provider_order(model, *job);
  const auto at = std::ranges::find(order, provider);
  const auto after = std::ranges::find(order, previous.inserted.what.provider.str());
  if (at == order.end() || (after != order.end() && at <= after)) {
    out.push_back(violation("I6.failover_out_of_order",
                            what + ", which is not a provider after \"" +
                                previous.inserted.what.provider + "\" in the job's order",
                            attempt.inserted.seq, {job->inserted.seq}));
    return;
  }
  check_failover_skips(model, *job, attempt, order, out);
}

// Whether the transport delivered an answer to the call `execution` executed before event
// `before` (a reply, not a reset or a status), and in time: a call waits attempt_deadline from
// when it was sent, which is no later than the execution, so an answer delivered later than
// attempt_deadline after the execution came after the call had given up. Across a pause of the
// receiver the two may have been taken in either order, so any delivery then counts.
bool heard_answer(const HistoryModel& model, const At<Executed>& execution, std::uint64_t before) {
  const auto found = model.deliveries.find(execution.what.provider_key);
  if (found == model.deliveries.end()) return false;
  // No policy recorded (a hand-made history): no deadline to hold the answer to.
  const bool timed = model.policy.has_value();
  const Duration deadline(timed ? model.policy->what.attempt_deadline_us : 0);
  return std::ranges::any_of(found->second, [&](const Delivery& delivery) {
    return delivery.seq < before && delivery.call == events::kDeliveredReply &&
           delivery.outcome == "answered" &&
           (!timed || delivery.at <= execution.at + deadline ||
            model.paused_during(delivery.node.str(), execution.seq, delivery.seq));
  });
}

}  // namespace

// A passing certification rests on right answers to every call it made, each heard by its
// caller.
void check_certifications(const HistoryModel& model, std::vector<Violation>& out) {
  std::map<std::string, std::uint64_t> previous;  // provider -> seq of its last certification
  for (const auto& certification : model.certifications) {
    const auto& provider = certification.what.provider;
    const std::uint64_t since = previous[provider];
    previous[provider] = certification.seq;
    if (!certification.what.passed) continue;
    int calls = 0;
    std::set<std::string> called;  // the operations it made calls for
    for (const auto& execution : model.certification_executions) {
      const auto& executed = execution.executed;
      if (execution.provider != provider || executed.seq < since) continue;
      if (executed.seq > certification.seq) break;
      ++calls;
      called.insert(executed.what.operation);
      const bool in_time =
          executed.what.answers_at && *executed.what.answers_at <= certification.at;
      if (executed.what.outcome == "ok" && in_time) {
        // A right answer counts only once it reached the caller: one lost to a reset transport
        // (maybe_delivered) or never delivered tells the certifier nothing.
        if (heard_answer(model, executed, certification.seq)) continue;
        out.push_back(violation("I6.certified_on_failed_call",
                                "the store recorded a passing certification of \"" + provider +
                                    "\", but the answer to its certification call " +
                                    executed.what.provider_key +
                                    " never reached the caller within attempt_deadline of the call",
                                certification.seq, {executed.seq}));
        continue;
      }
      out.push_back(violation("I6.certified_on_failed_call",
                              "the store recorded a passing certification of \"" + provider +
                                  "\", but its certification call " + executed.what.provider_key +
                                  (in_time ? " was answered \"" + executed.what.outcome + "\""
                                           : std::string(" had no answer by then")),
                              certification.seq, {executed.seq}));
    }
    if (calls == 0) {
      out.push_back(violation("I6.certified_without_call",
                              "the store recorded a passing certification of \"" + provider +
                                  "\" without a single call to the provider",
                              certification.seq, {}));
      continue;
    }
    for (const std::string_view operation : kOperations) {
      if (called.contains(std::string(operation))) continue;
      out.push_back(violation("I6.certified_untested_operation",
                              "the store recorded a passing certification of \"" + provider +
                                  "\" that called it for no " + std::string(operation) +
                                  " sample: the suite covers every operation the API offers",
                              certification.seq, {}));
      break;
    }
  }
}

// A case a failed certification's report refuses for its answer's content: "case N (operation)"
// and why.
struct ContentRefusal {
  std::string_view number;  // N
  std::string_view head;    // "case N (operation)"
  std::string_view why;
};

// The cases `reasons` ("case N (operation): why", joined by "; ", and a why may hold "; " itself)
// refuses for what the answer said: not for a timeout, a refusal or a lost transport.
std::vector<ContentRefusal> content_refusals(std::string_view reasons) {
  std::vector<ContentRefusal> out;
  for (std::size_t at = 0; at < reasons.size();) {
    const std::size_t next = reasons.find("; case ", at);
    const std::string_view entry =
        reasons.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at);
    at = next == std::string_view::npos ? reasons.size() : next + 2;
    const std::size_t colon = entry.find("): ");
    if (!entry.starts_with("case ") || colon == std::string_view::npos) continue;
    const std::string_view why = entry.substr(colon + 3);
    if (why.starts_with("no answer within the deadline") || why.starts_with("provider refused") ||
        why.starts_with("transport failed")) {
      continue;
    }
    out.push_back({entry.substr(5, entry.find(' ', 5) - 5), entry.substr(0, colon + 1), why});
  }
  return out;
}

// A certification that failed refused no right answer: every case the certifier reports refusing
// for its content (its reason is not a timeout, a refusal or a lost transport) had an answer from
// the provider that was wrong (behaviour other than "ok"). Judged per case, by the case numbers the
// report gives and the provider's own record of the call it executed for that case (key
// cert:<provider>:<start>:<case>) since the provider's previous certification.
void check_refused_certifications(const HistoryModel& model, std::vector<Violation>& out) {
  if (model.history == nullptr) return;
  std::map<std::string, std::uint64_t, std::less<>> previous;  // provider -> its last report
  model.history->visit_kinds(
      {&events::kind_name<events::CertificationRecorded>()}, [&](const sim::TraceEvent& recorded) {
        const auto report = events::from_event<events::CertificationRecorded>(recorded.event);
        if (!report) return;
        const std::uint64_t since = std::exchange(previous[report->provider], recorded.seq);
        if (report->passed) return;
        for (const auto& refused : content_refusals(report->reasons)) {
          const std::string suffix = ":" + std::string(refused.number);
          for (const auto& execution : model.certification_executions) {
            const auto& executed = execution.executed;
            if (executed.seq > recorded.seq) break;
            if (executed.seq < since || execution.provider.str() != report->provider ||
                !executed.what.provider_key.ends_with(suffix) ||
                executed.what.outcome.str() != "ok") {
              continue;
            }
            out.push_back(violation("I6.certification_refused_right_answer",
                                    recorded.node.str() + " failed the certification of \"" +
                                        report->provider + "\" on " + std::string(refused.head) +
                                        " (\"" + std::string(refused.why.substr(0, 120)) +
                                        "\"), but the provider's answer to " +
                                        executed.what.provider_key + " was a right one",
                                    recorded.seq, {executed.seq}));
            break;
          }
        }
      });
}

std::vector<Violation> check_certified_failover(const HistoryModel& model) {
  std::vector<Violation> out;
  check_certifications(model, out);
  check_refused_certifications(model, out);
  check_failover_reports(model, out);
  for (const auto& [id, attempt] : model.attempts) {
    const auto& a = attempt.inserted.what;
    if (a.origin == AttemptOrigin::initial) continue;
    if (a.origin == AttemptOrigin::failover) check_failover_order(model, attempt, out);
    const At<events::CommitCertification>* latest = nullptr;
    for (const auto& certification : model.certifications) {
      if (certification.seq > attempt.inserted.seq) break;
      if (certification.what.provider == a.provider) latest = &certification;
    }
    if (latest != nullptr && latest->what.passed) continue;
    out.push_back(violation("I6.uncertified_provider",
                            "the store inserted " + attempt_ref(id) + " of " + job_ref(a.job_id) +
                                " (" + std::string(to_string(a.origin)) + ") on provider \"" +
                                a.provider + "\", whose latest certification " +
                                (latest == nullptr ? "does not exist" : "failed"),
                            attempt.inserted.seq,
                            latest == nullptr ? std::vector<std::uint64_t>{}
                                              : std::vector<std::uint64_t>{latest->seq}));
  }
  for (const auto& [id, job] : model.jobs) {
    check_job_failures(model, job, out);
    const auto* won = job.won();
    if (won == nullptr) continue;
    const Execution* execution = model.execution_of(won->what.attempt_id);
    const std::string what = job_ref(id) + "'s result, from " + attempt_ref(won->what.attempt_id);
    if (execution == nullptr) {
      out.push_back(violation("I6.result_never_produced",
                              what + ", was never produced by its provider", won->seq, {}));
    } else if (outcome_gives(execution->executed.what.outcome.str()) !=
               OutcomeGives::accepted_answer) {
      out.push_back(violation("I6.invalid_output_won",
                              what + ", is an invalid output (provider behaviour \"" +
                                  execution->executed.what.outcome + "\")",
                              won->seq, {execution->executed.seq}));
    } else if (differs_as_json(model.cas_event(*won).result, model.output_of(*execution))) {
      out.push_back(violation("I6.result_not_answered",
                              what + ", is not what its provider answered", won->seq,
                              {execution->executed.seq}));
    }
  }
  return out;
}

}  // namespace onejob::check
