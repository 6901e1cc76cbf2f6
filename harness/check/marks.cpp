#include "harness/check/marks.hpp"

#include <algorithm>

namespace onejob::check {

const std::vector<MarkInfo>& all_marks() {
  static const std::vector<MarkInfo> marks = {
      {"duplicate_key_refused", "a create hit the (owner, key) unique constraint"},
      {"write_reply_lost",
       "a write's reply was lost after the statement ran (it may have committed)"},
      {"commit_unknown_resolved",
       "a create whose reply was lost after its commit was answered later with that job"},
      {"timeout_unknown", "an attempt went RUNNING -> UNKNOWN"},
      {"lease_taken_over", "a lease was taken over (the token bumped under a holder)"},
      {"fenced_write_refused", "the store refused a write carrying a stale lease token"},
      {"state_write_refused", "the store refused a write that expected another attempt state"},
      {"live_attempt_refused", "the one-live-attempt index refused a new attempt"},
      {"cas_lost", "a completion lost the compare-and-swap: its result was discarded"},
      {"cas_tie", "two completions of one job committed at the same instant"},
      {"late_result_won", "an attempt already UNKNOWN or CANCELLED won its job"},
      {"late_result_discarded", "an attempt already UNKNOWN or CANCELLED lost its job"},
      {"unknown_resolved_failed", "an UNKNOWN attempt was resolved as FAILED"},
      {"cancel_then_result", "an operator cancelled an attempt whose result later reached the CAS"},
      {"operator_cancel", "an operator cancelled a live attempt"},
      {"operator_retry", "an operator's explicit attempt was inserted"},
      {"failover", "an automatic failover attempt was inserted"},
      {"job_failed", "a job failed (every permitted provider definitively failed)"},
      {"certification_failed", "a provider failed its contract certification"},
      {"invalid_output_rejected", "a provider's output broke its contract and was rejected"},
      {"provider_dedup", "a provider answered a repeated key from its own dedup"},
      {"node_crash", "a node crashed"},
      {"node_restart", "a crashed node started again"},
      {"node_pause", "a node froze and went on as the same incarnation"},
      {"connection_reset", "a connection reset after its request was delivered"},
      {"awaiting_operator", "a job ended parked after an operator's cancel"},
      {"blocked", "a job ended blocked on an UNKNOWN attempt"},
  };
  return marks;
}

bool is_mark(std::string_view name) {
  return std::ranges::find(all_marks(), name, &MarkInfo::name) != all_marks().end();
}

}  // namespace onejob::check
