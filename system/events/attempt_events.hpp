#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "system/events/schema.hpp"

// What a writer (worker, reconciler, API node) learnt about its own attempt and job writes when
// the store's reply reached it. The store's own record of the same writes is the commit log
// (harness/events/commit_events.hpp); these are each node's view.
namespace onejob::events {

struct AttemptCreated {
  static constexpr std::string_view kind = "attempt.created";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::int64_t attempt_no = 0;
  std::string provider;
  std::string provider_key;
  AttemptOrigin origin = AttemptOrigin::initial;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("attempt_no", self.attempt_no);
    field("provider", self.provider);
    field("provider_key", self.provider_key);
    field("origin", self.origin);
  }
};

// A guarded attempt write applied. `token` and `lease_expires` are set for a claim.
struct AttemptStateChanged {
  static constexpr std::string_view kind = "attempt.state";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  AttemptState from = AttemptState::starting;
  AttemptState to = AttemptState::starting;
  std::string reason;
  std::string by;
  std::optional<std::int64_t> token{};
  std::optional<Instant> lease_expires{};
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("from", self.from);
    field("to", self.to);
    field("reason", self.reason);
    field("by", self.by);
    field("token", self.token);
    field("lease_expires_us", self.lease_expires);
  }
};

// A guarded attempt write the store refused: `fenced` when the writer's lease was taken over,
// otherwise the attempt was no longer in a state the writer expected.
struct AttemptWriteRefused {
  static constexpr std::string_view kind = "attempt.write_refused";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  bool fenced = false;
  AttemptState found = AttemptState::starting;
  AttemptState wanted = AttemptState::starting;
  std::string by;
  std::int64_t token = 0;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("fenced", self.fenced);
    field("found", self.found);
    field("wanted", self.wanted);
    field("by", self.by);
    field("token", self.token);
  }
};

// The outcome of a completion's compare-and-swap, as its writer heard it.
struct JobCas {
  static constexpr std::string_view kind = "job.cas";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::int64_t expected_version = 0;
  bool won = false;
  std::int64_t winner = 0;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("expected_version", self.expected_version);
    field("won", self.won);
    field("winner", self.winner);
  }
};

struct JobCompleted {
  static constexpr std::string_view kind = "job.completed";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::int64_t version = 0;
  std::string result;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("version", self.version);
    field("result", self.result);
  }
};

struct ResultDiscarded {
  static constexpr std::string_view kind = "result.discarded";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::int64_t winner = 0;
  std::string result;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("winner", self.winner);
    field("result", self.result);
  }
};

struct JobFailed {
  static constexpr std::string_view kind = "job.failed";
  std::int64_t job_id = 0;
  std::string reason;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("reason", self.reason);
  }
};

// A provider's output broke its operation's contract: it never becomes a result.
struct OutputRejected {
  static constexpr std::string_view kind = "output.rejected";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::string provider;
  std::string reason;
  std::string output;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("provider", self.provider);
    field("reason", self.reason);
    field("output", self.output);
  }
};

struct FailoverSkipped {
  static constexpr std::string_view kind = "failover.skipped";
  std::int64_t job_id = 0;
  std::string provider;
  std::string reason;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("provider", self.provider);
    field("reason", self.reason);
  }
};

}  // namespace onejob::events
