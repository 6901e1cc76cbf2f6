// I13's judgement of what an answer claims about a job, against the store's commit log while the
// API node handled the request: a refusal's reason (refusal_untrue) and a job read
// (read_misstates). The clauses are listed in i13_api_contract.cpp, which calls these.
#include "harness/check/i13_truth.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <string>

#include "harness/check/api_routes.hpp"
#include "harness/check/i13_bodies.hpp"
#include "harness/sim/trace.hpp"

namespace onejob::check::i13 {
namespace {

// Whether `attempt` was in a live state at any point from trace event `from` to `to`.
bool live_during(const AttemptRecord& attempt, std::uint64_t from, std::uint64_t to) {
  if (attempt.inserted.seq > to) return false;
  if (is_live_state(attempt.state_before(from))) return true;
  return std::ranges::any_of(attempt.steps, [&](const auto& step) {
    return step.seq >= from && step.seq <= to && is_live_state(step.what.to);
  });
}

// Whether `attempt` was out of a live state at any point from `from` to `to`.
bool idle_during(const AttemptRecord& attempt, std::uint64_t from, std::uint64_t to) {
  if (!is_live_state(attempt.state_before(from))) return true;
  return std::ranges::any_of(attempt.steps, [&](const auto& step) {
    return step.seq >= from && step.seq <= to && !is_live_state(step.what.to);
  });
}

// The providers a retry of `job` sent `sent` may have asked for, as the exchange [from, to] saw
// the job: its body's, or with no body the job's latest attempt's (the one before the request,
// or one inserted while it was handled). Empty when the body names none (a 400 was due).
std::vector<sim::NodeName> retry_providers(const HistoryModel& model, const JobRecord& job,
                                           const events::ClientSent& sent, std::uint64_t from,
                                           std::uint64_t to) {
  if (sent.body && !sent.body->empty()) {
    const auto named = retry_body_provider(*sent.body);
    if (!named) return {};
    return {sim::NodeName(*named)};
  }
  return model.latest_attempt_providers(job, from, to);
}

// What a job read's "blocked" should have been, judged over the exchange [from, to]: true or false
// when the job's UNKNOWN attempts say so throughout, nothing when they changed during it.
std::optional<bool> blocked_during(const HistoryModel& model, std::int64_t job_id,
                                   std::uint64_t from, std::uint64_t to) {
  const JobRecord* job = model.job(job_id);
  if (job == nullptr) return std::nullopt;
  bool throughout = false;
  bool ever = false;
  for (const auto id : job->attempts) {
    const AttemptRecord& attempt = model.attempts.at(id);
    if (attempt.inserted.seq > to) continue;
    const bool at_start =
        attempt.inserted.seq < from && attempt.state_before(from) == AttemptState::unknown;
    bool left = false;
    bool entered = false;
    for (const auto& step : attempt.steps) {
      if (step.seq < from || step.seq > to) continue;
      if (step.what.to == AttemptState::unknown) entered = true;
      if (step.what.from == AttemptState::unknown) left = true;
    }
    throughout = throughout || (at_start && !left);
    ever = ever || at_start || entered;
  }
  if (throughout) return true;
  if (!ever) return false;
  return std::nullopt;
}

// Whether `digest` (hex FNV-1a) is the digest of the outcome_reason `attempt` held at some point
// of the exchange [from, to], by the commit log: none ("") from its insert, then each write's.
bool reason_held(const HistoryModel& model, const AttemptRecord& attempt, const std::string& digest,
                 std::uint64_t from, std::uint64_t to) {
  const auto matches = [&digest](const std::string& reason) {
    return sim::fnv1a64_hex(reason) == digest;
  };
  const At<Transition>* before = nullptr;  // the write whose reason the read arrived to
  for (const auto& step : attempt.steps) {
    if (step.seq > to) break;
    if (step.seq < from) {
      before = &step;
    } else if (matches(model.reason_of(step))) {
      return true;
    }
  }
  return matches(before != nullptr ? model.reason_of(*before) : std::string());
}

// Whether `digest` (hex FNV-1a) is that of a failure_reason the store wrote for `job` by trace
// event `to` (by the commit log); true when no failure by then recorded its reason.
bool failure_reason_written(const JobRecord& job, const std::string& digest, std::uint64_t to) {
  bool recorded = false;
  for (const auto& failure : job.failures) {
    if (failure.seq > to || !failure.what.reason) continue;
    if (sim::fnv1a64_hex(*failure.what.reason) == digest) return true;
    recorded = true;
  }
  return !recorded;
}

// What a job read's attempts list gets wrong, judged over the exchange [from, to] ("" when
// nothing): it lists every attempt of the job inserted before the API node received the read,
// and no other attempt than the job's inserted by its answer, each once, in the order they were
// made (attempt_no ascending), each in a state the attempt was in at some point of the exchange.
std::string attempts_misstated(const HistoryModel& model, std::int64_t job_id,
                               const std::string& shown, std::uint64_t from, std::uint64_t to) {
  const JobRecord* job = model.job(job_id);
  if (job == nullptr) return {};
  std::set<std::int64_t> listed;
  const AttemptRecord* previous = nullptr;  // the entry before, in the list
  for (std::size_t at = 0; at < shown.size();) {
    const auto comma = std::min(shown.find(',', at), shown.size());
    const std::string entry = shown.substr(at, comma - at);
    at = comma + 1;
    const auto colon = entry.find(':');
    const std::string_view digits(entry.data(), colon == std::string::npos ? 0 : colon);
    std::int64_t id = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    if (digits.empty() || error != std::errc{} || end != digits.data() + digits.size()) {
      return "lists an attempt without an attempt id and a state (" + entry + ")";
    }
    // STATE, then (as the client records them) attempt_no:origin:provider.
    const std::string rest = entry.substr(colon + 1);
    const auto state_end = rest.find(':');
    const std::string state = rest.substr(0, state_end);
    if (!listed.insert(id).second) return "lists " + attempt_ref(id) + " twice";
    const AttemptRecord* attempt = model.attempt(id);
    if (attempt == nullptr || attempt->inserted.what.job_id != job_id ||
        attempt->inserted.seq > to) {
      return "lists " + attempt_ref(id) + ", which is not one of its attempts";
    }
    if (previous != nullptr &&
        previous->inserted.what.attempt_no > attempt->inserted.what.attempt_no) {
      return "lists " + attempt_ref(id) + " after " + attempt_ref(previous->id()) +
             ", which was made after it";
    }
    previous = attempt;
    if (state_end != std::string::npos) {  // a history that recorded the entry's other fields
      const auto& inserted = attempt->inserted.what;
      const std::string truth = std::to_string(inserted.attempt_no) + ':' +
                                std::string(contract_word(inserted.origin)) + ':' +
                                inserted.provider.str();
      std::string fields = rest.substr(state_end + 1);
      // attempt_no:origin:provider, then (as the client records it) the reason's digest.
      std::optional<std::string> reason;
      if (std::ranges::count(fields, ':') == 3) {
        reason = fields.substr(fields.rfind(':') + 1);
        fields.resize(fields.rfind(':'));
      }
      if (fields != truth) {
        return "shows " + attempt_ref(id) + " as attempt_no:origin:provider " + fields +
               ", but the store inserted it as " + truth;
      }
      if (reason && !reason_held(model, *attempt, *reason, from, to)) {
        return "shows " + attempt_ref(id) + " with a reason (digest " + *reason +
               ") it did not have during the read";
      }
    }
    // Its state when the read arrived (STARTING if inserted since), or any it moved to during it.
    const bool before = attempt->inserted.seq < from;
    bool held =
        state == contract_word(before ? attempt->state_before(from) : AttemptState::starting);
    for (const auto& step : attempt->steps) {
      if (step.seq >= from && step.seq <= to && state == contract_word(step.what.to)) held = true;
    }
    if (!held) return "shows " + attempt_ref(id) + " " + state + ", a state it was not in";
  }
  for (const auto id : job->attempts) {
    if (model.attempts.at(id).inserted.seq < from && !listed.contains(id)) {
      return "leaves out " + attempt_ref(id) + ", inserted before the read";
    }
  }
  return {};
}

// The statuses the job had at some point of the exchange [from, to], from the commit log alone:
// pending from its insert, failed from a commit.job_failed, pending again from an attempt inserted
// after that, succeeded from its winning compare-and-swap.
std::set<std::string> statuses_during(const HistoryModel& model, const JobRecord& job,
                                      std::uint64_t from, std::uint64_t to) {
  std::vector<std::pair<std::uint64_t, std::string_view>> changes{{job.inserted.seq, "pending"}};
  for (const auto& failure : job.failures) changes.emplace_back(failure.seq, "failed");
  for (const auto id : job.attempts) {
    const AttemptRecord* attempt = model.attempt(id);
    if (attempt != nullptr) changes.emplace_back(attempt->inserted.seq, "pending");
  }
  if (const auto* won = job.won()) changes.emplace_back(won->seq, "succeeded");
  std::ranges::sort(changes);
  std::set<std::string> out;
  std::string_view before;
  for (const auto& [seq, status] : changes) {
    if (seq < from) {
      before = status;
    } else if (seq <= to) {
      out.emplace(status);
    }
  }
  if (!before.empty()) out.emplace(before);
  return out;
}

// Whether the job was at `version` at some point of the exchange [from, to], from the commit log
// alone: a job is created at version 1, and only its winning compare-and-swap raises it, by one
// (DESIGN.md: compare-and-swap completion).
bool version_held(const JobRecord& job, std::int64_t version, std::uint64_t from,
                  std::uint64_t to) {
  const auto* won = job.won();
  const bool one = won == nullptr || won->seq > from;
  const bool two = won != nullptr && won->seq <= to;
  return (version == 1 && one) || (version == 2 && two);
}

}  // namespace

// What a refusal's reason claims that was untrue while the API node handled it ("" when nothing):
// judged against the commit log over the exchange.
std::string untrue_refusal(const HistoryModel& model, const ApiExchange& exchange,
                           const events::ApiResponse& answer) {
  const std::uint64_t from = exchange.request_seq;
  const std::uint64_t to = exchange.response_seq;
  if (answer.status == 422 && answer.error == "provider_not_certified" &&
      exchange.route.str() == "create_attempt" && exchange.client_request != 0) {
    // The provider the retry asked for, by the client's own body and the job's attempts.
    const auto id = id_in_path(model.request_of(exchange)->path, "/jobs/");
    const JobRecord* job = model.job(id);
    const auto sent = model.client_send(exchange.client_request, exchange.client_send);
    if (job == nullptr || !sent) return {};
    const auto providers = retry_providers(model, *job, *sent, from, to);
    if (!providers.empty() && std::ranges::all_of(providers, [&](sim::NodeName provider) {
          return model.certified_throughout(provider.str(), from, to);
        })) {
      return "refused a retry of " + job_ref(id) + " on " + providers.front().str() +
             " as not certified, but its latest certification passed throughout";
    }
    return {};
  }
  if (answer.status != 409 || !answer.error) return {};
  const AttemptRecord* attempt = answer.attempt_id ? model.attempt(*answer.attempt_id) : nullptr;
  const auto& route = exchange.route.str();
  if (route == "cancel_attempt" && *answer.error == "attempt_not_live") {
    // The attempt the request's path names (/attempts/{id}/cancel), whatever the answer says.
    const AttemptRecord* target =
        model.attempt(id_in_path(model.request_of(exchange)->path, "/attempts/"));
    if (target != nullptr && !idle_during(*target, from, to)) {
      return "refused to cancel " + attempt_ref(target->id()) + " as not live, but it was " +
             std::string(to_string(target->state_before(from))) + " throughout";
    }
  }
  if (route == "create_attempt" && *answer.error == "attempt_in_flight" &&
      (attempt == nullptr || !live_during(*attempt, from, to))) {
    return "refused a retry because " + attempt_ref(answer.attempt_id.value_or(0)) +
           " was in flight, but it was not live then";
  }
  if (route == "create_attempt" && *answer.error == "job_completed") {
    // The job the request's path names (/jobs/{id}/attempts): the answer itself names none.
    const auto id = id_in_path(model.request_of(exchange)->path, "/jobs/");
    const JobRecord* job = model.job(id);
    const auto* won = job != nullptr ? job->won() : nullptr;
    if (job != nullptr && (won == nullptr || won->seq > to)) {
      return "refused a retry of " + job_ref(id) +
             " as completed, but the store had not completed it";
    }
  }
  return {};
}

namespace {

// What a job read shows of the request the job was created with, against the row the commit log
// inserted: its operation and provider columns, and the failover list of the body it stored
// (HistoryModel::failover_of; "" when the read agrees).
std::string request_misstated(const HistoryModel& model, const JobRecord& job,
                              const events::ClientReceived& got) {
  const auto quoted = [](const std::optional<std::string>& text) {
    return text ? "\"" + *text + "\"" : std::string("none");
  };
  const auto& inserted = job.inserted.what;
  if (got.shown_operation != inserted.operation.str()) {
    return "with operation " + quoted(got.shown_operation) + ", but it was created for \"" +
           inserted.operation.str() + "\"";
  }
  if (got.shown_provider != inserted.provider.str()) {
    return "with provider " + quoted(got.shown_provider) + ", but it was created for \"" +
           inserted.provider.str() + "\"";
  }
  std::string failover;
  for (const auto& provider : model.failover_of(job)) {
    failover += (failover.empty() ? "" : ",") + provider;
  }
  if (got.shown_failover != failover) {
    return "with failover list " + quoted(got.shown_failover) + ", but it was created with \"" +
           failover + "\"";
  }
  return {};
}

}  // namespace

// A job read shows the job its path names (its job_id), completed_by (an attempt_id or null),
// blocked (true or false), a result exactly when it shows the job succeeded, and a failure reason
// (a non-empty text) exactly when it shows it failed (as the client read the body).
std::string read_shape(const events::ClientSent& sent, const Route& route,
                       const events::ClientReceived& got) {
  if (sent.action != "get_job" || got.status != 200 || !got.shown_status) return {};
  if (route.fit == RouteFit::resource && route.name == "get_job" && got.job_id != route.id) {
    return "a read of " + job_ref(route.id) + " that shows " +
           (got.job_id ? job_ref(*got.job_id) : std::string("no job_id"));
  }
  if (!got.shown_winner && !got.winner_null) {
    return "a read without completed_by (neither a winner's attempt_id nor null)";
  }
  if (!got.shown_blocked) return "a read without blocked (true or false)";
  if (!got.shown_version) return "a read without version (an integer)";
  const bool succeeded = got.shown_status == "succeeded";
  const bool failed = got.shown_status == "failed";
  if (got.result_digest.has_value() != succeeded) {
    return "a " + *got.shown_status + " job read " + (succeeded ? "without" : "with") + " a result";
  }
  if (got.shows_failure_reason.has_value() != failed) {
    return "a " + *got.shown_status + " job read " + (failed ? "without" : "with") +
           " a failure_reason";
  }
  if (failed && !*got.shows_failure_reason) {
    return "a failed job read whose failure_reason is empty or not a text: it does not say why";
  }
  return {};
}

namespace {

// The client request of `exchange` when one API node alone answered its send (with two, the client
// may hold the other's answer), else null.
const ClientRequest* sole_answered(const HistoryModel& model, const ApiExchange& exchange,
                                   const AnswerCounts& answers) {
  const auto request = model.requests.find(exchange.client_request);
  if (request == model.requests.end()) return nullptr;
  if (answers.at({exchange.client_request, exchange.client_send}) != 1) return nullptr;
  return &request->second;
}

// "a status it did not have while the <what> was handled (<statuses>)".
std::string status_not_held(const std::set<std::string>& statuses, std::string_view what) {
  std::string held;
  for (const auto& status : statuses) held += (held.empty() ? "" : ", ") + status;
  return "a status it did not have while the " + std::string(what) + " was handled (" + held + ")";
}

}  // namespace

void check_create_answer(const HistoryModel& model, const ApiExchange& exchange,
                         const events::ApiResponse& answer, const AnswerCounts& answers,
                         std::vector<Violation>& out) {
  const ClientRequest* request = sole_answered(model, exchange, answers);
  if (request == nullptr) return;
  const JobRecord* job = model.job(*answer.job_id);
  if (job == nullptr) return;  // I1 judges an answer naming a job the store does not hold
  std::optional<std::set<std::string>> statuses;
  for (const auto& received : model.receipts(*request)) {
    const auto& got = received.what;
    if (got.send != exchange.client_send || got.status != answer.status) continue;
    if (!statuses)
      statuses = statuses_during(model, *job, exchange.request_seq, exchange.response_seq);
    if (got.shown_status && statuses->contains(*got.shown_status)) continue;
    out.push_back(violation(
        "I13.create_misstates",
        "request " + std::to_string(exchange.client_request) + " created " + job_ref(job->id()) +
            " and was answered " + std::to_string(got.status) + " showing it " +
            got.shown_status.value_or("(no status)") + ", " + status_not_held(*statuses, "create"),
        received.seq, {exchange.response_seq}));
    return;
  }
}

// A 200 job read (one API node answered the send) against the commit log over its exchange: its
// status, "blocked" and attempts (I13.read_misstates).
void check_read(const HistoryModel& model, const ApiExchange& exchange,
                const events::ApiResponse& answer, const AnswerCounts& answers,
                std::vector<Violation>& out) {
  const ClientRequest* request = sole_answered(model, exchange, answers);
  if (request == nullptr) return;
  const auto job_id = *answer.job_id;
  const auto from = exchange.request_seq;
  const auto to = exchange.response_seq;
  const auto due = blocked_during(model, job_id, from, to);
  const JobRecord* job = model.job(job_id);
  const auto statuses =
      job != nullptr ? statuses_during(model, *job, from, to) : std::set<std::string>{};
  for (const auto& received : model.receipts(*request)) {
    const auto& got = received.what;
    if (got.send != exchange.client_send || got.status != 200) continue;
    std::string wrong;
    if (job != nullptr && got.shown_status && !statuses.contains(*got.shown_status)) {
      wrong = "as " + *got.shown_status + ", " + status_not_held(statuses, "read");
    } else if (job != nullptr && got.shown_version &&
               !version_held(*job, *got.shown_version, from, to)) {
      wrong = "with version " + std::to_string(*got.shown_version) +
              ", one it did not have during the read (1 until its winning compare-and-swap, 2 "
              "after)";
    } else if (due && got.shown_blocked && *got.shown_blocked != *due) {
      wrong = *due ? "as not blocked while an attempt was UNKNOWN"
                   : "as blocked with no UNKNOWN attempt";
    } else if (!got.shown_attempts) {
      wrong = "without its attempts";
    } else if (auto misstated = attempts_misstated(model, job_id, *got.shown_attempts, from, to);
               !misstated.empty()) {
      wrong = "and " + misstated;
    } else if (job != nullptr && got.failure_reason_digest &&
               !failure_reason_written(*job, *got.failure_reason_digest, to)) {
      wrong = "with a failure_reason (digest " + *got.failure_reason_digest +
              ") the store never wrote for it";
    } else if (job != nullptr) {
      wrong = request_misstated(model, *job, got);
    }
    if (wrong.empty()) continue;
    out.push_back(violation("I13.read_misstates",
                            "request " + std::to_string(exchange.client_request) + " read " +
                                job_ref(job_id) + " " + wrong,
                            received.seq, {exchange.response_seq}));
    return;
  }
}

}  // namespace onejob::check::i13
