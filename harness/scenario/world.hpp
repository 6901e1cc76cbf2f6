#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "system/ports/store.hpp"
#include "system/service/http.hpp"
#include "system/service/system_context.hpp"

#include "harness/check/history.hpp"
#include "harness/scenario/expectations.hpp"
#include "harness/scenario/spec.hpp"
#include "harness/sim/commit_log.hpp"
#include "harness/sim/sim_loop.hpp"
#include "harness/sim/text_slots.hpp"
#include "harness/sim/trace.hpp"
#include "harness/sim/work_bells.hpp"

namespace onejob::sim {
class SimLink;
class SimProvider;
}  // namespace onejob::sim

namespace onejob::scenario {

// One simulated deployment, built from a scenario: clients, a load balancer, API nodes, workers,
// a reconciler, providers and the store, joined by faulty links, every node crashable and
// restartable. Everything runs on one SimLoop from one seed: the run is a pure function of
// (build, scenario, seed).
class World {
 public:
  // `defects`: the named defects the system under test runs with (none: the reference system).
  World(const ScenarioSpec& spec, std::uint64_t seed, std::unique_ptr<Store> store,
        Defects defects = {});
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Runs the scenario to its end (its duration, or 10 minutes after its last action; with a
  // quiet phase, the end of it). With `stop_when_quiescent`, the run ends earlier, once the
  // faults are over (healed, with a quiet phase) and nothing is left to happen: every request
  // answered, no attempt STARTING or RUNNING, no provider still working, no UNKNOWN attempt whose
  // provider has an answer to give, no failover waiting, and nothing committed for 30 s.
  void run(bool stop_when_quiescent = false);

  sim::Trace& trace() { return trace_; }
  std::vector<std::optional<ReceivedResponse>> take_received();
  // Ends the simulation for good: stops every node and frees the nodes, the providers, the
  // loop's queue and what each request went through (take_received first), so that reading the
  // rows after a big run does not add to all of that. The store stays, for read_rows.
  void wind_down();
  Instant end() const { return end_; }
  // Events the simulation loop ran (see sim::SimLoop::handled).
  std::uint64_t loop_events() const { return loop_.handled(); }
  // The store's rows for these jobs, read through the Store port after the run (on a loop of
  // its own, so nothing in the simulation runs again).
  check::StoreRows read_rows(const std::vector<std::int64_t>& job_ids);

 private:
  struct Incarnation;
  struct Node;
  enum class Role { api, worker, reconciler, certifier };

  void build_links();
  void start(Node& node, bool restart);
  void crash(Node& node);
  // Faults heal: links deliver, partitions end, crashed nodes restart, clients retry until
  // answered.
  void begin_quiet();
  bool quiescent();
  Node& node(const std::string& name);

  // Timeline request `number` (1-based) goes out for the `send`th time (1-based: resends reuse
  // its key).
  void client_send(int number, int send);
  void transmit(int number, int send, Request request);
  // The client's send got no answer (a timeout, or its connection reset): send again, while its
  // retries last (always, once faults have healed).
  void client_retry(int number, int send);
  // The balancer's try `lb_try` failed (a timeout, or a reset when `reset`): the next API node,
  // while its retries last; after a reset with none left, 502.
  // A request as the client sent it, handed on through the simulated network's closures.
  using SharedRequest = std::shared_ptr<const Request>;
  void lb_retry(int number, int send, const SharedRequest& request, int lb_try, bool reset);
  static Async<void> cancel_attempt(World* world, int number, int send, JobId job, Request request,
                                    events::ClientSent sent);
  void lb_receive(int number, int send, const SharedRequest& request, int lb_try);
  void api_receive(const std::string& api, int number, int send, int lb_try, Request request);
  // A response as its node answered it, handed on the same way.
  using SharedResponse = std::shared_ptr<const Response>;
  void lb_respond(int number, int send, const std::string& client, SharedResponse response);
  void client_receive(int number, int send, const std::string& client, const Response& response);
  static Async<void> serve(World* world, std::string api, Incarnation* incarnation, int number,
                           int send, int lb_try, Request request);
  static Async<void> certify(World* world, Incarnation* incarnation, ProviderProfile profile);

  const ScenarioSpec& spec_;
  sim::Rng root_rng_;
  sim::SimLoop loop_;
  sim::Trace trace_;
  std::unique_ptr<Store> store_;
  // Rings the workers after every write that may have left work (built once the links are).
  std::unique_ptr<sim::SimWorkBells> work_bells_;
  std::unique_ptr<Store> ringing_store_;
  SystemConfig config_;
  NetworkSpec network_;
  std::map<LinkKind, std::unique_ptr<sim::SimLink>> links_;
  std::map<std::string, std::unique_ptr<sim::SimProvider>> providers_;
  std::map<std::string, std::unique_ptr<Node>> nodes_;
  std::vector<std::string> api_names_;
  std::uint64_t lb_next_ = 0;  // the balancer's round robin

  // One send of a timeline request, as the client and the balancer handled it.
  // Kept small: a load of 100,000 jobs holds one per send.
  struct Send {
    std::uint64_t lb_base = 0;  // where the balancer's round robin starts for it, once lb_based
    int lb_try = 0;             // the balancer's latest try (0-based)
    // Bit t: try t's lb->api connection reset after delivery (policy.lb_retries is at most 10).
    std::uint32_t lb_tries_reset = 0;
    bool lb_based = false;
    bool reply_lost = false;   // its client->lb connection reset: no reply reaches the client
    bool lb_answered = false;  // the balancer relayed a reply to the client
    bool reset_after_delivery(int on_try) const { return ((lb_tries_reset >> on_try) & 1u) != 0; }
  };
  // One timeline request: its sends and the answer the client took.
  struct RequestState {
    sim::NodeName client;     // who sends it
    int latest_send = 0;      // 0: not sent yet
    std::vector<Send> sends;  // by send - 1
    std::optional<ReceivedResponse> received;
  };
  // The state of timeline request `number`'s `send`th send (both 1-based), made on first use.
  Send& send_state(int number, int send);
  std::vector<RequestState> requests_;  // by timeline number - 1
  // What a client reads in an answer's body (a ClientReceived's fields the body gives): answers
  // repeat (polls of a job that has not moved, replays), and a body read lately is not parsed
  // again.
  const events::ClientReceived& body_read(const std::string& body);
  sim::TextSlots<events::ClientReceived, 64> bodies_read_;
  // Entries the store's commit log holds (every node's CommitLogStore appends to it): a run that
  // may stop early stops only once nothing new has committed for a while.
  sim::CommitLog commit_log_;
  Instant end_{};
  bool quiet_ = false;
};

}  // namespace onejob::scenario
