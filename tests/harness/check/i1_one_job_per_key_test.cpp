#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;

// Clients sent creates with these (owner, key) pairs (requests 91, 92, ...; never answered).
void clients_sent(HistoryBuilder& h,
                  std::initializer_list<std::pair<std::string, std::string>> owner_keys) {
  std::int64_t request = 90;
  for (const auto& [owner, key] : owner_keys) {
    h.add("browser", create_sent(++request, owner, key, kBody));
  }
}

BOOST_AUTO_TEST_SUITE(i1_one_job_per_key)

BOOST_AUTO_TEST_CASE(a_create_and_its_replay_answered_with_the_stored_job_pass) {
  HistoryBuilder h;
  h.add("browser", create_sent(1, "alice", "k1", kBody));
  api_request(h, {.request = 1});
  insert_job(h, {});
  api_response(h, {.request = 1, .status = 201, .job_id = 1});
  h.add("browser", received(1, 201, 1));
  // The replay gets the same job; a 503 names no job and is not judged.
  h.add("browser", create_sent(2, "alice", "k1", kBody));
  api_exchange(h, {.request = 2, .status = 200, .job_id = 1});
  h.add("browser", received(2, 200, 1));
  h.add("browser", create_sent(3, "alice", "k1", kBody));
  api_exchange(h, {.request = 3, .status = 503});
  h.add("browser", received(3, 503, std::nullopt));
  // The same key of another owner is another job.
  clients_sent(h, {{"bob", "k1"}});
  insert_job(h, {.job_id = 2, .attempt_id = 2, .owner = "bob"});
  require_none(check_one_job_per_key(h.model()));
}

BOOST_AUTO_TEST_CASE(a_second_job_committed_for_one_key_is_a_violation) {
  HistoryBuilder h;
  clients_sent(h, {{"alice", "k1"}});
  insert_job(h, {.job_id = 1, .attempt_id = 1});
  insert_job(h, {.job_id = 2, .attempt_id = 2});
  const auto violations = find_invariant("I1")->check(h.model());
  require_one(violations, "I1.second_job_for_key", 4);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{2});
}

BOOST_AUTO_TEST_CASE(an_api_answer_naming_another_keys_job_is_a_violation) {
  HistoryBuilder h;
  clients_sent(h, {{"alice", "k1"}, {"alice", "k2"}});
  insert_job(h, {.job_id = 1, .attempt_id = 1, .key = "k1"});
  insert_job(h, {.job_id = 2, .attempt_id = 2, .key = "k2"});
  const auto answer = api_exchange(h, {.request = 0, .status = 200, .job_id = 2}).last_seq();
  const auto violations = check_one_job_per_key(h.model());
  require_one(violations, "I1.answered_another_job", answer);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{3});
}

BOOST_AUTO_TEST_CASE(a_201_before_the_store_committed_the_job_is_a_violation) {
  HistoryBuilder h;
  clients_sent(h, {{"alice", "k1"}});
  api_request(h, {.request = 0});
  const auto answer = api_response(h, {.request = 0, .status = 201, .job_id = 1}).last_seq();
  insert_job(h, {});
  require_one(check_one_job_per_key(h.model()), "I1.answered_key_has_no_job", answer);
}

BOOST_AUTO_TEST_CASE(a_client_receiving_another_keys_job_is_a_violation) {
  HistoryBuilder h;
  clients_sent(h, {{"alice", "k2"}});
  insert_job(h, {.job_id = 1, .attempt_id = 1, .key = "k1"});
  insert_job(h, {.job_id = 2, .attempt_id = 2, .key = "k2"});
  h.add("browser", create_sent(1, "alice", "k1", kBody));
  const auto receipt = h.add("browser", received(1, 200, 2)).last_seq();
  require_one(check_one_job_per_key(h.model()), "I1.answered_another_job", receipt);
}

BOOST_AUTO_TEST_CASE(a_client_receiving_a_201_that_names_no_job_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add("browser", create_sent(1, "alice", "k1", kBody));
  const auto receipt = h.add("browser", received(1, 201, std::nullopt)).last_seq();
  require_one(check_one_job_per_key(h.model()), "I1.answered_another_job", receipt);
}

BOOST_AUTO_TEST_CASE(a_job_for_a_key_no_client_sent_is_a_violation) {
  // The balancer retried the create under a key of its own: a second job for one click.
  HistoryBuilder h;
  clients_sent(h, {{"alice", "k1"}});
  insert_job(h, {.job_id = 1, .attempt_id = 1, .key = "k1"});
  const auto made_up =
      insert_job(h, {.job_id = 2, .attempt_id = 2, .key = "k1~lb2"}).last_seq() - 1;
  require_one(check_one_job_per_key(h.model()), "I1.job_nobody_sent", made_up);
}

BOOST_AUTO_TEST_CASE(a_double_click_answered_201_and_200_around_the_insert_passes) {
  HistoryBuilder h;
  clients_sent(h, {{"alice", "k1"}});
  api_request(h, {.request = 1});
  api_request(h, {.request = 2});
  insert_job(h, {});
  api_response(h, {.request = 2, .status = 201, .job_id = 1});
  api_response(h, {.request = 1, .status = 200, .job_id = 1});
  require_none(check_one_job_per_key(h.model()));
}

BOOST_AUTO_TEST_CASE(a_201_from_a_node_that_did_not_insert_the_job_is_a_violation) {
  HistoryBuilder h;
  clients_sent(h, {{"alice", "k1"}});
  api_request(h, {.request = 1, .node = "api-2"});
  const auto insert = insert_job(h, {}).last_seq() - 1;  // api-1's insert
  const auto answer = api_response(h, {.request = 1, .job_id = 1, .node = "api-2"}).last_seq();
  const auto violations = check_one_job_per_key(h.model());
  require_one(violations, "I1.created_not_inserted", answer);
  BOOST_TEST(violations[0].evidence.front() == insert);
}

BOOST_AUTO_TEST_CASE(a_replay_answered_201_is_a_violation) {
  // The create that inserted the job got its 201; a later one with the same key found it.
  HistoryBuilder h;
  clients_sent(h, {{"alice", "k1"}});
  api_request(h, {.request = 1});
  insert_job(h, {});
  api_response(h, {.request = 1, .job_id = 1});
  const auto replay = api_exchange(h, {.request = 2, .job_id = 1}).last_seq();
  require_one(check_one_job_per_key(h.model()), "I1.created_not_inserted", replay);
}

BOOST_AUTO_TEST_CASE(two_201s_around_one_insert_are_a_violation) {
  HistoryBuilder h;
  clients_sent(h, {{"alice", "k1"}});
  api_request(h, {.request = 1});
  api_request(h, {.request = 2});
  insert_job(h, {});
  const auto first = api_response(h, {.request = 1, .job_id = 1}).last_seq();
  const auto second = api_response(h, {.request = 2, .job_id = 1}).last_seq();
  const auto violations = check_one_job_per_key(h.model());
  require_one(violations, "I1.created_not_inserted", second);
  BOOST_TEST(violations[0].evidence.back() == first);
}

BOOST_AUTO_TEST_CASE(an_insert_answered_200_by_the_create_that_made_it_is_a_violation) {
  HistoryBuilder h;
  clients_sent(h, {{"alice", "k1"}});
  api_request(h, {.request = 1});
  const auto insert = insert_job(h, {}).last_seq() - 1;
  const auto answer = api_response(h, {.request = 1, .status = 200, .job_id = 1}).last_seq();
  const auto violations = check_one_job_per_key(h.model());
  require_one(violations, "I1.insert_not_created", answer);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{insert});
}

BOOST_AUTO_TEST_CASE(an_insert_whose_reply_was_lost_or_whose_node_never_answered_passes) {
  // The inserting create met a lost reply (503) or its node went down before answering: no 201
  // is owed to the other create under way, which found the job.
  for (const bool answered : {true, false}) {
    HistoryBuilder h;
    clients_sent(h, {{"alice", "k1"}});
    api_request(h, {.request = 1});
    api_request(h, {.request = 2});
    insert_job(h, {});
    api_response(h, {.request = 2, .status = 200, .job_id = 1});
    if (answered) api_response(h, {.request = 1, .status = 503});
    require_none(check_one_job_per_key(h.model()));
  }
}

BOOST_AUTO_TEST_CASE(a_duplicated_request_is_judged_as_one_under_way_from_its_first_arrival) {
  // The network delivered request 1 twice under one id; its second arrival's insert was refused
  // and that reply lost (503, answered first), the first arrival's insert committed (201, answered
  // last): which answer is whose is unknown, and the pair is one create under way.
  HistoryBuilder h;
  clients_sent(h, {{"alice", "k1"}});
  api_request(h, {.request = 1});
  insert_job(h, {});
  api_request(h, {.request = 1});
  api_response(h, {.request = 1, .status = 503});
  api_response(h, {.request = 1, .job_id = 1});
  require_none(check_one_job_per_key(h.model()));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
