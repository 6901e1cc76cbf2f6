// `onejob fuzz` and `onejob merge`: a campaign of generated cases, and the totals of several.
#include "harness/cli/fuzz_command.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string_view>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/check/marks.hpp"
#include "harness/cli/defect_flags.hpp"
#include "harness/cli/exit_codes.hpp"
#include "harness/cli/flags.hpp"
#include "harness/cli/store_flag.hpp"
#include "harness/fuzz/campaign.hpp"
#include "harness/fuzz/campaign_report.hpp"
#include "harness/report/report.hpp"
#include "harness/report/timeline.hpp"
#include "harness/scenario/yaml_reader.hpp"
#include "harness/scenario/yaml_writer.hpp"

namespace onejob::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

}  // namespace

std::optional<std::string> parse_shard(const std::string& text, std::uint64_t& shard,
                                       std::uint64_t& shards) {
  const auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used = 0;
    shard = std::stoull(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("trailing");
    shards = std::stoull(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    return "--shard: expected i/n, e.g. 1/4, found \"" + text + "\"";
  }
  if (shards == 0 || shard == 0 || shard > shards) {
    return "--shard: expected 1 <= i <= n, found \"" + text + "\"";
  }
  return std::nullopt;
}

std::optional<std::string> resolve_auto_shard(const Environment& env, std::string& shard,
                                              std::string& source) {
  struct Scheme {
    const char* index;
    const char* count;
    int base;  // the index of the first shard: 0 or 1
  };
  // Kubernetes Indexed Jobs set JOB_COMPLETION_INDEX; the count is the Job's completions, which
  // no variable carries, so the manifest passes it as ONEJOB_SHARDS. Then the CI systems that
  // split a job themselves: GitLab (parallel:), CircleCI (parallelism:), Buildkite (parallelism:).
  static constexpr Scheme kSchemes[] = {
      {"JOB_COMPLETION_INDEX", "ONEJOB_SHARDS", 0},
      {"CI_NODE_INDEX", "CI_NODE_TOTAL", 1},
      {"CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0},
      {"BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0},
  };
  const auto number = [](const char* text, std::uint64_t& out) {
    if (text == nullptr || *text == '\0') return false;
    const std::string_view digits{text};
    if (!std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; })) return false;
    if (digits.size() > 18) return false;
    out = std::stoull(std::string{digits});
    return true;
  };
  for (const auto& scheme : kSchemes) {
    const char* index_text = env(scheme.index);
    if (index_text == nullptr) continue;
    const char* count_text = env(scheme.count);
    std::uint64_t index = 0;
    std::uint64_t count = 0;
    if (!number(index_text, index)) {
      return std::string{"--shard auto: "} + scheme.index + "=\"" + index_text +
             "\" is not a shard index";
    }
    if (count_text == nullptr) {
      return std::string{"--shard auto: "} + scheme.index + " is set but " + scheme.count +
             " (how many shards there are) is not";
    }
    if (!number(count_text, count) || count == 0) {
      return std::string{"--shard auto: "} + scheme.count + "=\"" + count_text +
             "\" is not a number of shards";
    }
    if (index < static_cast<std::uint64_t>(scheme.base) || index - scheme.base >= count) {
      return std::string{"--shard auto: "} + scheme.index + "=" + index_text +
             " is out of range for " + scheme.count + "=" + count_text;
    }
    shard = std::to_string(index - scheme.base + 1) + "/" + std::to_string(count);
    source = std::string{scheme.index} + "=" + index_text + ", " + scheme.count + "=" + count_text;
    return std::nullopt;
  }
  return std::string{
      "--shard auto: no shard in the environment (looked for JOB_COMPLETION_INDEX with "
      "ONEJOB_SHARDS, CI_NODE_INDEX with CI_NODE_TOTAL, CIRCLE_NODE_INDEX with CIRCLE_NODE_TOTAL, "
      "BUILDKITE_PARALLEL_JOB with BUILDKITE_PARALLEL_JOB_COUNT)"};
}

// `--jobs N`: one process per job, each running every N-th case of this shard (so the jobs of
// one run, like shards, never overlap), then one merged report. Each job stops at its own first
// failure; the report names the failure with the smallest case index first.
int run_jobs(const FuzzFlags& flags, std::uint64_t shard, std::uint64_t shards) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<pid_t> children;
  std::vector<std::string> dirs;
  for (int job = 1; job <= flags.jobs; ++job) {
    FuzzFlags child = flags;
    child.jobs = 1;
    child.job_number = job;
    child.shard = std::to_string(shard + shards * static_cast<std::uint64_t>(job - 1)) + "/" +
                  std::to_string(shards * static_cast<std::uint64_t>(flags.jobs));
    child.report_dir = (fs::path(flags.report_dir) / "jobs" / std::to_string(job)).string();
    dirs.push_back(child.report_dir);
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) _exit(fuzz_command(child));
    if (pid < 0) {
      std::perror("onejob: fork");
      return kExitBadInput;
    }
    children.push_back(pid);
  }
  int worst = kExitPass;
  for (const pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitBadInput;
    if (code == kExitBadInput || (code == kExitFail && worst == kExitPass)) worst = code;
  }
  if (worst == kExitBadInput) return kExitBadInput;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return merge_command({.dirs = dirs, .report_dir = flags.report_dir}, seconds);
}

int fuzz_command(const FuzzFlags& flags) {
  keep_freed_memory();
  if (flags.report_dir.empty()) {
    return bad_input("--report-dir: expected a folder, found an empty path");
  }
  if (flags.jobs < 1 || flags.jobs > 256) {
    return bad_input("--jobs: expected 1 to 256, found ", flags.jobs);
  }
  Defects defects;
  if (auto problem = parse_defects(flags.defects, defects)) {
    return bad_input(*problem);
  }
  StoreChoice store;
  if (auto problem = parse_pg_timeouts(flags.pg_timeouts, store)) {
    return bad_input(*problem);
  }
  if (auto problem = parse_store(flags.store, store)) {
    return bad_input(*problem);
  }
  if (auto problem = store_defect_problem(store, defects)) {
    return bad_input(*problem);
  }
  std::optional<fuzz::CaseId> exact;
  if (!flags.reproduce.empty()) {
    std::string problem;
    exact = fuzz::parse_case_id(flags.reproduce, problem);
    if (!exact) {
      return bad_input("--reproduce: ", problem);
    }
  } else if (flags.only_case) {
    exact = fuzz::CaseId{flags.seed, *flags.only_case, {}};
  }
  if (flags.show) {
    auto spec = exact ? fuzz::generate_case(*exact) : std::nullopt;
    if (!spec) {
      return bad_input("--show: ",
                       (exact ? "the shrink path of \"" + flags.reproduce + "\" leads nowhere"
                              : std::string("needs --case or --reproduce")));
    }
    std::fputs(scenario::to_yaml(fuzz::as_campaign_runs(std::move(*spec), defects),
                                 "onejob fuzz --reproduce " + fuzz::to_string(*exact) +
                                     report::defect_flags(defects))
                   .c_str(),
               stdout);
    return kExitPass;
  }
  if (!flags.reproduce.empty() && !fuzz::generate_case(*exact)) {
    return bad_input("--reproduce: the shrink path of \"", flags.reproduce,
                     "\" leads nowhere (another build, or a mistyped id)");
  }
  if (auto problem = check_store(store)) {
    return bad_input(*problem);
  }
  fuzz::CampaignOptions options;
  options.defects = defects;
  options.make_store = store_factory(store);
  options.seed = exact ? exact->seed : flags.seed;
  options.cases = flags.cases;
  options.only_case = flags.only_case;
  if (!flags.reproduce.empty()) options.exact = exact;
  if (options.only_case) options.cases = *options.only_case + 1;
  std::string shard_text = flags.shard;
  if (shard_text == "auto") {
    std::string source;
    if (auto problem =
            resolve_auto_shard([](const char* name) -> const char* { return std::getenv(name); },
                               shard_text, source)) {
      return bad_input(*problem);
    }
    std::fprintf(stderr, "fuzz: shard %s (from %s)\n", shard_text.c_str(), source.c_str());
  }
  if (auto problem = parse_shard(shard_text, options.shard, options.shards)) {
    return bad_input(*problem);
  }
  std::optional<Duration> budget;
  if (!flags.time_budget.empty()) {
    budget = scenario::parse_duration(flags.time_budget);
    if (!budget || *budget <= Duration(0)) {
      return bad_input(
          "--time-budget: expected a duration above 0, such as 90s, 10m or 2h, found \"",
          flags.time_budget, "\"");
    }
  }
  if (flags.jobs > 1 && !flags.only_case && !options.exact)
    return run_jobs(flags, options.shard, options.shards);
  // Wall time is read here only: it decides when to stop and what to print, never what a case
  // does.
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&started] { return std::chrono::steady_clock::now() - started; };
  if (budget) {
    options.should_stop = [&elapsed, &budget] {
      return elapsed() >= std::chrono::duration_cast<std::chrono::steady_clock::duration>(*budget);
    };
  }
  auto last_print = started;
  options.on_progress = [&](std::uint64_t cases, std::size_t marks, std::size_t failures) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_print < std::chrono::seconds(1) && failures == 0) return;
    last_print = now;
    const double seconds = std::chrono::duration<double>(elapsed()).count();
    const std::string job =
        flags.job_number ? " [job " + std::to_string(*flags.job_number) + "]" : "";
    std::fprintf(stderr, "fuzz%s: %llu cases, %.0f cases/s, marks %zu/%zu, violations %zu\n",
                 job.c_str(), static_cast<unsigned long long>(cases),
                 seconds > 0 ? cases / seconds : 0.0, marks, check::all_marks().size(), failures);
  };

  const auto result = fuzz::run_campaign(options);
  const double seconds = std::chrono::duration<double>(elapsed()).count();

  const fs::path dir = flags.report_dir;
  ordered_json summary;
  try {
    summary = fuzz::write_campaign_report(dir, options, flags.defects, result);
  } catch (const std::exception& error) {
    return bad_input("cannot write reports to ", dir.string(), ": ", error.what());
  }

  if (flags.job_number) return result.failures.empty() ? kExitPass : kExitFail;
  std::printf("fuzz: %llu cases in %.1f s (%.0f cases/s), seed %llu, shard %s\n",
              static_cast<unsigned long long>(result.cases_run), seconds,
              seconds > 0 ? result.cases_run / seconds : 0.0,
              static_cast<unsigned long long>(options.seed),
              summary["shard"].get<std::string>().c_str());
  std::printf("marks reached: %zu/%zu\n", summary["marks"]["reached"].get<std::size_t>(),
              check::all_marks().size());
  if (!summary["marks"]["never_reached"].empty()) {
    std::string never;
    for (const auto& mark : summary["marks"]["never_reached"]) {
      never += (never.empty() ? "" : ", ") + mark.get<std::string>();
    }
    std::printf("never reached: %s\n", never.c_str());
  }
  for (std::size_t i = 0; i < result.failures.size(); ++i) {
    const auto& failure = result.failures[i];
    std::printf(
        "FAIL  case %llu: [%s] %s\n      %s\n      repro: %s (trace=%s; 'onejob run' it, no flags "
        "needed)\n      reproduce: %s\n",
        static_cast<unsigned long long>(failure.case_index), failure.rule.c_str(),
        failure.message.c_str(), fuzz::shrink_story(failure).c_str(),
        summary["failures"][i]["repro"].get<std::string>().c_str(),
        failure.shrunk_run.trace_hash.c_str(),
        summary["failures"][i]["reproduce"].get<std::string>().c_str());
  }
  std::printf("reports: %s/summary.json, junit.xml%s\n", dir.string().c_str(),
              result.failures.empty() ? "" : ", repro/, traces/, html/");
  return result.failures.empty() ? kExitPass : kExitFail;
}

int merge_command(const MergeFlags& flags, std::optional<double> seconds) {
  if (flags.report_dir.empty()) {
    return bad_input("--report-dir: expected a folder, found an empty path");
  }
  ordered_json merged;
  try {
    merged = fuzz::merge_campaign_reports(flags.dirs, flags.report_dir);
  } catch (const std::exception& error) {
    return bad_input(error.what());
  }
  const auto cases = merged["cases_run"].get<std::uint64_t>();
  const auto& failures = merged["failures"];
  if (seconds) {
    std::printf("fuzz: %llu cases in %.1f s (%.0f cases/s), %zu jobs\n",
                static_cast<unsigned long long>(cases), *seconds,
                *seconds > 0 ? static_cast<double>(cases) / *seconds : 0.0, flags.dirs.size());
    std::printf("marks reached: %zu/%zu\n", merged["marks"]["reached"].get<std::size_t>(),
                check::all_marks().size());
    for (const auto& failure : failures) {
      std::printf("FAIL  case %llu: [%s] %s\n      repro: %s\n",
                  static_cast<unsigned long long>(failure.value("case", std::uint64_t{0})),
                  failure.value("rule", "").c_str(), failure.value("message", "").c_str(),
                  failure.value("repro", "").c_str());
    }
  } else {
    std::printf("merged %zu campaigns: %llu cases, %zu violations, marks reached %zu/%zu\n",
                flags.dirs.size(), static_cast<unsigned long long>(cases), failures.size(),
                merged["marks"]["reached"].get<std::size_t>(), check::all_marks().size());
  }
  std::printf("report: %s/summary.json\n", flags.report_dir.c_str());
  return failures.empty() ? kExitPass : kExitFail;
}

Command add_fuzz_command(CLI::App& app) {
  auto flags = std::make_shared<FuzzFlags>();
  auto* fuzz = app.add_subcommand(
      "fuzz",
      "Generate whole scenarios (topology, clients, keys and bodies, provider scripts, operator "
      "actions, faults, then a quiet phase), run them, and check every invariant and that every "
      "request is answered after the quiet phase. The first failing case is shrunk to the "
      "smallest story that still breaks the same rule and written as REPORT_DIR/repro/NAME.yaml, "
      "which 'onejob run' and 'onejob replay' reproduce.");
  fuzz->add_option("--cases", flags->cases, "How many cases the campaign has")
      ->check(positive64())
      ->capture_default_str();
  auto* seed = fuzz->add_option("--seed", flags->seed, "The campaign's seed (unsigned 64-bit)")
                   ->check(unsigned64())
                   ->capture_default_str();
  fuzz->add_option("--time-budget", flags->time_budget,
                   "Stop after this much wall time, e.g. 90s, 10m, 2h (default: no limit)");
  fuzz->add_option("--shard", flags->shard,
                   "Run shard i of n: the cases whose index is i-1 modulo n (case k depends only "
                   "on the build, the seed and k, so shards never overlap). 'auto' reads it from "
                   "the environment: a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with "
                   "ONEJOB_SHARDS), GitLab (CI_NODE_INDEX/CI_NODE_TOTAL), CircleCI "
                   "(CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL) or Buildkite "
                   "(BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT)")
      ->capture_default_str();
  fuzz->add_option("--jobs", flags->jobs,
                   "Processes to run the cases in (each takes every N-th case; one merged report)")
      ->capture_default_str();
  auto* only_case =
      fuzz->add_option("--case", flags->only_case, "Run (and shrink) only this case index")
          ->check(unsigned64());
  // The id names its seed and case: given beside it, --seed or --case would be ignored.
  fuzz->add_option("--reproduce", flags->reproduce,
                   "Run exactly the case with this id (SEED:CASE[:P.P.P], printed with every "
                   "failure: the shrunk case, rebuilt without searching)")
      ->excludes(only_case)
      ->excludes(seed);
  fuzz->add_flag("--show", flags->show,
                 "With --case or --reproduce: print that case as a scenario file (YAML) instead "
                 "of running it");
  add_defect_option(*fuzz, flags->defects);
  add_pg_timeouts_flag(*fuzz, flags->pg_timeouts);
  fuzz->add_option("--store", flags->store,
                   "memory, postgres or postgres=URI: the store every case runs on (on "
                   "PostgreSQL one schema per process, emptied before each case)")
      ->capture_default_str();
  add_report_dir_option(*fuzz, flags->report_dir,
                        "Where to write summary.json, junit.xml, repro/ and traces/");
  fuzz->footer(
      "Progress goes to stderr every second (cases/s, marks reached, violations).\n"
      "Exit codes: 0 no violation; 1 a violation (its repro path is printed); 2 bad input;\n"
      "3 a bug in onejob itself.");

  return {fuzz, [flags] { return fuzz_command(*flags); }};
}

Command add_merge_command(CLI::App& app) {
  auto flags = std::make_shared<MergeFlags>();
  auto* merge = app.add_subcommand(
      "merge", "Combine the summaries of several fuzz campaigns (e.g. shards) into one.");
  merge->add_option("dirs", flags->dirs, "Report folders of 'onejob fuzz' runs")
      ->required()
      ->check(non_empty_path());
  add_report_dir_option(*merge, flags->report_dir, "Where to write the merged summary.json");
  merge->footer(
      "Exit codes: 0 merged, and no campaign found a violation; 1 merged, and at least one did\n"
      "(each is listed with its repro); 2 bad input (a folder without a fuzz summary.json, bad\n"
      "flags); 3 a bug in onejob itself.");

  return {merge, [flags] { return merge_command(*flags); }};
}

}  // namespace onejob::cli
