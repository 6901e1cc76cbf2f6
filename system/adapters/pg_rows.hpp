#pragma once

// PgStore's conversions between rows and the domain's structs. Included only by the PostgreSQL
// adapter's own .cpp files: it brings libpqxx with it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>

#include "system/domain/attempt.hpp"
#include "system/domain/job.hpp"
#include "system/domain/time.hpp"
#include "system/ports/store.hpp"

namespace onejob::pg {

// Every statement that returns whole rows returns their columns in these orders, so one
// *_from_row() reads them all, by position.
inline constexpr std::string_view kJobColumns =
    "id, owner_id, idempotency_key, request_fingerprint, operation, target_provider, failover,"
    " input_json, payload_json, status, version, completed_by, result, failure_reason,"
    " created_at_us";
inline constexpr int kJobColumnCount = 15;
inline constexpr std::string_view kAttemptColumns =
    "id, job_id, attempt_no, provider, provider_key, origin, state, lease_owner, lease_token,"
    " lease_expires_at_us, created_at_us, finished_at_us, outcome_reason, result";
inline constexpr int kAttemptColumnCount = 14;

// The column list with each name written as `prefix` + name, e.g. "(r.job).id, ...".
std::string prefixed_columns(std::string_view columns, std::string_view prefix);

inline std::int64_t to_us(Instant at) { return at.time_since_epoch().count(); }
inline Instant from_us(const pqxx::field& field) {
  return Instant{Duration{field.as<std::int64_t>()}};
}

// libpqxx 6.4 has no parameter type for a nullable value; a null const char* is SQL NULL.
class NullableParam {
 public:
  explicit NullableParam(std::optional<std::int64_t> value)
      : present_{value.has_value()}, text_{value ? std::to_string(*value) : std::string{}} {}
  const char* get() const { return present_ ? text_.c_str() : nullptr; }

 private:
  bool present_;
  std::string text_;
};

// A text[] literal with every element double-quoted, so that commas, braces, quotes,
// backslashes, blanks, empty strings and the word NULL all come back as the same string.
std::string to_text_array(const std::vector<std::string>& items);
std::vector<std::string> from_text_array(const pqxx::field& field);
std::string to_text_array(const std::vector<AttemptState>& states);

// The job (attempt) whose kJobColumns (kAttemptColumns) start at column `first` of `row`.
// Throws StoreError (unavailable) for a value this build does not know: the schema and the code
// disagree (a newer writer, or a hand edit), and guessing would be worse.
Job job_from_row(const pqxx::row& row, int first = 0);
Attempt attempt_from_row(const pqxx::row& row, int first = 0);

std::vector<Attempt> attempts_from(const pqxx::result& result);
std::vector<Job> jobs_from(const pqxx::result& result);
// The reconciler's sweep from kSweepWork's rows: column 0 names the list each row's attempt
// belongs to (0 expired, 1 unknown, 2 idle); a row of list 3, one live attempt, says only that
// one is (any_live).
SweepWork sweep_work_from(const pqxx::result& result);

// For lookups by a unique key, where more than one row would be a broken schema.
template <typename T>
std::optional<T> at_most_one(const pqxx::result& result, T (*from_row)(const pqxx::row&, int)) {
  if (result.size() > 1) throw std::logic_error("lookup by a unique key found several rows");
  if (result.empty()) return std::nullopt;
  return from_row(result[0], 0);
}

}  // namespace onejob::pg
