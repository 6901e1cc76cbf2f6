#pragma once
// One run of a scenario against a target, as `onejob probe` makes it (probe.hpp): shared by the
// files that make it, and by nothing else. probe.cpp sets the run up, runs it and judges it;
// probe_faults.cpp turns the scenario's faults into what the proxies do to each message;
// probe_timeline.cpp sends the clients' requests and runs the nemesis, the observer and the
// quiet phase.
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "harness/real/black_box_recorder.hpp"
#include "harness/real/fault_proxy.hpp"
#include "harness/real/http_client.hpp"
#include "harness/real/probe.hpp"
#include "harness/real/provider_stub.hpp"
#include "harness/real/stream_proxy.hpp"
#include "harness/real/target_process.hpp"
#include "harness/real/timeline_order.hpp"

namespace onejob::real::probe_detail {

namespace bb = check::black_box;
using onejob::Duration;
using scenario::LinkKind;
using scenario::PartitionSpec;
using scenario::ScenarioSpec;
using scenario::TimelineEntry;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// What one timeline request came to: its last answer's status (0: none) and the job id learned.
struct Outcome {
  bool done = false;
  int status = 0;
  std::string job;
  std::string failure;  // why the last send got no answer (a timeout, a closed connection)
};

// A job the target acknowledged, for the quiet phase's reads.
struct Acknowledged {
  std::string owner;
  std::string credential;
  std::string job;
  int request = 0;
};

// A scenario's idempotency keys, each as written: creates' and operator actions' (an action
// without one of its own is sent under "op-r<request>").
std::vector<std::string> scenario_keys(const ScenarioSpec& spec);
// Each request's instant, by request number - 1.
std::vector<Duration> request_instants(const ScenarioSpec& spec);

class Run {
 public:
  Run(const ScenarioSpec& spec, const ProbeOptions& options, ProbeResult& result)
      : spec_(spec),
        options_(options),
        result_(result),
        port_(options.port),
        recorder_(options.profile, last_answer_wait()),
        random_(spec.seed),
        keys_(tag_keys(options.key_prefix, scenario_keys(spec))),
        order_(request_instants(spec)) {}

  void execute();

 private:
  milliseconds real(Duration scenario_time) const {
    const double ms =
        std::chrono::duration<double, std::milli>(scenario_time).count() / options_.time_scale;
    return milliseconds(static_cast<std::int64_t>(std::llround(ms)));
  }
  Duration scenario_now() const {
    const auto elapsed = std::chrono::duration<double, std::micro>(Clock::now() - origin_);
    return std::chrono::duration_cast<Duration>(elapsed * options_.time_scale);
  }
  // A client's wait for an answer before it sends again, scaled, but never under a second: a
  // real target on a loaded machine must not look like a lost reply.
  milliseconds request_timeout() const {
    return std::max(real(spec_.policy.client_timeout), milliseconds(1000));
  }
  // The wait for an answer no resend follows (a request's last send, a read by the observer or
  // the quiet phase): never under five seconds. The time it takes decides only whether the
  // answer is recorded, not when anything is sent, and a scenario's story expects every request
  // answered; a target slowed by a loaded machine (a PostgreSQL-backed one beside other tests on
  // two cores) must not fail the story for being slow.
  milliseconds last_answer_wait() const { return std::max(request_timeout(), milliseconds(5000)); }

  bool set_up();
  void start_stubs();
  bool start_target();
  std::string expand_command() const;
  std::string write_target_config() const;
  void start_proxies();
  ProxyRule choose(std::size_t client, std::uint64_t number);
  ProxyRule choose_provider(std::size_t provider, std::uint64_t number);
  StreamRule choose_store(StreamDirection direction);
  bool start_store_proxy();
  std::optional<ProxyRule> draw_fault(const sim::LinkSpec& link);
  // True with probability `ppm` parts per million, from the scenario's seed (random_mutex_ held).
  bool draw(scenario::Ppm ppm) {
    return ppm > 0 &&
           std::uniform_int_distribution<scenario::Ppm>(0, scenario::kPpmOne - 1)(random_) < ppm;
  }
  std::optional<ProxyRule> partitioned(LinkKind link, const std::vector<std::string>& nodes,
                                       bool any_node) const;
  std::string provider_url(std::size_t provider) const;
  bool has_provider_faults() const;
  void run_timeline();
  void perform(const TimelineEntry& entry, HttpConnection& connection);
  std::string wait_for_job(int request);
  std::string operator_credential(const std::string& owner) const;
  std::string credential(const std::string& owner) const;
  void nemesis();
  void observe();
  void quiet_phase();
  void judge_expectations();

  const ScenarioSpec& spec_;
  const ProbeOptions& options_;
  ProbeResult& result_;
  std::string port_;  // the target's; options' "0" becomes a free port of this run
  BlackBoxRecorder recorder_;
  Clock::time_point origin_;
  std::vector<std::unique_ptr<ProviderStub>> stubs_;
  std::unique_ptr<TargetProcess> target_;
  std::mutex target_mutex_;
  std::vector<std::unique_ptr<FaultProxy>> proxies_;  // one per client, in spec order
  // One per provider stub when the scenario has faults between the target and its providers
  // (the stubs stay the ground truth: a request dropped before a stub never executed).
  std::vector<std::unique_ptr<FaultProxy>> provider_proxies_;
  // Between the target and its store (--store-upstream): the node_store faults.
  std::unique_ptr<StreamProxy> store_proxy_;
  std::map<std::string, std::size_t> client_index_;
  // The timeline has begun (origin_ is set): faults apply from then on, and until quiet_.
  std::atomic<bool> running_ = false;
  std::atomic<bool> quiet_ = false;
  std::atomic<bool> observing_done_ = false;
  std::mutex random_mutex_;
  std::mt19937_64 random_;
  const std::map<std::string, std::string> keys_;  // each scenario key as this run sends it
  // Which request may go out: every one of an earlier instant has its place at the target, as
  // the client proxies (through kOrderField) or the request's own end tell.
  TimelineOrder order_;

  std::mutex mutex_;  // guards everything below
  std::condition_variable finished_;
  std::map<int, Outcome> outcomes_;
  std::vector<Acknowledged> acknowledged_;
  std::map<std::string, std::string> final_status_;  // job -> last status read in the quiet phase
  std::vector<std::string> notes_;
};

}  // namespace onejob::real::probe_detail
