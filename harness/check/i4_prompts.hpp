#pragma once

#include <vector>

#include "harness/check/invariant.hpp"

namespace onejob::check {

// I4's judgment of what a provider is sent (see i4_prompts.cpp): an attempt failed before any
// call had a reason to (failed_without_reason), no prompt over the provider's limit is sent
// (prompt_over_limit), and every call carries the prompt its provider's template renders
// (prompt_misrendered) at temperature 0 (temperature_not_zero).
void check_prompts(const HistoryModel& model, std::vector<Violation>& out);

}  // namespace onejob::check
