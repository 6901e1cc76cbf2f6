#pragma once

#include <algorithm>
#include <string_view>

namespace onejob::check {

// What a simulated provider's execution gives its caller, by the outcome word the trace records
// (provider.execute's "outcome"; the words are scenarios/README's), stated here for the rules: an
// answer the operation's contract accepts (right, or for "plausible" wrong in content only), an
// answer the contract refuses, a definitive refusal, or no answer at all.
enum class OutcomeGives { accepted_answer, refused_answer, refusal, nothing, unknown };

struct OutcomeWord {
  std::string_view word;
  OutcomeGives gives;
};

inline constexpr OutcomeWord kOutcomeWords[] = {
    {"ok", OutcomeGives::accepted_answer},
    {"plausible", OutcomeGives::accepted_answer},
    {"malformed", OutcomeGives::refused_answer},
    {"hallucinated_key", OutcomeGives::refused_answer},
    {"wrong_operation", OutcomeGives::refused_answer},
    {"garbled_answer", OutcomeGives::refused_answer},
    {"error", OutcomeGives::refusal},
    {"garbled_refusal", OutcomeGives::refusal},
    {"hang", OutcomeGives::nothing},
};

// What an execution recorded with `outcome` gave; unknown for a word not in the table.
constexpr OutcomeGives outcome_gives(std::string_view outcome) {
  const auto* found = std::ranges::find(kOutcomeWords, outcome, &OutcomeWord::word);
  return found == std::end(kOutcomeWords) ? OutcomeGives::unknown : found->gives;
}

}  // namespace onejob::check
