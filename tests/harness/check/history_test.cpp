#include "harness/check/history.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "harness/check/id_map.hpp"
#include "harness/check/invariant.hpp"
#include "harness/check/json_value.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/scenario/runner.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

int mark_count(const HistoryModel& model, const std::string& mark) {
  const auto found = model.marks.find(mark);
  return found == model.marks.end() ? 0 : found->second;
}

JobRow job_row(JobStatus status, std::int64_t version, std::optional<AttemptId> winner,
               std::string result) {
  return {status, version, winner, std::move(result)};
}

AttemptRow attempt_row(AttemptId id, AttemptState state) { return {id, 1, state}; }

// Job 1 won by attempt 1 with kBilling; job 2 still running its attempt 2. The run then ends.
std::uint64_t won_and_running(HistoryBuilder& h) {
  running_job(h, 1);
  win(h, {.job_id = 1, .attempt_id = 1});
  running_job(h, 2);
  return h.add("world", events::RunEnded{}).last_seq();
}

// The rows a store holds after won_and_running().
StoreRows rows_as_logged() {
  StoreRows rows;
  rows.jobs[1] = job_row(JobStatus::succeeded, 2, 1, kBilling);
  rows.jobs[2] = job_row(JobStatus::pending, 1, std::nullopt, "");
  rows.attempts[1] = {attempt_row(1, S::succeeded)};
  rows.attempts[2] = {attempt_row(2, S::running)};
  return rows;
}

BOOST_AUTO_TEST_SUITE(history_model)

BOOST_AUTO_TEST_CASE(jobs_attempts_and_keys_come_from_the_commit_log_alone) {
  HistoryBuilder h;
  insert_job(h, {.job_id = 1, .attempt_id = 1, .owner = "alice", .key = "k1"});
  insert_job(h, {.job_id = 2, .attempt_id = 2, .owner = "bob", .key = "k1"});
  h.add(kStore, claimed(1, 1))
      .add(kStore, fenced_write(1, 1, S::running, S::failed))
      .add(kStore, attempt_inserted(1, 3, 2, "beta", AttemptOrigin::failover));
  // Nodes' reports of their writes are views, not commits.
  h.add("worker-2", events::AttemptStateChanged{.job_id = 2,
                                                .attempt_id = 2,
                                                .from = S::starting,
                                                .to = S::running,
                                                .reason = "claimed",
                                                .by = "worker-2"})
      .add("api-1", events::JobCreated{.job_id = 9, .owner = "carol", .key = "k9"});
  const auto model = h.model();
  BOOST_TEST(model.jobs.size() == 2u);
  BOOST_TEST(!model.job(9));
  BOOST_TEST(model.jobs_by_key.at({"alice", "k1"}) == std::vector<std::int64_t>{1});
  BOOST_TEST(model.jobs_by_key.at({"bob", "k1"}) == std::vector<std::int64_t>{2});
  BOOST_TEST(model.job(1)->attempts == (std::vector<std::int64_t>{1, 3}));
  BOOST_TEST(model.attempt_by_provider_key.at("1:2") == 3);
  BOOST_TEST(model.attempts.size() == 3u);
  BOOST_TEST((model.attempt(1)->state == S::failed));
  BOOST_TEST(model.attempt(1)->steps.size() == 2u);
  BOOST_TEST((model.attempt(2)->state == S::starting));
  BOOST_TEST((model.attempt(3)->inserted.what.origin == AttemptOrigin::failover));
  BOOST_TEST(model.commit_log == (std::deque<std::size_t>{0, 1, 2, 3, 4, 5, 6}));
}

BOOST_AUTO_TEST_CASE(end_of_tells_where_each_job_stands_at_the_end) {
  HistoryBuilder h;
  settled_jobs(h);
  running_job(h, 5);
  running_job(h, 6);
  h.add(kStore, fenced_write(6, 6, S::running, S::failed));
  // Job 7 failed, then an operator retried it: pending again.
  running_job(h, 7);
  h.add(kStore, fenced_write(7, 7, S::running, S::failed))
      .add(kStore, job_failed(7))
      .add(kStore, attempt_inserted(7, 8, 2, "alpha", AttemptOrigin::explicit_retry, "api-1"));
  const auto model = h.model();
  const auto end = [&](std::int64_t job) { return model.end_of(*model.job(job)); };
  BOOST_TEST((end(1) == JobEnd::succeeded));
  BOOST_TEST((end(2) == JobEnd::failed));
  BOOST_TEST((end(3) == JobEnd::blocked));
  BOOST_TEST((end(4) == JobEnd::awaiting_operator));
  BOOST_TEST((end(5) == JobEnd::running));
  BOOST_TEST((end(6) == JobEnd::stuck));
  BOOST_TEST((end(7) == JobEnd::running));
  BOOST_TEST(mark_count(model, "blocked") == 1);
  BOOST_TEST(mark_count(model, "awaiting_operator") == 1);
  BOOST_TEST(mark_count(model, "job_failed") == 2);
}

BOOST_AUTO_TEST_CASE(state_before_replays_an_attempts_steps_up_to_an_event) {
  HistoryBuilder h;
  insert_job(h, {});
  const auto claim = h.add(kStore, claimed(1, 1)).last_seq();
  const auto takeover = h.add(kStore, taken_over(1, 1)).last_seq();
  const auto cancel = operator_cancel(h, 1, 1, S::unknown, 2, "reconciler");
  const auto model = h.model();
  const AttemptRecord& attempt = *model.attempt(1);
  BOOST_TEST((attempt.state_before(claim) == S::starting));
  BOOST_TEST((attempt.state_before(takeover) == S::running));
  BOOST_TEST((attempt.state_before(cancel) == S::unknown));
  BOOST_TEST((attempt.state_before(cancel + 1) == S::cancelled));
  BOOST_TEST((attempt.state == S::cancelled));
  BOOST_TEST_REQUIRE(attempt.claim_by("worker-1"));
  BOOST_TEST(attempt.claim_by("worker-1")->seq == claim);
  BOOST_TEST(!attempt.claim_by("reconciler"));
}

BOOST_AUTO_TEST_CASE(a_plain_run_reaches_no_mark) {
  HistoryBuilder h;
  running_job(h, 1);
  win(h, {.job_id = 1, .attempt_id = 1});
  BOOST_TEST(h.model().marks.empty());
}

BOOST_AUTO_TEST_CASE(marks_count_the_rare_situations_a_run_reached) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1)).add(kStore, taken_over(1, 1)).add(kStore, fenced_out(1, 1));
  operator_cancel(h, 1, 1, S::unknown, 2, "reconciler");
  h.add(kStore, attempt_inserted(1, 2, 2, "alpha", AttemptOrigin::explicit_retry, "api-1"))
      .add(kStore, claimed(1, 2, "worker-2"));
  // Both completions commit at the same instant: attempt 2 wins, the cancelled one loses.
  h.at(std::chrono::seconds(5));
  win(h, {.attempt_id = 2, .by = "worker-2"});
  lose(h, {.attempt_id = 1, .result = kOther, .from = S::cancelled}, 2, kBilling);
  const auto model = h.model();
  for (const char* mark :
       {"lease_taken_over", "timeout_unknown", "fenced_write_refused", "operator_cancel",
        "operator_retry", "cas_tie", "cas_lost", "cancel_then_result", "late_result_discarded"}) {
    BOOST_TEST_CONTEXT(mark) { BOOST_TEST(mark_count(model, mark) == 1); }
  }
  BOOST_TEST(mark_count(model, "failover") == 0);
  BOOST_TEST(mark_count(model, "late_result_won") == 0);
  for (const auto& reached : model.marks) {
    BOOST_TEST_CONTEXT(reached.first) { BOOST_TEST(is_mark(reached.first)); }
  }
}

BOOST_AUTO_TEST_CASE(an_api_exchange_joins_its_client_request_through_the_forward) {
  HistoryBuilder h;
  const auto sent = h.add("browser", create_sent(3, "alice", "k1", kBody)).last_seq();
  api_request(h, {.request = 3, .node = "api-1"});
  // api-1 is slow: the load balancer tries api-2 with the same request.
  api_request(h, {.request = 3, .node = "api-2", .lb_try = 2});
  insert_job(h, {.by = "api-2"});
  api_response(h, {.request = 3, .status = 201, .job_id = 1, .node = "api-2", .lb_try = 2});
  api_response(h, {.request = 3, .status = 200, .job_id = 1, .node = "api-1"});
  const auto receipt = h.add("browser", received(3, 201, 1)).last_seq();
  // A request the load balancer never forwarded belongs to no client request.
  api_exchange(h, {.request = 0, .route = "get_job", .key = "", .status = 404});
  auto model = h.model();
  // Read twice: from the events the fold kept, then decoded on each ask (as a long history is).
  for (const bool kept : {true, false}) {
    BOOST_TEST_CONTEXT("decoded events kept: " << kept) {
      if (!kept) model.decode_on_each_ask();
      BOOST_TEST(model.keeps_decoded() == kept);
      BOOST_TEST_REQUIRE(model.exchanges.size() == 3u);
      const auto& slow = model.exchanges[0];
      BOOST_TEST(slow.node.str() == "api-1");
      BOOST_TEST(slow.client_request == 3);
      BOOST_TEST(slow.request_seq == 3u);
      BOOST_TEST(slow.route.str() == "create_job");
      BOOST_TEST(model.request_of(slow)->route == "create_job");
      BOOST_TEST_REQUIRE(slow.answered());
      BOOST_TEST(slow.response_seq == 9u);
      BOOST_TEST(slow.status == 200);
      BOOST_TEST(model.response_of(slow)->status == 200);
      BOOST_TEST(*model.response_of(slow)->job_id == 1);
      const auto& fast = model.exchanges[1];
      BOOST_TEST(fast.node.str() == "api-2");
      BOOST_TEST(fast.client_request == 3);
      BOOST_TEST_REQUIRE(fast.answered());
      BOOST_TEST(fast.response_seq == 8u);
      BOOST_TEST(fast.status == 201);
      BOOST_TEST(model.response_of(fast)->status == 201);
      BOOST_TEST(model.exchanges[2].client_request == 0);
      BOOST_TEST(model.exchanges[2].route.str() == "get_job");
      const ClientRequest& request = model.requests.at(3);
      BOOST_TEST(request.client == "browser");
      BOOST_TEST(model.first_send(request)->body.value_or("") == kBody);
      BOOST_TEST(model.client_send(3, 1)->body.value_or("") == kBody);
      BOOST_TEST(!model.client_send(3, 2));
      BOOST_TEST(!model.client_send(4, 1));
      BOOST_TEST(request.send_seqs == std::vector<std::uint64_t>{sent});
      BOOST_TEST(request.received_seqs == std::vector<std::uint64_t>{receipt});
      const auto receipts = model.receipts(request);
      BOOST_TEST_REQUIRE(receipts.size() == 1u);
      BOOST_TEST(receipts[0].seq == receipt);
      BOOST_TEST(receipts[0].what.job_id.value_or(0) == 1);
      // Asked again, the same events: kept ones are the very same objects.
      BOOST_TEST((model.request_of(slow) == model.request_of(slow)) == kept);
      BOOST_TEST(model.receipts(request)[0].what.status == 201);
    }
  }
}

// A rule gives one verdict whether the model keeps the events it decoded (a short history) or
// decodes them on each ask (a long one): every catalogue scenario, run with every named defect at
// once so that rules have violations to find, judged both ways.
BOOST_AUTO_TEST_CASE(rules_judge_alike_whether_decoded_events_are_kept_or_not) {
  Defects every;
  for (const auto& defect : all_defects()) every.set(defect.defect);
  std::size_t violations = 0;
  for (const auto& file : std::filesystem::directory_iterator(ONEJOB_SCENARIO_DIR)) {
    if (file.path().extension() != ".yaml") continue;
    BOOST_TEST_CONTEXT(file.path().filename()) {
      auto spec = scenario::load_scenario_file(file.path().string());
      spec.defects = every;
      const auto result = scenario::run_scenario(spec);
      auto kept = fold_history(result.history);
      auto asked = fold_history(result.history);
      asked.decode_on_each_ask();
      BOOST_TEST_REQUIRE(kept.keeps_decoded());
      BOOST_TEST_REQUIRE(!asked.keeps_decoded());
      for (const auto& invariant : all_invariants()) {
        const auto one = invariant.check(kept);
        const auto other = invariant.check(asked);
        BOOST_TEST_REQUIRE(one.size() == other.size());
        for (std::size_t i = 0; i < one.size(); ++i) {
          BOOST_TEST(one[i].clause == other[i].clause);
          BOOST_TEST(one[i].message == other[i].message);
          BOOST_TEST(one[i].event_seq.value_or(0) == other[i].event_seq.value_or(0));
          BOOST_TEST(one[i].evidence == other[i].evidence);
        }
        violations += one.size();
      }
    }
  }
  // The defects broke rules: the comparison judged verdicts, not empty lists.
  BOOST_TEST(violations >= 100u);
}

BOOST_AUTO_TEST_CASE(job_for_key_sees_only_a_job_committed_before_the_event) {
  HistoryBuilder h;
  h.add("browser", create_sent(1, "alice", "k1", kBody));
  insert_job(h, {});
  const auto model = h.model();
  BOOST_TEST(!model.job_for_key("alice", "k1", 2));
  BOOST_TEST_REQUIRE(model.job_for_key("alice", "k1", 3));
  BOOST_TEST(model.job_for_key("alice", "k1", 3)->id() == 1);
  BOOST_TEST(!model.job_for_key("bob", "k1", 3));
}

BOOST_AUTO_TEST_CASE(executions_and_calls_are_found_by_attempt) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1))
      .add("worker-1", provider_called(1, 1))
      .add("alpha", executed(1, 1, "ok", kBilling, kSoon));
  auto certification_call = executed(0, 0, "ok", kBilling, kSoon);
  certification_call.purpose = "certification";
  h.add("alpha", certification_call);
  const auto model = h.model();
  BOOST_TEST(model.executions.size() == 1u);
  BOOST_TEST_REQUIRE(model.execution_of(1));
  BOOST_TEST(model.execution_of(1)->provider.str() == "alpha");
  BOOST_TEST(model.execution_of(1)->executed.seq == 5u);
  BOOST_TEST(model.output_of(*model.execution_of(1)) == kBilling);
  BOOST_TEST(model.execution_of(1)->executed.what.outcome.str() == "ok");
  BOOST_TEST(!model.execution_of(2));
  BOOST_TEST(model.calls.at(1).size() == 1u);
  BOOST_TEST(model.calls.at(1)[0] == 4u);
}

BOOST_AUTO_TEST_CASE(json_digest_ignores_key_order_and_spacing) {
  const auto digest = json_digest(kBilling);
  BOOST_TEST_REQUIRE(digest.has_value());
  BOOST_TEST(digest->size() == 16u);
  BOOST_TEST(json_digest(R"({ "label": "billing", "confidence": 0.9 })").value_or("") == *digest);
  BOOST_TEST(json_digest(kOther).value_or("") != *digest);
  BOOST_TEST(!json_digest("label: billing").has_value());
}

// A recorded result is the provider's output when it is the same JSON value; bytes that differ
// where either side holds no JSON value are another result (an empty one stands for nothing).
BOOST_AUTO_TEST_CASE(differs_as_json_compares_values_and_never_waves_through_non_json) {
  BOOST_TEST(!differs_as_json(kBilling, kBilling));
  BOOST_TEST(!differs_as_json(R"({ "label": "billing", "confidence": 0.9 })", kBilling));
  BOOST_TEST(differs_as_json(kOther, kBilling));
  BOOST_TEST(differs_as_json("", kBilling));
  BOOST_TEST(differs_as_json(kBilling, ""));
  BOOST_TEST(differs_as_json("label: billing", kBilling));
  BOOST_TEST(differs_as_json("not json", "not json either"));
  BOOST_TEST(!differs_as_json("not json", "not json"));
}

// The checkers' parser skips whitespace after the value: it changes neither the value nor whether
// there is one.
BOOST_AUTO_TEST_CASE(json_value_reads_past_trailing_whitespace_alone) {
  BOOST_TEST(without_trailing_whitespace("{} \t\r\n ") == "{}");
  BOOST_TEST(without_trailing_whitespace(" \n") == "");
  BOOST_TEST(without_trailing_whitespace("[1]\f") == "[1]\f");  // a form feed is not JSON's
  // Spaces eight at a time, then what is left of any whitespace, at every length around it.
  for (std::size_t spaces = 0; spaces <= 20; ++spaces) {
    BOOST_TEST_CONTEXT(spaces << " spaces") {
      BOOST_TEST(without_trailing_whitespace("[1]" + std::string(spaces, ' ')) == "[1]");
      BOOST_TEST(without_trailing_whitespace("x\n" + std::string(spaces, ' ') + "\t") == "x");
      BOOST_TEST(without_trailing_whitespace(std::string(spaces, ' ')) == "");
      BOOST_TEST(without_trailing_whitespace(std::string(spaces, ' ') + "y") ==
                 std::string(spaces, ' ') + "y");
    }
  }
  BOOST_TEST(*json_value("{\"a\": [1, 2]}" + std::string(1 << 20, ' ')) ==
             nlohmann::json::parse(R"({"a":[1,2]})"));
  for (const char* invalid : {"", " \n\t", "{\"a\":1   ", "\"open   ", "1 2  ", "[1]\f"}) {
    BOOST_TEST(json_value(invalid)->is_discarded(), invalid);
  }
}

// holds_json_value says what json_value says, without building the value.
BOOST_AUTO_TEST_CASE(holds_json_value_agrees_with_json_value) {
  for (const std::string text : {"", " ", "{}", "{} \n", "[1,]", "{\"a\":1,\"a\":2}", "1e400",
                                 "[1e400]", "-0", "\"\\ud800\"", "{\"a\":[1,{\"b\":null}]}   ",
                                 "1 2", "[1]\f", "tru", "true", "\"\xff\"", "nul"}) {
    BOOST_TEST(holds_json_value(text) == !json_value(text)->is_discarded(), text);
  }
}

// json_value keeps the values of the texts asked for lately: asked again, a text gives the value
// kept (the same one, not parsed again), which is always what parsing the text gives, also once
// more texts were asked for than are kept, and for texts alike but for their last byte.
BOOST_AUTO_TEST_CASE(json_value_gives_what_parsing_gives_kept_or_not) {
  const auto text_of = [](int n) { return R"({"n":)" + std::to_string(n) + "}"; };
  const JsonValue first = json_value(text_of(7));
  BOOST_TEST(json_value(text_of(7) + "  \n").get() == first.get());  // kept, whitespace and all
  BOOST_TEST((*json_value(text_of(70)) == nlohmann::json{{"n", 70}}));
  for (int round = 0; round < 2; ++round) {
    for (int n = 0; n < 10'000; ++n) {
      const JsonValue value = json_value(text_of(n));
      BOOST_TEST_REQUIRE((*value == nlohmann::json{{"n", n}}), text_of(n));
    }
  }
  BOOST_TEST((*first == nlohmann::json{{"n", 7}}));  // a value given out outlives its keeping
  // A text bigger than all that is kept is parsed, and not kept.
  const std::string big = "[" + std::string(17 << 20, ' ') + "1]";
  const JsonValue once = json_value(big);
  BOOST_TEST((*once == nlohmann::json::array({1})));
  BOOST_TEST(json_value(big).get() != once.get());
  BOOST_TEST(json_value("[1 ").get() == json_value("[1 ").get());  // an invalid text is kept too
  BOOST_TEST(json_value("[1 ")->is_discarded());
}

BOOST_AUTO_TEST_CASE(store_rows_that_agree_with_the_log_pass) {
  HistoryBuilder h;
  won_and_running(h);
  require_none(check_store_agrees(h.model(), rows_as_logged()));
}

BOOST_AUTO_TEST_CASE(an_attempt_row_in_another_state_than_the_log_left_it_is_reported) {
  HistoryBuilder h;
  const auto end = won_and_running(h);
  StoreRows rows = rows_as_logged();
  rows.attempts[2][0].state = S::succeeded;
  const auto violations = check_store_agrees(h.model(), rows);
  require_one(violations, "log.attempt_state_differs", end);
  BOOST_TEST(is_safety(violations[0]));
}

BOOST_AUTO_TEST_CASE(a_job_row_with_another_result_than_the_winners_is_reported) {
  HistoryBuilder h;
  const auto end = won_and_running(h);
  StoreRows rows = rows_as_logged();
  rows.jobs[1].result = kOther;
  require_one(check_store_agrees(h.model(), rows), "log.job_row_differs", end);
}

BOOST_AUTO_TEST_CASE(a_committed_job_the_store_no_longer_holds_is_reported) {
  HistoryBuilder h;
  const auto end = won_and_running(h);
  StoreRows rows = rows_as_logged();
  rows.jobs.erase(2);
  require_one(check_store_agrees(h.model(), rows), "log.job_row_missing", end);
}

BOOST_AUTO_TEST_CASE(a_committed_attempt_the_store_no_longer_holds_is_reported) {
  HistoryBuilder h;
  const auto end = won_and_running(h);
  StoreRows rows = rows_as_logged();
  rows.attempts[2].clear();
  require_one(check_store_agrees(h.model(), rows), "log.attempt_row_missing", end);
}

BOOST_AUTO_TEST_CASE(every_invariant_is_registered_under_its_id_in_order) {
  using Check = std::vector<Violation> (*)(const HistoryModel&);
  const std::vector<std::pair<std::string, Check>> expected = {
      {"I1", &check_one_job_per_key},   {"I2", &check_key_reuse_conflict},
      {"I3", &check_one_live_attempt},  {"I4", &check_timeout_is_unknown},
      {"I5", &check_one_winner},        {"I6", &check_certified_failover},
      {"I7", &check_nothing_lost},      {"I8", &check_liveness},
      {"I9", &check_side_effects},      {"I10", &check_fencing},
      {"I11", &check_operator_actions}, {"I12", &check_policy},
      {"I13", &check_api_contract},     {"I14", &check_reports},
  };
  BOOST_TEST_REQUIRE(all_invariants().size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& [id, checker] = expected[i];
    BOOST_TEST_CONTEXT(id) {
      BOOST_TEST(std::string(all_invariants()[i].id) == id);
      const Invariant* found = find_invariant(id);
      BOOST_TEST_REQUIRE(found);
      BOOST_TEST((found->check == checker));
    }
  }
  BOOST_TEST(!find_invariant("I15"));
}

BOOST_AUTO_TEST_CASE(a_duplicated_cancel_request_still_makes_its_commit_an_operators_cancel) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1));
  // The network delivers the cancel twice under one id; the first copy fails on the store, the
  // second commits the cancel.
  const events::ApiRequest cancel{.request_id = "r3.3.1",
                                  .route = "cancel_attempt",
                                  .method = "POST",
                                  .path = "/attempts/1/cancel",
                                  .owner = "alice",
                                  .key = ""};
  h.add("api-3", cancel).add("api-3", cancel);
  h.add("api-3", events::ApiResponse{.request_id = "r3.3.1",
                                     .route = "cancel_attempt",
                                     .status = 503,
                                     .owner = "alice",
                                     .key = ""});
  const auto commit =
      h.add(kStore, unfenced_write(1, 1, S::running, S::cancelled, "api-3")).last_seq();
  const auto model = h.model();
  BOOST_TEST(model.operator_cancels.contains(commit));
  BOOST_TEST((model.end_of(*model.job(1)) == JobEnd::awaiting_operator));
}

// The model's records by id keep a std::map's meaning whatever order and spacing the ids come
// in: one record per id (emplace keeps the first), every id found and no other, visits in id
// order, references kept while records are added after the last.
BOOST_AUTO_TEST_CASE(records_by_id_keep_a_maps_meaning) {
  constexpr std::int64_t kLow = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kHigh = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::int64_t> ids{1, 2,  3,  4,   7, 5, 6, 100,   8,    -3, 0,
                                      9, 10, 99, 101, 2, 1, 8, kHigh, kLow, 11, 50};
  IdMap<std::string> records;
  std::map<std::int64_t, std::string> expected;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto [it, added] = records.emplace(ids[i], "record " + std::to_string(i));
    const auto [want, want_added] = expected.emplace(ids[i], "record " + std::to_string(i));
    BOOST_TEST(added == want_added, "id " << ids[i]);
    BOOST_TEST(it->first == ids[i]);
    BOOST_TEST(it->second == want->second, "id " << ids[i]);
  }
  BOOST_TEST(records.size() == expected.size());
  BOOST_TEST(std::ranges::equal(records, expected, [](const auto& a, const auto& b) {
    return a.first == b.first && a.second == b.second;
  }));
  for (const std::int64_t id :
       {kLow, kLow + 1, std::int64_t{-4}, std::int64_t{-3}, std::int64_t{0}, std::int64_t{12},
        std::int64_t{49}, std::int64_t{50}, kHigh - 1, kHigh}) {
    const bool has = expected.contains(id);
    BOOST_TEST(records.contains(id) == has, "id " << id);
    BOOST_TEST((records.find(id) != records.end()) == has, "id " << id);
    if (has) {
      BOOST_TEST(records.at(id) == expected.at(id));
    } else {
      BOOST_CHECK_THROW(records.at(id), std::out_of_range);
    }
  }
  // operator[] makes a missing record, and finds an existing one.
  records[12] += "twelve";
  records[1] += " again";
  BOOST_TEST(records.at(12) == "twelve");
  BOOST_TEST(records.at(1) == "record 0 again");
  // Dense ids from 1, each found where its id says; a reference survives records added after.
  IdMap<int> dense;
  const int& first = dense.try_emplace(1, 10).first->second;
  for (int id = 2; id <= 5000; ++id) dense.emplace(id, id * 10);
  BOOST_TEST(first == 10);
  BOOST_TEST(dense.at(4321) == 43210);
  BOOST_TEST(!dense.contains(5001));
  BOOST_TEST(!dense.contains(0));
}

// Ids with gaps of every length, a few out of order and some before the first, as a sequence
// gives them under concurrency: each found where a std::map finds it, after every insert.
BOOST_AUTO_TEST_CASE(ids_with_gaps_and_stragglers_keep_a_maps_meaning) {
  IdMap<std::int64_t> records;
  std::map<std::int64_t, std::int64_t> expected;
  std::mt19937_64 random(7);
  std::int64_t next = 1000;
  const auto add = [&](std::int64_t id) {
    const auto [it, added] = records.try_emplace(id, id * 3);
    const bool want_added = expected.try_emplace(id, id * 3).second;
    BOOST_TEST(added == want_added, "id " << id);
    BOOST_TEST(it->first == id);
  };
  for (int round = 0; round < 3000; ++round) {
    const auto draw = random() % 100;
    if (draw < 8 && next > 1010) {
      add(next - 1 - static_cast<std::int64_t>(random() % 10));  // a straggler, or one again
    } else if (draw < 9) {
      add(expected.begin()->first - 1 - static_cast<std::int64_t>(random() % 3));  // before all
    } else {
      next += 1 + static_cast<std::int64_t>(random() % 4);  // a gap of 0 to 3
      add(next);
    }
    if (round % 97 != 0) continue;
    for (std::int64_t id = expected.begin()->first - 2; id <= next + 2; ++id) {
      const auto want = expected.find(id);
      const auto got = records.find(id);
      BOOST_REQUIRE_MESSAGE((got != records.end()) == (want != expected.end()), "id " << id);
      if (got != records.end()) BOOST_REQUIRE(got->first == id && got->second == want->second);
    }
  }
  BOOST_TEST(records.size() == expected.size());
  BOOST_TEST(std::ranges::equal(records, expected, [](const auto& a, const auto& b) {
    return a.first == b.first && a.second == b.second;
  }));
  // An id far beyond the others: found, as are the rest, without the index's room for the gap.
  add(next + (std::int64_t{1} << 40));
  BOOST_TEST(records.at(next + (std::int64_t{1} << 40)) == (next + (std::int64_t{1} << 40)) * 3);
  for (const auto& [id, value] : expected) BOOST_REQUIRE(records.at(id) == value);
  BOOST_TEST(!records.contains(next + 1));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
