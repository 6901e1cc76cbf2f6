#include "harness/report/timeline.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "harness/check/history.hpp"
#include "harness/check/invariant.hpp"
#include "harness/report/report.hpp"
#include "harness/report/timeline_lanes.hpp"

namespace onejob::report {
namespace {

using timeline::Lanes;
using timeline::micros;
using timeline::short_text;
using timeline::ViolationIndex;
using timeline::Window;

// An event as the console prints it, cut at 600 bytes (a payload may be a megabyte).
std::string event_line(const sim::TraceEvent& event) {
  std::string line = human_line(event);
  if (line.size() > 600) line = line.substr(0, 600) + " …";
  return line;
}

void header_section(std::string& out, const scenario::RunResult& result, std::string_view replay) {
  const bool passed = result.passed();
  out += "<header><h1>" + xml_escape(result.name) + " <span class=\"verdict " +
         (passed ? "pass\">PASS" : "fail\">FAIL") + "</span></h1>\n";
  out += "<dl class=\"facts\"><dt>seed</dt><dd id=\"seed\">" + std::to_string(result.seed) +
         "</dd><dt>trace</dt><dd>" + xml_escape(result.trace_hash) + "</dd><dt>events</dt><dd>" +
         std::to_string(result.history.size()) + "</dd><dt>simulated</dt><dd>" +
         format_seconds(result.simulated.count()) + "</dd><dt>file</dt><dd>" +
         xml_escape(result.file) + "</dd>";
  if (result.defects.any()) {
    out += "<dt>defects</dt><dd>" + xml_escape(defect_flags(result.defects)) + "</dd>";
  }
  out += "</dl>\n<p class=\"replay\">replay: <code id=\"replay\">" + xml_escape(replay) +
         "</code></p></header>\n";
}

void violations_section(std::string& out, const scenario::RunResult& result) {
  out += "<section id=\"violations\"><h2>Violations (" + std::to_string(result.violations.size()) +
         ")</h2>\n";
  if (result.violations.empty()) out += "<p class=\"none\">None: every rule held.</p>\n";
  constexpr std::size_t kShown = 100;
  if (result.violations.size() > kShown) {
    out += "<p class=\"omitted\">The first " + std::to_string(kShown) + " of " +
           std::to_string(result.violations.size()) + "; all of them are in summary.json.</p>\n";
  }
  for (std::size_t shown = 0; shown < std::min(kShown, result.violations.size()); ++shown) {
    const auto& violation = result.violations[shown];
    out += "<div class=\"violation\"";
    if (violation.event_seq) out += " data-seq=\"" + std::to_string(*violation.event_seq) + "\"";
    out += "><h3><span class=\"rule\">" + xml_escape(violation.rule) + "</span> " +
           xml_escape(violation.message) + "</h3>\n<ol class=\"led-to\">\n";
    std::vector<std::uint64_t> seqs = violation.evidence;
    std::ranges::sort(seqs);
    for (const auto seq : seqs) {
      if (seq == 0 || seq > result.history.size() || seq == violation.event_seq) continue;
      out += "<li class=\"evidence\" data-seq=\"" + std::to_string(seq) + "\"><code>" +
             xml_escape(event_line(result.history[seq - 1])) + "</code></li>\n";
    }
    if (violation.event_seq && *violation.event_seq >= 1 &&
        *violation.event_seq <= result.history.size()) {
      out += "<li class=\"offending\" data-seq=\"" + std::to_string(*violation.event_seq) +
             "\"><code>" + xml_escape(event_line(result.history[*violation.event_seq - 1])) +
             "</code> <b>first offending event</b></li>\n";
    }
    out += "</ol></div>\n";
  }
  out += "</section>\n";
}

void marks_section(std::string& out, const scenario::RunResult& result) {
  out += "<section id=\"marks\"><h2>Coverage marks reached (" +
         std::to_string(result.marks.size()) + "/" + std::to_string(check::all_marks().size()) +
         ")</h2><ul class=\"marks\">";
  for (const auto& mark : check::all_marks()) {
    auto found = result.marks.find(std::string(mark.name));
    const bool reached = found != result.marks.end();
    out += "<li class=\"mark" + std::string(reached ? " reached" : "") + "\" title=\"" +
           xml_escape(mark.meaning) + "\">" + xml_escape(mark.name) +
           (reached ? " ×" + std::to_string(found->second) : "") + "</li>";
  }
  out += "</ul></section>\n";
}

// One job: a row per attempt, its state bars, CAS marks, executions, cancels, and the store's
// commits on a row of their own, and a marker at a violation's first offending event.
// `mine`: the job's commits (indexes into the history), in commit order.
void job_view(std::string& out, const check::HistoryModel& model, const check::JobRecord& job,
              const std::vector<std::size_t>& mine, const ViolationIndex& violations) {
  // Drawn in these units and scaled to the page's width (viewBox; CSS width 100%).
  constexpr double kWidth = 1400;
  constexpr double kLeft = 190;
  constexpr double kRow = 22;
  const auto& history = *model.history;
  std::int64_t first = micros(job.inserted.at);
  std::int64_t last = first;
  auto widen = [&](std::int64_t t) { last = std::max(last, t); };
  for (auto index : mine) widen(micros(history.instant(index)));
  for (auto id : job.attempts) {
    const auto* attempt = model.attempt(id);
    if (const auto* run = model.execution_of(id)) widen(micros(run->executed.at));
    if (attempt == nullptr) continue;
    if (auto calls = model.calls.find(id); calls != model.calls.end()) {
      for (const auto call : calls->second) widen(micros(history.instant(call - 1)));
    }
  }
  const std::int64_t span = std::max<std::int64_t>(last - first, 1);
  const double end_pad = 30;
  auto x = [&](std::int64_t t) {
    return kLeft +
           (kWidth - kLeft - end_pad) * static_cast<double>(t - first) / static_cast<double>(span);
  };
  const auto rows = job.attempts.size() + 1;
  const double height = kRow * static_cast<double>(rows) + 24;
  const auto end = model.end_of(job);
  const auto* winner = job.won();
  out += "<div class=\"job" + std::string(violations.jobs.contains(job.id()) ? " violated" : "") +
         "\" id=\"job-" + std::to_string(job.id()) + "\" data-job=\"" + std::to_string(job.id()) +
         "\"><h3>job " + std::to_string(job.id()) + " <span class=\"key\">" +
         xml_escape(job.inserted.what.owner()) + " / " + xml_escape(job.inserted.what.key()) +
         "</span> <span class=\"end " + std::string(to_string(end)) + "\">" +
         std::string(to_string(end)) + "</span>";
  if (winner != nullptr) {
    out += " <span class=\"won-by\">won by attempt " + std::to_string(winner->what.attempt_id) +
           "</span>";
  }
  char size[96];
  std::snprintf(size, sizeof size,
                "<svg class=\"jobsvg\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\">",
                kWidth, height, kWidth, height);
  out += "</h3>";
  out += size;
  char buffer[512];
  // The time axis: the job's first and last instants.
  std::snprintf(buffer, sizeof buffer,
                "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\">%s</text><text class=\"axis\" "
                "x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                kLeft, height - 4, format_seconds(first).c_str(), kWidth - end_pad, height - 4,
                format_seconds(last).c_str());
  out += buffer;
  // Row 0: the store's commits for this job.
  out += "<text class=\"rowlabel\" x=\"4\" y=\"15\">store commits</text>";
  for (auto index : mine) {
    const auto& recorded = history[index];
    // Text of any length goes in by concatenation, never through the fixed buffer.
    std::snprintf(buffer, sizeof buffer,
                  "<line class=\"commit\" data-seq=\"%llu\" x1=\"%.1f\" x2=\"%.1f\" y1=\"4\" "
                  "y2=\"18\"><title>#%llu ",
                  static_cast<unsigned long long>(recorded.seq), x(micros(recorded.at)),
                  x(micros(recorded.at)), static_cast<unsigned long long>(recorded.seq));
    out += buffer;
    out += xml_escape(recorded.event.kind()) + " " + xml_escape(short_text(recorded.event)) +
           "</title></line>";
  }
  double y = kRow;
  for (const auto id : job.attempts) {
    const auto* attempt = model.attempt(id);
    if (attempt == nullptr) continue;
    const auto& inserted = attempt->inserted.what;
    std::snprintf(buffer, sizeof buffer,
                  "<text class=\"rowlabel\" x=\"4\" y=\"%.1f\">attempt %lld · ", y + 15,
                  static_cast<long long>(id));
    out += buffer;
    out += xml_escape(inserted.provider.str()) + " · " + std::string(to_string(inserted.origin)) +
           "</text>";
    // State bars: from the insert to each transition, the last one to the job's end.
    std::int64_t from = micros(attempt->inserted.at);
    AttemptState state = AttemptState::starting;
    auto bar = [&](std::int64_t to) {
      const double x0 = x(from);
      const double width = std::max(2.0, x(to) - x0);
      std::snprintf(buffer, sizeof buffer,
                    "<rect class=\"bar %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\">"
                    "<title>attempt %lld %s from %s</title></rect>",
                    std::string(to_string(state)).c_str(), x0, y + 5, width,
                    static_cast<long long>(id), std::string(to_string(state)).c_str(),
                    format_seconds(from).c_str());
      out += buffer;
    };
    for (const auto& step : attempt->steps) {
      bar(micros(step.at));
      from = micros(step.at);
      state = step.what.to;
      if (step.what.to == AttemptState::cancelled &&
          model.cancelled_by_operator(*attempt, step.seq + 1)) {
        std::snprintf(buffer, sizeof buffer,
                      "<text class=\"cancel\" data-seq=\"%llu\" x=\"%.1f\" y=\"%.1f\">⊘ cancel"
                      "<title>#%llu cancelled by an operator</title></text>",
                      static_cast<unsigned long long>(step.seq), x(from), y + 3,
                      static_cast<unsigned long long>(step.seq));
        out += buffer;
      }
    }
    const bool live = check::is_live_state(state);
    bar(live ? last : std::min(last, from + span / 60));
    if (const auto* run = model.execution_of(id)) {
      std::snprintf(buffer, sizeof buffer,
                    "<circle class=\"execution\" data-seq=\"%llu\" cx=\"%.1f\" cy=\"%.1f\" "
                    "r=\"4\"><title>#%llu ",
                    static_cast<unsigned long long>(run->executed.seq), x(micros(run->executed.at)),
                    y + 11, static_cast<unsigned long long>(run->executed.seq));
      out += buffer;
      out += xml_escape(run->provider.str()) +
             " executed it: " + xml_escape(run->executed.what.outcome.str()) + "</title></circle>";
    }
    for (const auto& cas : job.cas) {
      if (cas.what.attempt_id != id) continue;
      const bool won = cas.what.won;
      // Labels near the right edge end at their mark instead of starting there.
      const double at = x(micros(cas.at));
      const bool right = at > kWidth * 0.7;
      std::snprintf(
          buffer, sizeof buffer,
          "<text class=\"cas %s\" data-seq=\"%llu\" x=\"%.1f\" y=\"%.1f\" "
          "text-anchor=\"%s\">%s<title>#%llu compare-and-swap %s</title></text>",
          won ? "winner" : "discarded", static_cast<unsigned long long>(cas.seq),
          right ? at + 5 : at - 5, y + 15, right ? "end" : "start",
          won ? (right ? "winner ★" : "★ winner") : (right ? "discarded ✗" : "✗ discarded"),
          static_cast<unsigned long long>(cas.seq),
          won ? "won: this attempt's result is the job's" : "lost: result discarded");
      out += buffer;
    }
    y += kRow;
  }
  for (const auto index : mine) {
    const std::uint64_t seq = index + 1;
    if (!violations.offending.contains(seq)) continue;
    std::snprintf(buffer, sizeof buffer,
                  "<circle class=\"violation-marker\" data-seq=\"%llu\" cx=\"%.1f\" cy=\"11\" "
                  "r=\"9\"><title>#%llu first offending event</title></circle>",
                  static_cast<unsigned long long>(seq), x(micros(history.instant(index))),
                  static_cast<unsigned long long>(seq));
    out += buffer;
  }
  out += "</svg></div>\n";
}

constexpr std::size_t kJobsDrawn = 200;

void jobs_section(std::string& out, const check::HistoryModel& model,
                  const ViolationIndex& violations) {
  const auto& violated = violations.jobs;
  // The jobs a violation names first, then the others by id, up to kJobsDrawn.
  std::vector<const check::JobRecord*> drawn;
  for (const auto id : violated) {
    if (const auto* job = model.job(id)) drawn.push_back(job);
  }
  for (const auto& [id, job] : model.jobs) {
    if (drawn.size() >= kJobsDrawn) break;
    if (!violated.contains(id)) drawn.push_back(&job);
  }
  out += "<section id=\"jobs\"><h2>Jobs (" + std::to_string(model.jobs.size()) + ")</h2>\n";
  out +=
      "<p class=\"legend\"><span class=\"bar STARTING\">STARTING</span> <span class=\"bar "
      "RUNNING\">RUNNING</span> <span class=\"bar UNKNOWN\">UNKNOWN</span> <span class=\"bar "
      "SUCCEEDED\">SUCCEEDED</span> <span class=\"bar FAILED\">FAILED</span> <span class=\"bar "
      "CANCELLED\">CANCELLED</span> <span class=\"bar DISCARDED\">DISCARDED</span> ● provider "
      "execution · ★ CAS winner · ✗ discarded result · ⊘ operator cancel · | store commit</p>\n";
  if (drawn.size() < model.jobs.size()) {
    out += "<p class=\"omitted\">" + std::to_string(drawn.size()) + " of " +
           std::to_string(model.jobs.size()) +
           " jobs drawn (those a violation names first); filter the lanes by job id for the "
           "others.</p>\n";
  }
  std::map<std::int64_t, std::vector<std::size_t>> commits;  // of the drawn jobs
  for (const auto* job : drawn) commits[job->id()];
  for (const std::size_t index : model.commit_log) {
    const auto job = model.history->at(index).event.int_field("job_id");
    if (auto found = job ? commits.find(*job) : commits.end(); found != commits.end()) {
      found->second.push_back(index);
    }
  }
  for (const auto* job : drawn) {
    job_view(out, model, *job, commits[job->id()], violations);
  }
  out += "</section>\n";
}

void lanes_section(std::string& out, const scenario::RunResult& result, const Lanes& lanes,
                   Window window) {
  out += "<section id=\"timeline\"><h2>Lanes</h2>\n";
  if (window.count < result.history.size()) {
    out += "<p class=\"omitted\" id=\"page-window\">The lanes hold events #" +
           std::to_string(window.first + 1) + "–#" + std::to_string(window.first + window.count) +
           " of " + std::to_string(result.history.size()) +
           (window.first > 0 ? " (the window around the first offending event)" : "") +
           "; the whole run is in traces/" + xml_escape(result.name) + ".jsonl.</p>\n";
  }
  out +=
      "<div class=\"controls\">"
      "<button id=\"zoom-in\" title=\"zoom in\">+</button><button id=\"zoom-out\" "
      "title=\"zoom out\">−</button><button id=\"zoom-reset\">all</button>"
      "<button id=\"to-violation\">first violation</button>"
      "<label>job <input id=\"job-filter\" size=\"6\" placeholder=\"any\"></label>"
      "<label>node <select id=\"node-filter\"><option value=\"\">all</option>";
  for (const auto& name : lanes.names) {
    out += "<option>" + xml_escape(name) + "</option>";
  }
  out +=
      "</select></label><label><input type=\"checkbox\" id=\"faults-only\"> injected only"
      "</label><span id=\"window\"></span></div>\n"
      "<p class=\"legend\">→ request · ⇢ response/reply · <span class=\"injected\">✕ dropped, "
      "⇉ duplicated, ◷ delayed, ↯ reset, ‖ paused (shaded while it lasts), ☠ crashed</span> "
      "(injected faults in red) · | commit (from the writer's lane to the store) "
      "· ◎ first offending event, "
      "<span class=\"led\">◎</span> the events that led to it</p>\n"
      "<div class=\"lanes\"><div class=\"lane-labels\">";
  for (std::size_t i = 0; i < lanes.names.size(); ++i) {
    out += "<div class=\"lane " + std::string(lanes.roles[i]) + "\" data-node=\"" +
           xml_escape(lanes.names[i]) + "\">" + xml_escape(lanes.names[i]) + "</div>";
  }
  out +=
      "</div><div class=\"lane-plot\"><svg id=\"lanes-svg\"></svg></div></div>\n"
      "<pre id=\"detail\">Click an event for its details.</pre></section>\n";
}

std::string safe_file_name(std::string_view name) {
  std::string out;
  for (const char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || c == '.';
    out += plain ? c : '_';
  }
  if (out.empty() || out.front() == '.') out.insert(out.begin(), '_');
  return out;
}

}  // namespace

std::string timeline_html(const scenario::RunResult& result, std::string_view replay,
                          std::size_t max_lane_events) {
  const auto lanes = timeline::build_lanes(result.history);
  const auto model = check::fold_history(result.history);
  const auto violations = timeline::index_violations(result);
  std::string out;
  out.reserve(result.history.size() * 160 + 65536);
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
      "<title>onejob · " +
      xml_escape(result.name) + "</title>\n<style>";
  out += timeline_style();
  out += "</style></head>\n<body data-verdict=\"";
  out += result.passed() ? "pass" : "fail";
  out += "\">\n";
  header_section(out, result, replay);
  violations_section(out, result);
  marks_section(out, result);
  const auto window = timeline::page_window(result, std::max<std::size_t>(max_lane_events, 1));
  lanes_section(out, result, lanes, window);
  jobs_section(out, model, violations);
  out += "<script type=\"application/json\" id=\"trace-data\">";
  out += timeline::page_data_json(result, lanes, violations, window);
  out += "</script>\n<script>";
  out += timeline_script();
  out += "</script>\n</body></html>\n";
  return out;
}

std::filesystem::path write_timeline(const std::filesystem::path& report_dir,
                                     const scenario::RunResult& result, std::string_view replay) {
  const auto dir = report_dir / "html";
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw std::runtime_error("cannot create " + dir.string() + ": " + error.message());
  const auto path = dir / (safe_file_name(result.name) + ".html");
  write_file(path, timeline_html(result, replay));
  return path;
}

}  // namespace onejob::report
