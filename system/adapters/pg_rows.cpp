#include "system/adapters/pg_rows.hpp"

#include <utility>

#include "system/ports/store.hpp"

namespace onejob::pg {
namespace {

template <typename Parse>
auto known_value(const pqxx::field& field, Parse parse) {
  const std::string text = field.as<std::string>();
  auto value = parse(text);
  if (!value) {
    throw StoreError(
        StoreError::Kind::unavailable,
        std::string{field.name()} + " holds a value this build does not know: '" + text + "'");
  }
  return *value;
}

}  // namespace

std::string prefixed_columns(std::string_view columns, std::string_view prefix) {
  std::string out;
  while (!columns.empty()) {
    const std::size_t comma = columns.find(',');
    std::string_view name = columns.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    if (!out.empty()) out += ", ";
    out.append(prefix).append(name);
    if (comma == std::string_view::npos) break;
    columns.remove_prefix(comma + 1);
  }
  return out;
}

std::string to_text_array(const std::vector<std::string>& items) {
  std::string literal = "{";
  for (const std::string& item : items) {
    if (literal.size() > 1) literal += ',';
    literal += '"';
    for (const char c : item) {
      if (c == '"' || c == '\\') literal += '\\';
      literal += c;
    }
    literal += '"';
  }
  literal += '}';
  return literal;
}

std::string to_text_array(const std::vector<AttemptState>& states) {
  std::vector<std::string> names;
  names.reserve(states.size());
  for (const AttemptState state : states) names.emplace_back(to_string(state));
  return to_text_array(names);
}

std::vector<std::string> from_text_array(const pqxx::field& field) {
  std::vector<std::string> items;
  pqxx::array_parser parser = field.as_array();
  for (;;) {
    auto [juncture, value] = parser.get_next();
    switch (juncture) {
      case pqxx::array_parser::string_value:
        items.push_back(std::move(value));
        break;
      case pqxx::array_parser::null_value:
        // Nothing PgStore writes has NULL elements: someone else wrote this row.
        throw StoreError(StoreError::Kind::unavailable,
                         std::string{field.name()} + " holds a NULL element");
      case pqxx::array_parser::row_start:
      case pqxx::array_parser::row_end:
        break;
      case pqxx::array_parser::done:
        return items;
    }
  }
}

Job job_from_row(const pqxx::row& row, int first) {
  const auto at = [&](int i) { return row[first + i]; };
  const pqxx::field completed_by = at(11);
  return Job{
      .id = at(0).as<JobId>(),
      .owner_id = at(1).as<std::string>(),
      .idempotency_key = at(2).as<std::string>(),
      .request_fingerprint = at(3).as<std::string>(),
      .operation = at(4).as<std::string>(),
      .target_provider = at(5).as<std::string>(),
      .failover = from_text_array(at(6)),
      .input_json = at(7).as<std::string>(),
      .payload_json = at(8).as<std::string>(),
      .status = known_value(at(9), parse_job_status),
      .version = at(10).as<std::int64_t>(),
      .completed_by =
          completed_by.is_null() ? std::nullopt : std::optional{completed_by.as<AttemptId>()},
      .result = at(12).as<std::string>(),
      .failure_reason = at(13).as<std::string>(),
      .created_at = from_us(at(14)),
  };
}

Attempt attempt_from_row(const pqxx::row& row, int first) {
  const auto at = [&](int i) { return row[first + i]; };
  const pqxx::field finished_at = at(11);
  return Attempt{
      .id = at(0).as<AttemptId>(),
      .job_id = at(1).as<JobId>(),
      .attempt_no = at(2).as<int>(),
      .provider = at(3).as<std::string>(),
      .provider_key = at(4).as<std::string>(),
      .origin = known_value(at(5), parse_attempt_origin),
      .state = known_value(at(6), parse_attempt_state),
      .lease_owner = at(7).as<std::string>(),
      .lease_token = at(8).as<std::int64_t>(),
      .lease_expires_at = from_us(at(9)),
      .created_at = from_us(at(10)),
      .finished_at = finished_at.is_null() ? std::nullopt : std::optional{from_us(finished_at)},
      .outcome_reason = at(12).as<std::string>(),
      .result = at(13).as<std::string>(),
  };
}

std::vector<Attempt> attempts_from(const pqxx::result& result) {
  std::vector<Attempt> attempts;
  attempts.reserve(result.size());
  for (const pqxx::row& row : result) attempts.push_back(attempt_from_row(row));
  return attempts;
}

SweepWork sweep_work_from(const pqxx::result& result) {
  SweepWork work;
  work.any_live = false;
  for (const pqxx::row& row : result) {
    const auto list = row[0].as<int>();
    if (list == 3) {
      work.any_live = true;
      continue;
    }
    auto& into = list == 0 ? work.expired : list == 1 ? work.unknown : work.idle;
    into.push_back(attempt_from_row(row, 1));
  }
  return work;
}

std::vector<Job> jobs_from(const pqxx::result& result) {
  std::vector<Job> jobs;
  jobs.reserve(result.size());
  for (const pqxx::row& row : result) jobs.push_back(job_from_row(row));
  return jobs;
}

}  // namespace onejob::pg
