#pragma once

// PgStore's prepared statements: their names, and the SQL registered under them on every new
// connection. Included only by .cpp files (the adapter's, and bench's raw baselines, which run
// the same statements): it brings libpqxx.

#include <string_view>

#include <pqxx/pqxx>

namespace onejob::pg {

namespace statement {

inline constexpr const char* kCreateJob = "onejob_create_job";
inline constexpr const char* kFindJobByKey = "onejob_find_job_by_key";
inline constexpr const char* kFindJob = "onejob_find_job";
inline constexpr const char* kLoadJob = "onejob_load_job";
inline constexpr const char* kLockJob = "onejob_lock_job";
inline constexpr const char* kReopenJob = "onejob_reopen_job";
inline constexpr const char* kFailJob = "onejob_fail_job";
inline constexpr const char* kCompleteAttempt = "onejob_complete_attempt";
inline constexpr const char* kNextAttemptNo = "onejob_next_attempt_no";
inline constexpr const char* kInsertAttempt = "onejob_insert_attempt";
inline constexpr const char* kLiveAttemptOfJob = "onejob_live_attempt_of_job";
inline constexpr const char* kFindAttempt = "onejob_find_attempt";
inline constexpr const char* kLockAttempt = "onejob_lock_attempt";
inline constexpr const char* kWriteAttempt = "onejob_write_attempt";
inline constexpr const char* kListAttempts = "onejob_list_attempts";
inline constexpr const char* kAttemptsInState = "onejob_attempts_in_state";
inline constexpr const char* kExpiredLeases = "onejob_expired_leases";
inline constexpr const char* kIdleJobs = "onejob_idle_jobs";
inline constexpr const char* kSweepWork = "onejob_sweep_work";
inline constexpr const char* kClaimAttempt = "onejob_claim_attempt";
inline constexpr const char* kInsertCertification = "onejob_insert_certification";
inline constexpr const char* kLatestCertification = "onejob_latest_certification";
inline constexpr const char* kFindAction = "onejob_find_action";
inline constexpr const char* kInsertAction = "onejob_insert_action";

// The predicate of attempts_one_live_per_job, spelled identically so the planner uses it.
inline constexpr std::string_view kLiveStates = "('STARTING', 'RUNNING', 'UNKNOWN')";

}  // namespace statement

// Registers every statement on `c`. libpqxx prepares each on its first use, so they may name
// tables PgStore::migrate() has not created yet.
void prepare_statements(pqxx::connection& c);

}  // namespace onejob::pg
