#pragma once

#include <string>

#include "harness/scenario/spec.hpp"

namespace onejob::test {

// A small valid scenario: one client "browser" (owner alice), fixed 5ms latency, `requests`
// creates at t=0 with one key and one body.
scenario::ScenarioSpec double_click_spec(int requests, std::uint64_t seed);

// The JSON body every double_click_spec request sends.
std::string classify_body(const std::string& text);

}  // namespace onejob::test
