#include "harness/cli/load_command.hpp"

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "system/adapters/locked_store.hpp"
#include "system/adapters/memory_store.hpp"
#include "system/adapters/real_time.hpp"
#include "system/ports/store_wrapper.hpp"
#include "system/service/api_handler.hpp"
#include "system/service/doorbell.hpp"
#include "system/service/reconciler.hpp"
#include "system/service/ringing_store.hpp"
#include "system/service/worker.hpp"

#include "harness/cli/exit_codes.hpp"
#include "harness/cli/store_flag.hpp"
#include "harness/sim/complete_now.hpp"

namespace onejob::cli {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

Clock::duration seconds_of(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// The provider keys answered so far, by every node's provider client: the reconciler asks
// about attempts that workers on other threads ran.
class AnsweredKeys {
 public:
  void add(std::string key) {
    std::lock_guard lock(mutex_);
    keys_.insert(std::move(key));
  }
  bool contains(const std::string& key) const {
    std::lock_guard lock(mutex_);
    return keys_.contains(key);
  }

 private:
  mutable std::mutex mutex_;
  std::set<std::string> keys_;
};

// Answers every classify call correctly after a short real wait, as a healthy provider does,
// and remembers what it answered, so the reconciler can settle an attempt whose worker lost
// the store in between.
class QuickProvider final : public ProviderClient {
 public:
  QuickProvider(Timer& timer, AnsweredKeys& answered) : timer_(timer), answered_(answered) {}
  Async<ProviderReply> call(ProviderCall call) override {
    co_await timer_.sleep_for(milliseconds(2));
    answered_.add(call.provider_key);
    co_return ProviderReply{ProviderReply::Kind::answered, std::string(kAnswer), {}};
  }
  Async<ProviderStatus> status(std::string, std::string provider_key) override {
    if (answered_.contains(provider_key)) {
      co_return ProviderStatus{ProviderStatus::Kind::completed, std::string(kAnswer), {}};
    }
    co_return ProviderStatus{ProviderStatus::Kind::not_found, {}, {}};
  }

 private:
  static constexpr std::string_view kAnswer = R"({"label":"billing","confidence":0.9})";
  Timer& timer_;
  AnsweredKeys& answered_;
};

// Counts what one node reports, by kind; keeps nothing else.
class CountingSink final : public EventSink {
 public:
  void emit(Event event) override { ++by_kind[event.kind()]; }
  std::map<std::string, std::int64_t> by_kind;
};

// What one create was finally answered, after retrying 503s with the same key.
struct Answer {
  int key = 0;
  int status = 0;
  std::int64_t job_id = 0;
};

// What one node saw; merged into the run's when every thread has been joined.
struct Tally {
  std::vector<Answer> answers;
  std::int64_t sent = 0;                    // requests, retries included
  std::int64_t unavailable = 0;             // 503s along the way
  std::int64_t escaped = 0;                 // exceptions out of ApiHandler::handle (must stay 0)
  std::vector<std::string> loops_ended;     // loops that ended on their own, and why
  double slowest_answer = 0;                // seconds, the longest one handle() call took
  std::vector<std::string> failure_bodies;  // every 5xx body

  void merge(Tally other) {
    slowest_answer = std::max(slowest_answer, other.slowest_answer);
    failure_bodies.insert(failure_bodies.end(), other.failure_bodies.begin(),
                          other.failure_bodies.end());
    answers.insert(answers.end(), other.answers.begin(), other.answers.end());
    sent += other.sent;
    unavailable += other.unavailable;
    escaped += other.escaped;
    loops_ended.insert(loops_ended.end(), other.loops_ended.begin(), other.loops_ended.end());
  }
};

// One thread of the run and everything it uses alone: a client with its API node, a worker,
// or the reconciler. While it runs, other threads touch only `io` (to post to it and stop it)
// and `finished`.
struct Node {
  Node(std::string node_name, AnsweredKeys& answered)
      : name(std::move(node_name)), provider(timer, answered) {}

  std::string name;
  boost::asio::io_context io{1};
  AsioTimer timer{io};
  SystemRandom random;
  QuickProvider provider;
  CountingSink events;
  std::unique_ptr<Store> connection;
  std::unique_ptr<Store> store;    // the connection, ringing the bells after writes
  std::unique_ptr<Doorbell> work;  // a worker's or the reconciler's
  std::unique_ptr<SystemContext> context;
  std::unique_ptr<ApiHandler> api;
  std::unique_ptr<Worker> worker;
  std::unique_ptr<Reconciler> reconciler;
  Tally tally;
  bool stopping = false;  // set on this node's thread when the run stops it
  std::atomic<bool> finished = false;
  std::thread thread;
};

SystemConfig load_config() {
  SystemConfig config;
  config.providers.push_back({.name = "alpha"});
  config.policy.attempt_deadline = std::chrono::seconds(2);
  config.policy.lease = std::chrono::seconds(4);
  config.policy.reconcile_period = std::chrono::seconds(1);
  config.policy.worker_poll = milliseconds(20);
  // Within the stop's grace: a worker that was stopped waiting is gone by then.
  config.policy.worker_idle_poll = milliseconds(500);
  config.policy.worker_capacity = 64;
  config.validate();
  return config;
}

// What every node shares: all of it read-only or thread-safe.
struct Shared {
  SteadyClock clock;
  SystemConfig config = load_config();
  AnsweredKeys answered;
  Doorbells bells;  // every worker's and the reconciler's Doorbell
  // A connection of its own; the store's notices go to `events` when given. Called on the main
  // thread only.
  std::function<std::unique_ptr<Store>(EventSink*)> own_store;
};

std::string owner() { return "load"; }
std::string key_name(int key) { return "load-" + std::to_string(key); }
std::string body_for(int key, bool other_payload) {
  return R"({"operation":"classify","provider":"alpha","input":{"text":")" +
         std::string(other_payload ? "other " : "text ") + std::to_string(key) + R"("}})";
}

std::int64_t job_id_of(const Response& response) {
  const auto body = nlohmann::json::parse(response.body, nullptr, false);
  if (!body.is_object() || !body.contains("job_id") || !body["job_id"].is_number_integer()) {
    return 0;
  }
  return body["job_id"].get<std::int64_t>();
}

Async<void> client(Node& node, int index, const LoadFlags& flags, Clock::time_point until) {
  std::mt19937_64 random(static_cast<std::uint64_t>(index) * 7919 + 1);
  Tally& tally = node.tally;
  std::int64_t request = 0;
  while (Clock::now() < until) {
    Answer answer;
    answer.key = static_cast<int>(random() % static_cast<std::uint64_t>(flags.keys));
    const bool other_payload = random() % 10 == 0;
    Request create{.method = "POST",
                   .path = "/jobs",
                   .headers = {{"Idempotency-Key", key_name(answer.key)}},
                   .body = body_for(answer.key, other_payload),
                   .principal = owner(),
                   .request_id = "c" + std::to_string(index) + "." + std::to_string(++request)};
    for (int tries = 0; tries < 200; ++tries) {
      ++tally.sent;
      Response response;
      const auto asked = Clock::now();
      try {
        response = co_await node.api->handle(create);
      } catch (const std::exception&) {
        ++tally.escaped;
        response.status = 0;
      }
      tally.slowest_answer = std::max(tally.slowest_answer,
                                      std::chrono::duration<double>(Clock::now() - asked).count());
      if (response.status >= 500) tally.failure_bodies.push_back(response.body);
      answer.status = response.status;
      answer.job_id = job_id_of(response);
      if (response.status != 503) break;
      ++tally.unavailable;
      // What Retry-After asks for, shortened: the run is short.
      co_await node.timer.sleep_for(milliseconds(50));
    }
    tally.answers.push_back(answer);
    co_await node.timer.sleep_for(milliseconds(1 + static_cast<int>(random() % 5)));
  }
}

// Connects, retried for half a minute: the store may be restarting.
std::unique_ptr<Store> reopen(const std::function<std::unique_ptr<Store>()>& factory) {
  for (int tries = 0;; ++tries) {
    try {
      return factory();
    } catch (const StoreError& error) {
      if (tries == 300) throw;
      std::this_thread::sleep_for(milliseconds(100));
    }
  }
}

// One read of the judge, retried for half a minute while the store cannot answer.
template <typename Read>
auto read_patiently(boost::asio::io_context& io, Read read) {
  for (int tries = 0;; ++tries) {
    try {
      return sim::complete_now(io, read());
    } catch (const StoreError& error) {
      if (tries == 300) throw;
      std::this_thread::sleep_for(milliseconds(100));
    }
  }
}

std::unique_ptr<Node> make_node(std::string name, Shared& shared, bool listens = false) {
  auto node = std::make_unique<Node>(std::move(name), shared.answered);
  node->connection = shared.own_store(&node->events);
  node->store = std::make_unique<RingingStore>(*node->connection, shared.bells);
  if (listens) {
    node->work = std::make_unique<Doorbell>(node->timer);
    shared.bells.add(*node->work);
  }
  node->context = std::make_unique<SystemContext>(
      SystemContext{*node->store, node->provider, shared.clock, node->timer, node->events,
                    shared.config, node->random, node->work.get()});
  return node;
}

// Reports a worker or reconciler loop that ended before the run stopped it.
auto watch(Node& node) {
  return [&node](std::exception_ptr error) {
    if (error || !node.stopping)
      node.tally.loops_ended.push_back(node.name + ": " + describe_exception(error));
  };
}

void run_node(Node& node) {
  try {
    node.io.run();
  } catch (...) {
    // Out of a coroutine the node spawned (an attempt's unexpected exception): the node is
    // down, as its process would be.
    node.tally.loops_ended.push_back(node.name + ": " +
                                     describe_exception(std::current_exception()));
  }
  node.finished = true;
}

// Builds every node (connections are opened here, on the main thread) and starts its thread.
// Clients stop creating at `until`; each one that finishes bumps `clients_done`.
std::vector<std::unique_ptr<Node>> start_nodes(const LoadFlags& flags, Shared& shared,
                                               Clock::time_point until,
                                               std::atomic<int>& clients_done) {
  std::vector<std::unique_ptr<Node>> nodes;
  for (int i = 0; i < flags.clients; ++i) {
    auto node = make_node("client-" + std::to_string(i + 1), shared);
    node->api = std::make_unique<ApiHandler>(*node->context);
    boost::asio::co_spawn(
        node->io, client(*node, i, flags, until),
        [&node = *node, &clients_done](std::exception_ptr error) {
          if (error) {
            node.tally.loops_ended.push_back(node.name + ": " + describe_exception(error));
          }
          ++clients_done;
        });
    nodes.push_back(std::move(node));
  }
  for (int i = 0; i < flags.workers; ++i) {
    auto node = make_node("worker-" + std::to_string(i + 1), shared, /*listens=*/true);
    node->worker = std::make_unique<Worker>(*node->context, node->name);
    boost::asio::co_spawn(node->io, node->worker->run(), watch(*node));
    nodes.push_back(std::move(node));
  }
  auto node = make_node("reconciler", shared, /*listens=*/true);
  node->reconciler = std::make_unique<Reconciler>(*node->context);
  boost::asio::co_spawn(node->io, node->reconciler->run(), watch(*node));
  nodes.push_back(std::move(node));
  for (auto& each : nodes) each->thread = std::thread(run_node, std::ref(*each));
  return nodes;
}

// Worker and Reconciler::stop() are not thread-safe: each runs on its node's thread. What still
// runs after `grace` (an attempt in flight, a store call) is cut off by stopping the io_context.
void stop_nodes(std::vector<std::unique_ptr<Node>>& nodes, Clock::duration grace) {
  for (auto& node : nodes) {
    boost::asio::post(node->io, [&node = *node] {
      node.stopping = true;
      if (node.worker) node.worker->stop();
      if (node.reconciler) node.reconciler->stop();
      if (node.work) node.work->ring();  // a loop waiting for work sees that it stopped
    });
  }
  const auto give_up = Clock::now() + grace;
  const auto all_finished = [&nodes] {
    return std::all_of(nodes.begin(), nodes.end(),
                       [](const auto& node) { return node->finished.load(); });
  };
  while (!all_finished() && Clock::now() < give_up) std::this_thread::sleep_for(milliseconds(10));
  for (auto& node : nodes) node->io.stop();
  for (auto& node : nodes) node->thread.join();
}

// Clients, then the drain, then everyone stops. A client finishes the create it is on when its
// time is up (200 tries at most); false when one has not a minute after `drain_until`. The drain
// lasts until `settled` (nothing is left to move) or `drain_until`, whichever comes first: how
// long the workers need to work off the backlog depends on the machine, not on the promises.
bool wait_for_clients(Clock::time_point clients_until, Clock::time_point drain_until,
                      const std::atomic<int>& clients_done, int clients,
                      const std::function<bool()>& settled) {
  while (Clock::now() < clients_until || clients_done < clients) {
    if (Clock::now() > drain_until + std::chrono::minutes(1)) return false;
    std::this_thread::sleep_for(milliseconds(50));
  }
  while (Clock::now() < drain_until && !settled()) std::this_thread::sleep_for(milliseconds(200));
  return true;
}

// Whether no attempt is STARTING, RUNNING or UNKNOWN on `reader`: nothing left for the workers or
// the reconciler to move.
bool nothing_live(Store& reader) {
  boost::asio::io_context io;
  for (const auto state : {AttemptState::starting, AttemptState::running, AttemptState::unknown}) {
    const auto live = read_patiently(io, [&] { return reader.find_attempts_in_state(state); });
    if (!live.empty()) return false;
  }
  return true;
}

// Set when the promises are checked: what the clients were told against what the store holds.
struct Verdict {
  std::map<int, std::int64_t> answers;       // by HTTP status
  std::int64_t bad_status = 0;               // answers other than 201/200/422/503
  std::map<int, std::int64_t> acked_id;      // key -> the job id its client was given
  std::int64_t split = 0;                    // keys answered two job ids
  std::int64_t lost = 0;                     // acknowledged, not in the store under its key
  std::int64_t stranded = 0;                 // acknowledged, in the store, not succeeded
  std::map<std::string, std::int64_t> jobs;  // acknowledged jobs by final status
};

void tally_answers(const std::vector<Answer>& answers, Verdict& verdict) {
  for (const Answer& answer : answers) {
    ++verdict.answers[answer.status];
    if (answer.status != 201 && answer.status != 200 && answer.status != 422 &&
        answer.status != 503) {
      ++verdict.bad_status;
    }
    if (answer.status == 201 || answer.status == 200) {
      auto [it, fresh] = verdict.acked_id.emplace(answer.key, answer.job_id);
      if (!fresh && it->second != answer.job_id) ++verdict.split;
    }
  }
}

// Reads back every acknowledged job on `reader`. Lost and stranded ones are named, up to five
// of each.
void judge(Store& reader, Verdict& verdict) {
  boost::asio::io_context io;
  for (const auto& [key, id] : verdict.acked_id) {
    const auto found = read_patiently(
        io, [&, key = key] { return reader.find_job_by_key(owner(), key_name(key)); });
    if (!found || found->id != id) {
      if (++verdict.lost <= 5) {
        std::cout << "LOST  key " << key_name(key) << ": acknowledged as job " << id
                  << ", the store has " << (found ? std::to_string(found->id) : "none") << "\n";
      }
      continue;
    }
    std::string status{to_string(found->status)};
    if (found->status == JobStatus::succeeded) {
      ++verdict.jobs[status];
      continue;
    }
    // Stranded: where it stands is its latest attempt.
    const auto attempts = read_patiently(io, [&] { return reader.list_attempts(found->id); });
    status += attempts.empty() ? "/none" : "/" + std::string(to_string(attempts.back().state));
    ++verdict.jobs[status];
    if (++verdict.stranded <= 5) {
      std::cout << "STRANDED job " << found->id << " key " << key_name(key) << ": "
                << to_string(found->status);
      if (attempts.empty()) {
        std::cout << ", no attempt\n";
      } else {
        const Attempt& latest = attempts.back();
        std::cout << ", latest attempt " << latest.id << " (#" << latest.attempt_no << ") "
                  << to_string(latest.state) << ": "
                  << (latest.outcome_reason.empty() ? "no reason" : latest.outcome_reason) << "\n";
      }
    }
  }
}

void print_summary(const LoadFlags& flags, const StoreChoice& choice, const Tally& tally,
                   const Verdict& verdict, const std::map<std::string, std::int64_t>& events,
                   std::size_t threads, double wall_seconds) {
  const auto count = [](const auto& map, const auto& key) -> long long {
    const auto it = map.find(key);
    return it == map.end() ? 0 : static_cast<long long>(it->second);
  };
  std::printf(
      "load: %zu creates answered in %.1f s on the %s store, %zu threads (%lld requests, %lld"
      " 503s on the way; %.0f jobs created/s)\n",
      tally.answers.size(), flags.seconds, choice.describe().c_str(), threads,
      static_cast<long long>(tally.sent), static_cast<long long>(tally.unavailable),
      static_cast<double>(count(verdict.answers, 201)) / flags.seconds);
  std::printf("answers: 201=%lld 200=%lld 422=%lld 503=%lld other=%lld\n",
              count(verdict.answers, 201), count(verdict.answers, 200), count(verdict.answers, 422),
              count(verdict.answers, 503), static_cast<long long>(verdict.bad_status));
  std::printf("acknowledged keys: %zu, lost: %lld, keys answered two job ids: %lld\n",
              verdict.acked_id.size(), static_cast<long long>(verdict.lost),
              static_cast<long long>(verdict.split));
  std::printf("acknowledged jobs by status:");
  for (const auto& [status, n] : verdict.jobs) {
    std::printf(" %s=%lld", status.c_str(), static_cast<long long>(n));
  }
  std::printf("\nstranded: %lld (acknowledged, not succeeded after the drain, at most %.1f s)\n",
              static_cast<long long>(verdict.stranded), flags.drain_seconds);
  std::printf(
      "store errors survived: workers %lld, reconciler %lld; exceptions out of the API:"
      " %lld; loops ended early: %zu; server notices: %lld; wall %.1f s\n",
      count(events, std::string("worker.store_error")),
      count(events, std::string("reconciler.store_error")), static_cast<long long>(tally.escaped),
      tally.loops_ended.size(), count(events, std::string("store.notice")), wall_seconds);
  std::printf("slowest answer: %.2f s", tally.slowest_answer);
  if (flags.max_answer_seconds > 0)
    std::printf(" (promised within %.2f s)", flags.max_answer_seconds);
  std::printf("\n");
  for (const auto& ended : tally.loops_ended) std::cout << "ENDED " << ended << "\n";
  std::fflush(stdout);
}

}  // namespace

int load_command(const LoadFlags& flags) {
  StoreChoice choice;
  if (auto problem = parse_pg_timeouts(flags.pg_timeouts, choice)) {
    return bad_input(*problem);
  }
  if (auto problem = parse_store(flags.store, choice)) {
    return bad_input(*problem);
  }
  // Written so that NaN fails them too.
  if (!(flags.seconds > 0 && flags.seconds <= 86400) ||
      !(flags.drain_seconds >= 0 && flags.drain_seconds <= 86400) || flags.clients < 1 ||
      flags.clients > 256 || flags.workers < 1 || flags.workers > 256 || flags.keys < 1 ||
      !(flags.max_answer_seconds >= 0 && flags.max_answer_seconds <= 86400)) {
    return bad_input(
        "load: --seconds must be in (0, 86400], --drain in [0, 86400], --clients and --workers "
        "from 1 to 256, --keys at least 1, --max-answer in [0, 86400]");
  }
  // One schema for the whole run, shared by every connection (the memory store: one store,
  // behind one lock).
  std::unique_ptr<Store> owned;
  std::unique_ptr<LockedStore> locked;
  Shared shared;
  try {
    if (choice.postgres) {
      auto schema = open_shared_schema(choice);
      owned = std::move(schema.owner);
      shared.own_store = [connect = std::move(schema.connect_reporting)](EventSink* events) {
        return reopen([&] { return connect(events); });
      };
    } else {
      owned = std::make_unique<MemoryStore>();
      locked = std::make_unique<LockedStore>(*owned);
      shared.own_store = [&locked](EventSink*) -> std::unique_ptr<Store> {
        return std::make_unique<StoreWrapper>(*locked);
      };
    }
  } catch (const StoreError& error) {
    return bad_input("--store ", choice.describe(), ": ", error.what());
  }

  const auto started = Clock::now();
  const auto until = started + seconds_of(flags.seconds);
  std::atomic<int> clients_done = 0;
  auto nodes = start_nodes(flags, shared, until, clients_done);
  const auto watcher = shared.own_store(nullptr);
  const bool clients_stuck =
      !wait_for_clients(until, until + seconds_of(flags.drain_seconds), clients_done, flags.clients,
                        [&] { return nothing_live(*watcher); });
  stop_nodes(nodes, 2 * shared.config.policy.reconcile_period);

  Tally tally;
  std::map<std::string, std::int64_t> events;
  for (auto& node : nodes) {
    tally.merge(std::move(node->tally));
    for (const auto& [kind, n] : node->events.by_kind) events[kind] += n;
  }
  if (clients_stuck)
    tally.loops_ended.push_back("clients: still creating a minute after the drain");
  Verdict verdict;
  tally_answers(tally.answers, verdict);
  judge(*shared.own_store(nullptr), verdict);
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  print_summary(flags, choice, tally, verdict, events, nodes.size(), elapsed);
  if (!flags.bodies_file.empty()) {
    std::ofstream bodies{flags.bodies_file};
    for (const auto& body : tally.failure_bodies) bodies << body << "\n";
    if (!bodies) std::cerr << "load: could not write " << flags.bodies_file << "\n";
  }
  const bool answered_in_time =
      flags.max_answer_seconds <= 0 || tally.slowest_answer <= flags.max_answer_seconds;
  const bool held = answered_in_time && verdict.bad_status == 0 && verdict.lost == 0 &&
                    verdict.split == 0 && verdict.stranded == 0 && tally.escaped == 0 &&
                    tally.loops_ended.empty() && !tally.answers.empty();
  std::cout << (held ? "load: every promise held\n" : "load: a promise was broken\n");
  return held ? kExitPass : kExitFail;
}

Command add_load_command(CLI::App& app) {
  auto flags = std::make_shared<LoadFlags>();
  auto* load = app.add_subcommand(
      "load",
      "Run the reference system for real (real time; every client with its API node, every "
      "worker and the reconciler on a thread of its own, with its own io_context and store "
      "connection) under clients that double-click and reuse keys, then, after the drain, check "
      "on a fresh connection that every create was answered 201/200/422/503, no exception left "
      "the API, no worker or reconciler loop ended, no acknowledged job was lost and none was "
      "stranded (every acknowledged job must have succeeded: the provider always answers). "
      "Prints the acknowledged jobs by final status. Meant to run while the database is being "
      "broken (CI kills backends and restarts PostgreSQL during it).");
  load->add_option("--store", flags->store, "memory, postgres or postgres=URI")
      ->capture_default_str();
  add_pg_timeouts_flag(*load, flags->pg_timeouts);
  load->add_option("--seconds", flags->seconds, "How long the clients keep creating")
      ->capture_default_str();
  load->add_option("--drain", flags->drain_seconds,
                   "Longest the workers and the reconciler go on after the clients stop, before "
                   "the jobs are judged (the drain ends earlier once no attempt is live)")
      ->capture_default_str();
  load->add_option("--clients", flags->clients,
                   "Clients, each with its own API node, thread and store connection")
      ->capture_default_str();
  load->add_option("--workers", flags->workers,
                   "Workers, each with its own thread and store connection")
      ->capture_default_str();
  load->add_option("--keys", flags->keys, "Distinct idempotency keys the clients draw from")
      ->capture_default_str();
  load->add_option("--max-answer", flags->max_answer_seconds,
                   "Also promise that every answer, a 503 included, comes within this many "
                   "seconds (0: no such promise)")
      ->capture_default_str();
  load->add_option("--bodies", flags->bodies_file,
                   "Write every 5xx body the clients received to FILE, one per line")
      ->type_name("FILE");
  load->footer(
      "Exit codes: 0 every promise held; 1 one was broken (a job lost or stranded among them); "
      "2 bad flags or store; 3 a bug in onejob itself.");

  return {load, [flags] { return load_command(*flags); }};
}

}  // namespace onejob::cli
