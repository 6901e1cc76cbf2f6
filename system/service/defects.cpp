#include "system/service/defects.hpp"

#include <algorithm>

#include "system/domain/names.hpp"

namespace onejob {
namespace {

constexpr DefectInfo kDefects[] = {
    {Defect::check_then_insert, "check-then-insert",
     "POST /jobs looks the key up, then inserts with no unique constraint: two concurrent creates "
     "of one key make two jobs",
     true},
    {Defect::ignore_fingerprint, "ignore-fingerprint",
     "a reused key answers 200 with the stored job whatever the request (no 422)"},
    {Defect::fingerprint_without_provider, "fingerprint-without-provider",
     "the request fingerprint leaves out the provider and failover list: the same key and input "
     "on other providers passes as a replay"},
    {Defect::timeout_is_failure, "timeout-is-failure",
     "a provider call past its deadline, or whose transport broke after sending, marks the attempt "
     "FAILED and fails over, instead of UNKNOWN"},
    {Defect::lease_expiry_is_failure, "lease-expiry-is-failure",
     "the reconciler marks an attempt whose lease expired FAILED and fails over, instead of "
     "UNKNOWN"},
    {Defect::retry_while_unknown, "retry-while-unknown",
     "the one-live-attempt index leaves out UNKNOWN: a retry starts while an outcome is unknown",
     true},
    {Defect::blind_overwrite, "blind-overwrite",
     "completion writes the job's result without the compare-and-swap guard (no completed_by IS "
     "NULL, no version): the last completion wins",
     true},
    {Defect::late_merge, "late-merge",
     "a losing completion still writes its result to the job (completed_by unchanged): a read "
     "shows the discarded result",
     true},
    {Defect::skip_contract, "skip-contract",
     "automatic failover does not require a passing contract certification"},
    {Defect::schema_only_contract, "schema-only-contract",
     "certification checks only the output schema, not the known answers: a provider that "
     "answers in the right shape with the wrong content passes"},
    {Defect::unfenced_worker, "unfenced-worker",
     "attempt writes ignore the lease token: a worker whose lease was taken over still writes",
     true},
    {Defect::cancel_does_not_unblock, "cancel-does-not-unblock",
     "cancelling an UNKNOWN attempt leaves it holding the one-live-attempt slot: the job stays "
     "blocked and retries are refused",
     true},
    {Defect::lb_new_key, "lb-new-key",
     "the load balancer retries a POST /jobs with a fresh Idempotency-Key"},
    {Defect::foreign_owner_retry, "foreign-owner-retry",
     "POST /jobs/{id}/attempts and cancel do not check that the job is the caller's"},
    {Defect::lost_create, "lost-create",
     "POST /jobs answers 201 before it knows the insert committed: a store failure loses an "
     "acknowledged job"},
    {Defect::answer_needs_exact_state, "answer-needs-exact-state",
     "a provider's answer is written expecting only the state the worker believes (RUNNING in "
     "time, UNKNOWN late): when the deadline's write loses the race to the answer, the answer is "
     "refused and dropped"},
    {Defect::drop_late_reply, "drop-late-reply",
     "a reply that arrives after the attempt's deadline is ignored instead of settled"},
    {Defect::no_redrive, "no-redrive",
     "the reconciler leaves UNKNOWN an attempt whose provider has no record of its key (it was "
     "never sent) instead of re-driving it under the same key"},
    {Defect::capacity_leak, "capacity-leak",
     "a worker keeps the capacity slot of an attempt that ends before the provider call (job "
     "already completed, prompt rejected): after worker_capacity of them it claims nothing"},
    {Defect::forget_lost_claims, "forget-lost-claims",
     "a worker whose claim's reply was lost never looks for the attempt it may hold: the attempt "
     "waits for its lease to expire, and without a reconciler stays RUNNING forever"},
    {Defect::replay_current_state, "replay-current-state",
     "a replayed retry answers with the attempt's state now instead of repeating its first answer"},
    {Defect::record_refused_action, "record-refused-action",
     "a cancel the store refuses (the attempt is not live) still records its Idempotency-Key: the "
     "same request again is replayed as a successful cancel",
     true},
    {Defect::action_key_ignores_request, "action-key-ignores-request",
     "an operator action's key replays its recorded outcome whatever the request it comes with "
     "(no 422 for another action, job or body)"},
    {Defect::replay_unmarked, "replay-unmarked",
     "a replayed operator action leaves out the Idempotent-Replayed header"},
    {Defect::failover_past_limit, "failover-past-limit",
     "failover stops only after attempt_limit + 1 attempts (an off-by-one in the limit)"},
    {Defect::claim_past_capacity, "claim-past-capacity",
     "a worker claims while it runs worker_capacity attempts (an off-by-one in the capacity "
     "check)"},
    {Defect::fail_won_job_attempt, "fail-won-job-attempt",
     "a claimed attempt of a job another attempt already won is marked FAILED instead of "
     "CANCELLED"},
    {Defect::store_error_500, "store-error-500",
     "a store failure reaches the client as 500 instead of 503 with Retry-After"},
    {Defect::key_limit_off_by_one, "key-limit-off-by-one",
     "an Idempotency-Key of exactly 255 characters is refused as invalid"},
    {Defect::cancel_skips_unknown, "cancel-skips-unknown",
     "an operator's cancel of an UNKNOWN attempt is refused as not live (it cancels only STARTING "
     "and RUNNING), so a blocked job cannot be unblocked"},
    {Defect::discard_reports_winner, "discard-reports-winner",
     "result.discarded reports the winner's result bytes instead of the discarded ones"},
    {Defect::read_shows_attempt_results, "read-shows-attempt-results",
     "a job read lists each attempt's own result beside its state: a discarded result is visible "
     "to the reader"},
};

static_assert(lists_in_order(kDefects, &DefectInfo::defect) && std::size(kDefects) == kDefectCount,
              "kDefects lists every Defect once, in declaration order");

}  // namespace

std::span<const DefectInfo> all_defects() { return kDefects; }

std::optional<Defect> find_defect(std::string_view name) {
  auto found = std::ranges::find(kDefects, name, &DefectInfo::name);
  if (found == std::end(kDefects)) return std::nullopt;
  return found->defect;
}

std::string_view name_of(Defect defect) { return kDefects[static_cast<std::size_t>(defect)].name; }

}  // namespace onejob
