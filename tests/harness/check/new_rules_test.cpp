// I4 and I10-I13 on hand-made histories (I14's are in i14_reports_test.cpp): the clauses no named
// defect reaches in the catalogue, each shown failing on the history that breaks it and passing on
// the one that keeps it.
#include <boost/test/unit_test.hpp>

#include "system/events/reconciler_events.hpp"

#include "harness/check/invariant.hpp"
#include "harness/sim/faulty_store.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

// Job 1 whose attempt 1 failed; the operator's retry (request 2 of `owner`, key `key`) then
// inserted attempt 2 and recorded the key.
void retried(HistoryBuilder& h, const std::string& key = "op-1") {
  first_attempt_failed(h);
  insert_keyed_retry(h, key);
}

// The 201 a retry's client reads: attempt 2 (attempt_no 2, alpha) of job 1, STARTING, with
// `digest` as the body's.
events::ClientReceived retry_answer(std::int64_t request, std::int64_t send, std::string digest,
                                    bool replayed) {
  events::ClientReceived got{.request = request,
                             .send = send,
                             .status = 201,
                             .body_digest = std::move(digest),
                             .job_id = 1,
                             .attempt_id = 2,
                             .shown_state = "STARTING",
                             .shown_attempt_no = 2,
                             .shown_provider = "alpha"};
  if (replayed) got.replayed = true;
  return got;
}

// A run's policy: deadline 30 s, lease 60 s, reconcile every 5 s, capacity 4, one worker.
events::RunPolicy standard_policy() {
  auto policy = short_policy();
  policy.attempt_deadline_us = 30'000'000;
  policy.lease_us = 60'000'000;
  policy.reconcile_period_us = 5'000'000;
  policy.worker_poll_us = 1'000'000;
  policy.redrive_limit = 3;
  policy.faults_over = Instant{};
  return policy;
}

BOOST_AUTO_TEST_SUITE(new_rules)

BOOST_AUTO_TEST_CASE(i11_a_replay_repeating_the_first_answer_passes) {
  HistoryBuilder h;
  retried(h);
  h.add("ops", retry_sent(2, 1, "op-1")).add("ops", retry_answer(2, 1, "aa", false));
  h.add("ops", retry_sent(2, 2, "op-1")).add("ops", retry_answer(2, 2, "aa", true));
  require_none(check_operator_actions(h.model()));
}

BOOST_AUTO_TEST_CASE(i11_a_retry_answer_names_the_attempt_no_and_provider_inserted) {
  // The store inserted attempt 2 as attempt_no 2 on alpha.
  for (const auto& [attempt_no, provider] :
       std::vector<std::pair<std::optional<std::int64_t>, std::optional<std::string>>>{
           {2, "beta"}, {1, "alpha"}, {std::nullopt, "alpha"}, {2, std::nullopt}}) {
    HistoryBuilder h;
    retried(h);
    auto got = retry_answer(2, 1, "aa", false);
    got.shown_attempt_no = attempt_no;
    got.shown_provider = provider;
    const auto seq = h.add("ops", retry_sent(2, 1, "op-1")).add("ops", got).last_seq();
    require_one(check_operator_actions(h.model()), "I11.answer_misstates", seq);
  }
}

BOOST_AUTO_TEST_CASE(i11_a_replay_with_other_bytes_is_a_violation) {
  HistoryBuilder h;
  retried(h);
  h.add("ops", retry_sent(2, 1, "op-1")).add("ops", retry_answer(2, 1, "aa", false));
  h.add("ops", retry_sent(2, 2, "op-1"));
  const auto seq = h.add("ops", retry_answer(2, 2, "bb", true)).last_seq();
  require_one(check_operator_actions(h.model()), "I11.replay_differs", seq);
}

BOOST_AUTO_TEST_CASE(i11_one_key_recorded_twice_is_a_violation) {
  HistoryBuilder h;
  retried(h);
  auto again = attempt_inserted(1, 3, 3, "alpha", AttemptOrigin::explicit_retry, "api-1");
  again.action_owner = "alice";
  again.action_key = "op-1";
  const auto seq = h.add(kStore, again).last_seq();
  require_one(check_operator_actions(h.model()), "I11.key_committed_twice", seq);
}

BOOST_AUTO_TEST_CASE(i11_one_key_answered_to_two_requests_is_a_violation) {
  HistoryBuilder h;
  retried(h);
  h.add("ops", retry_sent(2, 1, "op-1")).add("ops", retry_answer(2, 1, "aa", false));
  // Another request under the same key: the same job, but with a body naming a provider.
  auto other = retry_sent(3, 1, "op-1");
  other.body = R"({"provider":"alpha"})";
  h.add("ops", other);
  const auto seq = h.add("ops", retry_answer(3, 1, "aa", true)).last_seq();
  require_one(check_operator_actions(h.model()), "I11.key_shared", seq);
}

// The same request with its body spelled another way (spacing, member order) is no other request.
BOOST_AUTO_TEST_CASE(i11_one_key_answered_to_one_request_spelled_two_ways_is_no_violation) {
  HistoryBuilder h;
  retried(h);
  auto plain = retry_sent(2, 1, "op-1");
  plain.body = R"({"provider":"alpha"})";
  h.add("ops", plain).add("ops", retry_answer(2, 1, "aa", false));
  auto spaced = retry_sent(3, 1, "op-1");
  spaced.body = R"({ "provider" : "alpha" })";
  h.add("ops", spaced).add("ops", retry_answer(3, 1, "aa", true));
  require_no(check_operator_actions(h.model()), "I11.key_shared");
}

// Request 2 retried job 1 under key op-1 through api-1, which inserted attempt 2 and recorded
// the key; request 3 sends the same retry again (its body spelled `again`) and api-1 answers it
// `status`.
std::uint64_t identical_retry_answered(HistoryBuilder& h, std::int64_t status,
                                       std::optional<std::string> error,
                                       std::optional<std::string> again = {}) {
  first_attempt_failed(h);
  const ApiCall first{.request = 2, .route = "create_attempt", .key = "op-1", .job_id = 1};
  auto sent = retry_sent(2, 1, "op-1");
  if (again) sent.body = R"({"provider":"alpha"})";
  h.add("ops", sent);
  api_request(h, first);
  insert_keyed_retry(h, "op-1");
  api_response(h, first);
  h.add("ops", retry_answer(2, 1, "aa", false));
  sent = retry_sent(3, 1, "op-1");
  sent.body = std::move(again);
  h.add("ops", sent);
  return api_exchange(h, {.request = 3,
                          .route = "create_attempt",
                          .key = "op-1",
                          .status = status,
                          .job_id = 1,
                          .error = std::move(error)})
      .last_seq();
}

// The same request again under a recorded key is owed the first success: any 4xx refuses the
// replay (the twin that lost the race refused as in flight or as a reused key alike); a 503 (the
// store failed) and the replay itself pass.
BOOST_AUTO_TEST_CASE(i11_an_identical_request_refused_after_its_key_was_recorded_is_a_violation) {
  for (const auto& [status, error] : std::vector<std::pair<std::int64_t, std::string>>{
           {409, "attempt_in_flight"}, {422, "idempotency_key_reused"}, {404, "not_found"}}) {
    HistoryBuilder h;
    const auto refused = identical_retry_answered(h, status, error);
    require_one(check_operator_actions(h.model()), "I11.replay_refused", refused);
  }
  for (const std::int64_t status : {503, 201}) {
    HistoryBuilder h;
    identical_retry_answered(h, status, std::nullopt);
    require_no(check_operator_actions(h.model()), "I11.replay_refused");
  }
  // Its body spelled with spaces is still the same request: refused, it is a refused replay.
  HistoryBuilder spaced;
  const auto refused = identical_retry_answered(spaced, 422, "idempotency_key_reused",
                                                R"({ "provider" : "alpha" })");
  require_one(check_operator_actions(spaced.model()), "I11.replay_refused", refused);
}

// Two retries under one key in flight together, with other bodies: the one that recorded the key
// is unknown to the history, so the other's 422 is no refused replay.
BOOST_AUTO_TEST_CASE(i11_a_twin_with_another_body_refused_while_both_were_in_flight_passes) {
  HistoryBuilder h;
  insert_job(h, {});
  auto other = retry_sent(2, 1, "op-1");
  other.body = R"({"provider":7})";
  h.add("ops", other).add("ops", retry_sent(3, 1, "op-1"));
  const ApiCall twin{.request = 2,
                     .route = "create_attempt",
                     .key = "op-1",
                     .status = 422,
                     .job_id = 1,
                     .error = "idempotency_key_reused"};
  const ApiCall recorder{.request = 3, .route = "create_attempt", .key = "op-1", .job_id = 1};
  api_request(h, twin);
  api_request(h, recorder);
  insert_keyed_retry(h, "op-1");
  api_response(h, recorder);
  api_response(h, twin);
  require_no(check_operator_actions(h.model()), "I11.replay_refused");
}

// Two identical retries under one key at one instant, while attempt 1 is still live: the store
// refuses request 3 for the live attempt, then an operator's cancel frees the job and request 2
// records the key; request 3's 409 is answered after. The refusal was true when the store made
// it, so no replay was owed; the same 409 refused after the key was recorded is a violation.
BOOST_AUTO_TEST_CASE(i11_a_twin_refused_for_a_live_attempt_before_the_key_was_recorded_passes) {
  for (const bool refused_first : {true, false}) {
    HistoryBuilder h;
    insert_job(h, {});
    h.add(kStore, claimed(1, 1, "worker-1", 1));
    h.add("ops", retry_sent(2, 1, "op-1")).add("ops", retry_sent(3, 1, "op-1"));
    const auto [recorder, twin] = retry_twins(409, "attempt_in_flight");
    api_request(h, twin);
    api_request(h, recorder);
    if (refused_first) h.add(kStore, live_refused(1, 1));
    operator_cancel(h, 1, 1, S::running, 1, "worker-1");
    insert_keyed_retry(h, "op-1");
    if (!refused_first) h.add(kStore, live_refused(1, 1));
    api_response(h, recorder);
    const auto answered = api_response(h, twin).last_seq();
    const auto violations = check_operator_actions(h.model());
    if (refused_first) require_no(violations, "I11.replay_refused");
    if (!refused_first) require_one(violations, "I11.replay_refused", answered);
  }
}

BOOST_AUTO_TEST_CASE(i13_a_503_without_retry_after_1_is_a_violation) {
  HistoryBuilder h;
  h.add("browser", create_sent(1, "alice", "k1", kBody));
  auto unavailable = received(1, 503, std::nullopt);
  unavailable.error = "store_unavailable";
  const auto seq = h.add("browser", unavailable).last_seq();
  require_one(check_api_contract(h.model()), "I13.no_retry_after", seq);
  unavailable.retry_after = "1";
  HistoryBuilder ok;
  ok.add("browser", create_sent(1, "alice", "k1", kBody)).add("browser", unavailable);
  require_none(check_api_contract(ok.model()));
  // The contract's Retry-After is 1 second: no other value, nor an empty one.
  for (const std::string other : {"0", "", "2", "1s"}) {
    unavailable.retry_after = other;
    HistoryBuilder wrong;
    const auto at = wrong.add("browser", create_sent(1, "alice", "k1", kBody))
                        .add("browser", unavailable)
                        .last_seq();
    require_one(check_api_contract(wrong.model()), "I13.no_retry_after", at);
  }
}

// A body that quotes the store's own words about its failure: the client's reading flags it,
// and the rule fails it whatever the status; the same answer without the quote passes.
BOOST_AUTO_TEST_CASE(i13_an_answer_quoting_the_store_is_a_violation) {
  BOOST_TEST(sim::quotes_store_error(R"({"message":"store reply lost during insert_job"})"));
  BOOST_TEST(sim::quotes_store_error("api-1 went down waiting for the reply"));
  BOOST_TEST(
      !sim::quotes_store_error(R"j({"message":"the store is unavailable (request id 7)"})j"));
  HistoryBuilder h;
  h.add("browser", create_sent(1, "alice", "k1", kBody));
  auto leaky = received(1, 503, std::nullopt);
  leaky.error = "store_unavailable";
  leaky.retry_after = "1";
  leaky.quotes_store = true;
  const auto seq = h.add("browser", leaky).last_seq();
  require_one(check_api_contract(h.model()), "I13.answer_leaks_internals", seq);
  leaky.quotes_store.reset();
  HistoryBuilder ok;
  ok.add("browser", create_sent(1, "alice", "k1", kBody)).add("browser", leaky);
  require_none(check_api_contract(ok.model()));
}

// Each request is (method, path, status); a route probe records its method and path. The
// answers name no error word: their words are judged apart (I13.error_misnamed, below), so its
// violations are left out here.
std::vector<check::Violation> probed(std::string method, std::string path, std::int64_t status) {
  HistoryBuilder h;
  auto sent = get_sent(1, "alice", 1);
  sent.method = std::move(method);
  sent.path = std::move(path);
  h.add("browser", sent).add("browser", received(1, status, std::nullopt));
  auto violations = check_api_contract(h.model());
  std::erase_if(violations, [](const auto& v) { return v.clause == "I13.error_misnamed"; });
  return violations;
}

BOOST_AUTO_TEST_CASE(i13_routes_are_judged_segment_by_segment) {
  require_none(probed("GET", "/jobs/7", 200));
  require_none(probed("GET", "/jobs/007", 404));  // a job the owner cannot see: still 404
  require_none(probed("GET", "/jobs/7/", 404));
  require_none(probed("GET", "/jobs/9223372036854775808", 404));
  require_none(probed("POST", "/jobs/7", 405));
  require_none(probed("POST", "/attempts/3/cancel", 409));
  require_one(probed("GET", "/jobs/7/", 200), "I13.route_misjudged", 2);
  require_one(probed("POST", "/jobs/7/attempts/x", 201), "I13.route_misjudged", 2);
  require_one(probed("GET", "/attempts", 500), "I13.route_misjudged", 2);
  require_one(probed("GET", "/jobs/0", 400), "I13.route_misjudged", 2);
  require_one(probed("DELETE", "/jobs/7", 404), "I13.route_misjudged", 2);
  require_one(probed("GET", "/jobs/7", 405), "I13.route_misjudged", 2);
}

BOOST_AUTO_TEST_CASE(i13_the_body_limit_is_judged_at_its_exact_boundary) {
  const std::string padding(1024 * 1024 - kBody.size(), ' ');
  for (const bool over : {false, true}) {
    BOOST_TEST_CONTEXT("over the limit: " << over) {
      const std::string body = kBody + padding + (over ? " " : "");
      HistoryBuilder refused;
      refused.add("browser", create_sent(1, "alice", "k1", body));
      auto too_large = received(1, 413, std::nullopt);
      too_large.error = "payload_too_large";
      const auto seq = refused.add("browser", too_large).last_seq();
      HistoryBuilder accepted;
      accepted.add("browser", create_sent(1, "alice", "k1", body));
      accepted.add("browser", received(1, 201, 1));
      if (over) {
        require_none(check_api_contract(refused.model()));
        require_one(check_api_contract(accepted.model()), "I13.limit_misjudged", 2);
      } else {
        require_one(check_api_contract(refused.model()), "I13.limit_misjudged", seq);
        require_none(check_api_contract(accepted.model()));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(i13_extract_fields_are_part_of_the_input_contract) {
  auto accepted = [](const std::string& operation, const std::string& input) {
    HistoryBuilder h;
    h.add("browser", create_sent(1, "alice", "k1",
                                 R"({"input":)" + input + R"(,"operation":")" + operation +
                                     R"(","provider":"alpha"})"));
    h.add("browser", received(1, 201, 1));
    return check_api_contract(h.model());
  };
  require_none(accepted("extract", R"({"fields":["total","due"],"text":"t"})"));
  require_none(accepted("classify", R"({"text":"t"})"));
  for (const std::string input :
       {R"({"text":"t"})", R"({"fields":[],"text":"t"})", R"({"fields":"total","text":"t"})",
        R"({"fields":[""],"text":"t"})", R"({"fields":[1],"text":"t"})",
        R"({"fields":["a","a"],"text":"t"})"}) {
    BOOST_TEST_CONTEXT(input) { require_one(accepted("extract", input), "I13.limit_misjudged", 2); }
  }
  require_one(accepted("summarize", R"({"fields":["total"],"text":"t"})"), "I13.limit_misjudged",
              2);
}

// A create whose body is not one JSON value (to the checker's parser) is refused as invalid JSON,
// not as some later fault of a value a parser made up from part of it.
BOOST_AUTO_TEST_CASE(i13_an_unreadable_create_body_is_refused_as_invalid_json) {
  const std::string body_prefix = R"({"operation":"classify","provider":"alpha","input":)";
  for (const std::string input :
       {R"({"text":"t","weight":1e400})", R"({"text":"t","text":"u"})", R"({"text":"t")"}) {
    BOOST_TEST_CONTEXT(input) {
      auto answered = [&](int status, std::optional<std::string> error) {
        HistoryBuilder h;
        h.add("browser", create_sent(1, "alice", "k1", body_prefix + input + "}"));
        auto got = received(1, status, std::nullopt);
        got.error = std::move(error);
        h.add("browser", got);
        return check_api_contract(h.model());
      };
      require_none(answered(400, "invalid_json"));
      require_none(answered(401, "unauthenticated"));
      // A word a create's 400 may carry, but not for a body that holds no JSON.
      require_one(answered(400, "invalid_body"), "I13.limit_misjudged", 2);
      require_one(answered(422, "idempotency_key_reused"), "I13.limit_misjudged", 2);
    }
  }
}

// A key repeats only within one object: the same key in sibling objects is one JSON value, a repeat
// inside a nested object is not.
BOOST_AUTO_TEST_CASE(i13_a_key_repeats_only_within_one_object) {
  const std::string prefix = R"({"operation":"classify","provider":"alpha","input":)";
  auto refused_as_invalid_json = [&](const std::string& input) {
    HistoryBuilder h;
    h.add("browser", create_sent(1, "alice", "k1", prefix + input + "}"));
    auto got = received(1, 400, std::nullopt);
    got.error = "invalid_json";
    h.add("browser", got);
    return check_api_contract(h.model());
  };
  require_one(refused_as_invalid_json(R"({"text":"t","meta":[{"k":1},{"k":2}]})"),
              "I13.limit_misjudged", 2);
  require_none(refused_as_invalid_json(R"({"text":"t","meta":{"k":1,"x":{"k":1,"k":2}}})"));
  require_none(refused_as_invalid_json(R"({"text":"t","meta":[{"k":1,"k":1}]})"));
}

BOOST_AUTO_TEST_CASE(i13_json_depth_is_judged_at_its_exact_boundary) {
  auto nested = [](std::size_t depth) {
    return R"({"input":{"n":)" + std::string(depth - 2, '[') + std::string(depth - 2, ']') +
           R"(},"operation":"classify","provider":"alpha"})";
  };
  auto refused_as_invalid = [](std::int64_t request) {
    auto got = received(request, 400, std::nullopt);
    got.error = "invalid_json";
    return got;
  };
  HistoryBuilder at_limit;
  at_limit.add("browser", create_sent(1, "alice", "k1", nested(64)));
  const auto seq = at_limit.add("browser", refused_as_invalid(1)).last_seq();
  require_one(check_api_contract(at_limit.model()), "I13.limit_misjudged", seq);
  HistoryBuilder past_limit;
  past_limit.add("browser", create_sent(1, "alice", "k1", nested(65)));
  past_limit.add("browser", refused_as_invalid(1));
  require_none(check_api_contract(past_limit.model()));
  HistoryBuilder accepted_past;
  accepted_past.add("browser", create_sent(1, "alice", "k1", nested(65)));
  accepted_past.add("browser", received(1, 201, 1));
  require_one(check_api_contract(accepted_past.model()), "I13.limit_misjudged", 2);
}

BOOST_AUTO_TEST_CASE(i4_a_call_whose_end_its_caller_never_records_is_a_violation) {
  const auto policy = [](HistoryBuilder& h) { h.add("world", standard_policy()); };
  // The call's deadline (30 s) passes; the worker writes UNKNOWN: recorded.
  HistoryBuilder ok;
  policy(ok);
  claimed_and_called(ok);
  ok.at(std::chrono::seconds(30)).add(kStore, fenced_write(1, 1, S::running, S::unknown));
  end_quiescent(ok);
  require_none(check_timeout_is_unknown(ok.model()));
  // The worker never writes it; the reconciler takes the lease over once it expires (60 s).
  HistoryBuilder h;
  policy(h);
  claimed_and_called(h);
  const auto call = h.last_seq();
  h.at(std::chrono::seconds(61)).add(kStore, taken_over(1, 1));
  end_quiescent(h);
  require_one(check_timeout_is_unknown(h.model()), "I4.unknown_not_recorded", call);
}

BOOST_AUTO_TEST_CASE(i4_prompts_are_sized_by_the_checker_at_the_exact_token_boundary) {
  // Job 1's input {"text":"please refund me"} is 27 bytes: 7 tokens of 4 bytes, rounded up.
  const auto run = [](std::int64_t limit, bool called) {
    HistoryBuilder h;
    h.add("world", events::RunProvider{.name = "alpha",
                                       .prompt_template = "{{input}}",
                                       .max_prompt_tokens = limit,
                                       .bytes_per_token = 4});
    insert_job(h, {});
    h.add(kStore, claimed(1, 1, "worker-1", 1));
    if (called) {
      h.add("worker-1", provider_called(1, 1));
      h.add(kStore, fenced_write(1, 1, S::running, S::unknown, "worker-1", 1));
    } else {
      h.add(kStore, fenced_write(1, 1, S::running, S::failed, "worker-1", 1));
    }
    return std::pair{check_timeout_is_unknown(h.model()), h.last_seq()};
  };
  require_none(run(7, true).first);   // fits exactly: called
  require_none(run(6, false).first);  // one token over: failed before any call
  const auto [refused, failed_seq] = run(7, false);
  require_one(refused, "I4.failed_without_reason", failed_seq);
  const auto [sent, write_seq] = run(6, true);
  require_one(sent, "I4.prompt_over_limit", write_seq - 1);
}

BOOST_AUTO_TEST_CASE(i13_an_api_node_records_the_answer_its_client_received) {
  const auto answered = [](std::optional<std::int64_t> recorded_job) {
    HistoryBuilder h;
    h.add("browser", create_sent(1, "alice", "k1", kBody));
    ApiCall call{.request = 1, .status = 201, .job_id = recorded_job};
    api_exchange(h, call);
    h.add("browser", received(1, 201, 1));
    return std::pair{check_api_contract(h.model()), h.last_seq()};
  };
  require_none(answered(1).first);
  const auto [violations, seq] = answered(std::nullopt);
  BOOST_TEST(std::ranges::count(violations, std::string("I13.answer_misrecorded"),
                                &Violation::clause) == 1);
  (void)seq;
}

BOOST_AUTO_TEST_CASE(i13_a_server_failure_names_its_request_id_and_keeps_the_detail) {
  // api-1 answers request 1 with a 503; the client reads `body_id` from the body, and the node's
  // own record keeps `detail`.
  const auto failed = [](std::optional<std::string> body_id, std::optional<std::string> detail) {
    HistoryBuilder h;
    h.add("browser", create_sent(1, "alice", "k1", kBody));
    ApiCall call{.request = 1, .status = 503};
    api_request(h, call);
    h.add(call.node, events::ApiResponse{.request_id = request_id(call),
                                         .route = call.route,
                                         .status = 503,
                                         .owner = call.owner,
                                         .key = call.key,
                                         .error = "store_unavailable",
                                         .detail = std::move(detail)});
    auto got = received(1, 503, std::nullopt);
    got.error = "store_unavailable";
    got.retry_after = "1";
    got.request_id = std::move(body_id);
    h.add("browser", got);
    return check_api_contract(h.model());
  };
  const std::string id = request_id(ApiCall{.request = 1});
  require_none(failed(id, "store unavailable: connection reset"));
  for (const auto& [body_id, detail] :
       {std::pair<std::optional<std::string>, std::optional<std::string>>{std::nullopt, "lost"},
        {"another", "lost"},
        {id, std::nullopt},
        {id, ""}}) {
    const auto violations = failed(body_id, detail);
    BOOST_TEST_REQUIRE(violations.size() == 1u, describe(violations));
    BOOST_TEST(violations[0].clause == "I13.failure_unnamed");
  }
}

// worker-1 (capacity `capacity`) calls for attempt 1 (deadline 30 s), then for attempt `next` (1
// or 2) at `second`, with a restart in between when `crash_between`: an adoption, not a claim, so
// only the calls show what it runs at once. Returns I12's findings and the second call's seq.
std::pair<std::vector<Violation>, std::uint64_t> call_then_call(int capacity, std::int64_t next,
                                                                Duration second,
                                                                bool crash_between) {
  HistoryBuilder h;
  auto policy = standard_policy();
  policy.worker_capacity = capacity;
  h.add("world", policy);
  insert_job(h, {});
  if (next == 2) insert_job(h, {.job_id = 2, .attempt_id = 2, .key = "k2"});
  h.add(kStore, claimed(1, 1)).add("worker-1", provider_called(1, 1));
  if (crash_between)
    h.add("worker-1", events::NodeCrashed{}).add("worker-1", events::NodeStarted{.incarnation = 2});
  auto second_call = provider_called(next, next);
  second_call.deadline = Instant(second) + std::chrono::seconds(30);
  h.at(second).add("worker-1", second_call);
  return {check_policy(h.model()), h.last_seq()};
}

BOOST_AUTO_TEST_CASE(i12_more_calls_under_way_than_capacity_is_a_violation) {
  const auto run = [](Duration second, bool crash_between) {
    return call_then_call(1, 2, second, crash_between);
  };
  require_none(run(std::chrono::seconds(30), false).first);  // the first call's deadline passed
  require_none(run(std::chrono::seconds(1), true).first);    // a new incarnation
  const auto [violations, seq] = run(std::chrono::seconds(1), false);
  require_one(violations, "I12.over_capacity", seq);
}

BOOST_AUTO_TEST_CASE(i12_a_second_call_for_an_attempt_under_way_is_a_violation) {
  const auto run = [](Duration second, bool crash_between) {
    return call_then_call(4, 1, second, crash_between);
  };
  require_none(run(std::chrono::seconds(30), false).first);  // the first call's deadline passed
  require_none(run(std::chrono::seconds(1), true).first);    // a new incarnation's adoption
  const auto [violations, seq] = run(std::chrono::seconds(1), false);
  require_one(violations, "I12.call_doubled", seq);
}

BOOST_AUTO_TEST_CASE(i12_a_call_whose_deadline_is_not_attempt_deadline_after_it_is_a_violation) {
  // attempt_deadline 30 s; worker-1 calls at 2 s with a deadline `deadline_s` into the run.
  const auto run = [](std::int64_t deadline_s) {
    HistoryBuilder h;
    h.add("world", standard_policy());
    insert_job(h, {});
    h.add(kStore, claimed(1, 1));
    auto call = provider_called(1, 1);
    call.deadline = Instant(std::chrono::seconds(deadline_s));
    const auto seq = h.at(std::chrono::seconds(2)).add("worker-1", call).last_seq();
    return std::pair{check_policy(h.model()), seq};
  };
  require_none(run(32).first);
  for (const std::int64_t wrong : {30, 31, 33, 62}) {
    const auto [violations, seq] = run(wrong);
    require_one(violations, "I12.call_deadline", seq);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
