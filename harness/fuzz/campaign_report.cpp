#include "harness/fuzz/campaign_report.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "harness/check/marks.hpp"
#include "harness/report/report.hpp"
#include "harness/report/timeline.hpp"

namespace onejob::fuzz {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

ordered_json size_json(const CaseSize& size) {
  return {{"steps", size.steps}, {"nodes", size.nodes}, {"faults", size.faults}};
}

ordered_json marks_json(const check::MarkCounts& marks) {
  ordered_json reached = ordered_json::object();
  ordered_json never = ordered_json::array();
  for (const auto& mark : check::all_marks()) {
    auto found = marks.find(std::string(mark.name));
    if (found == marks.end()) {
      never.push_back(mark.name);
    } else {
      reached[std::string(mark.name)] = found->second;
    }
  }
  return {{"reached", reached.size()},
          {"total", check::all_marks().size()},
          {"counts", reached},
          {"never_reached", never}};
}

std::string junit(const ordered_json& summary) {
  const bool failed = !summary["failures"].empty();
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += std::string("<testsuites tests=\"1\" failures=\"") + (failed ? "1" : "0") + "\">\n";
  out += std::string("  <testsuite name=\"onejob.fuzz\" tests=\"1\" failures=\"") +
         (failed ? "1" : "0") + "\">\n";
  out += "    <testcase classname=\"fuzz\" name=\"campaign\">\n";
  if (failed) {
    const auto& first = summary["failures"][0];
    std::string text =
        first["rule"].get<std::string>() + ": " + first["message"].get<std::string>();
    out += "      <failure type=\"" + report::xml_escape(first["rule"].get<std::string>()) +
           "\" message=\"" + report::xml_escape(text) +
           "\">repro: " + report::xml_escape(first["repro"].get<std::string>()) + "</failure>\n";
  }
  out += "      <system-out>cases=" + std::to_string(summary["cases_run"].get<std::uint64_t>()) +
         "</system-out>\n    </testcase>\n  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace

ordered_json write_campaign_report(const fs::path& dir, const CampaignOptions& options,
                                   const std::vector<std::string>& defect_names,
                                   const CampaignResult& result) {
  ordered_json summary;
  summary["seed"] = options.seed;
  summary["defects"] = defect_names;
  summary["cases"] = options.cases;
  summary["shard"] = std::to_string(options.shard) + "/" + std::to_string(options.shards);
  summary["cases_run"] = result.cases_run;
  summary["determinism_checks"] = result.determinism_checks;
  summary["marks"] = marks_json(result.marks);
  summary["failures"] = ordered_json::array();
  {
    fs::create_directories(dir);
    for (const auto& failure : result.failures) {
      fs::create_directories(dir / "repro");
      fs::create_directories(dir / "traces");
      const fs::path repro = dir / "repro" / (failure.shrunk.name + ".yaml");
      report::write_file(repro, repro_yaml(failure, options.seed, repro.string(), options.defects));
      report::write_file(dir / "traces" / (failure.shrunk.name + ".jsonl"),
                         sim::render_jsonl(failure.shrunk_run.history));
      report::write_timeline(dir, failure.shrunk_run,
                             report::repro_replay_command(repro.string(), options.defects));
      summary["failures"].push_back(
          {{"case", failure.case_index},
           {"reproduce", to_string({options.seed, failure.case_index, failure.shrink_path})},
           {"rule", failure.rule},
           {"message", failure.message},
           {"repro", repro.string()},
           {"trace_hash", failure.shrunk_run.trace_hash},
           {"original_size", size_json(size_of(failure.original))},
           {"shrunk_size", size_json(size_of(failure.shrunk))},
           {"shrink_steps", failure.shrink_steps},
           {"shrink_runs", failure.shrink_runs}});
    }
    report::write_file(dir / "summary.json",
                       summary.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n");
    report::write_file(dir / "junit.xml", junit(summary));
  }
  return summary;
}

ordered_json merge_campaign_reports(const std::vector<std::string>& dirs, const fs::path& out_dir) {
  std::uint64_t cases = 0;
  std::uint64_t checks = 0;
  check::MarkCounts marks;
  ordered_json failures = ordered_json::array();
  for (const auto& dir : dirs) {
    std::error_code error;
    const auto status = fs::status(dir, error);
    if (!fs::exists(status)) throw std::runtime_error(dir + ": no such file or directory");
    if (!fs::is_directory(status)) {
      throw std::runtime_error(dir +
                               ": not a folder (merge takes the --report-dir folders of"
                               " onejob fuzz runs)");
    }
    const fs::path file = fs::path(dir) / "summary.json";
    if (!fs::exists(file, error)) {
      throw std::runtime_error(dir +
                               ": no summary.json here (merge takes the --report-dir folders"
                               " of onejob fuzz runs)");
    }
    std::ifstream in(file, std::ios::binary);
    const std::string text(std::istreambuf_iterator<char>(in), {});
    const auto summary = ordered_json::parse(text, nullptr, false);
    const auto shaped = [&summary] {
      if (summary.is_discarded() || !summary.is_object()) return false;
      const auto cases_run = summary.find("cases_run");
      const auto marks_seen = summary.find("marks");
      const auto failures_seen = summary.find("failures");
      if (cases_run == summary.end() || !cases_run->is_number_unsigned() ||
          marks_seen == summary.end() || !marks_seen->is_object() ||
          failures_seen == summary.end() || !failures_seen->is_array()) {
        return false;
      }
      const auto counts = marks_seen->find("counts");
      if (counts == marks_seen->end() || !counts->is_object()) return false;
      for (const auto& count : *counts) {
        if (!count.is_number_integer()) return false;
      }
      const auto determinism = summary.find("determinism_checks");
      return determinism == summary.end() || determinism->is_number_unsigned();
    };
    if (!in || !shaped()) {
      throw std::runtime_error(file.string() + ": not the summary.json of onejob fuzz");
    }
    cases += summary["cases_run"].get<std::uint64_t>();
    checks += summary.value("determinism_checks", std::uint64_t{0});
    for (const auto& [mark, count] : summary["marks"]["counts"].items()) {
      marks[mark] += count.get<int>();
    }
    for (const auto& failure : summary["failures"]) failures.push_back(failure);
  }
  std::stable_sort(failures.begin(), failures.end(), [](const auto& a, const auto& b) {
    return a.value("case", std::uint64_t{0}) < b.value("case", std::uint64_t{0});
  });
  ordered_json merged;
  merged["merged"] = dirs;
  merged["cases_run"] = cases;
  merged["determinism_checks"] = checks;
  merged["marks"] = marks_json(marks);
  merged["failures"] = failures;
  try {
    fs::create_directories(out_dir);
    report::write_file(out_dir / "summary.json",
                       merged.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n");
    report::write_file(out_dir / "junit.xml", junit(merged));
  } catch (const std::exception& error) {
    throw std::runtime_error("cannot write " + out_dir.string() + ": " + error.what());
  }
  return merged;
}

}  // namespace onejob::fuzz
