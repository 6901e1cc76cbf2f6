#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;

// kBody with its keys in another order and other spacing: the same request.
const std::string kReordered =
    R"({ "provider": "alpha", "operation": "classify", "input": { "text": "please refund me" } })";
const std::string kOtherProvider =
    R"({"input":{"text":"please refund me"},"operation":"classify","provider":"beta"})";
const std::string kWithFailover =
    R"({"failover":["beta"],"input":{"text":"please refund me"},"operation":"classify","provider":"alpha"})";

// Client request 1 creates job 1 for alice's key k1 with kBody (the job commits at event 4).
void create_job_1(HistoryBuilder& h) {
  h.add("browser", create_sent(1, "alice", "k1", kBody));
  api_request(h, {.request = 1});
  insert_job(h, {});
  api_response(h, {.request = 1, .status = 201, .job_id = 1});
}

// Client request `request` sends `body` for alice's key k1; api-1 answers `status`, naming
// `job_id`, with error `error` (a 422's is idempotency_key_reused unless told). Returns the
// answer's seq.
std::uint64_t send_again(HistoryBuilder& h, std::int64_t request, const std::string& body,
                         std::int64_t status, std::optional<std::int64_t> job_id = std::nullopt,
                         std::optional<std::string> error = std::nullopt) {
  if (status == 422 && !error) error = "idempotency_key_reused";
  h.add("browser", create_sent(request, "alice", "k1", body));
  return api_exchange(h, {.request = request, .status = status, .job_id = job_id, .error = error})
      .last_seq();
}

BOOST_AUTO_TEST_SUITE(i2_key_reuse_conflict)

BOOST_AUTO_TEST_CASE(a_reordered_replay_gets_200_and_another_body_gets_422_pass) {
  HistoryBuilder h;
  create_job_1(h);
  send_again(h, 2, kReordered, 200, 1);
  send_again(h, 3, kOtherProvider, 422);
  require_none(check_key_reuse_conflict(h.model()));
}

BOOST_AUTO_TEST_CASE(a_200_for_a_body_naming_another_provider_is_a_violation) {
  HistoryBuilder h;
  create_job_1(h);
  const auto answer = send_again(h, 2, kOtherProvider, 200, 1);
  const auto violations = find_invariant("I2")->check(h.model());
  require_one(violations, "I2.reuse_accepted", answer);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{4});
}

BOOST_AUTO_TEST_CASE(a_200_for_a_body_with_a_failover_list_added_is_a_violation) {
  HistoryBuilder h;
  create_job_1(h);
  const auto answer = send_again(h, 2, kWithFailover, 200, 1);
  require_one(check_key_reuse_conflict(h.model()), "I2.reuse_accepted", answer);
}

BOOST_AUTO_TEST_CASE(
    a_reused_key_answered_otherwise_than_422_idempotency_key_reused_is_a_violation) {
  // 409 is an attempt in flight, not a key reused; a 422 under another error word.
  for (const auto& [status, error] :
       std::vector<std::pair<std::int64_t, std::optional<std::string>>>{
           {409, "attempt_in_flight"}, {404, std::nullopt}, {422, "conflict"}}) {
    HistoryBuilder h;
    create_job_1(h);
    const auto answer = send_again(h, 2, kOtherProvider, status, std::nullopt, error);
    const auto violations = check_key_reuse_conflict(h.model());
    require_one(violations, "I2.reuse_misanswered", answer);
    BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{4});
  }
  // Refused for what comes before the key (its body, its size, credentials, the server): I2
  // does not judge them. A replay answered 409 is a replay refused.
  for (const std::int64_t status : {400, 401, 403, 413, 503}) {
    HistoryBuilder h;
    create_job_1(h);
    send_again(h, 2, kOtherProvider, status);
    send_again(h, 3, kReordered, status);
    require_none(check_key_reuse_conflict(h.model()));
  }
  HistoryBuilder h;
  create_job_1(h);
  const auto replay = send_again(h, 2, kReordered, 409, std::nullopt, "attempt_in_flight");
  require_one(check_key_reuse_conflict(h.model()), "I2.replay_refused", replay);
}

BOOST_AUTO_TEST_CASE(a_422_for_an_equal_body_is_a_violation) {
  HistoryBuilder h;
  create_job_1(h);
  const auto answer = send_again(h, 2, kReordered, 422);
  const auto violations = check_key_reuse_conflict(h.model());
  require_one(violations, "I2.replay_refused", answer);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{4});
}

// The same bytes as the stored payload: the same request, read without parsing it again.
BOOST_AUTO_TEST_CASE(the_stored_bytes_again_are_a_replay) {
  HistoryBuilder h;
  create_job_1(h);
  send_again(h, 2, kBody, 200, 1);
  require_none(check_key_reuse_conflict(h.model()));
  const auto answer = send_again(h, 3, kBody, 422);
  require_one(check_key_reuse_conflict(h.model()), "I2.replay_refused", answer);
}

BOOST_AUTO_TEST_CASE(a_422_carrying_a_job_id_is_a_violation) {
  HistoryBuilder h;
  create_job_1(h);
  const auto answer = send_again(h, 2, kOtherProvider, 422, 1);
  require_one(check_key_reuse_conflict(h.model()), "I2.conflict_names_a_job", answer);
}

BOOST_AUTO_TEST_CASE(a_422_whose_body_names_a_job_is_a_violation_where_the_client_read_it) {
  HistoryBuilder h;
  create_job_1(h);
  send_again(h, 2, kOtherProvider, 422);
  // The API's answer names no job, but the body the client read does.
  const auto read = h.add("browser", received(2, 422, 1)).last_seq();
  require_one(check_key_reuse_conflict(h.model()), "I2.conflict_names_a_job", read);
}

BOOST_AUTO_TEST_CASE(a_422_for_a_key_no_job_holds_is_a_violation) {
  HistoryBuilder h;
  const auto answer = send_again(h, 1, kBody, 422);
  require_one(check_key_reuse_conflict(h.model()), "I2.conflict_for_a_free_key", answer);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
