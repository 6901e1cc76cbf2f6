#include "harness/scenario/world.hpp"

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "system/service/api_handler.hpp"
#include "system/service/certifier.hpp"
#include "system/service/deadline.hpp"
#include "system/service/reconciler.hpp"
#include "system/service/ringing_store.hpp"
#include "system/service/worker.hpp"

#include "harness/check/invariant.hpp"
#include "harness/events/world_events.hpp"
#include "harness/scenario/world_nodes.hpp"
#include "harness/sim/commit_log.hpp"
#include "harness/sim/faulty_store.hpp"
#include "harness/sim/networked_providers.hpp"
#include "harness/sim/pause.hpp"
#include "harness/sim/sim_network.hpp"
#include "harness/sim/sim_provider.hpp"

namespace onejob::scenario {
namespace {

// How often a run that may stop early looks whether anything is left to happen.
const Duration kQuiescenceProbe = std::chrono::seconds(30);

SystemConfig system_config(const ScenarioSpec& spec, Defects defects) {
  SystemConfig config;
  config.defects = defects;
  const auto& p = spec.policy;
  config.policy = Policy{.attempt_deadline = p.attempt_deadline,
                         .lease = p.lease,
                         .reconcile_period = p.reconcile_period,
                         .status_timeout = p.status_timeout,
                         .worker_poll = p.worker_poll,
                         .worker_idle_poll = p.worker_idle_poll,
                         .worker_capacity = p.worker_capacity,
                         .attempt_limit = p.attempt_limit};
  for (const auto& provider : spec.providers) {
    ProviderProfile profile;
    profile.name = provider.name;
    profile.max_prompt_tokens = provider.max_prompt_tokens;
    if (provider.prompt_template) profile.prompt_template = *provider.prompt_template;
    config.providers.push_back(std::move(profile));
  }
  config.validate();
  return config;
}

// Swarm testing: the seed decides which fault kinds are on for each link and how often they
// fire, so a fleet of seeds covers combinations nobody would write by hand.
void apply_swarm(NetworkSpec& network, sim::Rng rng) {
  auto maybe = [&rng](Ppm& rate) {
    if (rng.below(2) == 0) rate = static_cast<Ppm>(rng.between(10'000, 200'000));
  };
  // Every link's shared rates first, link by link; then the store's own.
  for (const auto& link : kLinks) {
    for (const auto& fault : kFaultRates) {
      if (fault.swarmed && !fault.store_only) maybe(network.*link.spec.*fault.rate);
    }
  }
  for (const auto& fault : kFaultRates) {
    if (fault.swarmed && fault.store_only) maybe(network.node_store.*fault.rate);
  }
}

}  // namespace

World::World(const ScenarioSpec& spec, std::uint64_t seed, std::unique_ptr<Store> store,
             Defects defects)
    : spec_(spec),
      root_rng_(seed),
      loop_(root_rng_.fork("loop.ties")),
      trace_(loop_),
      store_(std::move(store)),
      config_(system_config(spec, defects)),
      network_(spec.network),
      requests_(request_count(spec)),
      commit_log_(trace_) {
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    requests_[i].client = request_client(spec, i + 1);
  }
  if (spec.swarm) apply_swarm(network_, root_rng_.fork("swarm"));
  build_links();
  work_bells_ = std::make_unique<sim::SimWorkBells>(*links_.at(LinkKind::node_store));
  ringing_store_ = std::make_unique<RingingStore>(*store_, *work_bells_);
  for (const auto& provider : spec.providers) {
    providers_.emplace(provider.name,
                       std::make_unique<sim::SimProvider>(
                           provider, root_rng_.fork("provider." + provider.name), loop_, trace_));
  }
  auto add = [this](std::string name, Role role) {
    nodes_.emplace(name, std::make_unique<Node>(Node{name, role, {}}));
  };
  for (int i = 1; i <= spec.topology.api_nodes; ++i) {
    api_names_.push_back(api_node(i));
    add(api_names_.back(), Role::api);
  }
  for (int i = 1; i <= spec.topology.workers; ++i) add(worker_node(i), Role::worker);
  if (spec.topology.reconciler) add(std::string(kReconcilerNode), Role::reconciler);
  add("certifier", Role::certifier);
  lb_next_ = root_rng_.fork("lb").below(api_names_.size());
}

World::~World() { wind_down(); }

void World::wind_down() {
  // Stop every worker and reconciler before the loop (and with it their coroutines) goes away.
  for (auto& [name, node] : nodes_) {
    for (auto& life : node->lives) {
      if (life->worker) life->worker->stop();
      if (life->reconciler) life->reconciler->stop();
    }
  }
  // Calls that never completed are owned by the nodes' provider clients and by the providers.
  // Destroying those hands each suspended coroutine to the io_context for unwinding, so they go
  // first, while the io_context still exists; shutting the loop down then destroys it all.
  nodes_.clear();
  providers_.clear();
  loop_.shutdown();
  requests_ = decltype(requests_)();  // freed, not just emptied
}

void World::build_links() {
  for (const auto& link : kLinks) {
    const std::string name(link.trace_node);
    links_.emplace(link.kind, std::make_unique<sim::SimLink>(name, network_.*link.spec,
                                                             root_rng_.fork(name), loop_, trace_));
  }
  for (const auto& partition : spec_.partitions)
    links_.at(partition.link)->add_partition(partition.window());
}

World::Node& World::node(const std::string& name) { return *nodes_.at(name); }

void World::start(Node& node, bool restart) {
  auto life = std::make_unique<Incarnation>();
  life->gate = std::make_unique<sim::PauseGate>(loop_);
  life->timer = std::make_unique<sim::GatedTimer>(loop_, *life->gate);
  life->logged = std::make_unique<sim::CommitLogStore>(*ringing_store_, commit_log_, node.name);
  life->store = std::make_unique<sim::FaultyStore>(*life->logged, *links_.at(LinkKind::node_store),
                                                   loop_, trace_, node.name, *life->gate);
  life->providers = std::make_unique<sim::NetworkedProviders>(
      *links_.at(LinkKind::worker_provider), node.name, providers_, *life->gate, trace_);
  life->events = std::make_unique<sim::NodeEventSink>(trace_, node.name);
  // Each incarnation draws from its own stream, named by node and incarnation.
  life->random = std::make_unique<sim::RngRandom>(
      root_rng_.fork("random/" + node.name + "/" + std::to_string(node.lives.size())));
  if (node.role == Role::worker || node.role == Role::reconciler) {
    life->work = std::make_unique<sim::SimWorkSignal>(loop_, *life->gate);
    work_bells_->listen(node.name, *life->work);
  }
  life->context = std::make_unique<SystemContext>(
      SystemContext{*life->store, *life->providers, loop_, *life->timer, *life->events, config_,
                    *life->random, life->work.get()});
  auto& executor = loop_.io();
  switch (node.role) {
    case Role::api:
      life->api = std::make_unique<ApiHandler>(*life->context);
      break;
    case Role::worker:
      life->worker = std::make_unique<Worker>(*life->context, node.name);
      boost::asio::co_spawn(executor, life->worker->run(), rethrow_error);
      break;
    case Role::reconciler:
      life->reconciler = std::make_unique<Reconciler>(*life->context);
      boost::asio::co_spawn(executor, life->reconciler->run(), rethrow_error);
      break;
    case Role::certifier:
      break;
  }
  trace_.record(node.name,
                events::to_event(events::NodeStarted{
                    .incarnation = static_cast<std::int64_t>(node.lives.size()) + 1}),
                restart);
  node.lives.push_back(std::move(life));
}

void World::crash(Node& node) {
  Incarnation& life = node.current();
  life.up = false;
  life.store->close();
  life.providers->close();
  if (life.api) life.api->stop();
  if (life.worker) life.worker->stop();
  if (life.work) work_bells_->stop_listening(*life.work);
  if (life.reconciler) life.reconciler->stop();
  trace_.record(node.name, events::to_event(events::NodeCrashed{}), /*injected=*/true);
}

void World::run(bool stop_when_quiescent) {
  const Policy& policy = config_.policy;
  const auto us = [](Duration d) { return std::int64_t{d.count()}; };
  const events::RunPolicy recorded_policy{
      .attempt_deadline_us = us(policy.attempt_deadline),
      .lease_us = us(policy.lease),
      .reconcile_period_us = us(policy.reconcile_period),
      .status_timeout_us = us(policy.status_timeout),
      .worker_poll_us = us(policy.worker_poll),
      .worker_idle_poll_us = us(policy.worker_idle_poll),
      .store_backoff_cap_us = us(policy.store_backoff_cap),
      .worker_capacity = policy.worker_capacity,
      .attempt_limit = policy.attempt_limit,
      .redrive_limit = policy.redrive_limit,
      .workers = spec_.topology.workers,
      .reconciler = spec_.topology.reconciler,
      .faults_over = Instant(faults_end(spec_)),
  };
  trace_.record("world", events::to_event(recorded_policy));
  for (const auto& provider : config_.providers) {
    trace_.record("world",
                  events::to_event(events::RunProvider{
                      .name = provider.name,
                      .prompt_template = provider.prompt_template,
                      .max_prompt_tokens = static_cast<std::int64_t>(provider.max_prompt_tokens),
                      .bytes_per_token = static_cast<std::int64_t>(provider.bytes_per_token)}));
  }
  for (const auto& partition : spec_.partitions) {
    for (const auto& cut : partition.nodes) {
      trace_.record(
          "world",
          events::to_event(events::RunPartition{
              .link = std::string(link_info(partition.link).name),
              .node = cut,
              .direction = std::string(name_of(sim::kPartitionDirections, partition.direction)),
              .from = Instant(partition.from),
              .until = Instant(partition.until)}));
    }
  }
  for (const auto& [name, node] : nodes_) start(*node, false);
  for (const auto& provider : spec_.providers) {
    const ProviderProfile& profile = *config_.find_provider(provider.name);
    const auto certify_now = [this, &profile] {
      Incarnation& certifier = node("certifier").current();
      if (!certifier.up) return;  // a certifier that is down certifies nothing
      boost::asio::co_spawn(loop_.io(), certify(this, &certifier, profile), rethrow_error);
    };
    if (provider.certify) certify_now();
    for (const auto& later : provider.recertify) loop_.schedule_at(Instant(later.at), certify_now);
  }
  for (std::size_t request = 1; request <= requests_.size(); ++request) {
    const int number = static_cast<int>(request);
    loop_.schedule_at(Instant(request_at(spec_, request)),
                      [this, number] { client_send(number, 1); });
  }
  for (const auto& fault : spec_.node_faults) {
    loop_.schedule_at(Instant(fault.at), [this, &fault] {
      Node& target = node(fault.node);
      if (fault.kind == NodeFaultSpec::Kind::crash) {
        crash(target);
      } else {
        start(target, true);
      }
    });
  }
  for (const auto& pause : spec_.pauses) {
    loop_.schedule_at(Instant(pause.from), [this, &pause] {
      Incarnation& life = node(pause.node).current();
      if (!life.up) return;  // a crashed node has nothing to freeze
      life.gate->pause_until(Instant(pause.until));
      trace_.record(pause.node, events::to_event(events::NodePaused{.until = Instant(pause.until)}),
                    /*injected=*/true);
      loop_.schedule_at(Instant(pause.until), [this, &pause, incarnation = &life] {
        if (&node(pause.node).current() != incarnation || !incarnation->up) return;
        trace_.record(pause.node, events::to_event(events::NodeResumed{}));
      });
    });
  }
  for (const auto& partition : spec_.partitions) {
    if (partition.link != LinkKind::node_store) continue;
    loop_.schedule_at(Instant(partition.until),
                      [this, &partition] { work_bells_->reconnected(partition.nodes); });
  }
  // The faults are over at the last action, or, with a quiet phase, once it begins.
  const Instant faults_over(faults_end(spec_));
  if (spec_.quiet) loop_.schedule_at(faults_over, [this] { begin_quiet(); });
  end_ = Instant(run_end(spec_));
  bool quiescent_end = false;
  const Instant settled = faults_over + check::settle_horizon(recorded_policy);
  if (!stop_when_quiescent) {
    loop_.advance_to(end_);
  } else {
    std::uint64_t logged = commit_log_.entries();  // the commit log when last looked at
    while (loop_.now() < end_) {
      loop_.advance_to(std::min(end_, loop_.now() + kQuiescenceProbe));
      const bool committed = commit_log_.entries() != logged;
      logged = commit_log_.entries();
      // Not before the horizon liveness judges by: a worker may still be backing off from a
      // store that has just come back, with nothing in the commit log or the providers to show.
      if (loop_.now() >= settled && !committed && quiescent()) {
        end_ = loop_.now();
        quiescent_end = true;
        break;
      }
    }
  }
  trace_.record("world", events::to_event(events::RunEnded{.quiescent = quiescent_end}));
}

namespace {

// Runs a read of the store to completion on a loop of its own, so nothing in the simulation runs.
void run_store_query(Async<void> query) {
  boost::asio::io_context reader;
  boost::asio::co_spawn(reader, std::move(query), rethrow_error);
  reader.run();
}

Async<void> read_rows_from(Store* store, std::vector<std::int64_t> ids, check::StoreRows* rows) {
  for (const auto id : ids) {
    if (auto job = co_await store->load_job(id)) {
      rows->jobs.emplace(id, check::JobRow::of(*job));
      auto& attempts = rows->attempts[id];
      for (const auto& attempt : co_await store->list_attempts(id)) {
        attempts.push_back(check::AttemptRow::of(attempt));
      }
    }
  }
}

// Whether the store still holds work that will move: an attempt STARTING or RUNNING, an UNKNOWN
// one whose provider has an answer for the reconciler, or a failover the reconciler will resume.
Async<void> quiet_store(Store* store,
                        const std::map<std::string, std::unique_ptr<sim::SimProvider>>* providers,
                        bool reconciler, Instant now, bool* waiting) {
  if (!(co_await store->find_attempts_in_state(AttemptState::starting)).empty()) {
    *waiting = true;
    co_return;
  }
  // A RUNNING attempt moves while its lease lasts (its worker settles it) and, with a reconciler,
  // after (the lease is taken over); without one, an expired lease stays as it is.
  for (const auto& attempt : co_await store->find_attempts_in_state(AttemptState::running)) {
    if (reconciler || attempt.lease_expires_at > now) {
      *waiting = true;
      co_return;
    }
  }
  for (const auto& attempt : co_await store->find_attempts_in_state(AttemptState::unknown)) {
    auto provider = providers->find(attempt.provider);
    if (provider == providers->end()) continue;
    // An answer the reconciler can fetch, or a key the provider never got: the reconciler
    // re-drives it. (An answer still on its way to a worker is a provider still working.)
    if (reconciler && (provider->second->answers(attempt.provider_key) ||
                       !provider->second->knows(attempt.provider_key))) {
      *waiting = true;
      co_return;
    }
  }
  for (const auto& job : co_await store->find_idle_jobs()) {
    const auto attempts = co_await store->list_attempts(job.id);
    if (!attempts.empty() && attempts.back().state == AttemptState::failed) {
      *waiting = true;
      co_return;
    }
  }
}

}  // namespace

check::StoreRows World::read_rows(const std::vector<std::int64_t>& job_ids) {
  check::StoreRows rows;
  run_store_query(read_rows_from(store_.get(), job_ids, &rows));
  return rows;
}

std::vector<std::optional<ReceivedResponse>> World::take_received() {
  std::vector<std::optional<ReceivedResponse>> received;
  received.reserve(requests_.size());
  for (auto& request : requests_) received.push_back(std::move(request.received));
  return received;
}

bool World::quiescent() {
  if (!std::ranges::all_of(requests_, [](const auto& r) { return r.received.has_value(); })) {
    return false;
  }
  for (const auto& [name, provider] : providers_) {
    if (provider->working()) return false;
  }
  bool waiting = false;
  run_store_query(
      quiet_store(store_.get(), &providers_, spec_.topology.reconciler, loop_.now(), &waiting));
  return !waiting;
}

void World::begin_quiet() {
  quiet_ = true;
  trace_.record("world", events::to_event(events::QuietStarted{}));
  const auto cut_off = work_bells_->cut_off();
  for (auto& [kind, link] : links_) link->heal();
  work_bells_->reconnected(cut_off);
  for (auto& [name, node] : nodes_) {
    if (!node->current().up) start(*node, true);
  }
  // Clients that gave up resend now; the others go on waiting for their pending attempt.
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    const auto& request = requests_[i];
    if (request.received || request.latest_send == 0) continue;
    if (request.latest_send > spec_.policy.client_retries)
      client_send(static_cast<int>(i) + 1, request.latest_send + 1);
  }
}

Async<void> World::certify(World* world, Incarnation* life, ProviderProfile profile) {
  Certifier certifier(*life->context);
  try {
    co_await certifier.certify(profile);
  } catch (const StoreError& error) {
    world->trace_.record("certifier", events::to_event(events::CertificationStoreError{
                                          .provider = profile.name, .message = error.what()}));
  }
}

}  // namespace onejob::scenario
