#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "system/ports/store_wrapper.hpp"
#include "system/service/certifier.hpp"
#include "system/service/deadline.hpp"

#include "tests/support/latent_store.hpp"
#include "tests/support/scenarios.hpp"
#include "tests/support/system_fixture.hpp"

namespace onejob {
namespace {

using test::json_int;
using test::json_string;

struct ApiFixture : test::SystemFixture {
  Response post(std::string body, std::optional<std::string> key = "key-1",
                std::string owner = "alice") {
    return request("POST", "/jobs", std::move(body), std::move(owner), std::move(key));
  }
};

BOOST_FIXTURE_TEST_SUITE(api_handler, ApiFixture)

// ---- POST /jobs ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(first_create_is_201_with_a_job_id_and_queues_attempt_1) {
  auto response = post(test::classify_body("hi"));
  BOOST_TEST(response.status == 201);
  BOOST_TEST(json_int(response, "job_id") == 1);
  BOOST_TEST(find_header(response.headers, "location").value_or("") == "/jobs/1");
  const auto attempts = this->attempts(1);
  BOOST_REQUIRE(attempts.size() == 1u);
  BOOST_TEST(attempts[0].provider == "alpha");
  BOOST_TEST(attempts[0].provider_key == "1:1");
  BOOST_TEST(to_string(attempts[0].state) == "STARTING");
}

BOOST_AUTO_TEST_CASE(hostile_bodies_are_answered_never_thrown_and_store_nothing) {
  // 100,000 nested arrays: refused before the (recursive) parse, dump and destruction.
  auto deep = post(std::string(100'000, '[') + std::string(100'000, ']'));
  BOOST_TEST(deep.status == 400);
  BOOST_TEST(json_string(deep, "message").find("nested deeper than 64 levels") !=
             std::string::npos);
  // A number beyond a double.
  auto huge = post(R"({"operation":"classify","provider":"alpha","input":{"text":"x","n":1e400}})");
  BOOST_TEST(huge.status == 400);
  BOOST_TEST(json_string(huge, "message").find("out of range") != std::string::npos);
  // Over the body limit: 413 before anything is parsed.
  auto big = post(std::string(kMaxBodyBytes + 1, ' '));
  BOOST_TEST(big.status == 413);
  BOOST_TEST(json_string(big, "error") == "payload_too_large");
  // At the depth limit a body is still parsed (and refused for what it says, not how deep).
  auto at_limit = post(std::string(64, '[') + std::string(64, ']'));
  BOOST_TEST(at_limit.status == 400);
  BOOST_TEST(json_string(at_limit, "message").find("nested deeper") == std::string::npos);
  BOOST_TEST(store.job_count() == 0u);
}

BOOST_AUTO_TEST_CASE(an_operator_retry_with_a_key_is_idempotent) {
  BOOST_REQUIRE(certify("alpha"));
  create("k-job");
  BOOST_TEST(request("POST", "/attempts/1001/cancel", "", "alice", std::nullopt).status == 200);
  auto retry = [&](std::string body, std::string key) {
    return request("POST", "/jobs/1/attempts", std::move(body), "alice", std::move(key));
  };
  const auto first = retry("", "op-1");
  BOOST_TEST(first.status == 201);
  BOOST_TEST(!find_header(first.headers, "Idempotent-Replayed"));
  // The reply was lost; the same request again gets the same attempt, not a 409.
  const auto again = retry("", "op-1");
  BOOST_TEST(again.status == 201);
  BOOST_TEST(json_int(again, "attempt_id") == json_int(first, "attempt_id"));
  BOOST_TEST(find_header(again.headers, "Idempotent-Replayed").value_or("") == "true");
  BOOST_TEST(store.attempt_count() == 2u);
  // The same key with another request: 422, nothing written.
  const auto other = retry(R"({"provider":"beta"})", "op-1");
  BOOST_TEST(other.status == 422);
  BOOST_TEST(json_string(other, "error") == "idempotency_key_reused");
  // Without a key the retry is judged afresh: attempt 2 is live.
  BOOST_TEST(retry("", "").status == 400);  // an empty key is not a key
  BOOST_TEST(request("POST", "/jobs/1/attempts", "", "alice", std::nullopt).status == 409);
  // Another owner's key space is its own, and the job is not theirs.
  BOOST_TEST(request("POST", "/jobs/1/attempts", "", "bob", std::string("op-1")).status == 404);
}

BOOST_AUTO_TEST_CASE(an_operator_cancel_with_a_key_is_idempotent) {
  create("k-job");
  const auto first = request("POST", "/attempts/1001/cancel", "", "alice", std::string("c-1"));
  BOOST_TEST(first.status == 200);
  const auto again = request("POST", "/attempts/1001/cancel", "", "alice", std::string("c-1"));
  BOOST_TEST(again.status == 200);
  BOOST_TEST(json_string(again, "state") == "CANCELLED");
  BOOST_TEST(find_header(again.headers, "Idempotent-Replayed").value_or("") == "true");
  // Without the key, the same cancel now finds nothing live.
  BOOST_TEST(request("POST", "/attempts/1001/cancel", "", "alice", std::nullopt).status == 409);
  // The key belongs to that cancel: another attempt's cancel with it is another request.
  BOOST_TEST(request("POST", "/attempts/1002/cancel", "", "alice", std::string("c-1")).status ==
             404);
}

BOOST_AUTO_TEST_CASE(replay_with_the_same_request_is_200_with_the_same_id) {
  auto first = post(test::classify_body("hi"));
  auto second = post(test::classify_body("hi"));
  BOOST_TEST(second.status == 200);
  BOOST_TEST(json_int(second, "job_id") == json_int(first, "job_id"));
  BOOST_TEST(store.job_count() == 1u);
  BOOST_TEST(store.attempt_count() == 1u);
}

BOOST_AUTO_TEST_CASE(key_order_and_whitespace_do_not_change_the_request) {
  auto first =
      post(R"({"operation":"extract","provider":"alpha","input":{"text":"t","fields":["a","b"]}})");
  auto second = post(
      R"( { "input" : { "fields":["a","b"], "text":"t" }, "provider":"alpha", "operation":"extract" } )");
  BOOST_TEST(first.status == 201);
  BOOST_TEST(second.status == 200);
  BOOST_TEST(json_int(second, "job_id") == json_int(first, "job_id"));
}

BOOST_AUTO_TEST_CASE(same_key_different_payload_is_422_without_a_job_id_and_stores_nothing) {
  post(test::classify_body("hi"));
  auto response = post(test::classify_body("something else"));
  BOOST_TEST(response.status == 422);
  BOOST_TEST(json_string(response, "error") == "idempotency_key_reused");
  BOOST_TEST(!nlohmann::json::parse(response.body).contains("job_id"));
  BOOST_TEST(store.job_count() == 1u);
  BOOST_TEST(store.attempt_count() == 1u);
}

BOOST_AUTO_TEST_CASE(same_key_other_provider_operation_or_failover_is_422) {
  post(R"({"operation":"classify","provider":"alpha","input":{"text":"x"}})");
  BOOST_TEST(post(R"({"operation":"classify","provider":"beta","input":{"text":"x"}})").status ==
             422);
  BOOST_TEST(post(R"({"operation":"summarize","provider":"alpha","input":{"text":"x"}})").status ==
             422);
  BOOST_TEST(
      post(
          R"({"operation":"classify","provider":"alpha","failover":["beta"],"input":{"text":"x"}})")
          .status == 422);
}

BOOST_AUTO_TEST_CASE(same_key_under_another_owner_is_another_job) {
  auto a = post(test::classify_body("hi"), "key-1", "alice");
  auto b = post(test::classify_body("hi"), "key-1", "bob");
  BOOST_TEST(b.status == 201);
  BOOST_TEST(json_int(a, "job_id") != json_int(b, "job_id"));
}

BOOST_AUTO_TEST_CASE(missing_key_is_400) {
  auto response = post(test::classify_body("hi"), std::nullopt);
  BOOST_TEST(response.status == 400);
  BOOST_TEST(json_string(response, "error") == "idempotency_key_missing");
  BOOST_TEST(store.job_count() == 0u);
}

BOOST_AUTO_TEST_CASE(keys_that_are_empty_too_long_or_not_printable_ascii_are_400) {
  for (const std::string& key : {std::string(), std::string(256, 'k'), std::string("tab\there"),
                                 std::string("caf\xc3\xa9")}) {
    auto response = post(test::classify_body("hi"), key);
    BOOST_TEST(response.status == 400);
    BOOST_TEST(json_string(response, "error") == "idempotency_key_invalid");
  }
  BOOST_TEST(post(test::classify_body("hi"), std::string(255, 'k')).status == 201);
  BOOST_TEST(store.job_count() == 1u);
}

BOOST_AUTO_TEST_CASE(header_names_are_case_insensitive) {
  Request request{.method = "POST",
                  .path = "/jobs",
                  .headers = {{"idempotency-key", "k"}},
                  .body = test::classify_body("hi"),
                  .principal = "alice",
                  .request_id = "r"};
  BOOST_TEST(run(api.handle(request)).status == 201);
}

BOOST_AUTO_TEST_CASE(invalid_bodies_are_400_and_store_nothing) {
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "invalid_json"},
      {R"({"operation":"classify","operation":"extract","provider":"alpha","input":{"text":"x"}})",
       "invalid_json"},
      {R"([1,2])", "invalid_body"},
      {R"({"operation":"classify","provider":"alpha","input":{"text":"x"},"owner":"mallory"})",
       "invalid_body"},
      {R"({"operation":"translate","provider":"alpha","input":{"text":"x"}})", "invalid_body"},
      {R"({"operation":"classify","provider":"nobody","input":{"text":"x"}})", "invalid_body"},
      {R"({"operation":"classify","provider":"alpha","failover":["alpha"],"input":{"text":"x"}})",
       "invalid_body"},
      {R"({"operation":"classify","provider":"alpha","failover":["beta","beta"],"input":{"text":"x"}})",
       "invalid_body"},
      {R"({"operation":"classify","provider":"alpha"})", "invalid_body"},
      {R"({"operation":"classify","provider":"alpha","input":{"text":""}})", "invalid_body"},
      {R"({"operation":"classify","provider":"alpha","input":{"text":"x","extra":1}})",
       "invalid_body"},
      {R"({"operation":"extract","provider":"alpha","input":{"text":"x","fields":[]}})",
       "invalid_body"},
      {R"({"operation":7,"provider":"alpha","input":{"text":"x"}})", "invalid_body"},
  };
  for (const auto& [body, error] : cases) {
    auto response = post(body);
    BOOST_TEST(response.status == 400, body);
    BOOST_TEST(json_string(response, "error") == error, body);
  }
  BOOST_TEST(store.job_count() == 0u);
}

BOOST_AUTO_TEST_CASE(unauthenticated_unknown_paths_and_wrong_methods) {
  BOOST_TEST(post(test::classify_body("hi"), "k", "").status == 401);
  BOOST_TEST(request("GET", "/jobs").status == 405);
  BOOST_TEST(request("POST", "/nope").status == 404);
  BOOST_TEST(request("GET", "/jobs/abc").status == 404);
  BOOST_TEST(request("GET", "/jobs/0").status == 404);
  BOOST_TEST(request("GET", "/jobs/+1").status == 404);
  BOOST_TEST(request("DELETE", "/jobs/1").status == 405);
  BOOST_TEST(request("GET", "/attempts/1001/cancel").status == 405);
  BOOST_TEST(store.job_count() == 0u);
}

BOOST_AUTO_TEST_CASE(events_report_requests_creations_and_responses) {
  loop.advance(std::chrono::seconds(3));
  post(test::classify_body("hi"));
  post(test::classify_body("hi"));
  BOOST_TEST(test::typed<events::ApiRequest>(events.events).size() == 2u);
  auto created = test::typed<events::JobCreated>(events.events);
  BOOST_REQUIRE(created.size() == 1u);
  BOOST_TEST(created[0].job_id == 1);
  BOOST_TEST(created[0].owner == "alice");
  BOOST_TEST(created[0].key == "key-1");
  BOOST_TEST(test::typed<events::AttemptCreated>(events.events).size() == 1u);
  auto responses = test::typed<events::ApiResponse>(events.events);
  BOOST_REQUIRE(responses.size() == 2u);
  BOOST_TEST(responses[0].status == 201);
  BOOST_TEST(responses[1].status == 200);
  BOOST_TEST(responses[1].job_id.value_or(0) == 1);
  BOOST_TEST(responses[1].route == "create_job");
  BOOST_TEST((job(1)->created_at.time_since_epoch() == Duration(std::chrono::seconds(3))));
}

// Seed breakpoint: simultaneous POSTs with one key, interleaved between their statements by a
// store with latency, in seeded orders: identical job ids, one job, one attempt.
BOOST_AUTO_TEST_CASE(concurrent_double_click_gets_identical_job_ids) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    sim::SimLoop world(sim::Rng{seed});
    MemoryStore memory;
    test::LatentStore latent(memory, world, std::chrono::milliseconds(3));
    SystemContext concurrent{latent, providers, world, world, events, config, random};
    ApiHandler handler(concurrent);
    std::vector<Response> responses(seed % 2 == 0 ? 2 : 10);
    for (auto& response : responses) {
      Request click{.method = "POST",
                    .path = "/jobs",
                    .headers = {{"Idempotency-Key", "click"}},
                    .body = test::classify_body("hi"),
                    .principal = "alice",
                    .request_id = "r"};
      boost::asio::co_spawn(world.io(), handler.handle(std::move(click)),
                            [&response](std::exception_ptr error, Response r) {
                              if (error) std::rethrow_exception(error);
                              response = std::move(r);
                            });
    }
    world.run();
    BOOST_TEST_CONTEXT("seed " << seed) {
      int created = 0;
      for (const auto& response : responses) {
        BOOST_TEST((response.status == 201 || response.status == 200));
        BOOST_TEST(json_int(response, "job_id") == 1);
        created += response.status == 201 ? 1 : 0;
      }
      BOOST_TEST(created == 1);
      BOOST_TEST(memory.job_count() == 1u);
      BOOST_TEST(memory.attempt_count() == 1u);
    }
  }
}

// ---- GET /jobs/{id} ------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(get_is_owner_scoped_and_another_owners_job_looks_absent) {
  post(test::classify_body("hi"), "k", "alice");
  auto own = request("GET", "/jobs/1", "", "alice");
  BOOST_TEST(own.status == 200);
  BOOST_TEST(json_string(own, "status") == "pending");
  auto probe = request("GET", "/jobs/1", "", "bob");
  auto absent = request("GET", "/jobs/99", "", "bob");
  BOOST_TEST(probe.status == 404);
  BOOST_TEST(probe.body == absent.body);  // indistinguishable, byte for byte
}

// ---- POST /jobs/{id}/attempts and POST /attempts/{id}/cancel ---------------------------------

BOOST_AUTO_TEST_CASE(explicit_attempt_while_one_is_live_is_409_attempt_in_flight) {
  BOOST_TEST(certify("beta"));
  post(test::classify_body("hi"));
  auto response = request("POST", "/jobs/1/attempts", R"({"provider":"beta"})");
  BOOST_TEST(response.status == 409);
  BOOST_TEST(json_string(response, "error") == "attempt_in_flight");
  BOOST_TEST(store.attempt_count() == 1u);
}

BOOST_AUTO_TEST_CASE(cancel_unblocks_an_explicit_attempt_on_a_certified_provider) {
  BOOST_TEST(certify("beta"));
  post(test::classify_body("hi"));
  auto cancel = request("POST", "/attempts/1001/cancel");
  BOOST_TEST(cancel.status == 200);
  BOOST_TEST(json_string(cancel, "state") == "CANCELLED");
  auto retry = request("POST", "/jobs/1/attempts", R"({"provider":"beta"})");
  BOOST_TEST(retry.status == 201);
  BOOST_TEST(json_int(retry, "attempt_no") == 2);
  BOOST_TEST(json_string(retry, "provider") == "beta");
  BOOST_TEST(attempts(1)[1].provider_key == "1:2");
}

BOOST_AUTO_TEST_CASE(explicit_attempt_on_an_uncertified_provider_is_422) {
  post(test::classify_body("hi"));
  request("POST", "/attempts/1001/cancel");
  auto response = request("POST", "/jobs/1/attempts", R"({"provider":"gamma"})");
  BOOST_TEST(response.status == 422);
  BOOST_TEST(json_string(response, "error") == "provider_not_certified");
  providers.set_default("gamma", test::Scripted::answer(R"({"label":"other"})"));
  BOOST_TEST(!certify("gamma"));  // a failed certification does not help either
  BOOST_TEST(request("POST", "/jobs/1/attempts", R"({"provider":"gamma"})").status == 422);
  BOOST_TEST(request("POST", "/jobs/1/attempts", R"({"provider":"nobody"})").status == 400);
  BOOST_TEST(request("POST", "/jobs/1/attempts", R"({"provider":1})").status == 400);
  BOOST_TEST(store.attempt_count() == 1u);
}

BOOST_AUTO_TEST_CASE(explicit_attempt_after_a_winner_is_409_job_completed) {
  BOOST_TEST(certify("alpha"));
  post(test::classify_body("I was charged twice"));
  auto claimed = run(store.claim_next_attempt("w", loop.now(), loop.now() + config.policy.lease));
  run(store.complete_attempt(CompleteAttempt{.attempt_id = claimed->id,
                                             .job_id = 1,
                                             .expected_version = 1,
                                             .from = {AttemptState::running},
                                             .fence = claimed->lease_token,
                                             .result = R"({"confidence":1,"label":"billing"})",
                                             .at = loop.now()}));
  auto response = request("POST", "/jobs/1/attempts");
  BOOST_TEST(response.status == 409);
  BOOST_TEST(json_string(response, "error") == "job_completed");
  auto view = nlohmann::json::parse(request("GET", "/jobs/1").body);
  BOOST_TEST(view["status"] == "succeeded");
  BOOST_TEST(view["result"]["label"] == "billing");
  BOOST_TEST(view["completed_by"] == claimed->id);
}

BOOST_AUTO_TEST_CASE(cancel_is_owner_scoped_and_only_for_live_attempts) {
  post(test::classify_body("hi"));
  BOOST_TEST(request("POST", "/attempts/1001/cancel", "", "bob").status == 404);
  BOOST_TEST(request("POST", "/attempts/9/cancel").status == 404);
  BOOST_TEST(request("POST", "/attempts/1001/cancel").status == 200);
  auto again = request("POST", "/attempts/1001/cancel");
  BOOST_TEST(again.status == 409);
  BOOST_TEST(json_string(again, "error") == "attempt_not_live");
  BOOST_TEST(request("POST", "/jobs/1/attempts", "", "bob").status == 404);
}

// A store that fails every call with the words a real database uses: a socket path, SQL and
// the server's own text.
class BrokenStore final : public StoreWrapper {
 public:
  BrokenStore(Store& target, StoreError::Kind kind) : StoreWrapper(target), kind_(kind) {}
  Async<InsertJobResult> insert_job(NewJob) override { throw error(); }
  Async<std::optional<Job>> find_job(std::string, JobId) override { throw error(); }

 private:
  StoreError error() const {
    return StoreError(kind_,
                      "postgres: insert_job: connection to server on socket "
                      "\"/tmp/onejob-pg.x/.s.PGSQL.54329\" failed: FATAL:  the database system "
                      "is shutting down; INSERT INTO jobs");
  }
  StoreError::Kind kind_;
};

// What a failing store said stays in the node's api.response event (detail), keyed by the
// request id the body names; the body tells the client what to do, in words that fit the
// method, and nothing of the store.
BOOST_AUTO_TEST_CASE(store_failures_answer_without_internals_and_log_the_detail) {
  // Every kind a store throws: a conflict (PostgreSQL gave up on concurrent transactions) is
  // the store's trouble, retried as any, never the client's (400).
  for (const auto kind : {StoreError::Kind::unavailable, StoreError::Kind::maybe_committed,
                          StoreError::Kind::conflict, StoreError::Kind::rejected}) {
    BrokenStore broken{store, kind};
    SystemContext failing{broken, providers, loop, loop, events, config, random};
    ApiHandler handler{failing};
    events.events.clear();
    auto create = test::make_request("POST", "/jobs", test::classify_body("hi"), "alice", "key-9");
    create.request_id = "req-7";
    const Response created = run(handler.handle(create));
    auto read = test::make_request("GET", "/jobs/1", "", "alice", std::nullopt);
    read.request_id = "req-8";
    const Response got = run(handler.handle(read));
    for (const Response* answer : {&created, &got}) {
      BOOST_TEST(answer->body.find("PGSQL") == std::string::npos, answer->body);
      BOOST_TEST(answer->body.find("postgres") == std::string::npos, answer->body);
      BOOST_TEST(answer->body.find("INSERT") == std::string::npos, answer->body);
      BOOST_TEST(answer->body.find("FATAL") == std::string::npos, answer->body);
    }
    BOOST_TEST(json_string(created, "request_id") == "req-7");
    BOOST_TEST(json_string(got, "request_id") == "req-8");
    if (kind == StoreError::Kind::rejected) {
      BOOST_TEST(created.status == 400);
    } else {
      BOOST_TEST(created.status == 503);
      BOOST_TEST(got.status == 503);
      BOOST_TEST(find_header(created.headers, "Retry-After").has_value());
      BOOST_TEST(json_string(created, "message").find("same Idempotency-Key") != std::string::npos);
      BOOST_TEST(json_string(got, "message").find("Idempotency-Key") == std::string::npos,
                 json_string(got, "message"));
    }
    const auto responses = test::typed<events::ApiResponse>(events.events);
    BOOST_REQUIRE(responses.size() == 2u);
    BOOST_TEST(responses[0].request_id == "req-7");
    BOOST_TEST(responses[0].detail.value_or("").find("PGSQL") != std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
