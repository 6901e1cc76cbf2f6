#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;

// Client request `request`: `owner` reads job 1 through api-1, which answers `status`, showing
// `shown` when it shows a job.
ApiCall read_job_1(std::int64_t request, std::string owner, std::int64_t status,
                   std::optional<std::int64_t> shown = std::nullopt) {
  return ApiCall{.request = request,
                 .route = "get_job",
                 .owner = std::move(owner),
                 .key = "",
                 .status = status,
                 .job_id = shown,
                 .asks = 1};
}

// `owner` sends request `request` reading job 1 and api-1 answers it. Returns the answer's seq.
std::uint64_t read(HistoryBuilder& h, const ApiCall& call) {
  h.add("browser", get_sent(call.request, call.owner, 1));
  return api_exchange(h, call).last_seq();
}

BOOST_AUTO_TEST_SUITE(i7_nothing_lost)

BOOST_AUTO_TEST_CASE(a_queued_job_and_owner_scoped_reads_pass) {
  HistoryBuilder h;
  // alice's first read reaches api-1 before job 1 commits: its 404 is right.
  const ApiCall early = read_job_1(1, "alice", 404);
  h.add("browser", get_sent(1, "alice", 1));
  api_request(h, early);
  insert_job(h, {});
  api_response(h, early);
  // Once committed, alice sees it; bob is told it does not exist.
  read(h, read_job_1(2, "alice", 200, 1));
  read(h, read_job_1(3, "bob", 404));
  require_none(check_nothing_lost(h.model()));
}

// A value the store cannot hold, refused: from an API node, whose client may have sent it (I13
// judges the answer); from a worker, the reconciler or the certifier, the system's own doing.
BOOST_AUTO_TEST_CASE(an_unstorable_write_is_a_violation_except_an_api_nodes) {
  const auto unstorable = [](std::string operation, std::string by) {
    return events::StoreRefused{.operation = std::move(operation),
                                .refusal = std::string(events::kRefusedUnstorable),
                                .by = std::move(by)};
  };
  HistoryBuilder h;
  read(h, read_job_1(1, "alice", 404));  // api-1 answers requests
  h.add(kStore, unstorable("insert_job", "api-1"));
  h.add(kStore, events::StoreRefused{.operation = "update_attempt",
                                     .refusal = std::string(events::kRefusedState),
                                     .by = "worker-1"});
  require_none(check_nothing_lost(h.model()));
  const auto worker = h.add(kStore, unstorable("update_attempt", "worker-1")).last_seq();
  require_one(check_nothing_lost(h.model()), "I7.write_unstorable", worker);
  HistoryBuilder certifier;
  const auto recorded =
      certifier.add(kStore, unstorable("record_certification", "certifier")).last_seq();
  require_one(find_invariant("I7")->check(certifier.model()), "I7.write_unstorable", recorded);
}

// What the store commits PostgreSQL must be able to hold: text without a NUL byte, in UTF-8 (by
// the checker's own reading: no overlong form, no surrogate, nothing past U+10FFFF).
BOOST_AUTO_TEST_CASE(a_commit_holding_text_postgresql_cannot_hold_is_a_violation) {
  const auto committed = [](std::string owner, std::string reason) {
    HistoryBuilder h;
    insert_job(h, {.owner = std::move(owner)});
    h.add(kStore, claimed(1, 1));
    auto failed = fenced_write(1, 1, AttemptState::running, AttemptState::failed);
    failed.reason = std::move(reason);
    const auto seq = h.add(kStore, failed).last_seq();
    return std::pair{check_nothing_lost(h.model()), seq};
  };
  require_none(committed("alice", "a reason of more than eight bytes, all of them ASCII").first);
  require_none(committed("alice", "refused: caf\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x98\x80").first);
  // A refusal holds the value it refused: not committed, not judged here.
  HistoryBuilder refused;
  refused.add(kStore, events::StoreRefused{.operation = "insert_job",
                                           .refusal = std::string(events::kRefusedUnstorable),
                                           .by = "api-1",
                                           .from = std::string("a\0b", 3)});
  auto refusals = check_nothing_lost(refused.model());
  std::erase_if(refusals, [](const auto& v) { return v.clause != "I7.unstorable_committed"; });
  require_none(refusals);
  for (const std::string& bad :
       {std::string("a\0b", 3), std::string("\xFF"), std::string("\xC0\xAF"),
        std::string("\xED\xA0\x80"), std::string("\xF4\x90\x80\x80"), std::string("\xE2\x9C"),
        std::string("0123456789\0bcdefghijklmn", 24),
        std::string("0123456789\xFF"
                    "bcdefghijklmn")}) {
    const auto [violations, seq] = committed("alice", "refused: " + bad);
    require_one(violations, "I7.unstorable_committed", seq);
  }
  // The job's insert, with its owner's name (seq 1).
  require_one(committed(std::string("mal\0lory", 8), "refused").first, "I7.unstorable_committed",
              1);
}

BOOST_AUTO_TEST_CASE(a_job_committed_without_its_first_attempt_is_a_violation) {
  HistoryBuilder h;
  const auto job = h.add(kStore, job_inserted({})).last_seq();
  require_one(find_invariant("I7")->check(h.model()), "I7.job_without_attempt", job);
}

BOOST_AUTO_TEST_CASE(a_200_read_of_another_owners_job_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {.owner = "alice"});
  const auto answer = read(h, read_job_1(2, "bob", 200, 1));
  require_one(check_nothing_lost(h.model()), "I7.read_across_owners", answer);
}

BOOST_AUTO_TEST_CASE(a_404_to_the_owner_of_a_committed_job_is_a_violation) {
  HistoryBuilder h;
  insert_job(h, {.owner = "alice"});
  const auto answer = read(h, read_job_1(2, "alice", 404));
  const auto violations = check_nothing_lost(h.model());
  require_one(violations, "I7.job_hidden_from_owner", answer);
  BOOST_TEST(violations[0].evidence == std::vector<std::uint64_t>{1});
}

BOOST_AUTO_TEST_CASE(the_job_a_read_asks_for_is_the_one_its_path_names) {
  // alice's job 1 is committed. Paths that name no job (whatever the API made of them) are not
  // reads of job 1; one with leading zeros is.
  for (const char* path : {"/jobs/-1", "/jobs/0", "/jobs/+1", "/jobs/1x", "/jobs/2"}) {
    HistoryBuilder h;
    insert_job(h, {.owner = "alice"});
    auto call = read_job_1(2, "alice", 404);
    call.path = path;
    read(h, call);
    BOOST_TEST_CONTEXT(path) { require_none(check_nothing_lost(h.model())); }
  }
  HistoryBuilder h;
  insert_job(h, {.owner = "alice"});
  auto call = read_job_1(2, "alice", 404);
  call.path = "/jobs/001";
  const auto answer = read(h, call);
  require_one(check_nothing_lost(h.model()), "I7.job_hidden_from_owner", answer);
}

BOOST_AUTO_TEST_CASE(a_retry_or_cancel_answered_for_another_owners_job_is_a_violation) {
  // bob's retry and cancel on alice's job 1: any answer naming the job (201 or 409 alike) tells
  // bob it exists; only 404 is right.
  for (const auto& [route, status] : {std::pair<std::string, std::int64_t>{"create_attempt", 201},
                                      {"create_attempt", 409},
                                      {"cancel_attempt", 200}}) {
    HistoryBuilder h;
    insert_job(h, {.owner = "alice"});
    const auto answer = api_exchange(h, ApiCall{.request = 0,
                                                .route = route,
                                                .owner = "bob",
                                                .key = "",
                                                .status = status,
                                                .job_id = 1})
                            .last_seq();
    require_one(check_nothing_lost(h.model()), "I7.read_across_owners", answer);
  }
  HistoryBuilder h;
  insert_job(h, {.owner = "alice"});
  api_exchange(
      h,
      ApiCall{.request = 0, .route = "create_attempt", .owner = "bob", .key = "", .status = 404});
  api_exchange(h, ApiCall{.request = 0,
                          .route = "create_attempt",
                          .owner = "alice",
                          .key = "",
                          .status = 201,
                          .job_id = 1});
  require_none(check_nothing_lost(h.model()));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
