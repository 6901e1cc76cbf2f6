#pragma once

#include <utility>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "system/domain/attempt.hpp"
#include "system/domain/job.hpp"
#include "system/events/api_events.hpp"
#include "system/events/worker_events.hpp"

#include "harness/check/id_map.hpp"
#include "harness/check/marks.hpp"
#include "harness/events/client_events.hpp"
#include "harness/events/commit_events.hpp"
#include "harness/events/provider_events.hpp"
#include "harness/events/world_events.hpp"
#include "harness/sim/trace.hpp"

namespace onejob::check {

// The one model of a run every checker and every expectation reads, folded once from its trace.
// Two layers, kept apart:
//   - the store's truth: the commit log (commit.*, store.refused), in the order the store applied
//     writes, and what providers really executed;
//   - what nodes and clients saw: API requests and responses, provider calls, client sends and
//     receipts, joined to the client request they belong to.
// Nothing here is inferred from a node's report of a write: a write exists when the commit log
// has it.

// STARTING, RUNNING or UNKNOWN: DESIGN.md's live states, stated here rather than taken from
// system/ (a checker must not share a bug with the code it judges).
bool is_live_state(AttemptState state);

template <typename T>
struct At {
  T what;
  std::uint64_t seq = 0;  // position in the trace
  Instant at{};
};

// A commit.attempt as the model keeps it: every column the rules compare, node names interned.
// Whether it carries an operator action's key is kept; the key and its owner (rare) are read from
// the history at the step's seq (HistoryModel::action_of).
struct Transition {
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  AttemptState from = AttemptState::starting;
  AttemptState to = AttemptState::starting;
  bool claim = false;
  bool takeover = false;
  bool has_action = false;
  sim::NodeName by;
  sim::NodeName lease_owner;
  std::optional<std::int64_t> fence{};
  std::int64_t token = 0;
  std::optional<Instant> lease_expires_at{};

  static Transition of(const events::CommitAttemptTransition& step);
};

// A commit.attempt_inserted as the model keeps it, names interned; whether it carries an operator
// action's key is kept, the key and its owner are read from the history (HistoryModel::action_of).
struct AttemptInserted {
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::int64_t attempt_no = 0;
  sim::NodeName provider;
  std::string provider_key;
  AttemptOrigin origin = AttemptOrigin::initial;
  bool has_action = false;
  sim::NodeName by;

  static AttemptInserted of(const events::CommitAttemptInserted& inserted);
};

struct AttemptRecord {
  At<AttemptInserted> inserted;
  std::vector<At<Transition>> steps;            // commit order
  AttemptState state = AttemptState::starting;  // at the end of the log

  std::int64_t id() const { return inserted.what.attempt_id; }
  std::int64_t job_id() const { return inserted.what.job_id; }
  // The state the log gives the attempt just before trace event `seq` (STARTING once inserted).
  AttemptState state_before(std::uint64_t seq) const;
  // The claim that gave `worker` this attempt's lease, if any.
  const At<Transition>* claim_by(std::string_view worker) const;
};

// A commit.cas as the model keeps it: every column rules compare but the bytes it wrote, which are
// read from the history when a rule asks (HistoryModel::cas_event); whether the job's result is
// the result the attempt offered is kept.
struct Cas {
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::int64_t expected_version = 0;
  std::int64_t version = 0;
  std::int64_t winner = 0;
  bool won = false;
  bool result_offered = false;  // job_result == result
  sim::NodeName by;

  static Cas of(const events::CommitCas& cas);
};

// A commit.job_inserted as the model keeps it, names interned; the request body is read from the
// history when a rule asks (HistoryModel::payload_of).
struct JobInserted {
  std::int64_t job_id = 0;
  // Its (owner, key): the model's entry in HistoryModel::jobs_by_key, held once.
  const std::pair<std::string, std::string>* owner_key = nullptr;
  sim::NodeName operation;
  sim::NodeName provider;
  sim::NodeName by;

  const std::string& owner() const { return owner_key->first; }
  const std::string& key() const { return owner_key->second; }
  static JobInserted of(const events::CommitJobInserted& inserted,
                        const std::pair<std::string, std::string>& owner_key);
};

struct JobRecord {
  At<JobInserted> inserted;
  std::vector<std::int64_t> attempts;  // ids, in insertion (attempt_no) order
  std::vector<At<Cas>> cas;
  std::vector<At<events::CommitJobFailed>> failures;  // a retry makes a failed job pending again

  std::int64_t id() const { return inserted.what.job_id; }
  // The first winning compare-and-swap, if any.
  const At<Cas>* won() const;
};

// Where a job stands when the run ends.
enum class JobEnd {
  succeeded,
  failed,
  blocked,            // pending on an UNKNOWN attempt, awaiting out-of-band truth
  awaiting_operator,  // pending, nothing live, its latest attempt cancelled by an operator
  running,            // pending with a STARTING or RUNNING attempt
  stuck,              // pending, nothing live, and nobody is left to act
};
std::string_view to_string(JobEnd end);

// One timeline request as its client sent and received it: where its sends and receipts are in
// the trace, not copies of them (HistoryModel::first_send and receipts read them).
struct ClientRequest {
  sim::NodeName client;
  sim::NodeName action;  // the first send's (create_job, get_job, ...), interned
  std::vector<std::uint64_t> send_seqs;
  std::vector<std::uint64_t> received_seqs;
  std::optional<std::string> skipped;  // why it was never sent
};

// One request as an API node handled it, joined to the client request (and the client's send of
// it) that the load balancer forwarded (0 when none did). It holds where its api.request and
// api.response are in the history, and the two parts most rules filter on;
// HistoryModel::request_of and response_of read the rest when a rule needs it.
struct ApiExchange {
  sim::NodeName node;
  sim::NodeName route;  // the request's route (interned: the API has a handful)
  std::uint64_t request_seq = 0;
  std::uint64_t response_seq = 0;  // 0: never answered
  std::int64_t status = 0;         // the response's; 0 when never answered
  std::int64_t client_request = 0;
  std::int64_t client_send = 0;

  bool answered() const { return response_seq != 0; }
};

// A provider.execute as the model keeps it; its output is read from the history when a rule
// asks (HistoryModel::output_of).
struct Executed {
  std::string provider_key;
  sim::NodeName outcome;
  std::optional<Instant> answers_at{};
  sim::NodeName operation;
};

struct Execution {
  sim::NodeName provider;
  At<Executed> executed;
};

// A provider's answer (or status) as the transport delivered it to `node`.
struct Delivery {
  sim::NodeName node;
  sim::NodeName call;     // kDeliveredReply or kDeliveredStatus
  sim::NodeName outcome;  // the provider's outcome as delivered
  std::uint64_t seq = 0;  // the provider.deliver's position in the trace
  Instant at{};
};

// A worker's provider call and when it ended for that worker: the first reply the transport
// delivered to it by the call's deadline, else the deadline. In trace order.
struct CallSpan {
  struct Called {
    std::int64_t attempt_id = 0;  // the attempt the call was made for
  };
  sim::NodeName node;
  At<Called> call;     // where the provider.call is
  Instant deadline{};  // the call's, as its provider.call says
  Instant ended{};
  std::optional<sim::NodeName> reply;  // the delivered reply's outcome; none: the deadline passed
  // When the first reply after the call reached the caller, by the deadline or after it (none:
  // no reply ever did).
  std::optional<Instant> first_reply_at{};
};

// A request's receipts as HistoryModel::receipts gives them, in order: shared with the model's
// cache of decoded events when it keeps one, so a rule may hold them while the model lives.
class Receipts {
 public:
  using List = std::vector<At<events::ClientReceived>>;
  explicit Receipts(std::shared_ptr<const List> list) : list_(std::move(list)) {}
  List::const_iterator begin() const { return list_->begin(); }
  List::const_iterator end() const { return list_->end(); }
  std::size_t size() const { return list_->size(); }
  bool empty() const { return list_->empty(); }
  const At<events::ClientReceived>& operator[](std::size_t index) const { return (*list_)[index]; }

 private:
  std::shared_ptr<const List> list_;
};

struct HistoryModel {
  // Moved, never copied: jobs point into jobs_by_key.
  HistoryModel() = default;
  HistoryModel(const HistoryModel&) = delete;
  HistoryModel& operator=(const HistoryModel&) = delete;
  HistoryModel(HistoryModel&&) = default;
  HistoryModel& operator=(HistoryModel&&) = default;
  ~HistoryModel() = default;

  const sim::History* history = nullptr;

  // The store's truth.
  IdMap<JobRecord> jobs;
  IdMap<AttemptRecord> attempts;
  std::map<std::pair<std::string, std::string>, std::vector<std::int64_t>> jobs_by_key;
  std::map<std::string, std::int64_t> attempt_by_provider_key;
  std::vector<At<events::CommitCertification>> certifications;
  std::vector<At<events::StoreRefused>> refusals;
  // Every commit.* event, in commit order (indexes into *history; a deque: no doubling as it
  // grows).
  std::deque<std::size_t> commit_log;
  // The commits holding a text PostgreSQL cannot hold (sim::text_column_holds), as the fold met
  // them: (seq, the first such field's interned name id).
  std::vector<std::pair<std::uint64_t, std::uint32_t>> unstorable_commits;
  std::deque<Execution> executions;                    // attempt executions only, in order
  std::vector<Execution> certification_executions;     // in order
  std::map<std::string, std::size_t> first_execution;  // provider key -> index in executions

  // What nodes and clients saw.
  IdMap<ClientRequest> requests;      // by timeline number
  std::deque<ApiExchange> exchanges;  // in request order (a deque: no doubling copy as it grows)
  // Where each attempt's provider calls are in the trace, by attempt id.
  std::map<std::int64_t, std::vector<std::uint64_t>> calls;
  std::deque<CallSpan> call_spans;  // every worker's calls with their ends, in trace order

  // Commits moving an attempt to CANCELLED on an operator's request: made by an API node while
  // it was handling a cancel_attempt request. Only these allow new work beside a live attempt.
  std::set<std::uint64_t> operator_cancels;

  std::map<std::string, std::vector<Delivery>> deliveries;  // by provider key, in order
  // Every node's starts (true) and crashes (false), in order.
  std::map<std::string, std::vector<At<bool>>> node_life;
  // Every node's pauses (true) and resumes (false), in order.
  std::map<std::string, std::vector<At<bool>>> node_pauses;
  std::optional<At<events::RunPolicy>> policy;  // run.policy: what the run used
  std::map<std::string, events::RunProvider, std::less<>> providers;  // run.provider, by name

  std::optional<std::uint64_t> quiet_seq;  // world.quiet
  std::optional<std::uint64_t> end_seq;    // run.end
  bool quiescent_end = false;              // the run ended once nothing was left to move
  MarkCounts marks;

  // The job the store holds for (owner, key) that committed before trace event `seq`.
  const JobRecord* job_for_key(const std::string& owner, const std::string& key,
                               std::uint64_t seq) const;
  const JobRecord* job(std::int64_t id) const;
  const AttemptRecord* attempt(std::int64_t id) const;
  const Execution* execution_of(std::int64_t attempt_id) const;
  JobEnd end_of(const JobRecord& job) const;
  // Events read back from the history (sends, receipts, an exchange's request and response) are
  // decoded once and shared while a rule holds them. A history shorter than this many events (a
  // fuzz case's, a scenario's) keeps them, as the fold decoded them, since rules ask for one
  // exchange many times; a longer one decodes them on each ask, so that the model of millions of
  // events holds their positions, not copies.
  static constexpr std::size_t kKeepDecodedBelow = sim::History::kWordsFrom;
  template <typename T>
  using Decoded = std::shared_ptr<const T>;
  // Whether decoded events are kept; decode_on_each_ask drops them and keeps none from now on
  // (what a long history does, for tests to compare).
  bool keeps_decoded() const {
    return keep_decoded_ && history != nullptr && history->size() < kKeepDecodedBelow;
  }
  void decode_on_each_ask();
  // Keeps `event`, which the fold decoded at trace event `seq`, when keeps_decoded().
  template <typename T>
  void keep_decoded(std::uint64_t seq, T&& event) {
    if (!keeps_decoded()) return;
    if (decoded_.size() < history->size()) decoded_.resize(history->size());
    decoded_[seq - 1] = std::make_shared<const std::decay_t<T>>(std::forward<T>(event));
  }

  // The request's first send (it carries a create's body); an empty send when it was never sent.
  Decoded<events::ClientSent> first_send(const ClientRequest& request) const;
  // What its client received for it, in order.
  Receipts receipts(const ClientRequest& request) const;
  // The request body a job was inserted with, as stored.
  std::string payload_of(const JobRecord& job) const;
  // The "failover" list of that body as this layer's own JSON parser reads it: its texts, in
  // order (empty when the body has none).
  std::vector<std::string> failover_of(const JobRecord& job) const;
  // An exchange's api.request and (REQUIRES: exchange.answered()) api.response.
  Decoded<events::ApiRequest> request_of(const ApiExchange& exchange) const;
  Decoded<events::ApiResponse> response_of(const ApiExchange& exchange) const;
  // A compare-and-swap as the store logged it, with the bytes it wrote.
  events::CommitCas cas_event(const At<Cas>& cas) const;
  // The provider.execute event of `execution`, and the output the provider produced in it.
  events::ProviderExecuted executed_event(const Execution& execution) const;
  std::string output_of(const Execution& execution) const {
    return executed_event(execution).output;
  }
  // The operator action (owner, key) a transition or an attempt insert carries; REQUIRES:
  // what.has_action.
  std::pair<std::string, std::string> action_of(const At<Transition>& step) const;
  // The attempt's outcome_reason after the step's write, read from the history ("" when empty or
  // not recorded).
  std::string reason_of(const At<Transition>& step) const;
  std::pair<std::string, std::string> action_of(const At<AttemptInserted>& inserted) const;
  // Send `send` (1-based) of timeline request `request`, as its client recorded it; null when
  // there is none.
  Decoded<events::ClientSent> client_send(std::int64_t request, std::int64_t send) const;
  // Whether `node` was up when the run ended (started, and not crashed since).
  bool up_at_end(const std::string& node) const;
  // Whether `node` crashed after trace event `seq`.
  bool crashed_after(const std::string& node, std::uint64_t seq) const;
  // Whether `node` was paused after trace event `seq`; whether it was paused when the run ended.
  bool paused_after(const std::string& node, std::uint64_t seq) const;
  bool paused_at_end(const std::string& node) const;
  // Whether `node` was paused at any point of trace events [from, to].
  bool paused_during(const std::string& node, std::uint64_t from, std::uint64_t to) const;
  // When the run ended (run.end), or nothing.
  std::optional<Instant> end_at() const;
  // Whether `provider`'s latest certification in the commit log passed throughout trace events
  // [from, to]: the last one before `from` passed and none in the span failed.
  bool certified_throughout(std::string_view provider, std::uint64_t from, std::uint64_t to) const;
  // The provider of `job`'s latest attempt as a node may have read it at some moment in trace
  // events [from, to]: the latest attempt inserted before `from`, then each one inserted during
  // the span, in order (the job's own provider when it has none).
  std::vector<sim::NodeName> latest_attempt_providers(const JobRecord& job, std::uint64_t from,
                                                      std::uint64_t to) const;
  // Whether the attempt's latest move to CANCELLED before trace event `seq` was an operator's.
  bool cancelled_by_operator(const AttemptRecord& attempt, std::uint64_t seq) const;

  // The cache of decoded events (see kKeepDecodedBelow), by trace position, and of receipts, by
  // the position of a request's first receipt. Read only through the accessors above.
  bool keep_decoded_ = true;
  mutable std::vector<std::shared_ptr<const void>> decoded_;
  mutable std::map<std::uint64_t, std::shared_ptr<const Receipts::List>> receipts_;
};

HistoryModel fold_history(const sim::History& history);

// A job row at the end of a run: the columns the commit log and expectations are judged against
// (the request's own columns, fixed at insert, are left in the store).
struct JobRow {
  JobStatus status = JobStatus::pending;
  std::int64_t version = 1;
  std::optional<AttemptId> completed_by;
  std::string result;

  static JobRow of(const Job& job);
};

// An attempt row at the end of a run, likewise.
struct AttemptRow {
  AttemptId id = 0;
  int attempt_no = 0;
  AttemptState state = AttemptState::starting;

  static AttemptRow of(const Attempt& attempt);
};

// The store's rows at the end of a run, read through the Store port: what expectations about
// final states and counts judge, and what the commit log must agree with.
struct StoreRows {
  std::map<std::int64_t, JobRow> jobs;
  std::map<std::int64_t, std::vector<AttemptRow>> attempts;  // by job, in attempt_no order
};

// 16 hex digits of FNV-1a 64 over JSON text as this checker layer's own parser re-serializes it
// (so key order and spacing do not matter); nothing when the text is not JSON.
std::optional<std::string> json_digest(const std::string& text);

}  // namespace onejob::check
