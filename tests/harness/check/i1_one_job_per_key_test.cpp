#include "harness/check/i1_one_job_per_key.hpp"

#include <boost/test/unit_test.hpp>

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using test::create_response;
using test::HistoryBuilder;
using test::job_created;

BOOST_AUTO_TEST_SUITE(i1_one_job_per_key)

BOOST_AUTO_TEST_CASE(a_clean_double_click_passes) {
  HistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k"))
      .add("api-1", create_response(201, 1, "alice", "k"))
      .add("api-1", create_response(200, 1, "alice", "k"))
      .add("api-1", job_created(2, "bob", "k"))
      .add("api-1", create_response(201, 2, "bob", "k"));
  BOOST_TEST(check_one_job_per_key(h.history()).empty());
}

BOOST_AUTO_TEST_CASE(two_jobs_for_one_owner_and_key_is_a_violation_at_the_second) {
  HistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k"))
      .add("api-1", create_response(201, 1, "alice", "k"))
      .add("api-2", job_created(2, "alice", "k"))
      .add("api-2", create_response(201, 2, "alice", "k"));
  const auto violations = check_one_job_per_key(h.history());
  BOOST_REQUIRE(!violations.empty());
  BOOST_TEST(violations[0].invariant == "I1");
  BOOST_TEST(violations[0].event_seq.value_or(0) == 3u);
  BOOST_TEST(violations[0].message.find("second job 2") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_response_with_another_jobs_id_is_a_violation) {
  HistoryBuilder h;
  h.add("api-1", job_created(1, "alice", "k"))
      .add("api-1", job_created(2, "alice", "other"))
      .add("api-1", create_response(200, 2, "alice", "k"));
  const auto violations = check_one_job_per_key(h.history());
  BOOST_REQUIRE(violations.size() == 1u);
  BOOST_TEST(violations[0].event_seq.value_or(0) == 3u);
}

BOOST_AUTO_TEST_CASE(a_response_before_any_job_exists_is_a_violation) {
  HistoryBuilder h;
  h.add("api-1", create_response(200, 1, "alice", "k")).add("api-1", job_created(1, "alice", "k"));
  BOOST_TEST(check_one_job_per_key(h.history()).size() == 1u);
}

BOOST_AUTO_TEST_CASE(refused_requests_are_not_judged) {
  HistoryBuilder h;
  h.add("api-1", Event("api.response").with("status", 422).with("owner", "alice").with("key", "k"));
  BOOST_TEST(check_one_job_per_key(h.history()).empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
