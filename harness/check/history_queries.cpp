#include "harness/check/history.hpp"

// The history model's queries: what rules ask of a folded history (jobs by key, an attempt's
// state at a position, the events behind an entry, node lives). The fold is in history.cpp.
#include <algorithm>
#include <limits>

#include "system/domain/check.hpp"

#include "harness/check/event_switch.hpp"
#include "harness/check/json_value.hpp"

namespace onejob::check {
AttemptState AttemptRecord::state_before(std::uint64_t seq) const {
  AttemptState before = AttemptState::starting;
  for (const auto& step : steps) {
    if (step.seq >= seq) break;
    before = step.what.to;
  }
  return before;
}

const At<Transition>* AttemptRecord::claim_by(std::string_view worker) const {
  for (const auto& step : steps) {
    if (step.what.claim && step.what.lease_owner == worker) return &step;
  }
  return nullptr;
}

const At<Cas>* JobRecord::won() const {
  for (const auto& attempt_cas : cas) {
    if (attempt_cas.what.won) return &attempt_cas;
  }
  return nullptr;
}

std::string_view to_string(JobEnd end) {
  static constexpr Named<JobEnd> kNames[] = {
      {JobEnd::succeeded, "succeeded"}, {JobEnd::failed, "failed"},
      {JobEnd::blocked, "blocked"},     {JobEnd::awaiting_operator, "awaiting_operator"},
      {JobEnd::running, "running"},     {JobEnd::stuck, "stuck"},
  };
  static_assert(names_cover(kNames));
  return name_of(kNames, end);
}

const JobRecord* HistoryModel::job_for_key(const std::string& owner, const std::string& key,
                                           std::uint64_t seq) const {
  auto it = jobs_by_key.find({owner, key});
  if (it == jobs_by_key.end()) return nullptr;
  ONEJOB_ASSERT(!it->second.empty(), "a key listed with no job");
  const JobRecord& first = jobs.at(it->second.front());
  return first.inserted.seq < seq ? &first : nullptr;
}

const JobRecord* HistoryModel::job(std::int64_t id) const {
  auto it = jobs.find(id);
  return it == jobs.end() ? nullptr : &it->second;
}

const AttemptRecord* HistoryModel::attempt(std::int64_t id) const {
  auto it = attempts.find(id);
  return it == attempts.end() ? nullptr : &it->second;
}

const Execution* HistoryModel::execution_of(std::int64_t attempt_id) const {
  const auto* record = attempt(attempt_id);
  if (record == nullptr) return nullptr;
  auto found = first_execution.find(record->inserted.what.provider_key);
  return found == first_execution.end() ? nullptr : &executions[found->second];
}

JobEnd HistoryModel::end_of(const JobRecord& job) const {
  if (job.won() != nullptr) return JobEnd::succeeded;
  // A failed job becomes pending again when an attempt is inserted after its failure.
  const AttemptRecord* latest = job.attempts.empty() ? nullptr : attempt(job.attempts.back());
  if (!job.failures.empty() &&
      (latest == nullptr || latest->inserted.seq < job.failures.back().seq)) {
    return JobEnd::failed;
  }
  for (auto id : job.attempts) {
    const auto state = attempts.at(id).state;
    if (state == AttemptState::unknown) return JobEnd::blocked;
    if (is_live_state(state)) return JobEnd::running;
  }
  if (latest != nullptr && latest->state == AttemptState::cancelled &&
      cancelled_by_operator(*latest, std::numeric_limits<std::uint64_t>::max())) {
    return JobEnd::awaiting_operator;
  }
  return JobEnd::stuck;
}

namespace {

// Trace event `seq` of `history`, read in place into this thread's one scratch event (its room
// reused): valid until the next call.
const sim::PackedEvent& packed_at(const sim::History& history, std::uint64_t seq) {
  ONEJOB_ASSERT(seq >= 1 && seq <= history.size(), "a model's position outside its history");
  thread_local sim::PackedEvent scratch;
  history.read(seq - 1, scratch);
  return scratch;
}

// Trace event `seq` of `history` as a T, which it must be.
template <events::EventType T>
T typed_at(const sim::History& history, std::uint64_t seq) {
  auto typed = from_packed<T>(packed_at(history, seq));
  ONEJOB_ASSERT(typed.has_value(), "trace event " + std::to_string(seq) + " is no " +
                                       std::string(T::kind) + " with every field");
  return std::move(*typed);
}

// Trace event `seq` of the model's history as a T, decoded once while the model keeps decoded
// events, else on each ask.
template <events::EventType T>
HistoryModel::Decoded<T> decoded_at(const HistoryModel& model, std::uint64_t seq) {
  ONEJOB_ASSERT(model.history != nullptr, "a decoded event outside a history");
  if (!model.keeps_decoded()) return std::make_shared<const T>(typed_at<T>(*model.history, seq));
  ONEJOB_ASSERT(seq >= 1 && seq <= model.history->size(), "a model's position outside its history");
  ONEJOB_ASSERT(&model.history->kind(seq - 1) == &events::kind_name<T>(),
                "trace event " + std::to_string(seq) + " is no " + std::string(T::kind));
  if (model.decoded_.size() < model.history->size()) model.decoded_.resize(model.history->size());
  auto& slot = model.decoded_[seq - 1];
  if (!slot) slot = std::make_shared<const T>(typed_at<T>(*model.history, seq));
  return std::static_pointer_cast<const T>(slot);
}

}  // namespace

void HistoryModel::decode_on_each_ask() {
  keep_decoded_ = false;
  decoded_.clear();
  receipts_.clear();
}

HistoryModel::Decoded<events::ApiRequest> HistoryModel::request_of(
    const ApiExchange& exchange) const {
  return decoded_at<events::ApiRequest>(*this, exchange.request_seq);
}

HistoryModel::Decoded<events::ApiResponse> HistoryModel::response_of(
    const ApiExchange& exchange) const {
  ONEJOB_ASSERT(exchange.answered(), "the response of an exchange never answered");
  return decoded_at<events::ApiResponse>(*this, exchange.response_seq);
}

HistoryModel::Decoded<events::ClientSent> HistoryModel::first_send(
    const ClientRequest& request) const {
  if (request.send_seqs.empty() || history == nullptr) {
    static const auto never_sent = std::make_shared<const events::ClientSent>();
    return never_sent;
  }
  return decoded_at<events::ClientSent>(*this, request.send_seqs[0]);
}

Receipts HistoryModel::receipts(const ClientRequest& request) const {
  static const auto none = std::make_shared<const Receipts::List>();
  if (history == nullptr || request.received_seqs.empty()) return Receipts(none);
  const bool keep = keeps_decoded();
  if (keep) {
    if (auto kept = receipts_.find(request.received_seqs[0]); kept != receipts_.end()) {
      return Receipts(kept->second);
    }
  }
  auto list = std::make_shared<Receipts::List>();
  list->reserve(request.received_seqs.size());
  for (const auto seq : request.received_seqs) {
    // A short history's are copied from the events kept; a long one's decoded straight in.
    list->push_back({keep ? *decoded_at<events::ClientReceived>(*this, seq)
                          : typed_at<events::ClientReceived>(*history, seq),
                     seq, history->instant(seq - 1)});
  }
  if (keep) receipts_.emplace(request.received_seqs[0], list);
  return Receipts(std::move(list));
}

bool HistoryModel::certified_throughout(std::string_view provider, std::uint64_t from,
                                        std::uint64_t to) const {
  bool passed = false;
  for (const auto& certification : certifications) {
    if (certification.seq > to) break;
    if (certification.what.provider != provider) continue;
    if (certification.seq < from) {
      passed = certification.what.passed;
    } else if (!certification.what.passed) {
      return false;
    }
  }
  return passed;
}

events::CommitCas HistoryModel::cas_event(const At<Cas>& cas) const {
  ONEJOB_ASSERT(history != nullptr, "a compare-and-swap outside a history");
  return typed_at<events::CommitCas>(*history, cas.seq);
}

events::ProviderExecuted HistoryModel::executed_event(const Execution& execution) const {
  ONEJOB_ASSERT(history != nullptr, "an execution outside a history");
  return typed_at<events::ProviderExecuted>(*history, execution.executed.seq);
}

std::string HistoryModel::payload_of(const JobRecord& job) const {
  ONEJOB_ASSERT(history != nullptr, "a job outside a history");
  return typed_at<events::CommitJobInserted>(*history, job.inserted.seq).payload;
}

std::vector<sim::NodeName> HistoryModel::latest_attempt_providers(const JobRecord& job,
                                                                  std::uint64_t from,
                                                                  std::uint64_t to) const {
  std::vector<sim::NodeName> out;
  for (const auto id : job.attempts) {
    const AttemptRecord* found = attempt(id);
    if (found == nullptr || found->inserted.seq > to) break;
    if (found->inserted.seq < from) out.clear();
    out.push_back(found->inserted.what.provider);
  }
  if (out.empty()) out.push_back(job.inserted.what.provider);
  return out;
}

std::vector<std::string> HistoryModel::failover_of(const JobRecord& job) const {
  std::vector<std::string> failover;
  const JsonValue held = json_value(payload_of(job));
  const nlohmann::json& body = *held;
  if (body.is_object() && body.contains("failover") && body["failover"].is_array()) {
    for (const auto& provider : body["failover"]) {
      if (provider.is_string()) failover.push_back(provider.get<std::string>());
    }
  }
  return failover;
}

namespace {

// The operator action (owner, key) logged with the commit a model entry keeps.
template <events::EventType Logged, typename Kept>
std::pair<std::string, std::string> action_at(const sim::History* history, const At<Kept>& kept) {
  ONEJOB_ASSERT(kept.what.has_action && history != nullptr, "the action of a commit without one");
  const auto logged = typed_at<Logged>(*history, kept.seq);
  ONEJOB_ASSERT(logged.action_key.has_value(), "a commit's action key gone from its history");
  return {logged.action_owner.value_or(""), *logged.action_key};
}

}  // namespace

std::pair<std::string, std::string> HistoryModel::action_of(
    const At<AttemptInserted>& inserted) const {
  return action_at<events::CommitAttemptInserted>(history, inserted);
}

std::pair<std::string, std::string> HistoryModel::action_of(const At<Transition>& step) const {
  return action_at<events::CommitAttemptTransition>(history, step);
}

std::string HistoryModel::reason_of(const At<Transition>& step) const {
  if (history == nullptr) return {};
  return typed_at<events::CommitAttemptTransition>(*history, step.seq).reason.value_or("");
}

HistoryModel::Decoded<events::ClientSent> HistoryModel::client_send(std::int64_t request,
                                                                    std::int64_t send) const {
  const auto found = requests.find(request);
  if (found == requests.end() || history == nullptr || send < 1 ||
      static_cast<std::size_t>(send) > found->second.send_seqs.size()) {
    return nullptr;
  }
  return decoded_at<events::ClientSent>(
      *this, found->second.send_seqs[static_cast<std::size_t>(send) - 1]);
}

bool HistoryModel::up_at_end(const std::string& node) const {
  auto life = node_life.find(node);
  return life != node_life.end() && !life->second.empty() && life->second.back().what;
}

bool HistoryModel::crashed_after(const std::string& node, std::uint64_t seq) const {
  auto life = node_life.find(node);
  if (life == node_life.end()) return false;
  return std::ranges::any_of(
      life->second, [seq](const At<bool>& change) { return !change.what && change.seq > seq; });
}

bool HistoryModel::paused_after(const std::string& node, std::uint64_t seq) const {
  auto pauses = node_pauses.find(node);
  return pauses != node_pauses.end() &&
         std::ranges::any_of(pauses->second, [seq](const At<bool>& change) {
           return change.what && change.seq > seq;
         });
}

bool HistoryModel::paused_during(const std::string& node, std::uint64_t from,
                                 std::uint64_t to) const {
  const auto pauses = node_pauses.find(node);
  if (pauses == node_pauses.end()) return false;
  bool paused = false;  // as it stood when `from` came
  for (const auto& change : pauses->second) {
    if (change.seq > to) break;
    if (change.seq >= from && change.what) return true;
    paused = change.what;
  }
  return paused;
}

bool HistoryModel::paused_at_end(const std::string& node) const {
  auto pauses = node_pauses.find(node);
  return pauses != node_pauses.end() && !pauses->second.empty() && pauses->second.back().what;
}

std::optional<Instant> HistoryModel::end_at() const {
  if (!end_seq || history == nullptr) return std::nullopt;
  return history->instant(*end_seq - 1);
}

bool HistoryModel::cancelled_by_operator(const AttemptRecord& attempt, std::uint64_t seq) const {
  for (auto step = attempt.steps.rbegin(); step != attempt.steps.rend(); ++step) {
    if (step->seq >= seq || step->what.to != AttemptState::cancelled) continue;
    return operator_cancels.contains(step->seq);
  }
  return false;
}

}  // namespace onejob::check
