#include "harness/check/invariant.hpp"

#include <algorithm>
#include <charconv>

#include "system/domain/check.hpp"
#include "system/domain/names.hpp"

namespace onejob::check {

const std::vector<Invariant>& all_invariants() {
  static const std::vector<Invariant> invariants = {
      {"I1", "one job per (owner, key); every accepted create names the stored job for its key",
       check_one_job_per_key},
      {"I2", "same key, different request: 422, no job id returned, nothing stored",
       check_key_reuse_conflict},
      {"I3", "at most one live (STARTING/RUNNING/UNKNOWN) attempt per job at any instant",
       check_one_live_attempt},
      {"I4",
       "a timeout yields UNKNOWN, never FAILED; a job fails only while pending and nothing of it "
       "may still run",
       check_timeout_is_unknown},
      {"I5", "one winner per job; the result is the winner's, for the store and for readers",
       check_one_winner},
      {"I6", "automatic failover only to certified providers; invalid output is never a result",
       check_certified_failover},
      {"I7", "no accepted job is lost; reads are owner-scoped", check_nothing_lost},
      {"I8",
       "after the faults, every job completes or fails unless its truth is out of the system's "
       "reach or an operator must act: no answer dropped, no attempt never sent or unclaimed",
       check_liveness},
      {"I9", "a provider runs a job again only after an explicit cancel, never after a timeout",
       check_side_effects},
      {"I10", "no write by a lease holder commits after its lease was taken over", check_fencing},
      {"I11",
       "an operator's retry or cancel is idempotent: one action per key, every success backed by "
       "it and answered alike, a key never shared across requests",
       check_operator_actions},
      {"I12", "the policy in force holds: no failover past attempt_limit, no worker past capacity",
       check_policy},
      {"I13",
       "answers keep the API contract: 503 with Retry-After (never 500) for store failures, "
       "limits judged at their exact boundaries, refusals that tell the truth",
       check_api_contract},
      {"I14", "what a node reports about its own writes matches the commit log", check_reports},
  };
  return invariants;
}

const std::vector<std::string_view>& all_safety_clauses() {
  static const std::vector<std::string_view> clauses = {
      "I1.second_job_for_key",
      "I1.job_nobody_sent",
      "I1.answered_key_has_no_job",
      "I1.answered_another_job",
      "I1.created_not_inserted",
      "I1.insert_not_created",
      "I2.reuse_accepted",
      "I2.conflict_names_a_job",
      "I2.conflict_for_a_free_key",
      "I2.replay_refused",
      "I2.reuse_misanswered",
      "I3.claim_not_oldest",
      "I3.two_live",
      "I3.attempt_of_unknown_job",
      "I3.moved_never_inserted",
      "I3.moved_from_another_state",
      "I3.illegal_step",
      "I3.refused_without_live",
      "I3.attempt_after_win",
      "I4.timeout_failed",
      "I4.job_failed_while_unknown",
      "I4.job_failed_while_live",
      "I4.job_failed_after_win",
      "I4.job_failed_again",
      "I4.job_failed_while_parked",
      "I4.failed_not_cancelled",
      "I4.called_won_job",
      "I4.unknown_not_recorded",
      "I4.failed_without_reason",
      "I4.prompt_over_limit",
      "I4.prompt_misrendered",
      "I4.temperature_not_zero",
      "I4.redriven_without_not_found",
      "I4.asked_before_unknown",
      "I5.two_winners",
      "I5.version_not_bumped_once",
      "I5.result_not_offered",
      "I5.loser_reached_job",
      "I5.discarded_not_own",
      "I5.lost_without_winner",
      "I5.settled_without_cas",
      "I5.state_after_cas",
      "I5.read_after_win_not_won",
      "I5.read_wrong_winner",
      "I5.read_winner_unknown_to_store",
      "I5.read_wrong_result",
      "I5.discarded_result_shown",
      "I6.uncertified_provider",
      "I6.certified_without_call",
      "I6.certified_untested_operation",
      "I6.certified_on_failed_call",
      "I6.certification_refused_right_answer",
      "I6.failover_before_failure",
      "I6.failover_into_failed_job",
      "I6.failover_out_of_order",
      "I6.failover_skipped_certified",
      "I6.skip_misreported",
      "I6.resume_misreported",
      "I6.job_failed_with_provider_left",
      "I6.invalid_output_won",
      "I6.result_never_produced",
      "I6.result_not_answered",
      "I7.job_without_attempt",
      "I7.read_across_owners",
      "I7.job_hidden_from_owner",
      "I7.write_unstorable",
      "I7.unstorable_committed",
      "I8.answer_dropped",
      "I8.truth_not_learned",
      "I8.never_sent",
      "I8.unclaimed",
      "I8.still_running",
      "I8.stuck",
      "I8.cancelled_result_dropped",
      "I9.executed_twice",
      "I9.executed_beside_earlier",
      "I9.key_shared",
      "I9.key_format",
      "I9.executed_elsewhere",
      "I10.write_after_takeover",
      "I10.lease_not_handed_over",
      "I10.refusal_misjudged",
      "I10.takeover_before_expiry",
      "I10.foreign_lease_written",
      "I11.key_committed_twice",
      "I11.unbacked_success",
      "I11.answer_misstates",
      "I11.replay_differs",
      "I11.key_shared",
      "I11.replay_unmarked",
      "I11.first_marked_replayed",
      "I11.replay_refused",
      "I11.free_key_refused",
      "I12.attempt_limit",
      "I12.over_capacity",
      "I12.call_doubled",
      "I12.redrive_limit",
      "I12.call_deadline",
      "I12.lease_length",
      "I12.backoff_out_of_bounds",
      "I12.backoff_not_jittered",
      "I12.backoff_not_grown",
      "I12.backoff_not_waited",
      "I12.status_overdue",
      "I12.status_dropped",
      "I13.internal_error",
      "I13.no_retry_after",
      "I13.answer_leaks_internals",
      "I13.failure_unnamed",
      "I13.limit_misjudged",
      "I13.route_misjudged",
      "I13.answer_misrecorded",
      "I13.refusal_untrue",
      "I13.read_misstates",
      "I13.create_misstates",
      "I13.error_misnamed",
      "I13.location_wrong",
      "I13.answer_not_json",
      "I13.unstorable_misanswered",
      "I14.report_untrue",
      "I14.report_incomplete",
      "I14.report_misnamed",
      "I14.report_missing",
      "I14.acted_while_down",
      "log.job_row_missing",
      "log.job_row_differs",
      "log.attempt_row_missing",
      "log.attempt_state_differs",
  };
  return clauses;
}

bool is_safety_clause(std::string_view clause) {
  return std::ranges::find(all_safety_clauses(), clause) != all_safety_clauses().end();
}

const Invariant* find_invariant(std::string_view id) {
  const auto& invariants = all_invariants();
  auto it = std::ranges::find(invariants, id, &Invariant::id);
  return it == invariants.end() ? nullptr : &*it;
}

const std::vector<RuleInfo>& all_rules() {
  static const std::vector<RuleInfo> rules = [] {
    std::vector<RuleInfo> all;
    for (const auto& invariant : all_invariants()) all.push_back({invariant.id, Category::safety});
    all.push_back({"log", Category::safety});
    all.push_back({"expect", Category::expectation});
    all.push_back({"availability", Category::availability});
    all.push_back({"run", Category::run});
    all.push_back({"determinism", Category::run});
    all.push_back({"store-equivalence", Category::run});
    return all;
  }();
  return rules;
}

std::string_view to_string(Category category) {
  static constexpr Named<Category> kNames[] = {
      {Category::safety, "safety"},
      {Category::expectation, "expectation"},
      {Category::availability, "availability"},
      {Category::run, "run"},
  };
  static_assert(names_cover(kNames));
  return name_of(kNames, category);
}

Violation violation(std::string_view clause, std::string message,
                    std::optional<std::uint64_t> event_seq, std::vector<std::uint64_t> evidence) {
  const auto dot = clause.find('.');
  const std::string_view rule = clause.substr(0, dot);
  const auto& rules = all_rules();
  const auto known = std::ranges::find(rules, rule, &RuleInfo::id);
  ONEJOB_ASSERT(known != rules.end() && dot != std::string_view::npos && dot + 1 < clause.size(),
                "a violation's clause is <rule>.<name> of a known rule: " + std::string(clause));
  ONEJOB_ASSERT(known->category != Category::safety || is_safety_clause(clause),
                "a safety clause is registered in all_safety_clauses: " + std::string(clause));
  return Violation{std::string(rule),  std::string(clause), known->category,
                   std::move(message), event_seq,           std::move(evidence)};
}

bool is_safety(const Violation& violation) { return violation.category == Category::safety; }

std::string job_ref(std::int64_t job_id) { return "job " + std::to_string(job_id); }
std::string attempt_ref(std::int64_t attempt_id) { return "attempt " + std::to_string(attempt_id); }

std::int64_t id_in_path(std::string_view path, std::string_view prefix) {
  if (!path.starts_with(prefix)) return 0;
  path.remove_prefix(prefix.size());
  path = path.substr(0, path.find('/'));
  std::int64_t id = 0;
  const auto [end, error] = std::from_chars(path.data(), path.data() + path.size(), id);
  return error == std::errc{} && end == path.data() + path.size() ? id : 0;
}

}  // namespace onejob::check
