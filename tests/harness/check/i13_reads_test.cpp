// I13's judgement of a job read on hand-made histories: the job it shows, its failure reason, its
// attempts, its status and the request it was created with, each shown failing on the history that
// breaks it and passing on the one that keeps it.
#include <boost/test/unit_test.hpp>

#include "harness/check/api_routes.hpp"
#include "harness/check/invariant.hpp"
#include "harness/sim/rng.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using S = AttemptState;

BOOST_AUTO_TEST_SUITE(i13_reads)

BOOST_AUTO_TEST_CASE(i13_a_read_shows_a_failure_reason_only_for_a_failed_job) {
  // reason: absent, a text ("why"), or present but empty or not a text.
  const auto read = [](std::string status, std::optional<bool> reason) {
    HistoryBuilder h;
    auto got = read_received(1, 1, std::move(status), std::nullopt, std::nullopt);
    got.shows_failure_reason = reason;
    h.add("browser", get_sent(1, "alice", 1)).add("browser", got);
    return check_api_contract(h.model());
  };
  require_none(read("failed", true));
  require_none(read("pending", std::nullopt));
  require_one(read("pending", true), "I13.read_misstates", 2);
  require_one(read("pending", false), "I13.read_misstates", 2);
  require_one(read("failed", std::nullopt), "I13.read_misstates", 2);
  require_one(read("failed", false), "I13.read_misstates", 2);  // "failure_reason": ""
}

// A read shows the job it asked for: the job_id of the path its client sent.
BOOST_AUTO_TEST_CASE(i13_a_read_shows_the_job_it_asked_for) {
  const auto read = [](std::optional<std::string> path, std::optional<std::int64_t> shown) {
    HistoryBuilder h;
    auto sent = get_sent(1, "alice", 1);
    sent.path = std::move(path);
    auto got = read_received(1, 1, "pending", std::nullopt, std::nullopt);
    got.job_id = shown;
    h.add("browser", sent).add("browser", got);
    return check_api_contract(h.model());
  };
  require_none(read(std::nullopt, 1));
  require_none(read("/jobs/7", 7));  // a path naming another job: that one
  // Not a job's path (a 200 to it is I13.route_misjudged): no job to compare with.
  require_no(read("/jobs/7/x", 3), "I13.read_misstates");
  require_one(read(std::nullopt, std::nullopt), "I13.read_misstates", 2);  // no job_id
  require_one(read(std::nullopt, 2), "I13.read_misstates", 2);
  require_one(read("/jobs/7", 1), "I13.read_misstates", 2);
}

// A read shows completed_by: its winner's attempt_id, or null while it has none.
BOOST_AUTO_TEST_CASE(i13_a_read_shows_completed_by_or_null) {
  const auto read = [](std::optional<std::int64_t> winner, std::optional<bool> null) {
    HistoryBuilder h;
    auto got = read_received(1, 1, "pending", winner, std::nullopt);
    got.winner_null = null;
    h.add("browser", get_sent(1, "alice", 1)).add("browser", got);
    return check_api_contract(h.model());
  };
  require_none(read(std::nullopt, true));
  require_one(read(std::nullopt, std::nullopt), "I13.read_misstates", 2);  // left out
}

// A read shows blocked, true or false, always (whether it is true is judged against the log).
BOOST_AUTO_TEST_CASE(i13_a_read_shows_blocked) {
  const auto read = [](std::optional<bool> blocked) {
    HistoryBuilder h;
    auto got = read_received(1, 1, "pending", std::nullopt, std::nullopt);
    got.shown_blocked = blocked;
    h.add("browser", get_sent(1, "alice", 1)).add("browser", got);
    return check_api_contract(h.model());
  };
  require_none(read(false));
  require_none(read(true));
  require_one(read(std::nullopt), "I13.read_misstates", 2);
}

// Job 1 (attempt 1, claimed) read by request 1, showing `version`; attempt 1 wins before the read
// is sent ("before"), while the API node handles it ("during"), or not at all ("").
std::pair<std::vector<check::Violation>, std::uint64_t> read_version(
    std::string_view won, std::optional<std::int64_t> version) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1)).add("alpha", executed(1, 1, "ok", kBilling, kSoon));
  if (won == "before") win(h, {});
  h.add("browser", get_sent(1, "alice", 1));
  const ApiCall call{.request = 1, .route = "get_job", .status = 200, .job_id = 1};
  api_request(h, call);
  if (won == "during") win(h, {});
  api_response(h, call);
  auto got = won == "before" ? read_received(1, 1, "succeeded", 1, json_digest(kBilling))
                             : read_received(1, 1, "pending", std::nullopt, std::nullopt);
  got.shown_attempts = won == "before" ? "1:SUCCEEDED" : "1:RUNNING";
  got.shown_version = version;
  const auto seq = h.add("browser", got).last_seq();
  return {check_api_contract(h.model()), seq};
}

// A read shows the job's version: 1 from its insert, 2 from its winning compare-and-swap (the only
// write that bumps it), as the commit log has them while the read was handled.
BOOST_AUTO_TEST_CASE(i13_a_read_shows_a_version_the_job_had) {
  require_none(read_version("", 1).first);
  require_none(read_version("before", 2).first);
  require_none(read_version("during", 1).first);
  require_none(read_version("during", 2).first);
  for (const auto& [won, version] :
       std::vector<std::pair<std::string, std::optional<std::int64_t>>>{
           {"", 2}, {"", 0}, {"", std::nullopt}, {"before", 1}, {"before", 3}, {"during", 3}}) {
    BOOST_TEST_CONTEXT("won " << won << ", version " << version.value_or(-1)) {
      const auto [violations, seq] = read_version(won, version);
      require_one(violations, "I13.read_misstates", seq);
    }
  }
}

// Job 1 (attempt 1) read by request 1; `claim_during`: worker-1 claims attempt 1 while the API
// node handles the read, else before it. Returns the checker's findings and the receipt's seq.
std::pair<std::vector<check::Violation>, std::uint64_t> read_with_attempts(
    std::optional<std::string> shown, bool claim_during = false) {
  HistoryBuilder h;
  insert_job(h, {});
  if (!claim_during) h.add(kStore, claimed(1, 1));
  h.add("browser", get_sent(1, "alice", 1));
  const ApiCall call{.request = 1, .route = "get_job", .status = 200, .job_id = 1};
  api_request(h, call);
  if (claim_during) h.add(kStore, claimed(1, 1));
  api_response(h, call);
  auto got = read_received(1, 1, "pending", std::nullopt, std::nullopt);
  got.shown_attempts = std::move(shown);
  const auto seq = h.add("browser", got).last_seq();
  return {check_api_contract(h.model()), seq};
}

// A job read lists the job's attempts as they stood while it was answered (jobs vs attempts:
// the attempts accumulate under the job, and a reader sees them).
BOOST_AUTO_TEST_CASE(i13_a_read_lists_the_jobs_attempts_in_states_they_were_in) {
  require_none(read_with_attempts("1:RUNNING").first);
  require_none(read_with_attempts("1:STARTING", true).first);  // claimed during the read
  require_none(read_with_attempts("1:RUNNING", true).first);
  for (const std::optional<std::string>& wrong :
       {std::optional<std::string>{}, std::optional<std::string>{""},
        std::optional<std::string>{"1:STARTING"}, std::optional<std::string>{"1:SUCCEEDED"},
        std::optional<std::string>{"1:RUNNING,2:STARTING"},
        std::optional<std::string>{"1:RUNNING,1:RUNNING"}, std::optional<std::string>{"?"},
        std::optional<std::string>{"x:RUNNING"}, std::optional<std::string>{"1:running"},
        std::optional<std::string>{"1:RUNING"}}) {
    BOOST_TEST_CONTEXT("shown attempts: " << wrong.value_or("(none)")) {
      const auto [violations, seq] = read_with_attempts(wrong);
      require_one(violations, "I13.read_misstates", seq);
    }
  }
}

// Each attempt a read lists shows the attempt_no, origin and provider the store inserted it with
// (attempt 1: 1, initial, alpha).
BOOST_AUTO_TEST_CASE(i13_a_read_lists_each_attempt_as_it_was_inserted) {
  require_none(read_with_attempts("1:RUNNING:1:initial:alpha").first);
  for (const std::string wrong : {"1:RUNNING:1:initial:beta", "1:RUNNING:2:initial:alpha",
                                  "1:RUNNING:1:failover:alpha", "1:RUNNING:?:initial:alpha",
                                  "1:RUNNING:1:?:?", "1:RUNNING:", "1:RUNNING:1:Initial:alpha"}) {
    BOOST_TEST_CONTEXT("shown attempts: " << wrong) {
      const auto [violations, seq] = read_with_attempts(wrong);
      require_one(violations, "I13.read_misstates", seq);
    }
  }
}

// The rules' words for states and origins are the README's, spelled out in the rules; the system's
// own tables speak them too (a word misspelled there fails here and in every read a rule judges).
BOOST_AUTO_TEST_CASE(i13_states_and_origins_are_judged_in_the_contracts_words) {
  using S = AttemptState;
  const std::pair<S, std::string_view> states[] = {
      {S::starting, "STARTING"},   {S::running, "RUNNING"}, {S::unknown, "UNKNOWN"},
      {S::succeeded, "SUCCEEDED"}, {S::failed, "FAILED"},   {S::cancelled, "CANCELLED"},
      {S::discarded, "DISCARDED"}};
  for (const auto& [state, word] : states) {
    BOOST_TEST(check::contract_word(state) == word);
    BOOST_TEST(to_string(state) == word);
  }
  const std::pair<AttemptOrigin, std::string_view> origins[] = {
      {AttemptOrigin::initial, "initial"},
      {AttemptOrigin::failover, "failover"},
      {AttemptOrigin::explicit_retry, "explicit"}};
  for (const auto& [origin, word] : origins) {
    BOOST_TEST(check::contract_word(origin) == word);
    BOOST_TEST(to_string(origin) == word);
  }
}

// Job 1 won by attempt 1; request 2 sends its create again and is answered 200 showing `shown`.
std::pair<std::vector<check::Violation>, std::uint64_t> replay_showing(
    std::optional<std::string> shown) {
  HistoryBuilder h;
  insert_job(h, {});
  h.add(kStore, claimed(1, 1)).add("alpha", executed(1, 1, "ok", kBilling, kSoon));
  win(h, {});
  h.add("browser", create_sent(2, "alice", "k1", kBody));
  api_exchange(h, {.request = 2, .route = "create_job", .status = 200, .job_id = 1});
  auto got = received(2, 200, 1);
  got.shown_status = std::move(shown);
  const auto seq = h.add("browser", got).last_seq();
  return {check_api_contract(h.model()), seq};
}

// A create's answer shows the job's status as it stood while the create was handled: a replay of a
// won job shows it succeeded.
BOOST_AUTO_TEST_CASE(i13_a_replay_shows_the_status_its_job_had) {
  require_none(replay_showing("succeeded").first);
  for (const std::optional<std::string>& wrong :
       {std::optional<std::string>{"pending"}, std::optional<std::string>{"failed"},
        std::optional<std::string>{}}) {
    BOOST_TEST_CONTEXT("shown status: " << wrong.value_or("(none)")) {
      const auto [violations, seq] = replay_showing(wrong);
      require_one(violations, "I13.create_misstates", seq);
    }
  }
}

// A read shows the request the job was created with: the operation and provider columns the commit
// log inserted, and the failover list of the body it stored.
BOOST_AUTO_TEST_CASE(i13_a_read_shows_the_request_its_job_was_created_with) {
  const auto read = [](const std::string& stored_body, void (*shown)(events::ClientReceived&)) {
    HistoryBuilder h;
    insert_job(h, {.body = stored_body});
    h.add(kStore, claimed(1, 1));
    h.add("browser", get_sent(1, "alice", 1));
    api_exchange(h, {.request = 1, .route = "get_job", .status = 200, .job_id = 1});
    auto got = read_received(1, 1, "pending", std::nullopt, std::nullopt);
    got.shown_attempts = "1:RUNNING";
    shown(got);
    const auto seq = h.add("browser", got).last_seq();
    return std::pair{check_api_contract(h.model()), seq};
  };
  const std::string with_failover =
      R"({"failover":["beta","gamma"],"input":{"text":"x"},"operation":"classify","provider":"alpha"})";
  const auto as_created = [](events::ClientReceived&) {};
  const auto beta_gamma = [](events::ClientReceived& got) { got.shown_failover = "beta,gamma"; };
  require_none(read(kBody, as_created).first);
  require_none(read(with_failover, beta_gamma).first);
  const std::vector<std::pair<std::string, void (*)(events::ClientReceived&)>> wrong{
      {kBody, [](events::ClientReceived& got) { got.shown_operation = "summarize"; }},
      {kBody, [](events::ClientReceived& got) { got.shown_operation.reset(); }},
      {kBody, [](events::ClientReceived& got) { got.shown_provider = "beta"; }},
      {kBody, [](events::ClientReceived& got) { got.shown_provider.reset(); }},
      {kBody, [](events::ClientReceived& got) { got.shown_failover.reset(); }},  // no list
      {kBody, [](events::ClientReceived& got) { got.shown_failover = "beta"; }},
      {with_failover, [](events::ClientReceived&) {}},  // the list left empty
      {with_failover, [](events::ClientReceived& got) { got.shown_failover = "gamma,beta"; }},
      {with_failover, [](events::ClientReceived& got) { got.shown_failover = "beta"; }},
  };
  for (std::size_t i = 0; i < wrong.size(); ++i) {
    BOOST_TEST_CONTEXT("wrong read " << i) {
      const auto [violations, seq] = read(wrong[i].first, wrong[i].second);
      require_one(violations, "I13.read_misstates", seq);
    }
  }
}

// Job 1 failed (attempt 1 FAILED, then the job); with `retried`, an operator's retry then inserted
// attempt 2, which makes the job pending again. A read answered after that shows `shown`.
std::pair<std::vector<check::Violation>, std::uint64_t> read_failed_job(
    bool retried, const std::string& shown, std::optional<std::string> attempts = std::nullopt) {
  HistoryBuilder h;
  first_attempt_failed(h).add(kStore, job_failed(1));
  if (retried) insert_keyed_retry(h, "op-1");
  h.add("browser", get_sent(1, "alice", 1));
  api_exchange(h, {.request = 1, .route = "get_job", .status = 200, .job_id = 1});
  auto got = read_received(1, 1, shown, std::nullopt, std::nullopt);
  got.shown_attempts = attempts.value_or(retried ? "1:FAILED,2:STARTING" : "1:FAILED");
  if (shown == "failed") got.shows_failure_reason = true;
  const auto seq = h.add("browser", got).last_seq();
  return {check_api_contract(h.model()), seq};
}

// A read shows a status the job had while it was answered, by the commit log: a retried failed
// job is pending again (though it keeps its old failure reason until it ends anew).
BOOST_AUTO_TEST_CASE(i13_a_read_shows_a_status_the_job_had_while_it_was_answered) {
  require_none(read_failed_job(false, "failed").first);
  require_none(read_failed_job(true, "pending").first);
  for (const auto& [retried, shown] : std::vector<std::pair<bool, std::string>>{
           {true, "failed"}, {false, "pending"}, {false, "succeeded"}}) {
    BOOST_TEST_CONTEXT("retried " << retried << ", shown " << shown) {
      const auto [violations, seq] = read_failed_job(retried, shown);
      BOOST_TEST_REQUIRE(!violations.empty());
      BOOST_TEST(violations[0].clause == "I13.read_misstates", describe(violations));
      BOOST_TEST(violations[0].event_seq.value_or(0) == seq);
    }
  }
}

// A read lists the job's attempts in the order they were made.
BOOST_AUTO_TEST_CASE(i13_a_read_lists_the_attempts_in_the_order_they_were_made) {
  require_none(read_failed_job(true, "pending", "1:FAILED,2:STARTING").first);
  const auto [violations, seq] = read_failed_job(true, "pending", "2:STARTING,1:FAILED");
  require_one(violations, "I13.read_misstates", seq);
}

// Job 1's attempt 1 failed with reason "provider refused", then the job with "no provider left";
// a read answered after that shows `attempt_reason` for the attempt and `failure_reason` for the
// job (as texts, recorded as their digests).
std::pair<std::vector<check::Violation>, std::uint64_t> read_reasons(
    const std::string& attempt_reason, const std::string& failure_reason) {
  HistoryBuilder h;
  insert_job(h, {});
  auto failed = fenced_write(1, 1, S::running, S::failed);
  failed.reason = "provider refused";
  auto job = job_failed(1);
  job.reason = "no provider left";
  h.add(kStore, claimed(1, 1)).add(kStore, failed).add(kStore, job);
  h.add("browser", get_sent(1, "alice", 1));
  api_exchange(h, {.request = 1, .route = "get_job", .status = 200, .job_id = 1});
  auto got = read_received(1, 1, "failed", std::nullopt, std::nullopt);
  got.shown_attempts = "1:FAILED:1:initial:alpha:" + sim::hex64(sim::fnv1a64(attempt_reason));
  got.shows_failure_reason = true;
  got.failure_reason_digest = sim::hex64(sim::fnv1a64(failure_reason));
  const auto seq = h.add("browser", got).last_seq();
  return {check_api_contract(h.model()), seq};
}

// A read shows the reasons the store holds: each attempt's outcome_reason as its row held it
// during the exchange, and a failed job's failure_reason as the store wrote it.
BOOST_AUTO_TEST_CASE(i13_a_read_shows_the_reasons_the_store_wrote) {
  require_none(read_reasons("provider refused", "no provider left").first);
  for (const auto& [attempt, job] :
       std::vector<std::pair<std::string, std::string>>{{"", "no provider left"},
                                                        {"alpha", "no provider left"},
                                                        {"provider refused", "provider refused"},
                                                        {"provider refused", ""}}) {
    BOOST_TEST_CONTEXT("reasons \"" << attempt << "\", \"" << job << "\"") {
      const auto [violations, seq] = read_reasons(attempt, job);
      require_one(violations, "I13.read_misstates", seq);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
