#include "system/adapters/memory_store.hpp"

#include <boost/test/unit_test.hpp>

#include "tests/support/run_sync.hpp"

namespace onejob {
namespace {

NewJob new_job(std::string owner, std::string key, std::string fingerprint = "POST /jobs\n{}") {
  return NewJob{.owner_id = std::move(owner),
                .idempotency_key = std::move(key),
                .request_fingerprint = std::move(fingerprint),
                .operation = "classify",
                .target_provider = "alpha",
                .payload_json = "{}",
                .created_at = Instant(Duration(42))};
}

using Outcome = InsertJobResult::Outcome;

BOOST_AUTO_TEST_SUITE(memory_store)

BOOST_AUTO_TEST_CASE(insert_returns_the_committed_row) {
  MemoryStore store;
  auto result = test::run_sync(store.insert_job(new_job("alice", "k1")));
  BOOST_TEST((result.outcome == Outcome::inserted));
  BOOST_REQUIRE(result.job.has_value());
  BOOST_TEST(result.job->id == 1);
  BOOST_TEST(result.job->owner_id == "alice");
  BOOST_TEST(result.job->version == 1);
  BOOST_TEST(result.job->created_at.time_since_epoch().count() == 42);
  BOOST_TEST(store.job_count() == 1u);
}

BOOST_AUTO_TEST_CASE(duplicate_owner_key_is_a_unique_violation_that_writes_nothing) {
  MemoryStore store;
  test::run_sync(store.insert_job(new_job("alice", "k1", "first")));
  auto second = test::run_sync(store.insert_job(new_job("alice", "k1", "second")));
  BOOST_TEST((second.outcome == Outcome::unique_violation));
  BOOST_TEST(!second.job.has_value());
  BOOST_TEST(store.job_count() == 1u);
  auto kept = test::run_sync(store.find_job_by_key("alice", "k1"));
  BOOST_REQUIRE(kept.has_value());
  BOOST_TEST(kept->request_fingerprint == "first");
}

BOOST_AUTO_TEST_CASE(a_rejected_insert_still_consumes_an_id_like_a_sequence) {
  MemoryStore store;
  test::run_sync(store.insert_job(new_job("alice", "k1")));
  test::run_sync(store.insert_job(new_job("alice", "k1")));
  auto third = test::run_sync(store.insert_job(new_job("alice", "k2")));
  BOOST_TEST(third.job->id == 3);
}

BOOST_AUTO_TEST_CASE(the_same_key_under_another_owner_is_another_job) {
  MemoryStore store;
  auto a = test::run_sync(store.insert_job(new_job("alice", "k1")));
  auto b = test::run_sync(store.insert_job(new_job("bob", "k1")));
  BOOST_TEST((b.outcome == Outcome::inserted));
  BOOST_TEST(a.job->id != b.job->id);
}

BOOST_AUTO_TEST_CASE(reads_are_owner_scoped) {
  MemoryStore store;
  auto a = test::run_sync(store.insert_job(new_job("alice", "k1")));
  BOOST_TEST(test::run_sync(store.find_job("alice", a.job->id)).has_value());
  BOOST_TEST(!test::run_sync(store.find_job("bob", a.job->id)).has_value());
  BOOST_TEST(!test::run_sync(store.find_job("alice", 999)).has_value());
  BOOST_TEST(!test::run_sync(store.find_job_by_key("bob", "k1")).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
