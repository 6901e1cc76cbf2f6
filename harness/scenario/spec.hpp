#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "system/domain/time.hpp"
#include "system/service/defects.hpp"

#include "harness/sim/sim_spec.hpp"

namespace onejob::scenario {

// Where a value came from in a scenario file (1-based, as editors show it).
struct SourcePos {
  int line = 0;
  int column = 0;
};

// Bad scenario input: unreadable, not YAML, or not a valid scenario. what() is
// "file:line:col: message".
class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(const std::string& file, SourcePos pos, const std::string& message);
  const std::string& file() const { return file_; }
  SourcePos pos() const { return pos_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  SourcePos pos_;
  std::string message_;
};

// The simulator's plain data (links, fault rates, providers, partition windows), by the names
// scenario code has always used.
using sim::FaultRate;
using sim::kFaultRates;
using sim::kLinks;
using sim::kPpmOne;
using sim::LatencySpec;
using sim::LinkKind;
using sim::LinkSpec;
using sim::NetworkSpec;
using sim::parse_provider_outcome;
using sim::Ppm;
using sim::ProviderCallSpec;
using sim::ProviderOutcome;
using sim::ProviderSpec;
using sim::to_string;

struct TopologySpec {
  int api_nodes = 1;
  int workers = 1;
  bool reconciler = true;
};

struct ScenarioPolicy {
  Duration attempt_deadline = std::chrono::seconds(30);
  Duration lease = std::chrono::seconds(60);
  Duration reconcile_period = std::chrono::seconds(10);
  Duration status_timeout = std::chrono::seconds(5);
  Duration worker_poll = std::chrono::milliseconds(100);
  Duration worker_idle_poll = std::chrono::seconds(5);
  int worker_capacity = 4;
  int attempt_limit = 5;
  // A client waits this long for a response, then resends the same request (same key).
  Duration client_timeout = std::chrono::seconds(5);
  int client_retries = 0;
  // The load balancer waits this long for an API node, then tries another (same key).
  Duration lb_timeout = std::chrono::seconds(3);
  int lb_retries = 0;
};

struct NodeFaultSpec {
  enum class Kind { crash, restart };  // named in kNodeFaultKinds
  Duration at{0};
  Kind kind = Kind::crash;
  std::string node;  // api-N, worker-N or reconciler
  SourcePos pos;
};

// A partition window on one link (sim::PartitionWindow, with the link and where it was written).
inline constexpr Named<NodeFaultSpec::Kind> kNodeFaultKinds[] = {
    {NodeFaultSpec::Kind::crash, "crash"},
    {NodeFaultSpec::Kind::restart, "restart"},
};
static_assert(names_cover(kNodeFaultKinds));

struct PartitionSpec {
  using Direction = sim::PartitionDirection;
  LinkKind link = LinkKind::node_store;
  std::vector<std::string> nodes;  // the nodes cut off on that link
  Direction direction = Direction::both;
  Duration from{0};
  Duration until{0};
  SourcePos pos;

  sim::PartitionWindow window() const { return {nodes, direction, from, until}; }
};

// A node freezes from `from` to `until` without losing anything (a long GC pause, a stopped VM)
// and then goes on as the same incarnation: its timers, replies and requests wait, and it acts
// on what it knew before the pause (the zombie writer that fencing is for).
struct PauseSpec {
  std::string node;  // api-N, worker-N or reconciler
  Duration from{0};
  Duration until{0};
  SourcePos pos;
};

struct ClientSpec {
  std::string name;
  std::string owner;  // the principal the client authenticates as
};

// POST /jobs from a client. The body is JSON text; `key` absent means no Idempotency-Key header.
struct CreateJobAction {
  std::string client;
  std::optional<std::string> key;
  std::string body;
};

// An optional string that costs one pointer when unset (std::optional<std::string> costs 40
// bytes): most timeline entries leave their action's options unset, and a load expands to
// hundreds of thousands of entries.
class OptionalText {
 public:
  OptionalText() = default;
  OptionalText(std::nullopt_t) {}  // NOLINT: as std::optional
  OptionalText(std::string text)   // NOLINT: as std::optional
      : text_(std::make_unique<std::string>(std::move(text))) {}
  OptionalText(const char* text) : OptionalText(std::string(text)) {}  // NOLINT
  OptionalText(const OptionalText& other)
      : text_(other.text_ ? std::make_unique<std::string>(*other.text_) : nullptr) {}
  OptionalText(OptionalText&&) noexcept = default;
  OptionalText& operator=(const OptionalText& other) {
    if (this != &other) text_ = other.text_ ? std::make_unique<std::string>(*other.text_) : nullptr;
    return *this;
  }
  OptionalText& operator=(OptionalText&&) noexcept = default;
  ~OptionalText() = default;

  explicit operator bool() const { return text_ != nullptr; }
  bool has_value() const { return text_ != nullptr; }
  // REQUIRES: has_value(), as std::optional.
  const std::string& operator*() const { return *text_; }
  std::string& operator*() { return *text_; }
  const std::string* operator->() const { return text_.get(); }
  std::string value_or(std::string fallback) const { return text_ ? *text_ : std::move(fallback); }
  void reset() { text_.reset(); }
  friend bool operator==(const OptionalText& a, const OptionalText& b) {
    return a.text_ && b.text_ ? *a.text_ == *b.text_ : a.text_ == b.text_;
  }

 private:
  std::unique_ptr<std::string> text_;
};

// One step of the timeline. Besides creating jobs, a client can act on the job an earlier
// create_job request produced (found through that request's response):
//   get_job   GET /jobs/{id} (for another owner: the probe must look like a missing job); or,
//             probing the routes, another `method` and `path` (`{job}` in it stands for the id)
//   retry     POST /jobs/{id}/attempts, optionally naming the provider
//   cancel    POST /attempts/{id}/cancel of the job's attempt number `attempt_no` (an operator)
struct TimelineEntry {
  enum class Kind { create_job, get_job, retry, cancel };  // named in kTimelineActions
  Kind kind = Kind::create_job;
  Duration at{0};
  std::string client;
  CreateJobAction create_job;  // for create_job
  int target_request = 0;      // for the others: the create_job request whose job is acted on
  int attempt_no = 0;          // for cancel
  OptionalText provider;       // for retry
  OptionalText retry_body;     // for retry: the body's bytes as sent (not with provider)
  OptionalText method;         // for get_job: another method than GET
  OptionalText path;           // for get_job: another path, `{job}` for the job's id
  // For retry and cancel: the action's Idempotency-Key (default "op-r<request>"); several actions
  // may share one on purpose. `keyless` (key: null in a file): sent with no Idempotency-Key.
  OptionalText action_key;
  bool keyless = false;
  int request = 0;  // 1-based number of the request this entry sends, in file order
  SourcePos pos;
};

// The actions' names: keys of a timeline entry in scenario files, `action` of client.send.
inline constexpr Named<TimelineEntry::Kind> kTimelineActions[] = {
    {TimelineEntry::Kind::create_job, "create_job"},
    {TimelineEntry::Kind::get_job, "get_job"},
    {TimelineEntry::Kind::retry, "retry"},
    {TimelineEntry::Kind::cancel, "cancel"},
};
static_assert(names_cover(kTimelineActions));

// A `load:` statement's requests, kept as the generator they come from: each is made when asked
// for (request_entry), so a load of 100,000 jobs holds its arrivals, 16 bytes each, rather than
// 100,000 timeline entries. Its requests follow the written timeline's.
inline constexpr std::string_view kLoadClientPrefix = "load-";
struct GeneratedLoad {
  struct Arrival {
    Duration at;
    std::uint64_t job;  // n, from 0: a double click repeats its job's n
  };
  std::vector<Arrival> arrivals;    // in time order; at one instant, in job order
  int clients = 1;                  // job n is sent by client load-(n % clients + 1)
  std::optional<std::string> key;   // "{n}" not yet replaced; none: creates without a key
  std::vector<std::string> bodies;  // JSON text, "{n}" not yet replaced; job n uses n % size
  SourcePos pos;                    // of the `load:` statement
};

struct ResponseExpectation {
  int request = 0;
  std::vector<int> statuses;  // the response status must be one of these
  SourcePos pos;
};

struct SameJobExpectation {
  std::vector<int> requests;  // these responses all carry one and the same job id
  SourcePos pos;
};

// The end state of the job a create_job request produced, judged from the history.
struct FinalJobExpectation {
  int request = 0;
  // Any of: succeeded | failed | blocked (on an UNKNOWN attempt) | awaiting_operator (its latest
  // attempt was cancelled and nobody retried) | pending (anything else). Empty: not checked.
  std::vector<std::string> statuses;
  std::optional<int> completed_by;                   // the winning attempt's number
  std::optional<std::vector<std::string>> attempts;  // every attempt's final state, in order
  SourcePos pos;
};

struct CountExpectation {
  std::int64_t value = 0;
  SourcePos pos;
};

// A coverage mark (harness/check/marks.hpp) the run must reach at least once.
struct MarkExpectation {
  std::string name;  // the mark's name
  SourcePos pos;
};

struct Expectations {
  std::vector<ResponseExpectation> responses;
  std::vector<SameJobExpectation> same_job_id;
  std::optional<std::int64_t> jobs;  // number of jobs created during the run
  SourcePos jobs_pos;
  std::vector<FinalJobExpectation> final_jobs;
  std::optional<CountExpectation> attempts;    // attempts created
  std::optional<CountExpectation> discarded;   // results that lost the compare-and-swap
  std::optional<CountExpectation> executions;  // provider executions (side effects)
  std::vector<MarkExpectation> marks;          // rare situations the run must reach
};

struct ScenarioSpec {
  std::string file;
  std::string name;
  SourcePos name_pos;
  std::string description;
  std::uint64_t seed = 0;
  std::optional<Duration> duration;  // when the run ends; default: last action + 10 minutes
  // A quiet phase after the faults: it starts at `duration` (default: last action + 1 minute),
  // lasts this long, and the run ends with it. Faults heal, crashed nodes restart, clients retry
  // until answered; availability is judged after it.
  std::optional<Duration> quiet;
  bool swarm = false;  // the seed switches fault kinds on and picks their rates
  // What else shapes the run, so that a file can carry everything a fuzz campaign ran a case
  // with: the named defects the system runs with (on top of any --defect flags), and whether the
  // run ends once nothing is left to happen (as a campaign's cases do) rather than at its end.
  Defects defects;
  bool stop_when_quiescent = false;
  TopologySpec topology;
  ScenarioPolicy policy;
  std::vector<ProviderSpec> providers;
  std::vector<ClientSpec> clients;
  NetworkSpec network;
  std::vector<NodeFaultSpec> node_faults;
  std::vector<PartitionSpec> partitions;
  std::vector<PauseSpec> pauses;
  std::vector<TimelineEntry> timeline;  // as written; a load's requests follow (GeneratedLoad)
  GeneratedLoad load;
  Expectations expect;
  std::vector<std::string> invariants;  // ids of the invariant checkers that apply
  // `requires`: the safety clauses this scenario's story is about (declared, for the promise
  // table; every clause of the checked rules judges every run regardless).
  std::vector<std::string> required;
};

// ---- the requests a scenario sends ------------------------------------------------------------

// The Idempotency-Key an operator action (retry, cancel) is sent under: its own `action_key`, else
// "op-r<request>" (the same on every resend); none when it is keyless (key: null).
std::optional<std::string> action_key_sent(const TimelineEntry& entry);

// Every request the scenario sends: its written timeline's, then its load's.
std::size_t request_count(const ScenarioSpec& spec);
// Request `number` (1-based) as a timeline entry: the written one, or the load's made in `room`.
// REQUIRES: 1 <= number <= request_count(spec).
const TimelineEntry& request_entry(const ScenarioSpec& spec, std::size_t number,
                                   TimelineEntry& room);
// Its instant and its client, without making the rest.
Duration request_at(const ScenarioSpec& spec, std::size_t number);
std::string request_client(const ScenarioSpec& spec, std::size_t number);

// ---- the topology's node names ----------------------------------------------------------------

using sim::kApiNodePrefix;  // the names themselves: harness/sim/sim_spec.hpp
using sim::kReconcilerNode;
using sim::kWorkerNodePrefix;
std::string api_node(int number);     // api-N, 1-based
std::string worker_node(int number);  // worker-N, 1-based

// api-1..api-N, worker-1..worker-M, then reconciler when the topology has one.
std::vector<std::string> topology_nodes(const TopologySpec& topology);

// The nodes a partition can cut off on `link`: its endpoints, except the single load balancer
// and the single store. REQUIRES: spec.topology, spec.clients and spec.providers set.
std::vector<std::string> nodes_on(const ScenarioSpec& spec, LinkKind link);

// ---- a run's span -------------------------------------------------------------------------

// The longest any duration or instant of a scenario may be: all time arithmetic stays far from
// overflow.
constexpr Duration kMaxSpan = std::chrono::hours(24 * 30);
// Without a quiet phase, a run goes on this long after its last action.
constexpr Duration kSettleTime = std::chrono::minutes(10);
// With one, the faults go on this long after the last action before they heal.
constexpr Duration kStormSettleTime = std::chrono::minutes(1);

// The last instant the scenario names: a timeline step, a node fault, the end of a partition
// or a pause.
Duration last_action(const ScenarioSpec& spec);
// When the faults are over: the last action or, with a quiet phase, when it begins.
Duration faults_end(const ScenarioSpec& spec);
// When the run ends at the latest (a run that stops once quiescent may end earlier).
Duration run_end(const ScenarioSpec& spec);

}  // namespace onejob::scenario
