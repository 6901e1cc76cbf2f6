#include "harness/cli/probe_command.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "harness/check/black_box.hpp"
#include "harness/check/black_box_jsonl.hpp"
#include "harness/cli/scenario_files.hpp"
#include "harness/real/probe.hpp"
#include "harness/real/target_profile.hpp"
#include "harness/report/black_box_timeline.hpp"
#include "harness/report/report.hpp"
#include "harness/scenario/yaml_reader.hpp"

namespace onejob::cli {
namespace {

namespace fs = std::filesystem;
using real::ProbeResult;

// "http://HOST:PORT" (a path after it is refused: routes come from the profile).
bool parse_target(const std::string& url, std::string& host, std::string& port) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) return false;
  std::string rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || rest.find('/') != std::string::npos) return false;
  host = rest.substr(0, colon);
  port = rest.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  for (const char c : port) {
    if (c < '0' || c > '9') return false;
  }
  const int number = std::stoi(port);
  return number >= 0 && number <= 65535;
}

void print_result(const ProbeResult& result, const std::string& history_path) {
  std::cout << (result.passed() ? "PASS " : "FAIL ") << result.name << "  (" << result.requests
            << " requests, " << result.acknowledged << " acknowledged creates, "
            << result.executions << " provider executions, ";
  std::ostringstream seconds;
  seconds.precision(1);
  seconds << std::fixed << result.seconds;
  std::cout << seconds.str() << " s)\n";
  if (!result.setup_error.empty()) std::cout << "  could not run: " << result.setup_error << "\n";
  for (const auto& finding : result.findings) {
    std::cout << "  " << (check::black_box::is_safety(finding) ? "" : "availability: ")
              << finding.clause << ": " << finding.message << " (history "
              << check::black_box::evidence_lines(finding) << ")\n";
  }
  for (const auto& failure : result.expectation_failures)
    std::cout << "  expectation: " << failure << "\n";
  for (const auto& note : result.notes) std::cout << "  note: " << note << "\n";
  if (!result.passed() && !result.jsonl.empty()) {
    std::cout << "  history: " << history_path << " (judge it again: onejob check "
              << report::shell_quote(history_path) << ")\n";
  }
}

nlohmann::ordered_json result_json(const ProbeResult& result, const std::string& history_path) {
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const auto& finding : result.findings) {
    findings.push_back(check::black_box::finding_json(finding));
  }
  return {{"name", result.name},
          {"file", result.file},
          {"passed", result.passed()},
          {"safe", result.safe()},
          {"setup_error", result.setup_error},
          {"requests", result.requests},
          {"acknowledged", result.acknowledged},
          {"executions", result.executions},
          {"target_starts", result.target_starts},
          {"seconds", result.seconds},
          {"history", history_path},
          {"findings", findings},
          {"expectation_failures", result.expectation_failures},
          {"notes", result.notes}};
}

std::string junit(const std::vector<ProbeResult>& results) {
  int failures = 0;
  for (const auto& result : results) failures += result.passed() ? 0 : 1;
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"onejob probe\" tests=\"" +
      std::to_string(results.size()) + "\" failures=\"" + std::to_string(failures) + "\">\n";
  for (const auto& result : results) {
    xml += "  <testcase classname=\"probe\" name=\"" + report::xml_escape(result.name) +
           "\" time=\"" + std::to_string(result.seconds) + "\"";
    if (result.passed()) {
      xml += "/>\n";
      continue;
    }
    std::string text = result.setup_error;
    for (const auto& finding : result.findings) {
      if (check::black_box::is_safety(finding))
        text += finding.clause + ": " + finding.message + "\n";
    }
    for (const auto& failure : result.expectation_failures) text += failure + "\n";
    xml += ">\n    <failure message=\"" +
           report::xml_escape(result.setup_error.empty() ? "a promise broke" : "could not run") +
           "\">" + report::xml_escape(text) + "</failure>\n  </testcase>\n";
  }
  return xml + "</testsuite>\n";
}

}  // namespace

const std::vector<std::string>& conformance_suite() {
  static const std::vector<std::string> suite{
      "double_click.yaml",           "double_click_20.yaml",
      "same_key_two_owners.yaml",    "key_reused_with_other_payload.yaml",
      "key_reordered_payload.yaml",  "response_swallowed_client_retry.yaml",
      "provider_never_answers.yaml", "reverse_order_completion.yaml",
      "owner_b_probes_owner_a.yaml", "duplicate_provider_delivery.yaml",
  };
  return suite;
}

int probe_command(const ProbeFlags& flags) {
  real::ProbeOptions options;
  if (!parse_target(flags.target, options.host, options.port)) {
    return bad_input("--target: expected http://HOST:PORT, found \"", flags.target, "\"");
  }
  if (options.port == "0" && flags.target_cmd.empty()) {
    return bad_input(
        "--target: port 0 (a free port per run) needs --target-cmd to start the "
        "target on it");
  }
  if (!(flags.time_scale > 0 && flags.time_scale <= 1000)) {
    return bad_input("--time-scale: expected a number above 0 and at most 1000, found ",
                     flags.time_scale);
  }
  const auto settle = scenario::parse_duration(flags.settle);
  if (!settle || *settle > std::chrono::hours(1)) {
    return bad_input("--settle: expected a duration such as 10s or 500ms, at most 1h, found \"",
                     flags.settle, "\"");
  }
  options.settle = std::chrono::duration_cast<std::chrono::milliseconds>(*settle);
  const auto observe = scenario::parse_duration(flags.observe_every);
  if (!observe || *observe > std::chrono::hours(1)) {
    return bad_input(
        "--observe-every: expected a duration such as 200ms or 0s (never), at most "
        "1h, found \"",
        flags.observe_every, "\"");
  }
  options.observe_every = std::chrono::duration_cast<std::chrono::milliseconds>(*observe);
  options.time_scale = flags.time_scale;
  options.target_cmd = flags.target_cmd;
  if (!flags.store_upstream.empty() && !flags.store_upstream.starts_with("/")) {
    const auto colon = flags.store_upstream.rfind(':');
    const std::string port =
        colon == std::string::npos ? "" : flags.store_upstream.substr(colon + 1);
    if (colon == 0 || port.empty() || port.size() > 5 ||
        !std::ranges::all_of(port, [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoi(port) == 0 || std::stoi(port) > 65535) {
      return bad_input("--store-upstream: expected HOST:PORT or a Unix socket's path, found \"",
                       flags.store_upstream, "\"");
    }
  }
  if (!flags.store_upstream.empty()) {
    if (flags.target_cmd.find("{store}") == std::string::npos) {
      return bad_input(
          "--store-upstream: --target-cmd must point the target at {store}, the proxy's address");
    }
  } else if (flags.target_cmd.find("{store}") != std::string::npos) {
    return bad_input("--target-cmd: {store} needs --store-upstream HOST:PORT (the real store)");
  }
  options.store_upstream = flags.store_upstream;
  options.expectations = !flags.no_expect;
  if (!flags.profile.empty()) {
    try {
      options.profile = real::load_profile_file(flags.profile);
    } catch (const scenario::ScenarioError& error) {
      return bad_input(error.what());
    }
  }
  std::vector<std::string> paths = flags.scenarios;
  if (!flags.suite.empty()) {
    if (flags.suite != "conformance") {
      return bad_input("--suite: expected conformance, found \"", flags.suite, "\"");
    }
    for (const auto& name : conformance_suite()) paths.push_back(default_catalogue() + "/" + name);
  }
  if (paths.empty())
    return bad_input("probe: name scenario files or folders, or --suite conformance");
  std::optional<std::vector<scenario::ScenarioSpec>> specs;
  try {
    specs = load_all(find_scenario_files(paths));
  } catch (const scenario::ScenarioError& error) {
    return bad_input(error.what());
  }
  if (!specs) return kExitBadInput;
  std::error_code error;
  fs::create_directories(flags.report_dir, error);
  if (error)
    return bad_input("--report-dir: cannot create ", flags.report_dir, ": ", error.message());
  options.log_dir = flags.report_dir;

  std::vector<ProbeResult> results;
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  int passed = 0;
  bool setup_failed = false;
  const std::string run_tag =
      std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count() % 1'000'000'000);
  for (std::uint64_t round = 1; round <= flags.repeat; ++round) {
    for (const auto& spec : *specs) {
      if (flags.key_prefix == "auto") {
        options.key_prefix = "p" + run_tag + "-" + std::to_string(results.size() + 1) + "-";
      } else if (flags.key_prefix != "none") {
        options.key_prefix = flags.key_prefix;
      }
      ProbeResult result = real::probe_scenario(spec, options);
      const std::string suffix = flags.repeat > 1 ? "." + std::to_string(round) : "";
      const std::string history = flags.report_dir + "/" + spec.name + suffix + ".history.jsonl";
      if (!result.jsonl.empty()) {
        report::write_file(history, result.jsonl);
        const std::string page = flags.report_dir + "/" + spec.name + suffix + ".timeline.html";
        report::write_file(page, report::black_box_timeline_html(result.history, result.findings,
                                                                 "onejob probe: " + spec.name));
      }
      print_result(result, history);
      passed += result.passed() ? 1 : 0;
      setup_failed = setup_failed || !result.setup_error.empty();
      runs.push_back(result_json(result, history));
      results.push_back(std::move(result));
    }
  }
  std::cout << passed << "/" << results.size() << " probe runs passed against " << flags.target
            << " (profile " << options.profile.name << ")\n";
  report::write_file(flags.report_dir + "/probe.json",
                     nlohmann::ordered_json{{"target", flags.target},
                                            {"profile", options.profile.name},
                                            {"time_scale", flags.time_scale},
                                            {"runs", runs}}
                             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                         "\n");
  report::write_file(flags.report_dir + "/probe.junit.xml", junit(results));
  if (setup_failed && passed == 0) return kExitBadInput;
  return passed == static_cast<int>(results.size()) ? kExitPass : kExitFail;
}

Command add_probe_command(CLI::App& app) {
  auto flags = std::make_shared<ProbeFlags>();
  auto* probe = app.add_subcommand(
      "probe",
      "Run scenarios' timelines in real time against a live job API over HTTP: each client "
      "through a fault proxy (the scenario's client faults), the providers served as stubs (their "
      "scripted outcomes; their record is the ground truth of side effects), node faults as kill "
      "-9, restart and SIGSTOP of a target started with --target-cmd; then judge the history by "
      "the black-box rules (the same as 'onejob check') and the scenario's response expectations.");
  probe->add_option("scenarios", flags->scenarios, "Scenario files or folders");
  probe->add_option(
      "--suite", flags->suite,
      "A ready-made suite: conformance (the article's fractures, from the catalogue)");
  probe->add_option("--target", flags->target, "The job API, http://HOST:PORT")->required();
  probe
      ->add_option("--profile", flags->profile,
                   "How the target's API is spoken to (YAML; default: onejob serve's, "
                   "harness/real/onejob-serve.profile.yaml)")
      ->check(non_empty_path());
  probe->add_option("--time-scale", flags->time_scale,
                    "Scenario seconds per real second (default 1; 10 runs a 60 s story in 6 s)");
  probe->add_option("--target-cmd", flags->target_cmd,
                    "Start the target with this shell command (and kill -9, restart, SIGSTOP it "
                    "at the scenario's node faults); {port}, {stub:NAME}, {stubs} (NAME=URL ...), "
                    "{certified} (NAME,...) and {config} (an 'onejob serve' config file with the "
                    "scenario's policy, time-scaled, and its providers at the stubs) and {store} "
                    "(see --store-upstream) are replaced. With --target http://127.0.0.1:0 each "
                    "run gets a free port");
  probe->add_option("--store-upstream", flags->store_upstream,
                    "HOST:PORT (or a Unix socket's path) of the target's store, e.g. its "
                    "PostgreSQL: the probe proxies it "
                    "at {store} in --target-cmd and applies the scenario's faults between the "
                    "target and its store there (a lost message closes its connection)");
  probe->add_option("--settle", flags->settle,
                    "After the faults, how long acknowledged jobs are read until they finish "
                    "(default 10s)");
  probe->add_option("--observe-every", flags->observe_every,
                    "While the timeline runs, read every acknowledged job this often, real time "
                    "(default 200ms; 0s: only the scenario's reads), so a result that changes is "
                    "seen changing");
  probe->add_option("--repeat", flags->repeat, "Run everything this many times (default 1)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000}));
  probe->add_option("--key-prefix", flags->key_prefix,
                    "Tag every idempotency key: auto (default; unique per run, so runs against "
                    "one database never share keys), none (the scenario's keys as written), or "
                    "this text. An empty key stays empty and a long key keeps its length");
  probe->add_flag("--no-expect", flags->no_expect,
                  "Judge the black-box rules only, not the scenarios' expected responses");
  add_report_dir_option(*probe, flags->report_dir,
                        "histories (NAME.history.jsonl), their pages (NAME.timeline.html), "
                        "probe.json, probe.junit.xml and the target's output");
  probe->footer(
      "Exit codes: 0 every run safe and as expected (availability findings are printed apart); 1 "
      "a black-box rule broken or an expectation unmet; 2 bad input, or no run could be made "
      "(target unreachable or not started); 3 a bug in onejob itself.");
  return {probe, [flags] { return probe_command(*flags); }};
}

}  // namespace onejob::cli
