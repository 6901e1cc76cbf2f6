#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "system/events/attempt_events.hpp"
#include "system/events/schema.hpp"

// The store's commit log: every write the store applied, recorded at its commit instant, before
// any fault can lose the reply. This is the order in which the database applied writes, and the
// ground truth every checker judges against. `by` names the node whose connection ran the write.
namespace onejob::events {

// A job row and its first attempt (attempt_no 1, STARTING) committed together.
struct CommitJobInserted {
  static constexpr std::string_view kind = "commit.job_inserted";
  std::int64_t job_id = 0;
  std::string owner;
  std::string key;
  std::string operation;
  std::string provider;
  std::string payload;  // the request body as stored
  std::string by;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("owner", self.owner);
    field("key", self.key);
    field("operation", self.operation);
    field("provider", self.provider);
    field("payload", self.payload);
    field("by", self.by);
  }
};

// The same fields as the inserting node's attempt.created, plus who ran the insert and, for an
// operator's retry, the Idempotency-Key recorded with it (`action_owner`, `action_key`).
struct CommitAttemptInserted : AttemptCreated {
  static constexpr std::string_view kind = "commit.attempt_inserted";
  std::string by;
  std::optional<std::string> action_owner{};
  std::optional<std::string> action_key{};
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    AttemptCreated::fields(self, field);
    field("by", self.by);
    field("action_owner", self.action_owner);
    field("action_key", self.action_key);
  }
};

// One attempt transition. `fence`: the lease token the writer presented (none for an out-of-band
// write); `token`: the attempt's lease token after the write (a claim or a takeover bumps it);
// `lease_owner`: who holds the lease after the write; `lease_expires_at`: on a claim, when the
// store's row says the new lease runs out. `action_owner`, `action_key`: the operator action's
// Idempotency-Key recorded with the write (a cancel).
struct CommitAttemptTransition {
  static constexpr std::string_view kind = "commit.attempt";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  AttemptState from = AttemptState::starting;
  AttemptState to = AttemptState::starting;
  std::string by;
  std::optional<std::int64_t> fence{};
  std::int64_t token = 0;
  std::string lease_owner;
  std::optional<Instant> lease_expires_at{};
  bool claim = false;
  bool takeover = false;
  std::optional<std::string> action_owner{};
  std::optional<std::string> action_key{};
  // The row's outcome_reason after the write (why it ended, or became unknown), when not empty.
  std::optional<std::string> reason{};
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("from", self.from);
    field("to", self.to);
    field("by", self.by);
    field("fence", self.fence);
    field("token", self.token);
    field("lease_owner", self.lease_owner);
    field("lease_expires_at", self.lease_expires_at);
    field("claim", self.claim);
    field("takeover", self.takeover);
    field("action_owner", self.action_owner);
    field("action_key", self.action_key);
    field("reason", self.reason);
  }
};

// A completion's compare-and-swap on the job row. Won: the job's version went from
// expected_version to version, completed_by is the attempt and result the job's new result.
// Lost: nothing on the job changed; `winner` is the job's completed_by as found (0 for none).
// Either way `result` is the output the attempt offered (kept on a loser's row).
struct CommitCas {
  static constexpr std::string_view kind = "commit.cas";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::int64_t expected_version = 0;
  bool won = false;
  std::int64_t version = 0;
  std::int64_t winner = 0;
  std::string job_result;
  std::string result;
  std::string by;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("expected_version", self.expected_version);
    field("won", self.won);
    field("version", self.version);
    field("winner", self.winner);
    field("job_result", self.job_result);
    field("result", self.result);
    field("by", self.by);
  }
};

struct CommitJobFailed {
  static constexpr std::string_view kind = "commit.job_failed";
  std::int64_t job_id = 0;
  std::string by;
  std::optional<std::string> reason{};  // the failure_reason written
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("by", self.by);
    field("reason", self.reason);
  }
};

struct CommitCertification {
  static constexpr std::string_view kind = "commit.certification";
  std::string provider;
  bool passed = false;
  std::string by;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("provider", self.provider);
    field("passed", self.passed);
    field("by", self.by);
  }
};

// A guarded write the store refused (nothing committed). `refusal` is one of kRefused*.
inline constexpr std::string_view kRefusedFenced = "fenced";
inline constexpr std::string_view kRefusedState = "state";
inline constexpr std::string_view kRefusedLiveAttempt = "live_attempt";
inline constexpr std::string_view kRefusedJobCompleted = "job_completed";
inline constexpr std::string_view kRefusedJobFailed = "job_failed";
inline constexpr std::string_view kRefusedDuplicateKey = "duplicate_key";
// A value the store cannot hold (a NUL byte, invalid UTF-8: StoreError::Kind::rejected).
inline constexpr std::string_view kRefusedUnstorable = "unstorable";

struct StoreRefused {
  static constexpr std::string_view kind = "store.refused";
  std::string operation;
  std::string refusal;
  std::optional<std::int64_t> job_id{};
  std::optional<std::int64_t> attempt_id{};
  std::optional<AttemptState> wanted{};  // an attempt write: the state it would have set
  std::string by;
  // An attempt write: the lease token it carried (none: an out-of-band write), and the states it
  // could be written from, comma-separated.
  std::optional<std::int64_t> fence{};
  std::optional<std::string> from{};
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("operation", self.operation);
    field("refusal", self.refusal);
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("wanted", self.wanted);
    field("by", self.by);
    field("fence", self.fence);
    field("from", self.from);
  }
};

}  // namespace onejob::events
