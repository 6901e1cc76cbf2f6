// I13 on hand-made histories, the clauses added beside new_rules_test.cpp's: the error word of
// every refusal, a cancel's refusal judged by the attempt its path names, the names a create may
// use, and the route an API node records. Each shown failing on the history that breaks it and
// passing on the one that keeps it.
#include <boost/test/unit_test.hpp>

#include "harness/check/i13_bodies.hpp"
#include "harness/check/invariant.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

// An operator's retry of job 1 (request `request`, send `send`) under `key`.
events::ClientSent operator_retry_sent(std::int64_t request, std::int64_t send, std::string key) {
  return events::ClientSent{.request = request,
                            .send = send,
                            .action = "retry",
                            .owner = "alice",
                            .key = std::move(key),
                            .job_id = 1,
                            .path = "/jobs/1/attempts"};
}

BOOST_AUTO_TEST_SUITE(i13_api_contract)

// The run's providers: alpha and beta.
void run_alpha_and_beta(HistoryBuilder& h) {
  for (const char* name : {"alpha", "beta"}) {
    h.add("world", events::RunProvider{.name = name,
                                       .prompt_template = "{{input}}",
                                       .max_prompt_tokens = 1000,
                                       .bytes_per_token = 4});
  }
}

// The run has alpha and beta; a create with `body` is accepted (201).
std::vector<check::Violation> accepted_naming(const std::string& body) {
  HistoryBuilder h;
  run_alpha_and_beta(h);
  h.add("browser", create_sent(1, "alice", "k1", body));
  h.add("browser", received(1, 201, 1));
  return check_api_contract(h.model());
}

BOOST_AUTO_TEST_CASE(i13_a_create_names_only_operations_and_providers_the_server_has) {
  const std::string input = R"("input":{"text":"t"})";
  require_none(accepted_naming(R"({"operation":"summarize","provider":"alpha",)" + input + "}"));
  require_none(accepted_naming(
      R"({"operation":"summarize","provider":"alpha","failover":["beta"],)" + input + "}"));
  for (const std::string named :
       {R"("operation":"summarize","provider":"gamma")",
        R"("operation":"summarize","provider":"alpha","failover":["nobody"])",
        R"("operation":"summarize","provider":"alpha","failover":["beta","alpha"])",
        R"("operation":"summarize","provider":"alpha","failover":["beta","beta"])",
        R"("operation":"summarize","provider":"alpha","failover":"beta")",
        R"("operation":"translate","provider":"alpha")"}) {
    BOOST_TEST_CONTEXT(named) {
      require_one(accepted_naming("{" + named + "," + input + "}"), "I13.limit_misjudged", 4);
    }
  }
}

// The run has alpha and beta; an operator's retry with `body` is answered `status` `error`; the
// violations of I13.limit_misjudged only.
std::vector<check::Violation> retry_naming(const std::string& body, std::int64_t status,
                                           std::optional<std::string> error,
                                           std::string owner = "alice") {
  HistoryBuilder h;
  run_alpha_and_beta(h);
  auto sent = operator_retry_sent(1, 1, "op-1");
  sent.body = body;
  sent.owner = std::move(owner);
  auto got = received(1, status, std::nullopt);
  got.error = std::move(error);
  h.add("ops", sent).add("ops", got);
  auto violations = check_api_contract(h.model());
  std::erase_if(violations, [](const auto& v) { return v.clause != "I13.limit_misjudged"; });
  return violations;
}

// A retry naming a provider the server does not have is an invalid body: 400 invalid_body, unless
// refused first for its job, its key, its credentials or a server failure.
BOOST_AUTO_TEST_CASE(i13_a_retry_naming_a_provider_the_server_has_not_is_an_invalid_body) {
  const std::string gamma = R"({"provider":"gamma"})";
  require_none(retry_naming(gamma, 400, "invalid_body"));
  require_none(retry_naming(gamma, 404, "not_found"));
  require_none(retry_naming(gamma, 409, "job_completed"));
  require_none(retry_naming(gamma, 422, "idempotency_key_reused"));
  require_none(retry_naming(gamma, 503, "store_unavailable"));
  require_none(retry_naming(R"({"provider":"beta"})", 422, "provider_not_certified"));
  require_one(retry_naming(gamma, 422, "provider_not_certified"), "I13.limit_misjudged", 4);
  require_one(retry_naming(gamma, 409, "attempt_in_flight"), "I13.limit_misjudged", 4);
  require_one(retry_naming(gamma, 201, std::nullopt), "I13.limit_misjudged", 4);
}

// A retry whose body breaks the retry contract (not JSON, or not exactly {"provider": name}) names
// no provider: it is refused 400 invalid_json or invalid_body, unless refused first for its job,
// its key, its credentials or a server failure.
BOOST_AUTO_TEST_CASE(i13_a_retry_body_the_contract_refuses_is_refused_as_one) {
  for (const auto& [body, word] :
       std::vector<std::pair<std::string, std::string>>{{R"({"provider":"beta")", "invalid_json"},
                                                        {R"({"provider":7})", "invalid_body"},
                                                        {R"("beta")", "invalid_body"}}) {
    BOOST_TEST_CONTEXT(body) {
      require_none(retry_naming(body, 400, word));
      require_none(retry_naming(body, 404, "not_found"));
      require_none(retry_naming(body, 409, "job_completed"));
      require_none(retry_naming(body, 503, "store_unavailable"));
      require_one(retry_naming(body, 422, "provider_not_certified"), "I13.limit_misjudged", 4);
      require_one(retry_naming(body, 409, "attempt_in_flight"), "I13.limit_misjudged", 4);
      // The job is looked up under its owner's name first: one the store cannot hold is refused
      // for it; the name of an owner it can hold is no such reason.
      require_none(retry_naming(body, 400, "unstorable_value", std::string("b\0b", 3)));
      require_one(retry_naming(body, 400, "unstorable_value"), "I13.limit_misjudged", 4);
    }
  }
}

// A client request of `action` (its own method and path) answered `status` naming `error`.
std::vector<check::Violation> answered_with(const std::string& action, std::int64_t status,
                                            std::optional<std::string> error) {
  HistoryBuilder h;
  events::ClientSent sent = create_sent(1, "alice", "k1", kBody);
  if (action == "get_job") sent = get_sent(1, "alice", 1);
  if (action == "retry") sent = operator_retry_sent(1, 1, "op-1");
  if (action == "cancel") {
    sent = operator_retry_sent(1, 1, "op-1");
    sent.action = "cancel";
    sent.path = "/attempts/1/cancel";
  }
  auto got = received(1, status, std::nullopt);
  got.error = std::move(error);
  h.add("browser", sent).add("browser", got);
  auto violations = check_api_contract(h.model());
  // Only the word is judged here (a retry's 201 without its attempt is another clause's).
  std::erase_if(violations, [](const auto& v) { return v.clause != "I13.error_misnamed"; });
  return violations;
}

// A request whose owner's name the store cannot hold is refused 400 unstorable_value: never a
// success, never a 503 while its node's store answered (retrying cannot help).
BOOST_AUTO_TEST_CASE(i13_an_owner_the_store_cannot_hold_is_refused_not_served_or_put_off) {
  const std::string nul("mal\0lory", 8);
  const auto answered = [](std::string owner, std::int64_t status, bool store_failed) {
    HistoryBuilder h;
    const ApiCall call{.request = 1,
                       .route = "get_job",
                       .owner = std::move(owner),
                       .key = "",
                       .status = status,
                       .asks = 1};
    api_request(h, call);
    if (store_failed) {
      h.add("net.node_store", events::StoreFault{.node = "api-1",
                                                 .operation = "find_job",
                                                 .fault = "drop_request",
                                                 .maybe_committed = false});
    }
    const auto seq = api_response(h, call).last_seq();
    auto violations = check_api_contract(h.model());
    std::erase_if(violations,
                  [](const auto& v) { return v.clause != "I13.unstorable_misanswered"; });
    return std::pair{violations, seq};
  };
  require_none(answered(nul, 400, false).first);
  require_none(answered(nul, 404, false).first);  // refused before the store: true as well
  require_none(answered(nul, 503, true).first);   // its store was cut off: it could not tell
  require_none(answered("alice", 503, false).first);
  require_none(answered("caf\xC3\xA9", 200, false).first);  // UTF-8: storable
  for (const auto& [owner, status] :
       {std::pair{nul, 200}, std::pair{nul, 503}, std::pair{std::string("caf\xC3"), 201},
        std::pair{std::string("\xED\xA0\x80"), 200}}) {
    const auto [violations, seq] = answered(owner, status, false);
    require_one(violations, "I13.unstorable_misanswered", seq);
  }
}

BOOST_AUTO_TEST_CASE(i13_every_refusal_names_a_word_its_status_has_on_its_route) {
  require_none(answered_with("create_job", 201, std::nullopt));
  require_none(answered_with("create_job", 422, "idempotency_key_reused"));
  require_none(answered_with("create_job", 400, "idempotency_key_missing"));
  require_none(answered_with("retry", 409, "attempt_in_flight"));
  require_none(answered_with("retry", 409, "job_completed"));
  require_none(answered_with("retry", 422, "provider_not_certified"));
  require_none(answered_with("cancel", 409, "attempt_not_live"));
  require_none(answered_with("get_job", 404, "not_found"));
  require_none(answered_with("get_job", 503, "store_unavailable"));
  // A value the store cannot hold (the caller's owner name) is refused on any route.
  require_none(answered_with("get_job", 400, "unstorable_value"));
  require_none(answered_with("cancel", 400, "unstorable_value"));
  require_one(answered_with("get_job", 400, "invalid_body"), "I13.error_misnamed", 2);
  // A 409 is never a create's; in_flight is a retry's word, not a cancel's; a refusal names a
  // word; a success names none; a 422 on a create is a reused key, not an uncertified provider.
  require_one(answered_with("create_job", 409, "idempotency_key_reused"), "I13.error_misnamed", 2);
  require_one(answered_with("cancel", 409, "attempt_in_flight"), "I13.error_misnamed", 2);
  require_one(answered_with("retry", 409, std::nullopt), "I13.error_misnamed", 2);
  require_one(answered_with("create_job", 200, "idempotency_key_reused"), "I13.error_misnamed", 2);
  require_one(answered_with("create_job", 422, "provider_not_certified"), "I13.error_misnamed", 2);
  require_one(answered_with("get_job", 503, "unavailable"), "I13.error_misnamed", 2);
}

// A key's refusal names what is wrong with it: a create's missing key idempotency_key_missing, a
// key out of bounds idempotency_key_invalid; an action's key is optional.
BOOST_AUTO_TEST_CASE(i13_a_keys_refusal_names_what_is_wrong_with_it) {
  const auto refused = [](const std::string& action, std::optional<std::string> key,
                          const std::string& error) {
    HistoryBuilder h;
    events::ClientSent sent = create_sent(1, "alice", "k1", kBody);
    if (action == "retry") sent = operator_retry_sent(1, 1, "op-1");
    sent.key = std::move(key);
    auto got = received(1, 400, std::nullopt);
    got.error = error;
    h.add("browser", sent).add("browser", got);
    return check_api_contract(h.model());
  };
  require_none(refused("create_job", std::nullopt, "idempotency_key_missing"));
  require_none(refused("create_job", "", "idempotency_key_invalid"));
  require_none(refused("retry", "k\x7f", "idempotency_key_invalid"));
  require_one(refused("create_job", std::nullopt, "idempotency_key_invalid"), "I13.limit_misjudged",
              2);
  require_one(refused("create_job", "", "idempotency_key_missing"), "I13.limit_misjudged", 2);
  require_one(refused("create_job", std::string(256, 'k'), "invalid_body"), "I13.limit_misjudged",
              2);
  require_one(refused("retry", "", "idempotency_key_missing"), "I13.limit_misjudged", 2);
  require_one(refused("retry", std::nullopt, "idempotency_key_missing"), "I13.limit_misjudged", 2);
  require_one(refused("create_job", "k1", "idempotency_key_missing"), "I13.limit_misjudged", 2);
}

// Every answer is typed application/json: the client records the Content-Type of one that is not
// ("" for none), and each such receipt is a violation, success or refusal.
BOOST_AUTO_TEST_CASE(i13_every_answer_is_typed_json) {
  for (const std::int64_t status : {201, 400}) {
    for (const std::optional<std::string>& type :
         {std::optional<std::string>{}, std::optional<std::string>{"text/plain"},
          std::optional<std::string>{""}}) {
      HistoryBuilder h;
      auto got = received(1, status, 1);
      got.location = "/jobs/1";
      if (status == 400) got.error = "invalid_body";
      got.content_type = type;
      h.add("browser", create_sent(1, "alice", "k1", kBody)).add("browser", got);
      auto violations = check_api_contract(h.model());
      std::erase_if(violations, [](const auto& v) { return v.clause != "I13.answer_not_json"; });
      BOOST_TEST_CONTEXT("status " << status << ", type " << type.value_or("(json)")) {
        if (type) {
          require_one(violations, "I13.answer_not_json", 2);
        } else {
          require_none(violations);
        }
      }
    }
  }
}

// A create answered 201 naming job 1, with `location` as its Location header (or none); the
// violations of I13.location_wrong only.
std::vector<check::Violation> created_with_location(std::optional<std::string> location,
                                                    std::int64_t status = 201) {
  HistoryBuilder h;
  auto got = received(1, status, 1);
  got.location = std::move(location);
  h.add("browser", create_sent(1, "alice", "k1", kBody)).add("browser", got);
  auto violations = check_api_contract(h.model());
  std::erase_if(violations, [](const auto& v) { return v.clause != "I13.location_wrong"; });
  return violations;
}

BOOST_AUTO_TEST_CASE(i13_a_new_jobs_answer_names_it_in_location) {
  require_none(created_with_location("/jobs/1"));
  require_one(created_with_location(std::nullopt), "I13.location_wrong", 2);
  require_one(created_with_location("/jobs/2"), "I13.location_wrong", 2);
  require_one(created_with_location("/jobs/1/"), "I13.location_wrong", 2);
  // A replay (200) is not judged by it.
  require_none(created_with_location(std::nullopt, 200));
}

// An operator's cancel of the attempt its path names (/attempts/1/cancel), refused 409
// attempt_not_live; the answer names `named` as its attempt (or none). Attempt 1 is RUNNING
// throughout unless `cancelled_before`.
std::vector<check::Violation> cancel_refused(std::optional<std::int64_t> named,
                                             bool cancelled_before) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1));
  if (cancelled_before) {
    h.add(kStore, unfenced_write(1, 1, S::running, S::cancelled, "api-1", 1, "api-1"));
  }
  h.add("api-1", events::ApiRequest{.request_id = "c-1",
                                    .route = "cancel_attempt",
                                    .method = "POST",
                                    .path = "/attempts/1/cancel",
                                    .owner = "alice",
                                    .key = "op-1"});
  h.add("api-1", events::ApiResponse{.request_id = "c-1",
                                     .route = "cancel_attempt",
                                     .status = 409,
                                     .owner = "alice",
                                     .key = "op-1",
                                     .job_id = 1,
                                     .attempt_id = named,
                                     .error = "attempt_not_live"});
  return check_api_contract(h.model());
}

BOOST_AUTO_TEST_CASE(a_cancel_refused_as_not_live_is_judged_by_the_attempt_its_path_names) {
  require_none(cancel_refused(1, true));
  // Attempt 1 RUNNING throughout: untrue, whichever attempt the answer names, or none.
  for (const auto& named : {std::optional<std::int64_t>(1), std::optional<std::int64_t>(7),
                            std::optional<std::int64_t>()}) {
    const auto violations = cancel_refused(named, false);
    BOOST_TEST_REQUIRE(violations.size() == 1u, describe(violations));
    BOOST_TEST(violations[0].clause == "I13.refusal_untrue");
  }
}

// Job 1 (on alpha) whose attempt 1 failed; the certifications `before` commit, then an
// operator's retry with `body` (none: no body) reaches api-1, the certifications `during` commit
// while it is handled, and api-1 refuses it 422 provider_not_certified. Returns the violations
// and the answer's place.
struct Certified {
  std::string provider;
  bool passed = true;
};
std::pair<std::vector<check::Violation>, std::uint64_t> retry_refused_uncertified(
    std::optional<std::string> body, const std::vector<Certified>& before,
    const std::vector<Certified>& during = {}) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1)).add(kStore, fenced_write(1, 1, S::running, S::failed));
  for (const auto& [provider, passed] : before) certify(h, provider, passed);
  auto sent = operator_retry_sent(2, 1, "op-1");
  sent.body = std::move(body);
  const auto request_id = events::forwarded_request_id(2, 1, 1);
  h.add("ops", sent)
      .add("lb",
           events::LbForwarded{
               .request = 2, .send = 1, .lb_try = 1, .to = "api-1", .request_id = request_id})
      .add("api-1", events::ApiRequest{.request_id = request_id,
                                       .route = "create_attempt",
                                       .method = "POST",
                                       .path = "/jobs/1/attempts",
                                       .owner = "alice",
                                       .key = "op-1"});
  for (const auto& [provider, passed] : during) certify(h, provider, passed);
  const auto answer = h.add("api-1", events::ApiResponse{.request_id = request_id,
                                                         .route = "create_attempt",
                                                         .status = 422,
                                                         .owner = "alice",
                                                         .key = "op-1",
                                                         .error = "provider_not_certified"})
                          .last_seq();
  return {check_api_contract(h.model()), answer};
}

// A retry refused as not certified asked for a provider whose latest certification failed (or
// was missing) at some point while it was handled: its body's, or with no body the job's latest
// attempt's.
BOOST_AUTO_TEST_CASE(a_retry_refused_as_not_certified_is_judged_by_the_commit_log) {
  const std::string beta = R"({"provider":"beta"})";
  {
    const auto [violations, answer] = retry_refused_uncertified(beta, {{"beta"}});
    require_one(violations, "I13.refusal_untrue", answer);
  }
  {  // No body: attempt 1's provider, alpha, is asked for.
    const auto [violations, answer] = retry_refused_uncertified(std::nullopt, {{"alpha"}});
    require_one(violations, "I13.refusal_untrue", answer);
  }
  // The latest certification failed; none at all; it passed only while the retry was handled;
  // it failed while it was handled; another provider's passed.
  require_none(retry_refused_uncertified(beta, {{"beta"}, {"beta", false}}).first);
  require_none(retry_refused_uncertified(beta, {}).first);
  require_none(retry_refused_uncertified(beta, {{"beta", false}}, {{"beta"}}).first);
  require_none(retry_refused_uncertified(beta, {{"beta"}}, {{"beta", false}}).first);
  require_none(retry_refused_uncertified(std::nullopt, {{"beta"}}).first);
}

BOOST_AUTO_TEST_CASE(the_route_a_node_records_is_the_one_the_path_names) {
  // What api-1 recorded (route, method, path) against what the path names; answers 404 alike.
  const auto judged = [](const std::string& route, const std::string& path) {
    HistoryBuilder h;
    api_exchange(h, ApiCall{.request = 0,
                            .route = route,
                            .key = "",
                            .status = 404,
                            .path = path,
                            .error = "not_found"});
    return check_api_contract(h.model());
  };
  require_none(judged("get_job", "/jobs/7"));
  require_none(judged("get_job", "/jobs/007"));
  require_none(judged("", "/jobs/0"));
  require_none(judged("", "/jobs/-1"));
  require_none(judged("", "/jobs/7/"));
  require_none(judged("create_attempt", "/jobs/7/attempts"));
  require_none(judged("cancel_attempt", "/attempts/3/cancel"));
  require_one(judged("get_job", "/jobs/0"), "I13.route_misjudged", 1);
  require_one(judged("get_job", "/jobs/-1"), "I13.route_misjudged", 1);
  require_one(judged("cancel_attempt", "/attempts/+3/cancel"), "I13.route_misjudged", 1);
  require_one(judged("", "/jobs/7"), "I13.route_misjudged", 1);
  require_one(judged("get_job", "/jobs/7/attempts"), "I13.route_misjudged", 1);
}

BOOST_AUTO_TEST_CASE(a_bodys_depth_and_readability_ignore_the_padding_after_it) {
  const std::string padding(1 << 20, ' ');
  const std::string deep = std::string(3, '[') + "\"]\\\"[\"" + std::string(3, ']');
  BOOST_TEST(i13::depth_of(deep) == 3u);
  BOOST_TEST(i13::depth_of(deep + padding + "\n\t\r") == 3u);
  BOOST_TEST(i13::readable_json(deep + padding));
  BOOST_TEST(i13::readable_json(R"({"a":1})" + padding));
  // Unreadable with the padding or without it: a repeated key, two values, an open string or an
  // escape cut short, nothing at all.
  for (const std::string broken : {R"({"a":1,"a":2})", "1 2", R"({"a":"open)", R"(["a\)", ""}) {
    BOOST_TEST_CONTEXT(broken) {
      BOOST_TEST(!i13::readable_json(broken));
      BOOST_TEST(!i13::readable_json(broken + padding));
    }
  }
  BOOST_TEST(i13::depth_of(R"(["{[ )" + padding) == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
