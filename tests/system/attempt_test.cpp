#include "system/domain/attempt.hpp"

#include <algorithm>

#include <boost/test/unit_test.hpp>

namespace onejob {
namespace {

using S = AttemptState;
constexpr S kAll[] = {S::starting, S::running,   S::unknown,  S::succeeded,
                      S::failed,   S::cancelled, S::discarded};

BOOST_AUTO_TEST_SUITE(attempt_domain)

BOOST_AUTO_TEST_CASE(the_table_is_the_only_source_of_legality) {
  const auto& table = legal_attempt_transitions();
  int legal = 0;
  for (S from : kAll) {
    for (S to : kAll) {
      const bool listed = std::ranges::find(table, std::pair{from, to}) != table.end();
      BOOST_TEST(is_legal_transition(from, to) == listed);
      if (listed) {
        ++legal;
        BOOST_CHECK_NO_THROW(require_legal_transition(from, to));
      } else {
        BOOST_CHECK_THROW(require_legal_transition(from, to), IllegalTransition);
      }
    }
  }
  BOOST_TEST(legal == static_cast<int>(table.size()));
}

BOOST_AUTO_TEST_CASE(terminal_states_never_leave_and_only_a_redrive_returns_to_starting) {
  for (S to : kAll) {
    BOOST_TEST(!is_legal_transition(S::succeeded, to));
    BOOST_TEST(!is_legal_transition(S::failed, to));
    BOOST_TEST(!is_legal_transition(S::discarded, to));
    BOOST_TEST(
        (!is_legal_transition(S::cancelled, to) || to == S::succeeded || to == S::discarded));
  }
  // A timeout is never a failure by itself, and only a re-drive goes back to STARTING: an
  // UNKNOWN attempt its provider has no record of.
  BOOST_TEST(!is_legal_transition(S::starting, S::unknown));
  for (S from : kAll) {
    BOOST_TEST(is_legal_transition(from, S::starting) == (from == S::unknown));
  }
}

BOOST_AUTO_TEST_CASE(live_states_and_names) {
  BOOST_TEST(is_live(S::starting));
  BOOST_TEST(is_live(S::running));
  BOOST_TEST(is_live(S::unknown));
  BOOST_TEST(!is_live(S::cancelled));
  for (S state : kAll) BOOST_TEST((parse_attempt_state(to_string(state)) == state));
  BOOST_TEST(!parse_attempt_state("running").has_value());
  BOOST_TEST(derive_provider_key(45, 3) == "45:3");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
