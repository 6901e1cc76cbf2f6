#include "system/service/api_handler.hpp"

#include <string>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "system/adapters/memory_store.hpp"

#include "tests/support/recording_sink.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/scenarios.hpp"

namespace onejob {
namespace {

struct ApiFixture {
  MemoryStore store;
  test::ManualClock clock;
  test::RecordingSink events;
  ApiHandler api{store, clock, events};

  Response post(std::string body, std::optional<std::string> key = "key-1",
                std::string owner = "alice") {
    Request request{.method = "POST",
                    .path = "/jobs",
                    .headers = {},
                    .body = std::move(body),
                    .principal = std::move(owner),
                    .request_id = "r"};
    if (key) request.headers.emplace_back("Idempotency-Key", *key);
    return test::run_sync(api.handle(std::move(request)));
  }
};

nlohmann::json body_of(const Response& response) { return nlohmann::json::parse(response.body); }

std::string error_of(const Response& response) {
  return body_of(response).value("error", std::string("(none)"));
}

BOOST_FIXTURE_TEST_SUITE(api_handler, ApiFixture)

BOOST_AUTO_TEST_CASE(first_create_is_201_with_a_job_id) {
  auto response = post(test::classify_body("hi"));
  BOOST_TEST(response.status == 201);
  BOOST_TEST(body_of(response)["job_id"].get<std::int64_t>() == 1);
  BOOST_TEST(find_header(response.headers, "location").value_or("") == "/jobs/1");
  BOOST_TEST(store.job_count() == 1u);
}

BOOST_AUTO_TEST_CASE(replay_with_the_same_request_is_200_with_the_same_id) {
  auto first = post(test::classify_body("hi"));
  auto second = post(test::classify_body("hi"));
  BOOST_TEST(second.status == 200);
  BOOST_TEST(body_of(second)["job_id"] == body_of(first)["job_id"]);
  BOOST_TEST(store.job_count() == 1u);
}

BOOST_AUTO_TEST_CASE(key_order_and_whitespace_do_not_change_the_request) {
  auto first = post(R"({"operation":"classify","provider":"alpha","input":{"a":1,"b":2}})");
  auto second =
      post(R"( { "input" : { "b":2, "a":1 }, "provider":"alpha", "operation":"classify" } )");
  BOOST_TEST(second.status == 200);
  BOOST_TEST(body_of(second)["job_id"] == body_of(first)["job_id"]);
}

BOOST_AUTO_TEST_CASE(same_key_different_payload_is_422_without_a_job_id_and_stores_nothing) {
  post(test::classify_body("hi"));
  auto response = post(test::classify_body("something else"));
  BOOST_TEST(response.status == 422);
  BOOST_TEST(error_of(response) == "idempotency_key_reused");
  BOOST_TEST(!body_of(response).contains("job_id"));
  BOOST_TEST(store.job_count() == 1u);
}

BOOST_AUTO_TEST_CASE(same_key_other_provider_or_operation_is_422) {
  post(R"({"operation":"classify","provider":"alpha","input":"x"})");
  BOOST_TEST(post(R"({"operation":"classify","provider":"beta","input":"x"})").status == 422);
  BOOST_TEST(post(R"({"operation":"summarize","provider":"alpha","input":"x"})").status == 422);
}

BOOST_AUTO_TEST_CASE(same_key_under_another_owner_is_another_job) {
  auto a = post(test::classify_body("hi"), "key-1", "alice");
  auto b = post(test::classify_body("hi"), "key-1", "bob");
  BOOST_TEST(b.status == 201);
  BOOST_TEST(body_of(a)["job_id"] != body_of(b)["job_id"]);
}

BOOST_AUTO_TEST_CASE(missing_key_is_400) {
  auto response = post(test::classify_body("hi"), std::nullopt);
  BOOST_TEST(response.status == 400);
  BOOST_TEST(error_of(response) == "idempotency_key_missing");
  BOOST_TEST(store.job_count() == 0u);
}

BOOST_AUTO_TEST_CASE(keys_that_are_empty_too_long_or_not_printable_ascii_are_400) {
  for (const std::string& key : {std::string(), std::string(256, 'k'), std::string("tab\there"),
                                 std::string("caf\xc3\xa9")}) {
    auto response = post(test::classify_body("hi"), key);
    BOOST_TEST(response.status == 400);
    BOOST_TEST(error_of(response) == "idempotency_key_invalid");
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
  BOOST_TEST(test::run_sync(api.handle(request)).status == 201);
}

BOOST_AUTO_TEST_CASE(invalid_bodies_are_400_and_store_nothing) {
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "invalid_json"},
      {R"({"operation":"classify","operation":"extract","provider":"a","input":1})",
       "invalid_json"},
      {R"([1,2])", "invalid_body"},
      {R"({"operation":"classify","provider":"a","input":1,"owner":"mallory"})", "invalid_body"},
      {R"({"operation":"translate","provider":"a","input":1})", "invalid_body"},
      {R"({"operation":"classify","provider":"","input":1})", "invalid_body"},
      {R"({"operation":"classify","provider":"a"})", "invalid_body"},
      {R"({"operation":7,"provider":"a","input":1})", "invalid_body"},
  };
  for (const auto& [body, error] : cases) {
    auto response = post(body);
    BOOST_TEST(response.status == 400, body);
    BOOST_TEST(error_of(response) == error, body);
  }
  BOOST_TEST(store.job_count() == 0u);
}

BOOST_AUTO_TEST_CASE(unauthenticated_unknown_path_and_wrong_method) {
  BOOST_TEST(post(test::classify_body("hi"), "k", "").status == 401);
  Request get{.method = "GET",
              .path = "/jobs",
              .headers = {},
              .body = "",
              .principal = "alice",
              .request_id = "r"};
  BOOST_TEST(test::run_sync(api.handle(get)).status == 405);
  Request elsewhere{.method = "POST",
                    .path = "/nope",
                    .headers = {},
                    .body = "",
                    .principal = "alice",
                    .request_id = "r"};
  BOOST_TEST(test::run_sync(api.handle(elsewhere)).status == 404);
  BOOST_TEST(store.job_count() == 0u);
}

BOOST_AUTO_TEST_CASE(events_report_requests_creations_and_responses) {
  clock.advance(std::chrono::seconds(3));
  post(test::classify_body("hi"));
  post(test::classify_body("hi"));
  BOOST_TEST(events.of_kind("api.request").size() == 2u);
  auto created = events.of_kind("job.created");
  BOOST_REQUIRE(created.size() == 1u);
  BOOST_TEST(created[0].int_field("job_id").value_or(0) == 1);
  BOOST_TEST(created[0].string_field("owner").value_or("") == "alice");
  BOOST_TEST(created[0].string_field("key").value_or("") == "key-1");
  auto responses = events.of_kind("api.response");
  BOOST_REQUIRE(responses.size() == 2u);
  BOOST_TEST(responses[0].int_field("status").value_or(0) == 201);
  BOOST_TEST(responses[1].int_field("status").value_or(0) == 200);
  BOOST_TEST(responses[1].int_field("job_id").value_or(0) == 1);
  auto job = test::run_sync(store.find_job("alice", 1));
  BOOST_TEST((job->created_at.time_since_epoch() == Duration(std::chrono::seconds(3))));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
