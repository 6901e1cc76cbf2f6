// The simulated world: each fault kind changes the trace the way it should, and the system
// survives it.
#include <set>

#include <boost/test/unit_test.hpp>

#include "system/events/api_events.hpp"
#include "system/events/attempt_events.hpp"
#include "system/events/certification_events.hpp"
#include "system/events/worker_events.hpp"

#include "harness/events/client_events.hpp"
#include "harness/events/commit_events.hpp"
#include "harness/events/provider_events.hpp"
#include "harness/scenario/runner.hpp"

#include "tests/support/scenarios.hpp"
#include "tests/support/typed_events.hpp"

namespace onejob::scenario {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using test::net_faults;

template <events::EventType T>
std::vector<test::Recorded<T>> events_of(const RunResult& result) {
  return test::events_of<T>(result.history);
}

// The store's commit log of attempt transitions, "FROM->TO" in commit order.
std::vector<std::string> attempt_transitions(const RunResult& result) {
  std::vector<std::string> found;
  for (const auto& e : events_of<events::CommitAttemptTransition>(result)) {
    found.push_back(std::string(to_string(e.what.from)) + "->" + std::string(to_string(e.what.to)));
  }
  return found;
}

void require_pass(const RunResult& result) {
  for (const auto& v : result.violations) BOOST_TEST_MESSAGE(v.rule << ": " << v.message);
  BOOST_TEST(result.passed());
}

// One client, one create at t=0, one worker, provider alpha answering correctly in 100ms.
ScenarioSpec one_job(std::uint64_t seed = 1) {
  auto spec = test::double_click_spec(1, seed);
  spec.providers[0].latency = {milliseconds(100), milliseconds(100)};
  spec.policy.attempt_deadline = seconds(10);
  spec.policy.lease = seconds(20);
  spec.policy.reconcile_period = seconds(5);
  spec.expect.jobs = 1;
  return spec;
}

BOOST_AUTO_TEST_SUITE(world)

BOOST_AUTO_TEST_CASE(a_job_runs_end_to_end_through_lb_api_worker_and_provider) {
  const auto result = run_scenario(one_job());
  require_pass(result);
  BOOST_TEST(events_of<events::LbForwarded>(result).size() == 1u);
  BOOST_TEST(events_of<events::ProviderExecuted>(result).size() == 1u);
  BOOST_TEST(events_of<events::JobCompleted>(result).size() == 1u);
  BOOST_TEST(attempt_transitions(result) ==
             (std::vector<std::string>{"STARTING->RUNNING", "RUNNING->SUCCEEDED"}));
}

BOOST_AUTO_TEST_CASE(a_dropped_response_makes_the_client_retry_and_get_the_same_job_id) {
  auto spec = one_job();
  spec.policy.client_timeout = seconds(2);
  spec.policy.client_retries = 1;
  spec.partitions.push_back({.link = LinkKind::client_lb,
                             .nodes = {"browser"},
                             .direction = PartitionSpec::Direction::responses,
                             .from = Duration(0),
                             .until = seconds(1),
                             .pos = {}});
  spec.expect.responses.push_back({1, {200}, {}});
  const auto result = run_scenario(spec);
  require_pass(result);
  const auto cut = net_faults(result.history, "partitioned");
  BOOST_REQUIRE(cut.size() == 1u);
  BOOST_TEST(cut[0].injected);
  const auto sends = events_of<events::ClientSent>(result);
  BOOST_REQUIRE(sends.size() == 2u);
  BOOST_TEST((sends[1].what.key == sends[0].what.key));
  BOOST_TEST(events_of<events::JobCreated>(result).size() == 1u);
  // The first response (lost) and the retry's answer name the same job.
  const auto responses = events_of<events::ApiResponse>(result);
  BOOST_REQUIRE(responses.size() == 2u);
  BOOST_TEST((responses[0].what.job_id == responses[1].what.job_id));
}

BOOST_AUTO_TEST_CASE(the_lb_retries_a_silent_api_node_on_another_with_the_same_key) {
  auto spec = one_job();
  spec.topology.api_nodes = 2;
  spec.policy.lb_timeout = seconds(1);
  spec.policy.lb_retries = 1;
  spec.node_faults.push_back({Duration(0), NodeFaultSpec::Kind::crash, "api-1", {}});
  spec.node_faults.push_back({Duration(0), NodeFaultSpec::Kind::crash, "api-2", {}});
  spec.node_faults.push_back({milliseconds(500), NodeFaultSpec::Kind::restart, "api-2", {}});
  spec.node_faults.push_back({milliseconds(500), NodeFaultSpec::Kind::restart, "api-1", {}});
  spec.timeline[0].at = milliseconds(100);
  spec.node_faults[0].at = milliseconds(50);
  spec.node_faults[1].at = milliseconds(50);
  spec.expect.responses.push_back({1, {201}, {}});
  const auto result = run_scenario(spec);
  require_pass(result);
  const auto forwards = events_of<events::LbForwarded>(result);
  BOOST_REQUIRE(forwards.size() == 2u);
  BOOST_TEST((forwards[0].what.to != forwards[1].what.to));
  BOOST_TEST(events_of<events::NodeCrashed>(result).size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_crashed_workers_attempt_ends_unknown_after_its_lease_never_failed) {
  auto spec = one_job();
  spec.providers[0].latency = {seconds(5), seconds(5)};
  spec.node_faults.push_back({seconds(1), NodeFaultSpec::Kind::crash, "worker-1", {}});
  spec.expect.jobs = 1;
  const auto result = run_scenario(spec);
  require_pass(result);
  const auto transitions = attempt_transitions(result);
  BOOST_TEST(transitions == (std::vector<std::string>{"STARTING->RUNNING", "RUNNING->UNKNOWN",
                                                      "UNKNOWN->SUCCEEDED"}));
  BOOST_TEST(std::ranges::count(transitions, std::string("RUNNING->FAILED")) == 0);
  // The provider finished its work; the reconciler learned it through the status endpoint.
  BOOST_TEST(events_of<events::AttemptCreated>(result).size() == 1u);
  BOOST_TEST(events_of<events::ProviderExecuted>(result).size() == 1u);
  const auto unknown = events_of<events::CommitAttemptTransition>(result)[1];
  BOOST_TEST(unknown.what.by == "reconciler");
  BOOST_TEST(unknown.what.takeover);
  BOOST_TEST((unknown.at >= Instant(seconds(20))));
}

BOOST_AUTO_TEST_CASE(a_duplicated_provider_request_executes_once) {
  auto spec = one_job();
  spec.network.worker_provider.duplicate = kPpmOne;
  const auto result = run_scenario(spec);
  require_pass(result);
  BOOST_TEST(events_of<events::ProviderExecuted>(result).size() == 1u);
  BOOST_TEST(events_of<events::ProviderDeduped>(result).size() >= 1u);
  BOOST_TEST(net_faults(result.history, "duplicate").size() >= 1u);
  BOOST_TEST(events_of<events::JobCompleted>(result).size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_lost_provider_reply_is_unknown_then_resolved_by_the_reconciler) {
  auto spec = one_job();
  spec.partitions.push_back({.link = LinkKind::worker_provider,
                             .nodes = {"worker-1"},
                             .direction = PartitionSpec::Direction::responses,
                             .from = Duration(0),
                             .until = seconds(15),
                             .pos = {}});
  const auto result = run_scenario(spec);
  require_pass(result);
  BOOST_TEST(
      attempt_transitions(result) ==
      (std::vector<std::string>{"STARTING->RUNNING", "RUNNING->UNKNOWN", "UNKNOWN->SUCCEEDED"}));
  BOOST_TEST(events_of<events::ProviderExecuted>(result).size() == 1u);  // no duplicate work
}

BOOST_AUTO_TEST_CASE(commit_outcome_unknown_on_create_then_the_retry_finds_the_same_job) {
  auto spec = one_job();
  spec.policy.client_timeout = seconds(1);
  spec.policy.client_retries = 2;
  spec.partitions.push_back({.link = LinkKind::node_store,
                             .nodes = {"api-1"},
                             .direction = PartitionSpec::Direction::responses,
                             .from = Duration(0),
                             .until = milliseconds(500),
                             .pos = {}});
  spec.expect.responses.push_back({1, {200}, {}});
  const auto result = run_scenario(spec);
  require_pass(result);
  const auto faults = events_of<events::StoreFault>(result);
  BOOST_REQUIRE(!faults.empty());
  BOOST_TEST(faults[0].what.maybe_committed);
  BOOST_TEST(events_of<events::CommitJobInserted>(result).size() == 1u);
  BOOST_TEST(events_of<events::JobCreated>(result).empty());  // the API never learned it created it
  const auto responses = events_of<events::ApiResponse>(result);
  BOOST_TEST(responses.front().what.status == 503);
}

BOOST_AUTO_TEST_CASE(a_partition_between_workers_and_the_store_only_delays_the_work) {
  auto spec = one_job();
  spec.partitions.push_back({.link = LinkKind::node_store,
                             .nodes = {"worker-1"},
                             .direction = PartitionSpec::Direction::both,
                             .from = Duration(0),
                             .until = seconds(30),
                             .pos = {}});
  const auto result = run_scenario(spec);
  require_pass(result);
  BOOST_TEST(events_of<events::WorkerStoreError>(result).size() > 10u);
  const auto completed = events_of<events::JobCompleted>(result);
  BOOST_REQUIRE(completed.size() == 1u);
  BOOST_TEST((completed[0].at >= Instant(seconds(30))));
}

BOOST_AUTO_TEST_CASE(reordering_delays_messages_without_changing_the_outcome) {
  auto spec = test::double_click_spec(5, 3);
  spec.network.client_lb.reorder = kPpmOne;
  spec.network.client_lb.reorder_window = milliseconds(40);
  spec.expect.same_job_id.push_back({{1, 2, 3, 4, 5}, {}});
  const auto result = run_scenario(spec);
  require_pass(result);
  BOOST_TEST(net_faults(result.history, "delay").size() == 10u);  // 5 requests, 5 responses
}

BOOST_AUTO_TEST_CASE(swarm_seeds_switch_different_faults_on) {
  auto spec = test::double_click_spec(6, 0);
  spec.swarm = true;
  spec.policy.client_retries = 3;
  std::set<std::string> fault_sets;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const auto result = run_scenario(spec, {.seed = seed, .make_store = {}});
    std::string kinds;
    for (const auto& e : result.history) {
      if (e.injected) kinds += e.event.kind() + ",";
    }
    fault_sets.insert(kinds);
    for (const auto& v : result.violations) {
      // Lost requests may go unanswered; no safety rule may break.
      BOOST_TEST(!check::is_safety(v), v.message);
    }
  }
  BOOST_TEST(fault_sets.size() > 4u);
}

BOOST_AUTO_TEST_CASE(lost_requests_to_one_api_node_make_the_lb_try_the_next) {
  auto spec = one_job();
  spec.topology.api_nodes = 2;
  spec.policy.lb_timeout = seconds(1);
  spec.policy.lb_retries = 1;
  spec.partitions.push_back({.link = LinkKind::lb_api,
                             .nodes = {"api-1", "api-2"},
                             .direction = PartitionSpec::Direction::requests,
                             .from = Duration(0),
                             .until = milliseconds(900),
                             .pos = {}});
  spec.expect.responses.push_back({1, {201}, {}});
  const auto result = run_scenario(spec);
  require_pass(result);
  BOOST_TEST(net_faults(result.history, "partitioned").size() == 1u);
  BOOST_TEST(events_of<events::LbForwarded>(result).size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_fallback_that_hallucinates_a_key_is_not_failed_over_to_when_uncertified) {
  auto spec = one_job();
  ProviderSpec beta = spec.providers[0];
  beta.name = "beta";
  beta.certify = true;
  beta.default_call.outcome = ProviderOutcome::hallucinated_key;
  spec.providers.push_back(beta);
  spec.providers[0].script = {{ProviderOutcome::error, std::nullopt}};
  spec.timeline[0].at = seconds(1);  // after certification
  spec.timeline[0].create_job.body =
      R"({"operation":"classify","provider":"alpha","failover":["beta"],"input":{"text":"refund"}})";
  const auto result = run_scenario(spec);
  require_pass(result);
  const auto certification = events_of<events::CertificationRecorded>(result);
  BOOST_REQUIRE(certification.size() == 1u);
  BOOST_TEST(!certification[0].what.passed);
  BOOST_TEST(events_of<events::FailoverSkipped>(result).size() == 1u);
  BOOST_TEST(events_of<events::JobFailed>(result).size() == 1u);
  BOOST_TEST(events_of<events::JobCompleted>(result).empty());
}

BOOST_AUTO_TEST_CASE(an_answer_after_the_deadline_still_wins_through_the_same_cas) {
  auto spec = one_job();
  spec.providers[0].script = {{ProviderOutcome::ok, LatencySpec{seconds(25), seconds(25)}}};
  const auto result = run_scenario(spec);
  require_pass(result);
  BOOST_TEST(
      attempt_transitions(result) ==
      (std::vector<std::string>{"STARTING->RUNNING", "RUNNING->UNKNOWN", "UNKNOWN->SUCCEEDED"}));
}

BOOST_AUTO_TEST_CASE(a_restarted_worker_starts_empty_and_takes_new_work) {
  auto spec = one_job();
  spec.node_faults.push_back({seconds(1), NodeFaultSpec::Kind::crash, "worker-1", {}});
  spec.node_faults.push_back({seconds(2), NodeFaultSpec::Kind::restart, "worker-1", {}});
  spec.timeline[0].at = seconds(3);
  const auto result = run_scenario(spec);
  require_pass(result);
  const auto starts = events_of<events::NodeStarted>(result);
  const auto restarted = std::ranges::find_if(
      starts, [](const auto& e) { return e.node == "worker-1" && e.injected; });
  BOOST_REQUIRE(restarted != starts.end());
  BOOST_TEST(restarted->what.incarnation == 2);
  BOOST_TEST(events_of<events::JobCompleted>(result).size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::scenario
