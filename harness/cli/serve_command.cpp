#include "harness/cli/serve_command.hpp"

#include <utility>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <system_error>

#include <CLI/CLI.hpp>
#include <pthread.h>
#include <yaml-cpp/yaml.h>

#include "system/adapters/locked_store.hpp"
#include "system/adapters/memory_store.hpp"
#include "system/app/service.hpp"
#include "system/ports/store_wrapper.hpp"

#include "harness/cli/defect_flags.hpp"
#include "harness/cli/store_flag.hpp"
#include "harness/scenario/yaml_reader.hpp"

namespace onejob::cli {
namespace {

using scenario::YamlMap;
using scenario::YamlReader;

struct ServeFlags {
  std::string config;
  std::string listen;
  std::string store;
  std::string pg_timeouts;
  std::string schema;
  std::string tokens;
  int api_threads = 0;
  int workers = -1;                    // unset: the config's, or 2
  std::vector<std::string> providers;  // NAME=URL
  std::vector<std::string> certify;
  std::vector<std::string> defects;
  double shutdown_grace = -1;
  bool no_logs = false;
  bool no_listen = false;
};

// What the config file and the flags come to, before anything is opened.
struct ServeSetup {
  ServiceOptions options;
  std::string store = "memory";
  std::string pg_timeouts;
  std::string schema = "onejob";
  std::string tokens_file;  // resolved against the config file's folder
};

std::chrono::milliseconds millis(Duration duration) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(duration);
}

// "HOST:PORT" (PORT 0 for any free port): the problem, or nothing after setting `options`.
std::optional<std::string> parse_listen(const std::string& text, ServiceOptions& options) {
  const auto colon = text.rfind(':');
  const std::string port = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (colon == std::string::npos || colon == 0 || port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    return "listen: expected HOST:PORT (e.g. 127.0.0.1:8080; port 0 for any), found \"" + text +
           "\"";
  }
  options.address = text.substr(0, colon);
  options.port = static_cast<unsigned short>(std::stoi(port));
  return std::nullopt;
}

void read_limits(const YamlReader& reader, const YAML::Node& node, HttpLimits& limits) {
  YamlMap map(reader, node, "limits",
              {"header_bytes", "body_bytes", "idle_timeout", "request_timeout", "max_connections"});
  if (auto value = map.get("header_bytes")) {
    limits.header_bytes = reader.small_integer(*value, "limits.header_bytes", 1024, 1 << 20);
  }
  if (auto value = map.get("body_bytes")) {
    limits.body_bytes = reader.small_integer(*value, "limits.body_bytes", 1, 64 << 20);
  }
  if (auto value = map.get("idle_timeout")) {
    limits.idle_timeout = millis(reader.duration(*value, "limits.idle_timeout"));
  }
  if (auto value = map.get("request_timeout")) {
    limits.request_timeout = millis(reader.duration(*value, "limits.request_timeout"));
  }
  if (auto value = map.get("max_connections")) {
    limits.max_connections = reader.small_integer(*value, "limits.max_connections", 1, 100000);
  }
}

void read_policy(const YamlReader& reader, const YAML::Node& node, Policy& policy) {
  YamlMap map(reader, node, "policy",
              {"attempt_deadline", "lease", "reconcile_period", "status_timeout", "worker_poll",
               "worker_idle_poll", "worker_capacity", "attempt_limit", "redrive_limit"});
  const auto read_duration = [&](std::string_view key, Duration& field) {
    if (auto value = map.get(key)) {
      field = reader.duration(*value, "policy." + std::string(key));
      if (field <= Duration(0))
        reader.fail(*value, "policy." + std::string(key) + ": expected above 0");
    }
  };
  const auto read_count = [&](std::string_view key, int& field, int min, int max) {
    if (auto value = map.get(key))
      field = reader.small_integer(*value, "policy." + std::string(key), min, max);
  };
  read_duration("attempt_deadline", policy.attempt_deadline);
  read_duration("lease", policy.lease);
  read_duration("reconcile_period", policy.reconcile_period);
  read_duration("status_timeout", policy.status_timeout);
  read_duration("worker_poll", policy.worker_poll);
  read_duration("worker_idle_poll", policy.worker_idle_poll);
  read_count("worker_capacity", policy.worker_capacity, 1, 1024);
  read_count("attempt_limit", policy.attempt_limit, 1, 100);
  read_count("redrive_limit", policy.redrive_limit, 0, 1000);
  if (policy.lease <= policy.attempt_deadline) {
    reader.fail(map.get("lease") ? *map.get("lease") : node,
                "policy.lease: expected longer than policy.attempt_deadline");
  }
}

void read_provider(const YamlReader& reader, const YAML::Node& node, ServeSetup& setup) {
  YamlMap map(reader, node, "a provider",
              {"name", "url", "connect_timeout", "status_timeout", "certify", "prompt_template",
               "max_prompt_tokens", "bytes_per_token"});
  ProviderProfile profile;
  profile.name = reader.string(map.require("name"), "provider name");
  if (profile.name.empty()) reader.fail(map.require("name"), "provider name: expected a name");
  if (setup.options.system.find_provider(profile.name)) {
    reader.fail(map.require("name"), "provider " + profile.name + ": named twice");
  }
  const auto url = map.require("url");
  auto parsed = parse_provider_url(profile.name, reader.string(url, "provider url"));
  if (auto* problem = std::get_if<std::string>(&parsed)) reader.fail(url, *problem);
  auto endpoint = std::get<HttpProviderEndpoint>(std::move(parsed));
  if (auto value = map.get("connect_timeout")) {
    endpoint.connect_timeout = millis(reader.duration(*value, "connect_timeout"));
  }
  if (auto value = map.get("status_timeout")) {
    endpoint.status_timeout = millis(reader.duration(*value, "status_timeout"));
  }
  if (auto value = map.get("certify"); value && reader.boolean(*value, "certify")) {
    setup.options.certify.push_back(profile.name);
  }
  if (auto value = map.get("prompt_template")) {
    profile.prompt_template = reader.string(*value, "prompt_template");
  }
  if (auto value = map.get("max_prompt_tokens")) {
    profile.max_prompt_tokens = reader.small_integer(*value, "max_prompt_tokens", 1, 1 << 24);
  }
  if (auto value = map.get("bytes_per_token")) {
    profile.bytes_per_token = reader.small_integer(*value, "bytes_per_token", 1, 64);
  }
  setup.options.system.providers.push_back(std::move(profile));
  setup.options.endpoints.push_back(std::move(endpoint));
}

// The config file into `setup`. Throws ScenarioError (file:line:col) on a mistake.
void read_config(const std::string& file, ServeSetup& setup) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const YamlReader reader(file);
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::ParserException& error) {
    throw scenario::ScenarioError(file, {error.mark.line + 1, error.mark.column + 1}, error.msg);
  }
  YamlMap top(
      reader, root, "the serve config",
      {"listen", "store", "schema", "pg_timeouts", "tokens", "api_threads", "workers", "logs",
       "shutdown_grace", "recertify_period", "limits", "policy", "providers", "defects"});
  auto& options = setup.options;
  if (auto value = top.get("listen")) {
    if (auto problem = parse_listen(reader.string(*value, "listen"), options))
      reader.fail(*value, *problem);
  }
  if (auto value = top.get("store")) setup.store = reader.string(*value, "store");
  if (auto value = top.get("schema")) setup.schema = reader.string(*value, "schema");
  if (auto value = top.get("pg_timeouts")) setup.pg_timeouts = reader.string(*value, "pg_timeouts");
  if (auto value = top.get("tokens")) {
    setup.tokens_file = reader.string(*value, "tokens");
    const std::filesystem::path path(setup.tokens_file);
    if (path.is_relative()) {
      setup.tokens_file = (std::filesystem::path(file).parent_path() / path).string();
    }
  }
  if (auto value = top.get("api_threads"))
    options.api_threads = reader.small_integer(*value, "api_threads", 1, 256);
  if (auto value = top.get("workers"))
    options.workers = reader.small_integer(*value, "workers", 0, 256);
  if (auto value = top.get("logs")) options.json_logs = reader.boolean(*value, "logs");
  if (auto value = top.get("shutdown_grace")) {
    options.shutdown_grace = millis(reader.duration(*value, "shutdown_grace"));
  }
  if (auto value = top.get("recertify_period")) {
    options.recertify_period = reader.duration(*value, "recertify_period");
    if (options.recertify_period <= Duration(0))
      reader.fail(*value, "recertify_period: expected above 0");
  }
  if (auto value = top.get("limits")) read_limits(reader, *value, options.limits);
  if (auto value = top.get("policy")) read_policy(reader, *value, options.system.policy);
  if (auto value = top.get("providers")) {
    reader.expect_sequence(*value, "providers");
    for (const auto& item : *value) read_provider(reader, item, setup);
  }
  if (auto value = top.get("defects")) {
    reader.expect_sequence(*value, "defects");
    std::vector<std::string> names;
    for (const auto& item : *value) names.push_back(reader.string(item, "defect"));
    if (auto problem = parse_defects(names, options.system.defects)) reader.fail(*value, *problem);
  }
}

// Flags over the config file: the problem, or nothing.
std::optional<std::string> apply_flags(const ServeFlags& flags, ServeSetup& setup) {
  auto& options = setup.options;
  if (!flags.listen.empty()) {
    if (auto problem = parse_listen(flags.listen, options)) return "--" + *problem;
  }
  if (!flags.store.empty()) setup.store = flags.store;
  if (!flags.pg_timeouts.empty()) setup.pg_timeouts = flags.pg_timeouts;
  if (!flags.schema.empty()) setup.schema = flags.schema;
  if (!flags.tokens.empty()) setup.tokens_file = flags.tokens;
  if (flags.api_threads > 0) options.api_threads = flags.api_threads;
  if (flags.workers >= 0) options.workers = flags.workers;
  if (flags.no_logs) options.json_logs = false;
  if (flags.shutdown_grace >= 0) {
    options.shutdown_grace =
        std::chrono::milliseconds(static_cast<std::int64_t>(flags.shutdown_grace * 1000));
  }
  for (const auto& entry : flags.providers) {
    const auto equals = entry.find('=');
    if (equals == std::string::npos || equals == 0) {
      return "--provider: expected NAME=URL, found \"" + entry + "\"";
    }
    const std::string name = entry.substr(0, equals);
    if (options.system.find_provider(name)) return "--provider " + name + ": named twice";
    auto parsed = parse_provider_url(name, entry.substr(equals + 1));
    if (auto* problem = std::get_if<std::string>(&parsed))
      return "--provider " + name + ": " + *problem;
    options.system.providers.push_back({.name = name});
    options.endpoints.push_back(std::get<HttpProviderEndpoint>(std::move(parsed)));
  }
  for (const auto& name : flags.certify) {
    if (name.empty()) continue;  // --certify "" names none (a probe's empty {certified})
    if (!options.system.find_provider(name)) return "--certify " + name + ": no such provider";
    options.certify.push_back(name);
  }
  if (auto problem = parse_defects(flags.defects, options.system.defects)) return *problem;
  return std::nullopt;
}

int serve(const ServeFlags& flags) {
  ServeSetup setup;
  try {
    if (!flags.config.empty()) {
      if (!std::filesystem::is_regular_file(flags.config)) {
        return bad_input(flags.config, ": no such file or directory");
      }
      read_config(flags.config, setup);
    }
  } catch (const scenario::ScenarioError& error) {
    return bad_input(error.what());
  }
  if (auto problem = apply_flags(flags, setup)) return bad_input(*problem);
  auto& options = setup.options;
  try {
    options.system.validate();
  } catch (const std::invalid_argument& error) {
    return bad_input("serve: ", error.what());
  }
  if (setup.tokens_file.empty()) {
    return bad_input(
        "serve: no tokens: give --tokens FILE (or tokens: in the config), lines of "
        "\"sha256:HEX PRINCIPAL [operator]\"; see onejob serve --help");
  }
  std::ifstream tokens_in(setup.tokens_file, std::ios::binary);
  if (!tokens_in) return bad_input(setup.tokens_file, ": no such file or directory");
  std::stringstream tokens_text;
  tokens_text << tokens_in.rdbuf();
  auto tokens = TokenTable::parse(tokens_text.str());
  if (auto* problem = std::get_if<TokenTable::Problem>(&tokens)) {
    return bad_input(setup.tokens_file, ":", problem->line, ":", problem->column, ": ",
                     problem->message);
  }
  options.tokens = std::get<TokenTable>(std::move(tokens));
  if (options.tokens.size() == 0) return bad_input(setup.tokens_file, ": no tokens in it");

  StoreChoice choice;
  if (auto problem = parse_pg_timeouts(setup.pg_timeouts, choice)) return bad_input(*problem);
  if (auto problem = parse_store(setup.store, choice)) return bad_input(*problem);
  if (auto problem = store_defect_problem(choice, options.system.defects))
    return bad_input(*problem);
  if (options.workers == 0 && !choice.postgres) {
    return bad_input(
        "serve: workers 0 needs --store postgres: with the memory store no other process can "
        "run this one's jobs");
  }
  if (flags.no_listen && !choice.postgres) {
    return bad_input("serve: --no-listen applies to --store postgres only");
  }
  std::unique_ptr<MemoryStore> memory;
  std::unique_ptr<LockedStore> locked;
  if (choice.postgres) {
    options.connect = [connect = durable_schema(choice, setup.schema)](EventSink& events) {
      return connect(&events);
    };
    if (!flags.no_listen) options.share_rings = work_channel(choice, setup.schema);
  } else {
    // The store-level defects (--defect check-then-insert, blind-overwrite, ...) live in it.
    memory = std::make_unique<MemoryStore>(options.system.defects);
    locked = std::make_unique<LockedStore>(*memory);
    options.connect = [&locked](EventSink&) -> std::unique_ptr<Store> {
      return std::make_unique<StoreWrapper>(*locked);
    };
    std::cerr << "onejob serve: WARNING: the memory store keeps nothing across restarts: every "
                 "job is gone when this process stops. Use --store postgres=URI to keep them.\n";
  }

  // SIGTERM and SIGINT are taken by sigwait below, on this thread: blocked here, before any
  // thread starts, so every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const std::string address = options.address;
  const unsigned short port = options.port;
  const auto grace = options.shutdown_grace;
  std::unique_ptr<Service> service;
  try {
    service = std::make_unique<Service>(std::move(options), std::cerr);
  } catch (const StoreError& error) {
    return bad_input("--store ", choice.describe(), ": ", error.what());
  } catch (const std::system_error& error) {
    return bad_input("serve: cannot listen on ", address, ":", port, ": ", error.what());
  }
  service->start();
  std::cout << "onejob serve: listening on http://" << address << ":" << service->port() << " ("
            << choice.describe() << " store)" << std::endl;
  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::cout << "onejob serve: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT")
            << ": stopping (at most " << grace.count() << " ms)" << std::endl;
  const bool in_time = service->stop();
  std::cout << "onejob serve: stopped" << (in_time ? "" : " (work cut off at the grace)")
            << std::endl;
  return in_time ? kExitPass : kExitFail;
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  auto* command = app.add_subcommand(
      "serve",
      "Run the reference system as an HTTP/1.1 service on real time: the job API, workers, the "
      "reconciler and the certifier on threads of their own, providers over HTTP, bearer "
      "tokens, /healthz, /readyz, /metrics and JSON logs on stderr. Stops gracefully on "
      "SIGTERM or SIGINT.");
  command->add_option("--config", flags->config, "YAML config file (README: onejob serve)")
      ->type_name("FILE");
  command->add_option("--listen", flags->listen,
                      "HOST:PORT to listen on (default 127.0.0.1:8080; port 0: any)");
  command->add_option("--store", flags->store,
                      "memory (default; keeps nothing), postgres or postgres=URI");
  add_pg_timeouts_flag(*command, flags->pg_timeouts);
  command->add_option("--schema", flags->schema,
                      "PostgreSQL schema (default onejob), migrated on start");
  command
      ->add_option("--tokens", flags->tokens,
                   "Tokens file: lines \"sha256:HEX PRINCIPAL [operator]\" (hash a token with "
                   "printf %s TOKEN | sha256sum)")
      ->type_name("FILE");
  command->add_option("--api-threads", flags->api_threads, "API threads (default 2)")
      ->check(CLI::Range(1, 256));
  command
      ->add_option("--workers", flags->workers,
                   "Worker threads (default 2); 0 with --store postgres: an API-only process, "
                   "whose jobs the workers of other processes on the same schema run")
      ->check(CLI::Range(0, 256));
  command->add_option("--provider", flags->providers,
                      "A provider NAME=http://HOST:PORT[/PATH] (repeatable)");
  command
      ->add_option("--certify", flags->certify,
                   "Certify this provider at start and hourly (repeatable; a comma-separated "
                   "list works too)")
      ->delimiter(',');
  add_defect_option(*command, flags->defects);
  command
      ->add_option("--shutdown-grace", flags->shutdown_grace,
                   "Seconds a stop waits for requests in flight and the loops (default 10)")
      ->check(CLI::Range(0.0, 3600.0));
  command->add_flag("--no-logs", flags->no_logs, "No JSON event lines on stderr");
  command->add_flag("--no-listen", flags->no_listen,
                    "With --store postgres: do not carry work rings between processes over "
                    "LISTEN/NOTIFY (e.g. behind a pooler that does not support LISTEN); the "
                    "workers of other processes then find new jobs at their idle poll");
  command->footer(
      "Exit codes: 0 stopped within the grace; 1 stopped with work cut off; 2 bad flags, config, "
      "tokens, address or store; 3 a bug in onejob itself.");
  return {command, [flags] { return serve(*flags); }};
}

}  // namespace onejob::cli
