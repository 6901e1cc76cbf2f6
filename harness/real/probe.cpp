#include "harness/real/probe.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include "harness/real/black_box_recorder.hpp"
#include "harness/real/fault_proxy.hpp"
#include "harness/real/http_client.hpp"
#include "harness/real/provider_stub.hpp"
#include "harness/real/stream_proxy.hpp"
#include "harness/real/target_process.hpp"
#include "harness/real/timeline_order.hpp"

namespace onejob::real {
namespace {

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
};

// A job the target acknowledged, for the quiet phase's reads.
struct Acknowledged {
  std::string owner;
  std::string credential;
  std::string job;
  int request = 0;
};

bool is_terminal(const std::string& status) { return status == "succeeded" || status == "failed"; }

// A scenario's idempotency keys, each as written: creates' and operator actions' (an action
// without one of its own is sent under "op-r<request>").
std::vector<std::string> scenario_keys(const ScenarioSpec& spec) {
  std::vector<std::string> keys;
  TimelineEntry room;
  for (std::size_t request = 1; request <= request_count(spec); ++request) {
    const TimelineEntry& entry = request_entry(spec, request, room);
    if (entry.kind == TimelineEntry::Kind::create_job) {
      if (entry.create_job.key) keys.push_back(*entry.create_job.key);
    } else {
      keys.push_back(entry.action_key.value_or("op-r" + std::to_string(entry.request)));
    }
  }
  return keys;
}

// Each request's instant, by request number - 1.
std::vector<Duration> request_instants(const ScenarioSpec& spec) {
  std::vector<Duration> at;
  for (std::size_t request = 1; request <= request_count(spec); ++request) {
    at.push_back(request_at(spec, request));
  }
  return at;
}

class Run {
 public:
  Run(const ScenarioSpec& spec, const ProbeOptions& options, ProbeResult& result)
      : spec_(spec),
        options_(options),
        result_(result),
        port_(options.port),
        recorder_(options.profile, request_timeout()),
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
  // A client's wait for an answer, scaled, but never under a second: a real target on a loaded
  // machine must not look like a lost reply.
  milliseconds request_timeout() const {
    return std::max(real(spec_.policy.client_timeout), milliseconds(1000));
  }

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

bool Run::has_provider_faults() const {
  return sim::has_faults(spec_.network.worker_provider) ||
         std::ranges::any_of(spec_.partitions, [](const PartitionSpec& partition) {
           return partition.link == LinkKind::worker_provider;
         });
}

void Run::start_stubs() {
  for (const auto& provider : spec_.providers) {
    const auto call = [&](const scenario::ProviderCallSpec& spec) {
      const auto latency = spec.latency ? spec.latency->min : provider.latency.min;
      return StubCall{spec.outcome, real(latency)};
    };
    std::vector<StubCall> script;
    for (const auto& scripted : provider.script) script.push_back(call(scripted));
    const auto port = options_.profile.stub_ports.find(provider.name);
    stubs_.push_back(std::make_unique<ProviderStub>(
        provider.name, std::move(script), call(provider.default_call),
        port == options_.profile.stub_ports.end() ? 0 : port->second));
    // A fixed port is the stub's: a target configured in advance calls it directly.
    if (port != options_.profile.stub_ports.end() && has_provider_faults()) {
      notes_.push_back("provider " + provider.name +
                       ": faults between the target and it not applied (a fixed stub port)");
    }
    if (provider.certify && options_.target_cmd.find("{certified}") == std::string::npos &&
        options_.target_cmd.find("{config}") == std::string::npos) {
      notes_.push_back("provider " + provider.name +
                       ": certified at start in the scenario; the target's own configuration "
                       "decides here (--target-cmd has neither {certified} nor {config})");
    }
  }
  if (!has_provider_faults() || !options_.profile.stub_ports.empty()) return;
  for (std::size_t i = 0; i < stubs_.size(); ++i) {
    // A hang is the stub's to end: the proxy waits as long as a call may.
    provider_proxies_.push_back(std::make_unique<FaultProxy>(
        "127.0.0.1", std::to_string(stubs_[i]->port()),
        [this, i](std::uint64_t number) { return choose_provider(i, number); },
        std::chrono::minutes(10)));
  }
}

// Where the target calls provider `provider`: its fault proxy when the link has faults, else
// the stub itself.
std::string Run::provider_url(std::size_t provider) const {
  if (provider_proxies_.empty()) return stubs_[provider]->url();
  return "http://127.0.0.1:" + provider_proxies_[provider]->port_text();
}

std::string Run::expand_command() const {
  std::string command = substitute(options_.target_cmd, "port", port_);
  if (store_proxy_) {
    command = substitute(command, "store", "127.0.0.1:" + std::to_string(store_proxy_->port()));
  }
  std::string all;
  std::string certified;
  for (const auto& stub : stubs_) {
    const std::string url = provider_url(static_cast<std::size_t>(&stub - stubs_.data()));
    command = substitute(command, "stub:" + stub->name(), url);
    all += (all.empty() ? "" : " ") + stub->name() + "=" + url;
  }
  for (const auto& provider : spec_.providers) {
    if (provider.certify) certified += (certified.empty() ? "" : ",") + provider.name;
  }
  command = substitute(substitute(command, "stubs", all), "certified", certified);
  if (command.find("{config}") != std::string::npos) {
    command = substitute(command, "config", write_target_config());
  }
  return command;
}

// The scenario's policy on the probe's time scale, and its providers at their stubs' URLs (with
// certification, prompt template and limit), as `onejob serve --config` reads them.
std::string Run::write_target_config() const {
  const auto& policy = spec_.policy;
  const auto duration = [&](Duration scenario_time) {
    return std::to_string(std::max<std::int64_t>(1, real(scenario_time).count())) + "ms";
  };
  const auto quoted = [](const std::string& text) { return nlohmann::json(text).dump(); };
  std::ostringstream yaml;
  yaml << "# Written by onejob probe for scenario " << spec_.name << " (time scale "
       << options_.time_scale << ")\n"
       << "policy:\n"
       << "  attempt_deadline: " << duration(policy.attempt_deadline) << "\n"
       << "  lease: " << duration(policy.lease) << "\n"
       << "  reconcile_period: " << duration(policy.reconcile_period) << "\n"
       << "  status_timeout: " << duration(policy.status_timeout) << "\n"
       << "  worker_poll: " << duration(policy.worker_poll) << "\n"
       << "  worker_idle_poll: " << duration(policy.worker_idle_poll) << "\n"
       << "  worker_capacity: " << policy.worker_capacity << "\n"
       << "  attempt_limit: " << policy.attempt_limit << "\n";
  if (!stubs_.empty()) yaml << "providers:\n";
  for (std::size_t i = 0; i < stubs_.size(); ++i) {
    const auto& provider = spec_.providers[i];
    yaml << "  - name: " << quoted(provider.name) << "\n"
         << "    url: " << quoted(provider_url(i)) << "\n"
         << "    certify: " << (provider.certify ? "true" : "false") << "\n"
         << "    max_prompt_tokens: " << provider.max_prompt_tokens << "\n";
    if (provider.prompt_template) {
      yaml << "    prompt_template: " << quoted(*provider.prompt_template) << "\n";
    }
  }
  const std::string path = options_.log_dir + "/" + spec_.name + ".target.yaml";
  std::ofstream(path) << yaml.str();
  return path;
}

bool Run::start_target() {
  if (!target_) {
    HttpConnection connection(options_.host, port_);
    const HttpReply reply =
        connection.send("GET", options_.profile.ready_path, {}, "", std::chrono::seconds(5));
    if (!reply.answered()) {
      result_.setup_error = "the target at " + options_.host + ":" + port_ + " does not answer (" +
                            reply.failure + ")";
      return false;
    }
    return true;
  }
  std::string why;
  std::lock_guard lock(target_mutex_);
  if (!target_->start(options_.host, port_, options_.profile.ready_path, options_.ready_bound,
                      why)) {
    result_.setup_error = why;
    return false;
  }
  return true;
}

void Run::start_proxies() {
  for (std::size_t i = 0; i < spec_.clients.size(); ++i) {
    client_index_[spec_.clients[i].name] = i;
    proxies_.push_back(std::make_unique<FaultProxy>(
        options_.host, port_, [this, i](std::uint64_t number) { return choose(i, number); },
        request_timeout() + milliseconds(1000),
        [this](std::string_view order) {
          std::size_t request = 0;
          const auto end = order.data() + order.size();
          if (std::from_chars(order.data(), end, request).ptr == end) order_.place(request);
        }));
  }
}

// A random fault of `link`'s rates for one message, drawn from the scenario's seed.
std::optional<ProxyRule> Run::draw_fault(const sim::LinkSpec& link) {
  std::lock_guard lock(random_mutex_);
  if (draw(link.drop_request)) return ProxyRule{ProxyFault::drop_request, milliseconds(0)};
  // A reset after delivery looks to the sender like a lost reply: the far end did the work.
  if (draw(link.drop_response) || draw(link.reset)) {
    return ProxyRule{ProxyFault::drop_response, milliseconds(0)};
  }
  if (draw(link.duplicate)) return ProxyRule{ProxyFault::duplicate, milliseconds(0)};
  if (draw(link.reorder)) {
    const auto window = std::max<std::int64_t>(1, real(link.reorder_window).count());
    return ProxyRule{
        .fault = ProxyFault::delay,
        .delay = milliseconds(std::uniform_int_distribution<std::int64_t>(0, window)(random_)),
        .overtaken = true};
  }
  return std::nullopt;
}

// The fault of a partition window on `link` that cuts off one of `nodes` now, if any.
std::optional<ProxyRule> Run::partitioned(LinkKind link, const std::vector<std::string>& nodes,
                                          bool any_node) const {
  const Duration now = scenario_now();
  for (const PartitionSpec& partition : spec_.partitions) {
    if (partition.link != link || now < partition.from || now >= partition.until) continue;
    const bool ours = any_node || std::ranges::any_of(nodes, [&](const std::string& node) {
                        return std::ranges::find(partition.nodes, node) != partition.nodes.end();
                      });
    if (!ours) continue;
    return ProxyRule{partition.direction == PartitionSpec::Direction::responses
                         ? ProxyFault::drop_response
                         : ProxyFault::drop_request,
                     milliseconds(0)};
  }
  return std::nullopt;
}

// The client_lb faults of the scenario for client `client`'s request arriving now; lb_api's
// apply between every client and the target (the target is its own balancer and API nodes).
ProxyRule Run::choose(std::size_t client, std::uint64_t /*number*/) {
  if (!running_ || quiet_) return {};
  const std::string& name = spec_.clients[client].name;
  if (auto rule = partitioned(LinkKind::client_lb, {name}, false)) return *rule;
  if (auto rule = partitioned(LinkKind::lb_api, {}, true)) return *rule;
  for (const auto* link : {&spec_.network.client_lb, &spec_.network.lb_api}) {
    if (auto rule = draw_fault(*link)) return *rule;
  }
  const milliseconds delay = real(spec_.network.client_lb.latency.min);
  if (delay > milliseconds(0)) return {ProxyFault::delay, delay};
  return {};
}

// The worker_provider faults for a call to provider `provider` arriving now: the target's
// workers (any of them) and the stub are that link's ends.
ProxyRule Run::choose_provider(std::size_t provider, std::uint64_t /*number*/) {
  if (!running_ || quiet_) return {};
  const std::string& name = spec_.providers[provider].name;
  std::vector<std::string> ends{name};
  for (int worker = 1; worker <= spec_.topology.workers; ++worker) {
    ends.push_back(scenario::worker_node(worker));
  }
  if (auto rule = partitioned(LinkKind::worker_provider, ends, false)) return *rule;
  if (auto rule = draw_fault(spec_.network.worker_provider)) return *rule;
  const milliseconds delay = real(spec_.network.worker_provider.latency.min);
  if (delay > milliseconds(0)) return {ProxyFault::delay, delay};
  return {};
}

// The node_store faults for a chunk of the store protocol crossing now: the target is every
// API node and worker at once (one process, one pool of store connections), so a partition of
// any of them cuts the target's link.
StreamRule Run::choose_store(StreamDirection direction) {
  if (!running_ || quiet_) return {};
  const bool to_store = direction == StreamDirection::to_server;
  const Duration now = scenario_now();
  for (const PartitionSpec& partition : spec_.partitions) {
    if (partition.link != LinkKind::node_store || now < partition.from || now >= partition.until) {
      continue;
    }
    if (partition.direction == PartitionSpec::Direction::both ||
        (partition.direction == PartitionSpec::Direction::requests) == to_store) {
      return {.cut = true};
    }
  }
  const sim::LinkSpec& link = spec_.network.node_store;
  {
    std::lock_guard lock(random_mutex_);
    if (to_store ? draw(link.drop_request) : draw(link.drop_response) || draw(link.reset)) {
      return {.cut = true};
    }
  }
  return {.delay = real(link.latency.min)};
}

bool Run::start_store_proxy() {
  if (options_.store_upstream.empty()) return true;
  const std::string& upstream = options_.store_upstream;
  const bool path = upstream.starts_with("/");
  const auto colon = path ? upstream.size() : upstream.rfind(':');
  try {
    store_proxy_ = std::make_unique<StreamProxy>(
        upstream.substr(0, colon), path ? "" : upstream.substr(colon + 1),
        [this](StreamDirection direction) { return choose_store(direction); });
  } catch (const std::exception& error) {
    result_.setup_error = error.what();
    return false;
  }
  for (const auto& partition : spec_.partitions) {
    if (partition.link != LinkKind::node_store) continue;
    std::string nodes;
    for (const auto& node : partition.nodes) nodes += (nodes.empty() ? "" : ", ") + node;
    notes_.push_back("the partition between " + nodes +
                     " and the store cuts the whole target's link to it (one process)");
  }
  return true;
}

std::string Run::credential(const std::string& owner) const {
  return options_.profile.owners.at(owner);  // checked before the run
}

std::string Run::operator_credential(const std::string& owner) const {
  const auto found = options_.profile.operators.find(owner);
  return found == options_.profile.operators.end() ? credential(owner) : found->second;
}

std::string Run::wait_for_job(int request) {
  std::unique_lock lock(mutex_);
  finished_.wait_for(lock, std::chrono::seconds(60), [&] { return outcomes_[request].done; });
  return outcomes_[request].job;
}

void Run::perform(const TimelineEntry& entry, HttpConnection& connection) {
  const std::string& owner = spec_.clients[client_index_.at(entry.client)].owner;
  const auto record = [&](const HttpReply& reply) {
    std::lock_guard lock(mutex_);
    Outcome& outcome = outcomes_[entry.request];
    if (!reply.answered()) return;
    outcome.status = reply.status;
    if (auto job = id_at(reply.body, options_.profile.job_id_pointer)) outcome.job = *job;
  };
  const auto done = [&] {
    order_.place(static_cast<std::size_t>(entry.request));
    std::lock_guard lock(mutex_);
    outcomes_[entry.request].done = true;
    finished_.notify_all();
  };
  const auto skip = [&](const std::string& why) {
    std::lock_guard lock(mutex_);
    notes_.push_back("request " + std::to_string(entry.request) + " (" + entry.client +
                     "): not sent, " + why);
  };
  // Sends until answered, at most 1 + client_retries times (the same request, the same key).
  const auto send = [&](const auto& once) {
    HttpReply reply;
    for (int sent = 0; sent <= spec_.policy.client_retries; ++sent) {
      const auto resend_at = Clock::now() + request_timeout();
      reply = once();
      order_.place(static_cast<std::size_t>(entry.request));
      record(reply);
      // As the scenario's clients: a 502 or 503 (unavailable) is resent like a lost reply.
      const bool unavailable =
          reply.status == 502 || reply.status == options_.profile.translate(503);
      if (reply.answered() && !unavailable) break;
      // A client learns of a lost reply by its timeout, not by the connection's end.
      if (sent < spec_.policy.client_retries) std::this_thread::sleep_until(resend_at);
    }
    return reply;
  };
  // An operator action's key (none for a create or a read).
  const auto key_of_action = [&] {
    return keys_.at(entry.action_key.value_or("op-r" + std::to_string(entry.request)));
  };
  // Every action but a create acts on the job an earlier create learned.
  std::string job;
  if (entry.kind != TimelineEntry::Kind::create_job) {
    job = wait_for_job(entry.target_request);
    if (job.empty()) {
      skip("request " + std::to_string(entry.target_request) + " learned no job id");
      done();
      return;
    }
  }
  switch (entry.kind) {
    case TimelineEntry::Kind::create_job: {
      const std::string key = entry.create_job.key ? keys_.at(*entry.create_job.key) : "";
      const HttpReply reply = send([&] {
        return recorder_.create(connection, owner, credential(owner), key, entry.create_job.body,
                                entry.client);
      });
      const auto& profile = options_.profile;
      std::lock_guard lock(mutex_);
      const Outcome& outcome = outcomes_[entry.request];
      if ((reply.status == profile.translate(201) || reply.status == profile.translate(200)) &&
          !outcome.job.empty()) {
        acknowledged_.push_back({owner, credential(owner), outcome.job, entry.request});
      }
      break;
    }
    case TimelineEntry::Kind::get_job: {
      if (entry.method || entry.path) {
        // A probe of the routes (the scenario's paths are the reference's): sent as written,
        // judged by the scenario's expected status, and not part of the black-box history,
        // whose actions are creates, reads, retries and cancels.
        const auto& profile = options_.profile;
        const Headers headers{{profile.auth_header, profile.auth_prefix + credential(owner)}};
        send([&] {
          return connection.send(entry.method.value_or(profile.read.method),
                                 substitute(entry.path.value_or(profile.read.path), "job", job),
                                 headers, "", request_timeout());
        });
        break;
      }
      send([&] { return recorder_.read(connection, owner, credential(owner), job, entry.client); });
      break;
    }
    case TimelineEntry::Kind::retry: {
      std::string body = entry.retry_body.value_or("");
      if (entry.provider) body = nlohmann::json{{"provider", *entry.provider}}.dump();
      send([&] {
        return recorder_.retry(connection, owner, operator_credential(owner), key_of_action(), job,
                               body, entry.client);
      });
      break;
    }
    case TimelineEntry::Kind::cancel: {
      // The attempt's id, from a read of the job by its creator, straight to the target (the
      // probe looking up what the scenario names, not a client's action: no faults, recorded
      // as client "probe"). A cancel by someone else must still name a real attempt.
      TimelineEntry room;
      const TimelineEntry& create =
          request_entry(spec_, static_cast<std::size_t>(entry.target_request), room);
      const std::string& creator = spec_.clients[client_index_.at(create.client)].owner;
      HttpConnection direct(options_.host, port_);
      // The probe's own lookup, not a judged action: a read that got no answer (a target slowed
      // by a loaded machine) is sent again, three reads in all.
      HttpReply read;
      for (int reads = 0; reads < 3 && !read.answered(); ++reads) {
        read = recorder_.read(direct, creator, credential(creator), job, "probe");
      }
      // The attempt_no-th element of the job's attempts, then the id inside it.
      const std::string attempt = id_at(read.body, options_.profile.attempts_pointer + "/" +
                                                       std::to_string(entry.attempt_no - 1) +
                                                       options_.profile.attempt_id_pointer)
                                      .value_or("");
      if (attempt.empty()) {
        // Which of the two it was: a read that got no answer, or one that did not list it.
        skip("attempt " + std::to_string(entry.attempt_no) + " of job " + job +
             (read.answered()
                  ? " not found in its read (status " + std::to_string(read.status) + ")"
                  : " not found: its read got no answer (" + read.failure + ")"));
        break;
      }
      send([&] {
        return recorder_.cancel(connection, owner, operator_credential(owner), key_of_action(), job,
                                attempt, entry.client);
      });
      break;
    }
  }
  done();
}

void Run::run_timeline() {
  const std::vector<std::size_t>& order = order_.order();
  std::atomic<std::size_t> next = 0;
  const std::size_t threads = std::min<std::size_t>(order.size(), 64);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      std::map<std::size_t, std::unique_ptr<HttpConnection>> connections;
      for (std::size_t i = next++; i < order.size(); i = next++) {
        TimelineEntry room;
        const TimelineEntry& entry = request_entry(spec_, order[i], room);
        std::this_thread::sleep_until(origin_ + real(entry.at));
        // At most as long as a client waits for an answer, and a second more: a request the
        // target holds on to does not stop the timeline.
        order_.wait_for_turn(order[i], request_timeout() + milliseconds(1000));
        const std::size_t client = client_index_.at(entry.client);
        auto& connection = connections[client];
        if (!connection) {
          connection = std::make_unique<HttpConnection>("127.0.0.1", proxies_[client]->port_text());
        }
        connection->set_header(std::string(kOrderField), std::to_string(order[i]));
        perform(entry, *connection);
      }
    });
  }
  for (auto& thread : pool) thread.join();
}

// Reads every acknowledged job every `observe_every` while the timeline runs, as client
// "observer": a result that changes between two reads is only seen by someone who reads in
// between, and the scenario's own reads are few.
void Run::observe() {
  if (options_.observe_every <= milliseconds(0)) return;
  HttpConnection connection(options_.host, port_);
  while (!observing_done_) {
    std::vector<Acknowledged> jobs;
    {
      std::unique_lock lock(mutex_);
      finished_.wait_for(lock, options_.observe_every, [&] { return observing_done_.load(); });
      if (observing_done_) return;
      jobs = acknowledged_;
    }
    std::set<std::string> seen;
    for (const auto& job : jobs) {
      if (!seen.insert(job.job).second || observing_done_) continue;
      recorder_.read(connection, job.owner, job.credential, job.job, "observer");
    }
  }
}

// Node faults and pauses, on the target as a whole: a crash is kill -9, a restart starts it
// again, a pause is SIGSTOP until SIGCONT.
void Run::nemesis() {
  struct Act {
    Duration at;
    int kind;  // 0 kill, 1 start, 2 stop, 3 continue
  };
  std::vector<Act> acts;
  for (const auto& fault : spec_.node_faults) {
    acts.push_back({fault.at, fault.kind == scenario::NodeFaultSpec::Kind::crash ? 0 : 1});
  }
  for (const auto& pause : spec_.pauses) {
    acts.push_back({pause.from, 2});
    acts.push_back({pause.until, 3});
  }
  if (acts.empty()) return;
  if (!target_) {
    std::lock_guard lock(mutex_);
    notes_.push_back(std::to_string(acts.size()) +
                     " node faults and pauses not applied: the probe did not start the target "
                     "(--target-cmd)");
    return;
  }
  std::ranges::stable_sort(acts, [](const Act& a, const Act& b) { return a.at < b.at; });
  int paused = 0;
  for (const Act& act : acts) {
    std::this_thread::sleep_until(origin_ + real(act.at));
    std::lock_guard lock(target_mutex_);
    if (act.kind == 0) {
      target_->resume();
      target_->kill();
      paused = 0;
    } else if (act.kind == 1) {
      std::string why;
      if (!target_->running() && !target_->start(options_.host, port_, options_.profile.ready_path,
                                                 options_.ready_bound, why)) {
        std::lock_guard notes(mutex_);
        notes_.push_back("a restart failed: " + why);
      }
    } else if (act.kind == 2) {
      if (paused++ == 0) target_->pause();
    } else if (paused > 0 && --paused == 0) {
      target_->resume();
    }
  }
}

void Run::quiet_phase() {
  std::this_thread::sleep_until(origin_ + real(scenario::faults_end(spec_)));
  quiet_ = true;
  if (target_) {
    std::lock_guard lock(target_mutex_);
    target_->resume();
    std::string why;
    if (!target_->running() && !target_->start(options_.host, port_, options_.profile.ready_path,
                                               options_.ready_bound, why)) {
      notes_.push_back("the restart for the quiet phase failed: " + why);
    }
  }
  recorder_.quiet();
  HttpConnection connection(options_.host, port_);
  std::vector<Acknowledged> jobs;
  {
    std::lock_guard lock(mutex_);
    jobs = acknowledged_;
  }
  std::set<std::string> seen;
  std::erase_if(jobs, [&](const Acknowledged& job) { return !seen.insert(job.job).second; });
  const auto give_up = Clock::now() + options_.settle;
  std::set<std::string> finished;
  while (true) {
    for (const auto& job : jobs) {
      if (finished.contains(job.job)) continue;
      const HttpReply reply =
          recorder_.read(connection, job.owner, job.credential, job.job, "settle");
      const auto history = recorder_.history();
      const auto& last = history.responses.back();
      if (last.job_status) final_status_[job.job] = *last.job_status;
      if (reply.answered() &&
          (reply.status != 200 || (last.job_status && is_terminal(*last.job_status)))) {
        finished.insert(job.job);
      }
    }
    if (finished.size() == jobs.size() || Clock::now() >= give_up) break;
    std::this_thread::sleep_for(milliseconds(250));
  }
  // A provider answers after the job's last read is fine; its execution is ground truth still.
  for (const auto& stub : stubs_) recorder_.add_executions(*stub);
}

void Run::judge_expectations() {
  const auto& profile = options_.profile;
  const auto& expect = spec_.expect;
  for (const auto& response : expect.responses) {
    const Outcome& outcome = outcomes_[response.request];
    std::vector<int> allowed;
    for (const int status : response.statuses) allowed.push_back(profile.translate(status));
    if (std::ranges::find(allowed, outcome.status) == allowed.end()) {
      std::string list;
      for (const int status : allowed)
        list += (list.empty() ? "" : " or ") + std::to_string(status);
      result_.expectation_failures.push_back(
          spec_.file + ":" + std::to_string(response.pos.line) + ": request " +
          std::to_string(response.request) + ": expected " + list + ", got " +
          (outcome.status == 0 ? std::string("no answer") : std::to_string(outcome.status)));
    }
  }
  for (const auto& same : expect.same_job_id) {
    std::set<std::string> ids;
    std::string shown;
    for (const int request : same.requests) {
      const std::string& job = outcomes_[request].job;
      ids.insert(job);
      shown += (shown.empty() ? "" : ", ") + std::to_string(request) + ": " +
               (job.empty() ? std::string("none") : job);
    }
    if (ids.size() != 1 || ids.begin()->empty()) {
      result_.expectation_failures.push_back(spec_.file + ":" + std::to_string(same.pos.line) +
                                             ": expected one job id, got " + shown);
    }
  }
  for (const auto& final : expect.final_jobs) {
    const std::string& job = outcomes_[final.request].job;
    const bool judged = std::ranges::all_of(
        final.statuses, [](const std::string& s) { return s == "succeeded" || s == "failed"; });
    if (final.statuses.empty() || !judged) continue;
    const std::string status = job.empty() ? "" : final_status_[job];
    if (std::ranges::find(final.statuses, status) == final.statuses.end()) {
      result_.expectation_failures.push_back(
          spec_.file + ":" + std::to_string(final.pos.line) + ": the job of request " +
          std::to_string(final.request) + " ended " + (status.empty() ? "unread" : status) +
          ", expected " + final.statuses.front());
    }
  }
}

// A loopback port nothing listens on now (the target is started on it next).
std::string free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t size = sizeof address;
  std::string port = "0";
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
    port = std::to_string(ntohs(address.sin_port));
  }
  if (fd >= 0) ::close(fd);
  return port;
}

bool Run::set_up() {
  // The target's policy is the scenario's when the probe wrote its config: its attempt limit is
  // then known, and judged (B13).
  if (options_.target_cmd.find("{config}") != std::string::npos) {
    recorder_.declare_attempt_limit(spec_.policy.attempt_limit);
  }
  for (const auto& client : spec_.clients) {
    if (!options_.profile.owners.contains(client.owner)) {
      result_.setup_error =
          "the profile has no credential for owner \"" + client.owner + "\" (auth.owners)";
      return false;
    }
  }
  try {
    start_stubs();
  } catch (const std::exception& error) {
    result_.setup_error = std::string("a provider stub could not listen: ") + error.what();
    return false;
  }
  if (!start_store_proxy()) return false;
  // Chosen once this run's own listeners (stubs, store proxy) hold their ports: a port freed just
  // before they bind could be handed to one of them. Another process can still take it before
  // the target binds it; the target then exits at once, and is started again on another free
  // port (three tries in all).
  const bool chosen_port = port_ == "0";
  if (chosen_port) port_ = free_port();
  for (int tries = 1;; ++tries) {
    if (!options_.target_cmd.empty()) {
      target_ = std::make_unique<TargetProcess>(
          expand_command(), options_.log_dir + "/" + spec_.name + ".target.log");
    }
    if (start_target()) break;
    if (!chosen_port || !target_ || !target_->exited_before_ready() || tries == 3) return false;
    port_ = free_port();
    result_.setup_error.clear();
  }
  start_proxies();
  if (store_proxy_) return true;
  for (const auto& partition : spec_.partitions) {
    if (partition.link == LinkKind::node_store) {
      notes_.push_back(
          "a partition between the target and its store not applied: no --store-upstream");
    }
  }
  if (sim::has_faults(spec_.network.node_store)) {
    notes_.push_back("faults between the target and its store not applied: no --store-upstream");
  }
  return true;
}

void Run::execute() {
  const auto started = Clock::now();
  if (set_up()) {
    origin_ = Clock::now();
    running_ = true;
    std::thread nemesis_thread([this] { nemesis(); });
    std::thread observer([this] { observe(); });
    run_timeline();
    nemesis_thread.join();
    std::this_thread::sleep_until(origin_ + real(scenario::faults_end(spec_)));
    {
      std::lock_guard lock(mutex_);
      observing_done_ = true;
      finished_.notify_all();
    }
    observer.join();
    quiet_phase();
    const bb::History history = recorder_.history();
    result_.findings = bb::judge(history);
    result_.requests = history.requests.size();
    for (const auto& execution : history.executions) {
      result_.executions += execution.purpose == "attempt" ? 1 : 0;
    }
    result_.acknowledged = acknowledged_.size();
    if (options_.expectations) judge_expectations();
    result_.jsonl = recorder_.jsonl();
    result_.history = history;
  }
  // Whether or not the run was made: nothing the proxies' threads use (random_, the spec, the
  // places they report) may end before them.
  proxies_.clear();
  if (target_) {
    result_.target_starts = target_->starts();
    target_->kill();
  }
  // The stubs before their proxies: a call a stub holds (a hang) ends with it, and so does the
  // proxy's thread waiting on it. The store's proxy after the target: its connections end first.
  stubs_.clear();
  provider_proxies_.clear();
  store_proxy_.reset();
  result_.notes = notes_;
  result_.seconds = std::chrono::duration<double>(Clock::now() - started).count();
}

}  // namespace

bool ProbeResult::safe() const {
  return std::ranges::none_of(findings, [](const auto& f) { return bb::is_safety(f); });
}

bool ProbeResult::passed() const {
  return setup_error.empty() && safe() && expectation_failures.empty();
}

ProbeResult probe_scenario(const ScenarioSpec& spec, const ProbeOptions& options) {
  ProbeResult result;
  result.name = spec.name;
  result.file = spec.file;
  Run run(spec, options, result);
  run.execute();
  return result;
}

std::map<std::string, std::string> tag_keys(const std::string& tag,
                                            const std::vector<std::string>& keys) {
  // A visible ASCII character, as every character of a tag is: overwriting it with one keeps
  // the key as valid, or as invalid, as it was.
  const auto tag_like = [](char c) { return c > ' ' && c < 127; };
  // Blank (a header's value is trimmed): sent as it is, so that it stays as refused as empty.
  const auto blank = [](const std::string& key) {
    return std::ranges::all_of(key, [](char c) { return c == ' ' || c == '\t'; });
  };
  const auto keeps_length = [&](const std::string& key) {
    return key.size() >= tag.size() + 8 &&
           std::all_of(key.begin(), key.begin() + static_cast<std::ptrdiff_t>(tag.size()),
                       tag_like);
  };
  std::map<std::string, std::string> tagged;
  for (const auto& key : keys) {
    if (tag.empty() || blank(key)) {
      tagged[key] = key;
    } else {
      tagged[key] = keeps_length(key) ? tag + key.substr(tag.size()) : tag + key;
    }
  }
  // Two keys sent as one: prefix the one that kept its length (prefixed keys differ as the
  // scenario's keys do), until no two are.
  for (bool again = true; again;) {
    again = false;
    std::map<std::string, std::string> sender;  // tagged key -> scenario key
    for (auto& [key, sent] : tagged) {
      const auto [it, fresh] = sender.emplace(sent, key);
      if (fresh) continue;
      // Of the two, one kept its length (prefixed keys never meet): it is prefixed now.
      const std::string kept = sent == tag + key ? it->second : key;
      tagged[kept] = tag + kept;
      again = true;
      break;
    }
  }
  return tagged;
}

}  // namespace onejob::real
