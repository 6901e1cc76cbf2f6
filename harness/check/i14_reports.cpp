// I14 — what a node reports about its own writes agrees with the commit log.
//
// Engineers replaying a failure read the nodes' events (job.created, attempt.created,
// attempt.state, job.cas, job.completed, result.discarded, job.failed, certification.recorded); a
// report that does not match the write it describes sends them the wrong way. Each report must
// match a write the store committed, on the reporting node's connection, before the report:
//   - job.created: an inserted job with the same id, owner and idempotency key;
//   - attempt.created: an inserted attempt with the same id, number, provider, provider key and
//     origin;
//   - attempt.state: a transition of that attempt with the same from and to (and, for a claim,
//     the same lease token and lease expiry);
//   - job.cas: a compare-and-swap by that attempt with the same expected version, outcome and
//     winner;
//   - job.completed: the winning compare-and-swap of that attempt, with the job's new version and
//     the result bytes the job took;
//   - result.discarded: the losing compare-and-swap of that attempt, naming the winner it found and
//     the result bytes the attempt offered (not the winner's);
//   - job.failed: the job's failure;
//   - certification.recorded: a recorded certification of that provider with the same verdict;
//   - attempt.write_refused: a refusal the store recorded for that node's write of that attempt,
//     fenced or for its state as the report says, of the state the write wanted, carrying the
//     lease token the report names, while the attempt was in the state the report says it found
//     (by the commit log);
//   - worker.store_error naming an injected fault ("store <fault> during <operation>", the text the
//     simulated connection gives): such a fault on that node's connection before it, with the same
//     maybe_committed (only a write's lost reply may have committed);
//   - provider.reply's "late": false for the reply the transport delivered to the worker before
//     its call's deadline, true for one after it (either at the deadline's own instant, or when a
//     pause of the worker spanned both: it resumed with the two at hand);
//   - output.rejected: the output its attempt's provider produced, byte for byte;
//   - reconciler.status naming what the provider said (completed, failed, running, not_found): a
//     status answer saying so for that attempt's key that the transport delivered to that node
//     since its previous reconciler.status for the attempt. "unreachable" needs none: a query
//     that timed out, or whose connection failed, heard nothing.
//   - reconciler.store_recovered naming n failures: n reconciler.store_error reports by that node
//     since it last started or last reported store_recovered, and n at least one (a sweep that
//     went through with no error before it has nothing to recover from).
// report_misnamed — a report by an API node, a worker or the reconciler that names an attempt the
// store had inserted (provider.call, provider.reply, output.rejected, reconciler.status,
// attempt.state, worker.adopted, ...) names that attempt's job and provider as inserted; a
// worker.adopted names a lease token the store had given that worker for the attempt. Judged on
// the reports report_untrue finds true.
// And a node that reports a compare-and-swap reports its consequence: job.cas won is followed by
// its job.completed, job.cas lost by its result.discarded (report_incomplete).
// report_missing — a node reports what reached it, joined from the truth to the report:
//   - every write the store committed on a node's connection (commit.job_inserted,
//     commit.attempt_inserted, commit.attempt, commit.cas, commit.job_failed,
//     commit.certification) is followed by that node's report of it (job.created,
//     attempt.created, attempt.state with the same from and to, job.cas, job.failed,
//     certification.recorded of that provider and verdict), and every
//     attempt write it refused (fenced, or for its state) by attempt.write_refused;
//   - every provider reply the transport delivered to a node for a call that node reported
//     (provider.call of that key) is followed by its provider.reply for that attempt, naming the
//     outcome delivered;
//   - every status answer the transport delivered to a node for an attempt's provider key is
//     followed by its reconciler.status for that attempt (whatever status it names: an answer
//     that arrives after the query's timeout is reported as unreachable);
//   - every store fault on a worker's or the reconciler's connection is followed by that node's
//     worker.store_error or reconciler.store_error;
//   - a worker calls a provider for an attempt once per claim (attempt.state STARTING -> RUNNING)
//     or adoption (worker.adopted) of that attempt it reported before;
//   - a node that writes an attempt FAILED whose provider produced an output breaking the
//     contract (malformed, hallucinated_key, wrong_operation) reported output.rejected for that
//     attempt before: the output it refused is what an engineer needs to see.
//   Excused: the node crashed after the write or the delivery, or was paused when the run ended;
//   the run ended (not quiescent) within the settle horizon; for a write, the node's connection
//   lost a reply to an operation that makes such a write after it (store.fault, maybe_committed:
//   the node never learned the write happened).
// acted_while_down — a crashed node records nothing (no report, no answer, no call) until it starts
// again: its incarnation is gone, and anything it seemed to do would be a ghost's.
// Does not check the providers' and API's own events (I5, I9, I13 judge those against their own
// truths), nor which of several same-operation round trips a lost reply belonged to.
#include <utility>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <tuple>

#include "system/events/api_events.hpp"
#include "system/events/attempt_events.hpp"
#include "system/events/certification_events.hpp"
#include "system/events/reconciler_events.hpp"
#include "system/events/worker_events.hpp"

#include "harness/check/event_switch.hpp"
#include "harness/check/i14_heard.hpp"
#include "harness/check/i14_keys.hpp"
#include "harness/check/invariant.hpp"
#include "harness/sim/faulty_store.hpp"

namespace onejob::check {
namespace {

using i14::describe;
using i14::key_of;
using i14::ReportKey;
using i14::Texts;

// A worker or the reconciler reports every store failure it meets (worker.store_error,
// reconciler.store_error): the only trace of a failure it then retries past.
bool reports_store_errors(std::string_view node) {
  return node.starts_with(sim::kWorkerNodePrefix) || node == sim::kReconcilerNode;
}

template <typename T, typename Match>
bool any_before(const std::vector<At<T>>& writes, std::uint64_t seq, Match match) {
  return std::ranges::any_of(
      writes, [&](const At<T>& write) { return write.seq < seq && match(write.what); });
}

// The words of a report the store has no write for, or "" when it has one.
std::string mismatch(const HistoryModel& model, const sim::PackedEvent& recorded, Texts& texts) {
  using Kind = ReportKey::Kind;
  const auto named = [&](const ReportKey& key) { return describe(key, texts); };
  const std::string& node = recorded.node.str();
  const auto seq = recorded.seq;
  if (auto created = from_packed<events::JobCreated>(recorded)) {
    const JobRecord* job = model.job(created->job_id);
    const bool ok = job != nullptr && job->inserted.seq < seq && [&] {
      const auto& row = job->inserted.what;
      return row.by == node && row.owner() == created->owner && row.key() == created->key;
    }();
    return ok ? "" : named(key_of(Kind::job_created, created->job_id));
  }
  if (auto created = from_packed<events::AttemptCreated>(recorded)) {
    const AttemptRecord* attempt = model.attempt(created->attempt_id);
    const bool ok = attempt != nullptr && attempt->inserted.seq < seq && [&] {
      const auto& row = attempt->inserted.what;
      return row.by == node && row.job_id == created->job_id &&
             row.attempt_no == created->attempt_no && row.provider == created->provider &&
             row.provider_key == created->provider_key && row.origin == created->origin;
    }();
    return ok ? "" : named(key_of(Kind::attempt_created, created->attempt_id));
  }
  if (auto changed = from_packed<events::AttemptStateChanged>(recorded)) {
    const AttemptRecord* attempt = model.attempt(changed->attempt_id);
    const bool ok =
        attempt != nullptr && any_before(attempt->steps, seq, [&](const auto& step) {
          return step.by == node && step.from == changed->from && step.to == changed->to &&
                 (!changed->token || *changed->token == step.token) &&
                 (!changed->lease_expires || changed->lease_expires == step.lease_expires_at);
        });
    return ok ? ""
              : named({.kind = Kind::transition,
                       .from = changed->from,
                       .to = changed->to,
                       .id = changed->attempt_id});
  }
  if (auto cas = from_packed<events::JobCas>(recorded)) {
    const JobRecord* job = model.job(cas->job_id);
    const bool ok = job != nullptr && any_before(job->cas, seq, [&](const auto& write) {
                      return write.by == node && write.attempt_id == cas->attempt_id &&
                             write.expected_version == cas->expected_version &&
                             write.won == cas->won && write.winner == cas->winner;
                    });
    return ok ? "" : named(key_of(Kind::cas, cas->attempt_id));
  }
  if (auto completed = from_packed<events::JobCompleted>(recorded)) {
    const JobRecord* job = model.job(completed->job_id);
    const bool ok = job != nullptr && std::ranges::any_of(job->cas, [&](const At<Cas>& write) {
                      const Cas& w = write.what;
                      return write.seq < seq && w.by == node && w.won &&
                             w.attempt_id == completed->attempt_id &&
                             w.version == completed->version &&
                             model.cas_event(write).job_result == completed->result;
                    });
    return ok ? ""
              : "job.completed of " + job_ref(completed->job_id) + " by " +
                    attempt_ref(completed->attempt_id);
  }
  if (auto discarded = from_packed<events::ResultDiscarded>(recorded)) {
    const JobRecord* job = model.job(discarded->job_id);
    const bool ok = job != nullptr && std::ranges::any_of(job->cas, [&](const At<Cas>& write) {
                      const Cas& w = write.what;
                      return write.seq < seq && w.by == node && !w.won &&
                             w.attempt_id == discarded->attempt_id &&
                             w.winner == discarded->winner &&
                             model.cas_event(write).result == discarded->result;
                    });
    return ok ? "" : "result.discarded of " + attempt_ref(discarded->attempt_id);
  }
  if (auto refused = from_packed<events::AttemptWriteRefused>(recorded)) {
    // The refusal as the store made it: the write's lease token, and the state the attempt was in
    // when it was refused (by the commit log), are the ones reported.
    const AttemptRecord* attempt = model.attempt(refused->attempt_id);
    const bool ok = std::ranges::any_of(model.refusals, [&](const At<events::StoreRefused>& at) {
      const events::StoreRefused& write = at.what;
      return at.seq < seq && write.by == node && write.attempt_id == refused->attempt_id &&
             write.refusal == (refused->fenced ? events::kRefusedFenced : events::kRefusedState) &&
             write.wanted == refused->wanted && write.fence.value_or(0) == refused->token &&
             (attempt == nullptr || attempt->state_before(at.seq) == refused->found);
    });
    return ok ? "" : named(key_of(Kind::write_refused, refused->attempt_id));
  }
  if (auto failed = from_packed<events::JobFailed>(recorded)) {
    const JobRecord* job = model.job(failed->job_id);
    const bool ok = job != nullptr && any_before(job->failures, seq, [&](const auto& write) {
                      return write.by == node;
                    });
    return ok ? "" : named(key_of(Kind::job_failed, failed->job_id));
  }
  if (auto certified = from_packed<events::CertificationRecorded>(recorded)) {
    const bool ok = any_before(model.certifications, seq, [&](const auto& write) {
      return write.by == node && write.provider == certified->provider &&
             write.passed == certified->passed;
    });
    return ok ? ""
              : named({.kind = Kind::certification,
                       .passed = certified->passed,
                       .text = texts.number(certified->provider)});
  }
  return {};
}

// What a node owes a report of.
struct Owed {
  sim::NodeName node;
  ReportKey report;
  std::uint64_t seq = 0;  // the event that owes it (its instant: the history's)
  std::span<const std::string_view> operations;  // store operations whose lost reply excuses it
};

// The store operations whose lost reply excuses each kind of report owed.
constexpr std::string_view kInsertOperations[] = {"insert_job", "insert_attempt"};
constexpr std::string_view kTransitionOperations[] = {"claim_next_attempt", "update_attempt",
                                                      "complete_attempt"};
constexpr std::string_view kCasOperations[] = {"complete_attempt"};
constexpr std::string_view kFailOperations[] = {"fail_job"};
constexpr std::string_view kCertificationOperations[] = {"record_certification"};
constexpr std::string_view kRefusalOperations[] = {"update_attempt", "complete_attempt"};

// A node by its interned name's address (one name, one address), as a number: ordered, unlike
// unrelated pointers.
std::uintptr_t node_key(sim::NodeName node) {
  return reinterpret_cast<std::uintptr_t>(&node.str());
}

// What nodes owe and have not reported yet, by (node, key), matched as the history goes: a report
// answers the latest thing its node owes under its key before it (a write whose reply was lost
// must not take the report of the write after it). Only what is still owed is held: a run of
// 100,000 jobs owes and files millions of reports, nearly each answered at once.
class OwedReports {
 public:
  void owe(const Owed& owed) { open_[{node_key(owed.node), owed.report}].push_back(owed); }
  void filed(sim::NodeName node, const ReportKey& key) {
    const auto it = open_.find({node_key(node), key});
    if (it == open_.end()) return;  // a report of nothing owed: I14's report_untrue judges it
    it->second.pop_back();
    if (it->second.empty()) open_.erase(it);
  }
  // What was never reported, latest first.
  std::vector<Owed> unreported() const {
    std::vector<Owed> out;
    for (const auto& [key, owed] : open_) out.insert(out.end(), owed.begin(), owed.end());
    std::ranges::sort(out, std::greater{}, &Owed::seq);
    return out;
  }

 private:
  std::map<std::pair<std::uintptr_t, ReportKey>, std::vector<Owed>> open_;
};

// The key a node's report is filed under, or nothing for events that are not such reports.
std::optional<ReportKey> report_key(const sim::PackedEvent& event, Texts& texts) {
  using Kind = ReportKey::Kind;
  if (auto created = from_packed<events::JobCreated>(event)) {
    return key_of(Kind::job_created, created->job_id);
  }
  if (auto created = from_packed<events::AttemptCreated>(event)) {
    return key_of(Kind::attempt_created, created->attempt_id);
  }
  if (auto changed = from_packed<events::AttemptStateChanged>(event)) {
    return ReportKey{.kind = Kind::transition,
                     .from = changed->from,
                     .to = changed->to,
                     .id = changed->attempt_id};
  }
  if (auto cas = from_packed<events::JobCas>(event)) {
    return key_of(Kind::cas, cas->attempt_id);
  }
  if (auto failed = from_packed<events::JobFailed>(event)) {
    return key_of(Kind::job_failed, failed->job_id);
  }
  if (auto certification = from_packed<events::CertificationRecorded>(event)) {
    return ReportKey{.kind = Kind::certification,
                     .passed = certification->passed,
                     .text = texts.number(certification->provider)};
  }
  if (auto refused = from_packed<events::AttemptWriteRefused>(event)) {
    return key_of(Kind::write_refused, refused->attempt_id);
  }
  if (auto replied = from_packed<events::ProviderReplied>(event)) {
    return ReportKey{.kind = Kind::provider_reply,
                     .text = texts.number(replied->reply),
                     .id = replied->attempt_id};
  }
  if (auto status = from_packed<events::ReconcilerStatus>(event)) {
    return key_of(Kind::status, status->attempt_id);
  }
  if (is_kind<events::WorkerStoreError>(event) || is_kind<events::ReconcilerStoreError>(event)) {
    return key_of(Kind::store_error, 0);
  }
  return std::nullopt;
}

// The report a commit owes its writer, if any.
std::optional<Owed> owed_for_commit(const sim::PackedEvent& recorded, Texts& texts) {
  using Kind = ReportKey::Kind;
  const auto owed = [&](const std::string& by, const ReportKey& key,
                        std::span<const std::string_view> operations) {
    return Owed{by, key, recorded.seq, operations};
  };
  if (auto inserted = from_packed<events::CommitJobInserted>(recorded)) {
    return owed(inserted->by, key_of(Kind::job_created, inserted->job_id), kInsertOperations);
  }
  if (auto inserted = from_packed<events::CommitAttemptInserted>(recorded)) {
    return owed(inserted->by, key_of(Kind::attempt_created, inserted->attempt_id),
                kInsertOperations);
  }
  if (auto step = from_packed<events::CommitAttemptTransition>(recorded)) {
    return owed(
        step->by,
        ReportKey{
            .kind = Kind::transition, .from = step->from, .to = step->to, .id = step->attempt_id},
        kTransitionOperations);
  }
  if (auto cas = from_packed<events::CommitCas>(recorded)) {
    return owed(cas->by, key_of(Kind::cas, cas->attempt_id), kCasOperations);
  }
  if (auto failed = from_packed<events::CommitJobFailed>(recorded)) {
    return owed(failed->by, key_of(Kind::job_failed, failed->job_id), kFailOperations);
  }
  if (auto certification = from_packed<events::CommitCertification>(recorded)) {
    return owed(certification->by,
                ReportKey{.kind = Kind::certification,
                          .passed = certification->passed,
                          .text = texts.number(certification->provider)},
                kCertificationOperations);
  }
  if (auto refused = from_packed<events::StoreRefused>(recorded);
      refused && refused->attempt_id &&
      (refused->refusal == events::kRefusedFenced || refused->refusal == events::kRefusedState)) {
    return owed(refused->by, key_of(Kind::write_refused, *refused->attempt_id), kRefusalOperations);
  }
  return std::nullopt;
}

// I14's report_missing and acted_while_down, gathered event by event in the same pass as the
// rest of I14 (each event is unpacked once): what nodes owe reports of, and what they filed.
class MissingReports {
 public:
  explicit MissingReports(const HistoryModel& model) : model_(model) {}
  void see(const sim::PackedEvent& recorded);
  // An event of a kind I14 does not read, at `index`: only who recorded it matters here.
  void see_unread(const sim::History& history, std::size_t index);
  // Appends what was found while seeing the events, then the reports owed and never filed.
  void finish(std::vector<Violation>& out);

 private:
  // A node recorded an event of `kind` at `seq`: a breach while it is down.
  void acted(const std::string& node, const std::string& kind, std::uint64_t seq);

  const HistoryModel& model_;
  std::vector<Violation> found_;  // in history order
  OwedReports owed_;
  Texts texts_;
  std::vector<At<events::StoreFault>> lost_replies_;
  std::set<std::string> down_;  // nodes crashed and not started again
  // Provider calls each worker reported, by (node_key, provider key): the attempt called.
  std::map<std::pair<std::uintptr_t, std::string>, std::int64_t> called_;
  // (node, attempt) -> how many claims and adoptions the node reported and has not yet called on.
  std::map<std::pair<std::uintptr_t, std::int64_t>, int> may_call_;
};

void MissingReports::see(const sim::PackedEvent& recorded) {
  using Kind = ReportKey::Kind;
  const std::string& node = recorded.node.str();
  if (from_packed<events::NodeCrashed>(recorded)) {
    down_.insert(node);
  } else if (from_packed<events::NodeStarted>(recorded)) {
    down_.erase(node);
  } else if (is_kind<events::NodePaused>(recorded) || is_kind<events::NodeResumed>(recorded)) {
    // The world records these for a node, not the node itself.
  } else {
    acted(node, *recorded.kind, recorded.seq);
  }
  if (auto commit = owed_for_commit(recorded, texts_)) {
    owed_.owe(*commit);
  } else if (auto key = report_key(recorded, texts_)) {
    owed_.filed(recorded.node, *key);
  } else if (auto fault = from_packed<events::StoreFault>(recorded)) {
    if (fault->maybe_committed) lost_replies_.push_back({*fault, recorded.seq, recorded.at});
    if (reports_store_errors(fault->node)) {
      owed_.owe(Owed{fault->node, key_of(Kind::store_error, 0), recorded.seq, {}});
    }
  } else if (auto delivered = from_packed<events::ProviderDelivered>(recorded)) {
    auto call = called_.find({node_key(recorded.node), delivered->provider_key});
    if (delivered->call == events::kDeliveredReply && call != called_.end()) {
      owed_.owe(Owed{recorded.node,
                     ReportKey{.kind = Kind::provider_reply,
                               .text = texts_.number(delivered->outcome),
                               .id = call->second},
                     recorded.seq,
                     {}});
    }
    auto attempt = model_.attempt_by_provider_key.find(delivered->provider_key);
    if (delivered->call == events::kDeliveredStatus &&
        attempt != model_.attempt_by_provider_key.end()) {
      owed_.owe(Owed{recorded.node, key_of(Kind::status, attempt->second), recorded.seq, {}});
    }
  } else if (auto adopted = from_packed<events::WorkerAdopted>(recorded)) {
    ++may_call_[{node_key(recorded.node), adopted->attempt_id}];
  }
  if (auto changed = from_packed<events::AttemptStateChanged>(recorded);
      changed && changed->from == AttemptState::starting && changed->to == AttemptState::running) {
    ++may_call_[{node_key(recorded.node), changed->attempt_id}];
  }
  if (auto call = from_packed<events::ProviderCalled>(recorded)) {
    called_[{node_key(recorded.node), call->provider_key}] = call->attempt_id;
    if (int& left = may_call_[{node_key(recorded.node), call->attempt_id}]; left > 0) {
      --left;
    } else {
      found_.push_back(violation("I14.report_missing",
                                 node + " called " + call->provider + " for " +
                                     attempt_ref(call->attempt_id) +
                                     " without reporting a claim or an adoption of it first",
                                 recorded.seq, {}));
    }
  }
}

void MissingReports::acted(const std::string& node, const std::string& kind, std::uint64_t seq) {
  if (!down_.contains(node)) return;
  found_.push_back(violation(
      "I14.acted_while_down",
      node + " recorded " + kind + " after it crashed and before it started again", seq, {}));
}

void MissingReports::see_unread(const sim::History& history, std::size_t index) {
  if (down_.empty()) return;
  acted(history.node(index).str(), history.kind(index), index + 1);
}

void MissingReports::finish(std::vector<Violation>& out) {
  out.insert(out.end(), std::make_move_iterator(found_.begin()),
             std::make_move_iterator(found_.end()));
  const auto end = model_.end_at();
  const auto horizon = model_.policy ? settle_horizon(model_.policy->what) : Duration::zero();
  // What no report answered (OwedReports matched them as the history went), latest first.
  for (const Owed& due : owed_.unreported()) {
    const bool reply_lost = std::ranges::any_of(lost_replies_, [&](const auto& lost) {
      return lost.seq > due.seq && lost.what.node == due.node &&
             std::ranges::find(due.operations, lost.what.operation) != due.operations.end();
    });
    const bool cut_short =
        !end || (!model_.quiescent_end && *end < model_.history->instant(due.seq - 1) + horizon);
    if (reply_lost || cut_short || model_.paused_at_end(due.node) ||
        model_.crashed_after(due.node, due.seq)) {
      continue;
    }
    out.push_back(violation(
        "I14.report_missing",
        due.node.str() + " never reported " + describe(due.report, texts_) + " that reached it",
        due.seq, {}));
  }
}

// The kinds of event I14 reads, by interned id: every kind its parts ask for by type. An event of
// any other kind is looked at only for the node that recorded it (acted_while_down), its bytes not
// read: in a fuzz case that skips about a third of the history.
template <events::EventType... T>
std::vector<bool> kinds_by_id() {
  std::vector<bool> table;
  for (const std::string* kind : {&events::kind_name<T>()...}) {
    const std::uint32_t id = id_of_interned(*kind);
    if (id >= table.size()) table.resize(id + 1);
    table[id] = true;
  }
  return table;
}

const std::vector<bool>& kinds_i14_reads() {
  static const std::vector<bool> table =
      kinds_by_id<events::AttemptCreated, events::AttemptStateChanged, events::AttemptWriteRefused,
                  events::CertificationRecorded, events::CommitAttemptInserted,
                  events::CommitAttemptTransition, events::CommitCas, events::CommitCertification,
                  events::CommitJobFailed, events::CommitJobInserted, events::JobCas,
                  events::JobCompleted, events::JobCreated, events::JobFailed, events::NodeCrashed,
                  events::NodePaused, events::NodeResumed, events::NodeStarted,
                  events::OutputRejected, events::ProviderCalled, events::ProviderDelivered,
                  events::ProviderReplied, events::ReconcilerStatus, events::ReconcilerStoreError,
                  events::ReconcilerStoreRecovered, events::ResultDiscarded, events::StoreFault,
                  events::StoreRefused, events::WorkerAdopted, events::WorkerStoreError>();
  return table;
}

// I14 over the history, reading the events whose kind `reads` marks (every event when it is
// empty).
std::vector<Violation> judge_reports(const HistoryModel& model, const std::vector<bool>& reads) {
  std::vector<Violation> out;
  if (model.history == nullptr) return out;
  // Compare-and-swaps a node reported, awaiting their consequence: (node, attempt) -> the job.cas.
  std::map<std::pair<std::string, std::int64_t>, std::pair<std::uint64_t, bool>> awaiting;
  // Store faults met so far: (node, the error text the faulty connection gives, maybe_committed).
  std::set<std::tuple<std::string, std::string, bool>> faults;
  // The reconciler's store errors in a row, by node: since its start or its last recovery.
  std::map<std::string, std::int64_t, std::less<>> sweep_errors;
  Texts texts;
  MissingReports missing(model);
  i14::HeardReports heard(model);
  const auto see = [&](const sim::PackedEvent& recorded) {
    missing.see(recorded);
    heard.see(recorded, out);
    if (auto wrong = mismatch(model, recorded, texts); !wrong.empty()) {
      out.push_back(
          violation("I14.report_untrue",
                    recorded.node.str() + " reported " + wrong +
                        ", but the store has no such write (or refusal) on its connection",
                    recorded.seq, {}));
    } else if (auto misnamed = i14::misnamed(model, recorded); !misnamed.empty()) {
      out.push_back(violation("I14.report_misnamed", recorded.node.str() + " reported " + misnamed,
                              recorded.seq, {}));
    }
    if (auto fault = from_packed<events::StoreFault>(recorded)) {
      faults.insert({fault->node, sim::store_fault_message(fault->fault, fault->operation),
                     fault->maybe_committed});
    } else if (auto error = from_packed<events::WorkerStoreError>(recorded);
               error && error->message.starts_with("store ") &&
               !faults.contains({recorded.node.str(), error->message, error->maybe_committed})) {
      out.push_back(violation(
          "I14.report_untrue",
          recorded.node.str() + " reported \"" + error->message + "\" with maybe_committed " +
              (error->maybe_committed ? "true" : "false") +
              ", but its connection had no such fault (a lost reply to a write is the only fault "
              "that may have committed)",
          recorded.seq, {}));
    }
    if (is_kind<events::NodeStarted>(recorded) || is_kind<events::ReconcilerStoreError>(recorded)) {
      auto& errors = sweep_errors[recorded.node.str()];
      errors = is_kind<events::NodeStarted>(recorded) ? 0 : errors + 1;
    } else if (auto recovered = from_packed<events::ReconcilerStoreRecovered>(recorded)) {
      const std::int64_t errors = std::exchange(sweep_errors[recorded.node.str()], 0);
      if (recovered->failures != errors || errors == 0) {
        out.push_back(violation("I14.report_untrue",
                                recorded.node.str() + " reported its store recovered after " +
                                    std::to_string(recovered->failures) +
                                    " failures, but it had reported " + std::to_string(errors) +
                                    " store errors since it started or last recovered",
                                recorded.seq, {}));
      }
    }
    if (auto cas = from_packed<events::JobCas>(recorded)) {
      awaiting[{recorded.node.str(), cas->attempt_id}] = {recorded.seq, cas->won};
    } else if (auto completed = from_packed<events::JobCompleted>(recorded)) {
      awaiting.erase({recorded.node.str(), completed->attempt_id});
    } else if (auto discarded = from_packed<events::ResultDiscarded>(recorded)) {
      awaiting.erase({recorded.node.str(), discarded->attempt_id});
    }
  };
  const sim::History& history = *model.history;
  visit_by_kind(
      history,
      [&reads](std::uint32_t kind) {
        return reads.empty() || (kind < reads.size() && reads[kind]);
      },
      [&see](std::uint32_t, const sim::PackedEvent& recorded) { see(recorded); },
      [&](std::size_t index) { missing.see_unread(history, index); });
  for (const auto& [who, cas] : awaiting) {
    out.push_back(violation("I14.report_incomplete",
                            who.first + " reported the " + (cas.second ? "won" : "lost") +
                                " compare-and-swap of " + attempt_ref(who.second) + " but never " +
                                (cas.second ? "job.completed" : "result.discarded"),
                            cas.first, {}));
  }
  missing.finish(out);
  return out;
}

}  // namespace

std::vector<Violation> check_reports(const HistoryModel& model) {
  return judge_reports(model, kinds_i14_reads());
}

namespace i14 {

std::vector<Violation> check_reports_reading_every_event(const HistoryModel& model) {
  return judge_reports(model, {});
}

}  // namespace i14
}  // namespace onejob::check
