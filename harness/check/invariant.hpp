#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/check/history.hpp"

namespace onejob::check {

// What kind of promise a broken rule is.
enum class Category {
  safety,        // an invariant (I1..I10) or the store's agreement with its commit log (log)
  expectation,   // something the scenario itself expects (expect)
  availability,  // a request still unanswered after the quiet phase (availability)
  run,           // the run itself: it aborted (run), two runs of it differ (determinism), or two
                 // stores gave different traces (store-equivalence)
};
std::string_view to_string(Category category);

// One anomaly, as data (Elle's split): which rule and which clause of it broke, the first
// offending event and the events that show it; the message explains it to people. Tests and
// tools match on `clause`, never on the message's words.
struct Violation {
  std::string rule;    // "I1".."I14", "log", "expect", "availability", "run", "determinism", ...
  std::string clause;  // "<rule>.<name>", e.g. "I5.two_winners": stable across wording changes
  Category category = Category::safety;
  std::string message;
  std::optional<std::uint64_t> event_seq{};  // the first offending event, when there is one
  std::vector<std::uint64_t> evidence{};     // earlier events the headline refers to
};

// A violation of `clause` ("<rule>.<name>"): its rule is the part before the dot and its category
// the rule's (kRules). REQUIRES: a rule kRules lists.
Violation violation(std::string_view clause, std::string message,
                    std::optional<std::uint64_t> event_seq = std::nullopt,
                    std::vector<std::uint64_t> evidence = {});

// Every rule a violation can name, with its category.
struct RuleInfo {
  std::string_view id;
  Category category;
};
const std::vector<RuleInfo>& all_rules();

// Whether a violation breaks a safety rule (an invariant or the log's agreement with the store)
// rather than an expectation, availability or the run itself.
bool is_safety(const Violation& violation);

// An invariant judges a run from its history model alone: no access to the store or the nodes.
struct Invariant {
  std::string_view id;
  std::string_view summary;
  std::vector<Violation> (*check)(const HistoryModel& model);
};

// Every invariant checker, in id order.
const std::vector<Invariant>& all_invariants();

// Every clause a safety rule (I1..I14, log) can break, "<rule>.<name>", in rule order: the
// promise table (harness/README.md) gives each a promise, an oracle and the scenarios that
// require it, and violation() refuses a safety clause missing here.
const std::vector<std::string_view>& all_safety_clauses();
bool is_safety_clause(std::string_view clause);
// nullptr when no checker has this id.
const Invariant* find_invariant(std::string_view id);

// The checkers, one per file (each file opens with what it checks and what it does not).
std::vector<Violation> check_one_job_per_key(const HistoryModel& model);
std::vector<Violation> check_key_reuse_conflict(const HistoryModel& model);
std::vector<Violation> check_one_live_attempt(const HistoryModel& model);
std::vector<Violation> check_timeout_is_unknown(const HistoryModel& model);
std::vector<Violation> check_one_winner(const HistoryModel& model);
std::vector<Violation> check_certified_failover(const HistoryModel& model);
std::vector<Violation> check_nothing_lost(const HistoryModel& model);
std::vector<Violation> check_liveness(const HistoryModel& model);
// How long after the faults end liveness gives the system to settle a run with this policy.
Duration settle_horizon(const events::RunPolicy& policy);
std::vector<Violation> check_side_effects(const HistoryModel& model);
std::vector<Violation> check_fencing(const HistoryModel& model);
std::vector<Violation> check_operator_actions(const HistoryModel& model);
std::vector<Violation> check_policy(const HistoryModel& model);
std::vector<Violation> check_api_contract(const HistoryModel& model);
std::vector<Violation> check_reports(const HistoryModel& model);

// The store's final rows agree with its commit log: every committed job and attempt is there, in
// the state the log left it (violations of "log"; a store whose answers lie shows here).
std::vector<Violation> check_store_agrees(const HistoryModel& model, const StoreRows& rows);

// Whether an HTTP status is a success (2xx).
inline bool is_success(std::int64_t status) { return status >= 200 && status < 300; }

// The id a request path names right after `prefix` ("/jobs/" in "/jobs/7/attempts": 7), read as
// decimal digits up to the next "/" or the end; 0 when there are none.
std::int64_t id_in_path(std::string_view path, std::string_view prefix);

// Small helpers shared by the checkers' messages.
std::string job_ref(std::int64_t job_id);
std::string attempt_ref(std::int64_t attempt_id);

}  // namespace onejob::check
