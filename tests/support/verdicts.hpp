#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"

// What the checker tests require of a checker's verdicts, apart from how their histories are built
// (histories.hpp, which includes this).
namespace onejob::test {

// Every violation on one line each, for failure messages.
inline std::string describe(const std::vector<check::Violation>& violations) {
  std::string text = std::to_string(violations.size()) + " violation(s)";
  for (const auto& v : violations) {
    text += "\n  ";
    text += v.clause;
    text += " at #";
    text += std::to_string(v.event_seq.value_or(0));
    text += ": ";
    text += v.message;
  }
  return text;
}

// A checker found nothing.
inline void require_none(const std::vector<check::Violation>& violations) {
  BOOST_TEST(violations.empty(), describe(violations));
}

// No violation of `clause` among `violations`.
inline void require_no(const std::vector<check::Violation>& violations, std::string_view clause) {
  for (const auto& found : violations) BOOST_TEST(found.clause != clause, found.message);
}

// `violations` is exactly one violation, of `clause` ("<rule>.<name>"), at event `seq`. Tests
// match the clause, which names what broke, never the message's wording.
inline void require_one(const std::vector<check::Violation>& violations, std::string_view clause,
                        std::uint64_t seq) {
  BOOST_TEST_REQUIRE(violations.size() == 1u, describe(violations));
  BOOST_TEST(violations[0].clause == clause, describe(violations));
  BOOST_TEST(violations[0].rule == clause.substr(0, clause.find('.')));
  BOOST_TEST(check::is_safety(violations[0]));
  BOOST_TEST(violations[0].event_seq.value_or(0) == seq);
  BOOST_TEST(!violations[0].message.empty());
}

}  // namespace onejob::test
