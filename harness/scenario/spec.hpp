#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "system/domain/time.hpp"

namespace onejob::scenario {

// Where a value came from in a scenario file (1-based, as editors show it).
struct SourceMark {
  int line = 0;
  int column = 0;
};

// Bad scenario input: unreadable, not YAML, or not a valid scenario. what() is
// "file:line:col: message".
class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(const std::string& file, SourceMark mark, const std::string& message);
  const std::string& file() const { return file_; }
  SourceMark mark() const { return mark_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  SourceMark mark_;
  std::string message_;
};

struct LatencySpec {
  Duration min{0};
  Duration max{0};
};

struct ProviderSpec {
  std::string name;
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

struct TimelineEntry {
  Duration at{0};
  CreateJobAction create_job;
  int request = 0;  // 1-based number of the request this entry sends, in file order
  SourceMark mark;
};

struct ResponseExpectation {
  int request = 0;
  std::vector<int> statuses;  // the response status must be one of these
  SourceMark mark;
};

struct SameJobExpectation {
  std::vector<int> requests;  // these responses all carry one and the same job id
  SourceMark mark;
};

struct Expectations {
  std::vector<ResponseExpectation> responses;
  std::vector<SameJobExpectation> same_job_id;
  std::optional<std::int64_t> jobs;  // number of jobs created during the run
  SourceMark jobs_mark;
};

struct ScenarioSpec {
  std::string file;
  std::string name;
  SourceMark name_mark;
  std::string description;
  std::uint64_t seed = 0;
  std::vector<ProviderSpec> providers;
  std::vector<ClientSpec> clients;
  LatencySpec client_api_latency;
  std::vector<TimelineEntry> timeline;
  Expectations expect;
  std::vector<std::string> invariants;  // ids of the invariant checkers that apply
};

}  // namespace onejob::scenario
