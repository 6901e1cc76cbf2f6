#include "harness/cli/check_command.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "harness/check/black_box.hpp"
#include "harness/check/black_box_jsonl.hpp"
#include "harness/report/black_box_timeline.hpp"
#include "harness/report/report.hpp"

namespace onejob::cli {
namespace {

using check::black_box::Finding;

void print_text(const std::string& path, const check::black_box::History& history,
                const std::vector<Finding>& findings) {
  std::cout << path << ": " << history.requests.size() << " requests, " << history.responses.size()
            << " responses, " << history.executions.size() << " provider executions\n";
  for (const auto& rule : check::black_box::all_rules()) {
    int broken = 0;
    for (const auto& finding : findings) broken += finding.rule == rule.id ? 1 : 0;
    std::string id(rule.id);
    id.resize(std::max<std::size_t>(id.size(), 3), ' ');  // B1 and B10 in one column
    std::cout << "  " << id << " " << (broken == 0 ? "ok      " : "BROKEN  ") << rule.promise
              << "\n";
    for (const auto& finding : findings) {
      if (finding.rule != rule.id) continue;
      std::cout << "        " << finding.clause << ": " << finding.message << " ("
                << check::black_box::evidence_lines(finding) << ")\n";
    }
  }
  int unavailable = 0;
  for (const auto& finding : findings) {
    if (check::black_box::is_safety(finding)) continue;
    if (unavailable++ == 0) std::cout << "  availability (reported apart from safety):\n";
    std::cout << "        " << finding.clause << ": " << finding.message << " ("
              << check::black_box::evidence_lines(finding) << ")\n";
  }
  if (unavailable == 0)
    std::cout << "  availability: every request after the quiet phase answered\n";
}

nlohmann::ordered_json as_json(const std::string& path, const std::vector<Finding>& findings) {
  nlohmann::ordered_json out = {{"history", path}, {"findings", nlohmann::ordered_json::array()}};
  bool safe = true;
  for (const auto& finding : findings) {
    safe = safe && !check::black_box::is_safety(finding);
    out["findings"].push_back(check::black_box::finding_json(finding));
  }
  out["safe"] = safe;
  return out;
}

}  // namespace

int check_command(const CheckFlags& flags) {
  int status = kExitPass;
  for (const auto& path : flags.histories) {
    check::black_box::History history;
    try {
      history = check::black_box::read_jsonl_file(path);
    } catch (const check::black_box::HistoryError& error) {
      return bad_input(error.what());
    }
    const auto findings = check::black_box::judge(history);
    if (!flags.html_dir.empty()) {
      const std::filesystem::path page = std::filesystem::path(flags.html_dir) /
                                         (std::filesystem::path(path).stem().string() + ".html");
      try {
        std::filesystem::create_directories(flags.html_dir);
        report::write_file(page, report::black_box_timeline_html(history, findings, path));
      } catch (const std::exception& error) {
        return bad_input("--html: ", error.what());
      }
    }
    if (flags.json) {
      std::cout
          << as_json(path, findings).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
          << "\n";
    } else {
      print_text(path, history, findings);
    }
    for (const auto& finding : findings) {
      if (check::black_box::is_safety(finding)) status = kExitFail;
    }
  }
  return status;
}

Command add_check_command(CLI::App& app) {
  auto flags = std::make_shared<CheckFlags>();
  auto* check = app.add_subcommand(
      "check",
      "Judge black-box histories (JSON Lines of client requests, the answers they got and the "
      "provider executions, as harness/README.md documents them) by the black-box rules B1..B17: "
      "one job per key, reused keys refused, one execution at a time, one result that never "
      "changes, results that providers produced, each provider key executed once, no timeout "
      "shown as failure, nothing acknowledged lost, an operator key for one request, jobs "
      "that stay their owner's, failover only to a certified provider, failures declared "
      "retryable, attempts within the declared limit, live attempts cancellable, finished "
      "attempts never live again.");
  check->add_option("history", flags->histories, "History files (JSON Lines)")
      ->required()
      ->check(non_empty_path());
  check->add_flag("--json", flags->json, "One JSON object per history instead of text");
  check
      ->add_option("--html", flags->html_dir,
                   "Also write a page per history (lanes per client and provider, the findings "
                   "outlined) to DIR/NAME.html")
      ->check(non_empty_path());
  check->footer(
      "Exit codes: 0 every safety rule holds (availability findings are printed, apart); 1 a "
      "rule is broken; 2 bad input (an unreadable file, a malformed line: FILE:LINE[:COL], a file "
      "that records nothing); 3 a bug in onejob itself.");
  return {check, [flags] { return check_command(*flags); }};
}

}  // namespace onejob::cli
