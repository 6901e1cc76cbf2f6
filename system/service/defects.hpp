#pragma once

#include <bitset>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace onejob {

// Realistic bugs, each switchable at run time, that the harness must catch: its own proof that
// the gate has teeth (`onejob selftest`). The system consults one Defects value at each place a
// defect changes behaviour; with none set every path is the normal one. The embedded store
// honours the store-level defects; PostgreSQL never has any.
enum class Defect {
  check_then_insert,
  ignore_fingerprint,
  fingerprint_without_provider,
  timeout_is_failure,
  lease_expiry_is_failure,
  retry_while_unknown,
  blind_overwrite,
  late_merge,
  skip_contract,
  schema_only_contract,
  unfenced_worker,
  cancel_does_not_unblock,
  lb_new_key,
  foreign_owner_retry,
  lost_create,
  answer_needs_exact_state,
  drop_late_reply,
  no_redrive,
  capacity_leak,
  forget_lost_claims,
  replay_current_state,
  record_refused_action,
  action_key_ignores_request,
  replay_unmarked,
  failover_past_limit,
  claim_past_capacity,
  fail_won_job_attempt,
  store_error_500,
  key_limit_off_by_one,
  cancel_skips_unknown,
  discard_reports_winner,
  read_shows_attempt_results,  // the last: kDefectCount counts through it
};

inline constexpr std::size_t kDefectCount =
    static_cast<std::size_t>(Defect::read_shows_attempt_results) + 1;

struct DefectInfo {
  Defect defect;
  std::string_view name;     // as on the command line: check-then-insert
  std::string_view summary;  // one line: what the bug does
  // Planted in the embedded store (MemoryStore): PostgreSQL's constraints cannot be switched
  // off, so a run on PgStore cannot have it.
  bool in_store = false;
};

// Every defect, in declaration order.
std::span<const DefectInfo> all_defects();
std::optional<Defect> find_defect(std::string_view name);
std::string_view name_of(Defect defect);

class Defects {
 public:
  Defects() = default;
  Defects& set(Defect defect) {
    on_.set(static_cast<std::size_t>(defect));
    return *this;
  }
  // Every defect of `other` on too.
  Defects& operator|=(const Defects& other) {
    on_ |= other.on_;
    return *this;
  }
  bool has(Defect defect) const { return on_.test(static_cast<std::size_t>(defect)); }
  bool any() const { return on_.any(); }

 private:
  std::bitset<kDefectCount> on_;
};

}  // namespace onejob
