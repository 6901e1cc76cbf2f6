#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include "harness/real/probe_run.hpp"

namespace onejob::real {
namespace probe_detail {

// A scenario's idempotency keys, each as written: creates' and operator actions' (an action
// without one of its own is sent under "op-r<request>", one with key: null under none).
std::vector<std::string> scenario_keys(const ScenarioSpec& spec) {
  std::vector<std::string> keys;
  TimelineEntry room;
  for (std::size_t request = 1; request <= request_count(spec); ++request) {
    const TimelineEntry& entry = request_entry(spec, request, room);
    if (entry.kind == TimelineEntry::Kind::create_job) {
      if (entry.create_job.key) keys.push_back(*entry.create_job.key);
    } else if (const auto key = action_key_sent(entry)) {
      keys.push_back(*key);
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
        port == options_.profile.stub_ports.end() ? 0 : port->second, provider.plausible_on));
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
        last_answer_wait() + milliseconds(1000),
        [this](std::string_view order) {
          std::size_t request = 0;
          const auto end = order.data() + order.size();
          if (std::from_chars(order.data(), end, request).ptr == end) order_.place(request);
        }));
  }
}

namespace {

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

}  // namespace

bool Run::set_up() {
  // The target's policy is the scenario's when the probe wrote its config: its attempt limit is
  // then known, and judged (B13).
  if (options_.target_cmd.find("{config}") != std::string::npos) {
    recorder_.declare_attempt_limit(spec_.policy.attempt_limit);
  }
  // The profile says how the target refuses a reused key: B2 judges refusals by it.
  recorder_.declare_conflict_status(options_.profile.codes.at("conflict"));
  // And where it says a created job lives: B16 judges each create's Location by it.
  if (!options_.profile.created_location.empty()) {
    recorder_.declare_created_location(options_.profile.created_location);
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

}  // namespace probe_detail

bool ProbeResult::safe() const {
  return std::ranges::none_of(findings,
                              [](const auto& f) { return check::black_box::is_safety(f); });
}

bool ProbeResult::passed() const {
  return setup_error.empty() && safe() && expectation_failures.empty();
}

ProbeResult probe_scenario(const scenario::ScenarioSpec& spec, const ProbeOptions& options) {
  ProbeResult result;
  result.name = spec.name;
  result.file = spec.file;
  probe_detail::Run run(spec, options, result);
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
