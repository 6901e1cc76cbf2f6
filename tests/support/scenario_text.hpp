#pragma once
// Scenario text in tests: a fixture with one part replaced, and the error loading it gives.

#include <string>

#include <boost/test/unit_test.hpp>

#include "harness/scenario/loader.hpp"

namespace onejob::test {

// Replaces the first occurrence of `from` in `text`.
inline std::string replace_first(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, "fixture lacks: " << from);
  return text.replace(at, from.size(), to);
}

// The "file:line:col: message" of loading `text`, or "" when it loads.
inline std::string error_of(const std::string& text) {
  try {
    scenario::parse_scenario(text, "s.yaml");
  } catch (const scenario::ScenarioError& error) {
    return error.what();
  }
  return "";
}

inline void check_error(const std::string& text, const std::string& location,
                        const std::string& words) {
  const auto error = error_of(text);
  BOOST_TEST_CONTEXT(error) {
    BOOST_TEST(error.rfind("s.yaml:" + location + ": ", 0) == 0u);
    BOOST_TEST(error.find(words) != std::string::npos);
  }
}

}  // namespace onejob::test
