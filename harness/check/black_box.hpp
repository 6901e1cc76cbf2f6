#pragma once
// Black-box rules: the promises of a job API judged only on what its clients and its providers
// observed — requests and the answers they got, and the executions the provider stubs performed.
// No store, no commit log, no knowledge of the target's code: the same judgement applies to the
// reference system and to any service speaking HTTP (`onejob check`, the real-mode prober).
//
// The history's JSON Lines form is documented in harness/README.md ("Black-box histories");
// black_box_jsonl.hpp reads it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace onejob::check::black_box {

// A request as it left a client. `action`: create, read, retry or cancel. A create carries the
// owner's idempotency `key` and its `body`; the others name the `job` they act on. A retry or a
// cancel may carry the operator's idempotency `key` (and a retry its `body`); a cancel names the
// `attempt` it cancels.
struct Request {
  std::uint64_t line = 0;  // where the history holds it (1-based): the evidence's address
  std::int64_t t_us = 0;
  std::string id;
  std::string client;
  std::string owner;
  std::string action;
  std::optional<std::string> key{};
  std::optional<nlohmann::json> body{};
  std::optional<std::string> job{};
  std::optional<std::string> attempt{};
};

// An attempt a read's answer listed: its id, its state as shown, and whether that state is a
// live one (the attempt may still run: not finished).
struct AttemptShown {
  std::string id;
  std::string state;
  bool live = false;
};

// What reached the client for request `id`. No `status`: nothing came back (the connection was
// reset, the reply was lost, the client gave up). The rest is what the body showed, when it did.
struct Response {
  std::uint64_t line = 0;
  std::int64_t t_us = 0;
  std::string id;
  std::optional<int> status{};
  std::optional<std::string> job{};
  std::optional<std::string> job_status{};  // queued, running, succeeded, failed, ...
  std::optional<nlohmann::json> result{};
  std::optional<std::string> error{};
  std::optional<std::string> attempt{};  // the attempt a retry or cancel answer names
  // A retry's or cancel's answer: its whole body (JSON), and whether it carried the target's
  // replay mark (absent: not recorded, e.g. the target marks no replays).
  std::optional<nlohmann::json> body{};
  std::optional<bool> replayed{};
  // The state the answer shows its attempt in: starting, cancelled, or the target's own word.
  std::optional<std::string> attempt_state{};
  // A read's answer: the job's attempts it listed (absent: not recorded).
  std::optional<std::vector<AttemptShown>> attempts{};
  // A create's answer: its Location header as it arrived, "" when it had none (absent: not
  // recorded).
  std::optional<std::string> location{};
};

// An execution a provider stub performed: its side effect happened at `t_us`. `ended_us` is when
// the stub sent its answer (absent: it never did, e.g. a hang). `input` is the job input the stub
// received; it links the execution to the create that carried it. `purpose`: attempt or
// certification (certifications belong to no job).
struct Execution {
  std::uint64_t line = 0;
  std::int64_t t_us = 0;
  std::optional<std::int64_t> ended_us{};
  std::string provider;
  std::string provider_key;
  std::string purpose = "attempt";
  nlohmann::json input;
  std::string outcome;  // ok, error, hang, late, malformed, plausible, wrong_operation, ...
  std::optional<nlohmann::json> output{};
};

struct History {
  std::vector<Request> requests;
  std::vector<Response> responses;
  std::vector<Execution> executions;
  // When the faults stopped (a "quiet" line): requests sent after it must be answered.
  std::optional<std::int64_t> quiet_from_us{};
  // The target's limit of attempts per job (a "policy" line), when the history declares it.
  std::optional<int> attempt_limit{};
  // The status the target refuses a reused key with (a "policy" line's conflict_status, the
  // probe's profile's codes.conflict), when the history declares it: B2 then judges refusals.
  std::optional<int> conflict_status{};
  // Where the target says a created job lives (a "policy" line's created_location, the probe's
  // profile's): "{job}" stands for the job's id. Declared: B16 judges each create's Location.
  std::optional<std::string> created_location{};
};

// One broken promise, with the history lines that show it.
struct Finding {
  std::string rule;    // "B1".."B17", or "availability"
  std::string clause;  // "<rule>.<name>", stable across wording changes
  std::string message;
  std::vector<std::uint64_t> lines;  // the offending line first, then its evidence
};

struct Rule {
  std::string_view id;
  std::string_view promise;
};

// The rules, in id order: each states its promise on observations alone.
const std::vector<Rule>& all_rules();

// Every finding of every rule, in rule order; availability findings (requests left unanswered
// after the quiet phase, 5xx answers) come last and are not safety violations.
std::vector<Finding> judge(const History& history);

bool is_safety(const Finding& finding);

// "{name}" replaced by `value` everywhere in `text`: a history's created_location filled in with a
// job, and the prober's routes and commands with theirs.
std::string substitute(std::string text, const std::string& name, const std::string& value);

// "line 12, 3, 7": where a finding's evidence is, as reports print it.
std::string evidence_lines(const Finding& finding);

}  // namespace onejob::check::black_box
