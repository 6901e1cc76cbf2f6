#pragma once
// The real-mode prober: a scenario's timeline run on real time against a live job API. Its
// clients talk to the target through a fault proxy each (the scenario's client_lb faults), its
// providers are served as stubs (their scripted outcomes; their record of executions is the
// ground truth of side effects), node faults and pauses become kill -9, restart and
// SIGSTOP/SIGCONT of a target the probe started, and the recorded history is judged by the
// black-box rules. What the scenario asks that cannot be done to a black box (faults inside
// it: its store, its workers' links) is listed in the result's notes, never silently dropped.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/check/black_box.hpp"
#include "harness/real/target_profile.hpp"
#include "harness/scenario/spec.hpp"

namespace onejob::real {

struct ProbeOptions {
  std::string host = "127.0.0.1";
  std::string port;  // "0": a free loopback port for each run (with target_cmd)
  TargetProfile profile;
  double time_scale = 1.0;  // scenario time / real time: 10 runs a 60 s story in 6 s
  // Started (and killed, paused, restarted) by the probe; "{port}", "{stub:NAME}" and
  // "{stubs}" (NAME=URL, space-separated), "{store}" (see store_upstream) and "{certified}" (the
  // providers the scenario certifies, comma-separated) and "{config}" (an `onejob serve` config
  // file: the scenario's policy, time-scaled, and its providers at the stubs' URLs) are replaced
  // first. Empty: the target runs already.
  std::string target_cmd;
  // The target's store (HOST:PORT, or a Unix socket's path, e.g. its PostgreSQL's): the probe
  // puts a proxy in front of it on 127.0.0.1,
  // "{store}" in target_cmd stands for the proxy's address, and the scenario's node_store
  // partitions, drops and latency act on that link (a lost message closes the connection it
  // travelled on). Empty: the link is left alone, and those faults are noted as not applied.
  std::string store_upstream;
  std::string log_dir = ".";  // the target's output goes to log_dir/NAME.target.log
  // After the faults, how long the probe reads acknowledged jobs waiting for them to finish.
  std::chrono::milliseconds settle{10'000};
  std::chrono::milliseconds ready_bound{60'000};  // a (re)started target's time to answer 200
  // The run's tag on every idempotency key (tag_keys), so that runs against one database never
  // share keys; empty: keys as written.
  std::string key_prefix;
  // While the timeline runs, every acknowledged job is read this often (0: never), so that a
  // result that changes is seen changing.
  std::chrono::milliseconds observe_every{200};
  bool expectations = true;  // also judge the scenario's response and same-job expectations
};

// Each of a scenario's idempotency keys as a run sends it, with the run's `tag` (empty: every
// key as it is), so that runs against one database never share keys — and what a story says of a
// key still holds of it: an empty (or blank) key stays as it is, and a key long enough to hold
// the tag and 8 of its own characters keeps its length (the tag overwrites its first characters,
// when they are visible ASCII as the tag's are). Any other key is prefixed with the tag, and so
// is any key that would otherwise be sent as another's.
std::map<std::string, std::string> tag_keys(const std::string& tag,
                                            const std::vector<std::string>& keys);

struct ProbeResult {
  std::string name;
  std::string file;
  std::vector<check::black_box::Finding> findings;  // safety and availability
  std::vector<std::string> expectation_failures;
  std::vector<std::string> notes;  // what was not applied, and why
  std::string setup_error;         // the run could not be made (stub port, target start)
  std::string jsonl;               // the history, for `onejob check`
  check::black_box::History history;
  std::size_t requests = 0;
  std::size_t executions = 0;
  std::size_t acknowledged = 0;
  int target_starts = 0;
  double seconds = 0;

  bool safe() const;    // no safety finding
  bool passed() const;  // safe, expectations met, and set up
};

ProbeResult probe_scenario(const scenario::ScenarioSpec& spec, const ProbeOptions& options);

}  // namespace onejob::real
