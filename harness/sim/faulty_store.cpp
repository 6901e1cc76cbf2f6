#include "harness/sim/faulty_store.hpp"

#include <optional>
#include <string>
#include <vector>

#include "system/domain/check.hpp"

#include "harness/events/world_events.hpp"

namespace onejob::sim {

StoreError FaultyStore::fault(StoreError::Kind kind, events::InjectedFault injected,
                              const char* operation) {
  const std::string_view fault = events::injected_fault(injected).store;
  ONEJOB_ASSERT(!fault.empty(), "a fault a store round trip can suffer");
  trace_.record(link_.name(),
                events::to_event(events::StoreFault{
                    .node = node_,
                    .operation = operation,
                    .fault = std::string(fault),
                    .maybe_committed = kind == StoreError::Kind::maybe_committed,
                }),
                /*injected=*/true);
  return StoreError(kind, store_fault_message(fault, operation));
}

std::string store_fault_message(std::string_view fault, std::string_view operation) {
  return "store " + std::string(fault) + " during " + std::string(operation);
}

bool quotes_store_error(std::string_view text) {
  // Each store fault's message up to its operation, whichever operation it was: made once, as
  // every client receipt asks.
  static const std::vector<std::string> kMessages = [] {
    std::vector<std::string> messages;
    for (const auto& name : events::kInjectedFaults) {
      if (!name.store.empty()) messages.push_back(store_fault_message(name.store, ""));
    }
    return messages;
  }();
  for (const auto& message : kMessages) {
    if (text.find(message) != std::string_view::npos) return true;
  }
  return text.find(" is down") != std::string_view::npos ||
         text.find(" went down waiting for the reply") != std::string_view::npos;
}

std::optional<StoreError> FaultyStore::request_fault(const char* operation) {
  if (closed_) return StoreError(StoreError::Kind::unavailable, node_ + " is down");
  if (link_.partitioned(Direction::request, node_, "store")) {
    return fault(StoreError::Kind::unavailable, events::InjectedFault::partition, operation);
  }
  if (link_.chance(link_.spec().drop_request)) {
    return fault(StoreError::Kind::unavailable, events::InjectedFault::drop_request, operation);
  }
  return std::nullopt;
}

std::optional<StoreError> FaultyStore::reply_fault(const char* operation, bool write) {
  const auto lost = write ? StoreError::Kind::maybe_committed : StoreError::Kind::unavailable;
  if (closed_) return StoreError(lost, node_ + " went down waiting for the reply");
  if (link_.partitioned(Direction::response, node_, "store")) {
    return fault(lost, events::InjectedFault::partition, operation);
  }
  if (link_.chance(link_.spec().drop_response))
    return fault(lost, events::InjectedFault::drop_response, operation);
  if (link_.chance(link_.spec().reset)) return fault(lost, events::InjectedFault::reset, operation);
  if (write && link_.chance(link_.spec().commit_unknown)) {
    return fault(StoreError::Kind::maybe_committed, events::InjectedFault::commit_unknown,
                 operation);
  }
  return std::nullopt;
}

// Faults travel as values through the round trip and are thrown once, to the caller: a
// partition costs one exception per call, not one per coroutine frame on the way. `statement`
// is called at most once, so it hands on (moves) what it captured.
template <typename T, typename Statement>
Async<T> FaultyStore::round_trip(const char* operation, bool write, Statement statement) {
  std::optional<T> result;
  // A closed connection sends nothing: no latency, and request_fault says it is down.
  if (!closed_) co_await loop_.sleep_for(link_.latency());
  std::optional<StoreError> error = request_fault(operation);
  if (!error) {
    try {
      result = co_await statement();
    } catch (const StoreError& failed) {
      // A value the store cannot hold: each store words the refusal in its own terms (PgStore its
      // statement's name, the memory store the port's operation), and the node records those
      // words. The node gets one wording from either, so that a run's trace is the same on both.
      error = failed.kind() == StoreError::Kind::rejected
                  ? StoreError(StoreError::Kind::rejected,
                               std::string("refused ") + operation +
                                   ": a value the store cannot hold (a NUL byte or invalid "
                                   "UTF-8); nothing was written")
                  : failed;
    }
  }
  if (!error) {
    co_await loop_.sleep_for(link_.latency());
    error = reply_fault(operation, write);
  }
  if (gate_.paused())
    co_await gate_.pass();  // the node learns the outcome, either one, only once it runs
  if (error) throw *error;
  co_return std::move(*result);
}

Async<InsertJobResult> FaultyStore::insert_job(NewJob job) {
  return round_trip<InsertJobResult>("insert_job", true, [this, job = std::move(job)]() mutable {
    return target().insert_job(std::move(job));
  });
}
Async<std::optional<Job>> FaultyStore::find_job_by_key(std::string owner_id, std::string key) {
  return round_trip<std::optional<Job>>(
      "find_job_by_key", false,
      [this, owner_id = std::move(owner_id), key = std::move(key)]() mutable {
        return target().find_job_by_key(std::move(owner_id), std::move(key));
      });
}
Async<std::optional<Job>> FaultyStore::find_job(std::string owner_id, JobId id) {
  return round_trip<std::optional<Job>>("find_job", false,
                                        [this, owner_id = std::move(owner_id), id]() mutable {
                                          return target().find_job(std::move(owner_id), id);
                                        });
}
Async<std::optional<Job>> FaultyStore::load_job(JobId id) {
  return round_trip<std::optional<Job>>("load_job", false,
                                        [this, id] { return target().load_job(id); });
}
Async<bool> FaultyStore::fail_job(JobId id, std::string reason, Instant at) {
  return round_trip<bool>("fail_job", true, [this, id, reason = std::move(reason), at]() mutable {
    return target().fail_job(id, std::move(reason), at);
  });
}
Async<InsertAttemptResult> FaultyStore::insert_attempt(NewAttempt attempt) {
  return round_trip<InsertAttemptResult>("insert_attempt", true,
                                         [this, attempt = std::move(attempt)]() mutable {
                                           return target().insert_attempt(std::move(attempt));
                                         });
}
Async<std::optional<Attempt>> FaultyStore::find_attempt(AttemptId id) {
  return round_trip<std::optional<Attempt>>("find_attempt", false,
                                            [this, id] { return target().find_attempt(id); });
}
Async<std::optional<ActionRecord>> FaultyStore::find_action(std::string owner_id, std::string key) {
  return round_trip<std::optional<ActionRecord>>(
      "find_action", false, [this, owner_id = std::move(owner_id), key = std::move(key)]() mutable {
        return target().find_action(std::move(owner_id), std::move(key));
      });
}
Async<std::vector<Attempt>> FaultyStore::list_attempts(JobId job_id) {
  return round_trip<std::vector<Attempt>>(
      "list_attempts", false, [this, job_id] { return target().list_attempts(job_id); });
}
Async<std::vector<Attempt>> FaultyStore::find_attempts_in_state(AttemptState state) {
  return round_trip<std::vector<Attempt>>("find_attempts_in_state", false, [this, state] {
    return target().find_attempts_in_state(state);
  });
}
Async<std::vector<Job>> FaultyStore::find_idle_jobs() {
  return round_trip<std::vector<Job>>("find_idle_jobs", false,
                                      [this] { return target().find_idle_jobs(); });
}
Async<SweepWork> FaultyStore::find_sweep_work(Instant now) {
  return round_trip<SweepWork>("find_sweep_work", false,
                               [this, now] { return target().find_sweep_work(now); });
}
Async<std::vector<Attempt>> FaultyStore::find_expired_leases(Instant now) {
  return round_trip<std::vector<Attempt>>(
      "find_expired_leases", false, [this, now] { return target().find_expired_leases(now); });
}
Async<std::optional<Attempt>> FaultyStore::claim_next_attempt(std::string worker, Instant now,
                                                              Instant lease_expires_at) {
  return round_trip<std::optional<Attempt>>(
      "claim_next_attempt", true,
      [this, worker = std::move(worker), now, lease_expires_at]() mutable {
        return target().claim_next_attempt(std::move(worker), now, lease_expires_at);
      });
}
Async<UpdateAttemptResult> FaultyStore::update_attempt(AttemptUpdate update) {
  return round_trip<UpdateAttemptResult>("update_attempt", true,
                                         [this, update = std::move(update)]() mutable {
                                           return target().update_attempt(std::move(update));
                                         });
}
Async<CompleteAttemptResult> FaultyStore::complete_attempt(CompleteAttempt completion) {
  return round_trip<CompleteAttemptResult>(
      "complete_attempt", true, [this, completion = std::move(completion)]() mutable {
        return target().complete_attempt(std::move(completion));
      });
}
Async<bool> FaultyStore::record_statement(Certification certification) {
  co_await target().record_certification(std::move(certification));
  co_return true;
}

Async<void> FaultyStore::record_certification(Certification certification) {
  // A local, not a temporary inside co_await: g++ 12 destroys such temporaries twice.
  auto statement = [this, certification = std::move(certification)]() mutable {
    return record_statement(std::move(certification));
  };
  co_await round_trip<bool>("record_certification", true, std::move(statement));
}
Async<std::optional<Certification>> FaultyStore::latest_certification(std::string provider) {
  return round_trip<std::optional<Certification>>(
      "latest_certification", false, [this, provider = std::move(provider)]() mutable {
        return target().latest_certification(std::move(provider));
      });
}

}  // namespace onejob::sim
