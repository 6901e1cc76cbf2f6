#include "harness/report/report.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "system/domain/check.hpp"
#include "system/events/schema.hpp"
#include "system/service/canonical_json.hpp"

#include "harness/report/timeline.hpp"
#include "harness/sim/rng.hpp"
#include "harness/sim/utf8.hpp"

namespace onejob::report {
namespace {

std::optional<sim::TraceEvent> find_event(const scenario::RunResult& result,
                                          const std::optional<std::uint64_t>& seq) {
  if (!seq || *seq == 0 || *seq > result.history.size()) return std::nullopt;
  return result.history[*seq - 1];
}

// Up to `count` events before `event` that concern the same job (or any, when it names none),
// oldest first: the story that led to the violation.
std::vector<sim::TraceEvent> leading_events(const scenario::RunResult& result,
                                            const sim::TraceEvent& event, std::size_t count = 6) {
  const auto job = events::job_of(event.event);
  std::vector<sim::TraceEvent> found;
  for (auto i = static_cast<std::ptrdiff_t>(event.seq) - 2; i >= 0 && found.size() < count; --i) {
    auto candidate = result.history[static_cast<std::size_t>(i)];
    if (!job || events::job_of(candidate.event) == job) found.push_back(std::move(candidate));
  }
  std::reverse(found.begin(), found.end());
  return found;
}

std::string violation_text(const scenario::RunResult& result, const check::Violation& v) {
  std::string text = "[" + v.rule + "] " + v.message;
  for (const auto seq : v.evidence) {
    if (const auto event = find_event(result, seq)) text += "\n      see:    " + human_line(*event);
  }
  if (const auto event = find_event(result, v.event_seq)) {
    text += "\n      first offending event: " + sim::to_json_line(*event);
    const auto story = leading_events(result, *event);
    if (!story.empty()) text += "\n      what led to it:";
    for (const auto& e : story) text += "\n        " + human_line(e);
    text += "\n      >       " + human_line(*event);
  }
  return text;
}

}  // namespace

namespace {

// XML 1.0's Char production.
bool xml_char(char32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

}  // namespace

std::string xml_escape(std::string_view text) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = 1;
    const auto c = sim::decode_utf8(text, i, length);
    if (!c || !xml_char(*c)) {
      // Invalid UTF-8, or a character XML forbids even escaped (controls, U+FFFE, U+FFFF).
      out += kReplacement;
    } else if (*c == '&') {
      out += "&amp;";
    } else if (*c == '<') {
      out += "&lt;";
    } else if (*c == '>') {
      out += "&gt;";
    } else if (*c == '"') {
      out += "&quot;";
    } else if (*c == '\'') {
      out += "&apos;";
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

namespace {

std::filesystem::path trace_path(const std::filesystem::path& dir,
                                 const scenario::RunResult& result) {
  return dir / "traces" / (result.name + ".jsonl");
}

// The trace's JSON Lines, written piece by piece (a big load's trace is hundreds of MB); returns
// the hash of the bytes written (sim::hash_jsonl's).
std::string write_trace(const std::filesystem::path& path, const sim::History& history) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::uint64_t hash = sim::fnv1a64("");
  sim::render_jsonl_pieces(history, [&out, &hash](std::string_view piece) {
    out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    hash = sim::fnv1a64(piece, hash);
  });
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
  return sim::hex64(hash);
}

}  // namespace

std::string defect_flags(const Defects& defects) {
  std::string flags;
  for (const auto& info : all_defects()) {
    if (!defects.has(info.defect)) continue;
    flags.append(" --defect ");
    flags.append(info.name);
  }
  return flags;
}

std::optional<std::string> trace_problem(const std::string& text) {
  if (text.empty()) return "the file is empty";
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    ++line_number;
    // Through the depth-limited canonicaliser first: a hostile line cannot nest without bound.
    const auto canonical = canonicalize_json(std::string_view(text).substr(start, end - start));
    const auto* valid = std::get_if<CanonicalJson>(&canonical);
    const auto line =
        valid == nullptr ? nlohmann::json() : nlohmann::json::parse(valid->bytes, nullptr, false);
    if (valid == nullptr || line.is_discarded() || !line.is_object() || !line.contains("seq") ||
        !line.contains("t_us") || !line.contains("node") || !line.contains("kind")) {
      return "line " + std::to_string(line_number) +
             " is not an event (a JSON object with seq, t_us, node and kind)";
    }
    start = end + 1;
  }
  return std::nullopt;
}

namespace {
std::string& program_path() {
  static std::string path = "onejob";
  return path;
}
}  // namespace

void set_program(std::string path) {
  if (path.empty()) return;
  // A path (build/onejob, ./onejob) is made absolute, so that the line works pasted in any
  // directory; a bare name was found on PATH and is found there again.
  if (path.find('/') != std::string::npos) path = absolute_path(path);
  program_path() = std::move(path);
}

std::string absolute_path(std::string_view path) {
  std::error_code error;
  const std::filesystem::path whole = std::filesystem::absolute(path, error);
  return error ? std::string(path) : whole.lexically_normal().string();
}

const std::string& program() { return program_path(); }

std::string shell_quote(std::string_view text) {
  const bool plain = !text.empty() && std::ranges::all_of(text, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_-./:=@%+,").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(text);
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

namespace {

// `onejob replay FILE[ --seed N][ --defect NAME...] --trace`; `seed_flag` is "" or " --seed N".
std::string replay_line(std::string_view file, const std::string& seed_flag,
                        const Defects& defects) {
  return shell_quote(program()) + " replay " + shell_quote(absolute_path(file)) + seed_flag +
         defect_flags(defects) + " --trace";
}

}  // namespace

std::string repro_replay_command(std::string_view repro_file, const Defects& defects) {
  return replay_line(repro_file, "", defects);
}

std::string replay_command(const scenario::RunResult& result) {
  return replay_line(result.file, " --seed " + std::to_string(result.seed), result.defects);
}

std::string format_seconds(std::int64_t us) {
  char text[48];
  std::snprintf(text, sizeof text, "%lld.%06llds", static_cast<long long>(us / 1'000'000),
                static_cast<long long>(us % 1'000'000));
  return text;
}

std::string human_line(const sim::TraceEvent& event) {
  char stamp[64];  // the seconds right-aligned in 14 columns
  std::snprintf(stamp, sizeof stamp, "[%14s]",
                format_seconds(event.at.time_since_epoch().count()).c_str());
  char head[160];
  std::snprintf(head, sizeof head, "%s %-14s %s%-22s", stamp, event.node.c_str(),
                event.injected ? "!" : " ", event.event.kind().c_str());
  std::string line = head;
  for (const auto& field : event.event.fields()) {
    line.append(" ").append(field.name()).append("=");
    switch (field.type()) {
      case Event::Field::Type::integer:
        line += std::to_string(field.number);
        break;
      case Event::Field::Type::boolean:
        line += field.number != 0 ? "true" : "false";
        break;
      case Event::Field::Type::string:
        sim::append_json_string(line, event.event.text(field));
        break;
    }
  }
  return line;
}

std::optional<std::string> first_difference(const std::string& ours, const std::string& theirs) {
  std::size_t line = 1;
  std::size_t a = 0;
  std::size_t b = 0;
  while (a < ours.size() || b < theirs.size()) {
    const auto a_end = std::min(ours.find('\n', a), ours.size());
    const auto b_end = std::min(theirs.find('\n', b), theirs.size());
    const auto ours_line = ours.substr(a, a_end - a);
    const auto theirs_line = theirs.substr(b, b_end - b);
    if (ours_line != theirs_line) {
      return "traces diverge at event " + std::to_string(line) +
             ":\n  this run:  " + (a < ours.size() ? ours_line : "(trace ended)") +
             "\n  other:     " + (b < theirs.size() ? theirs_line : "(trace ended)");
    }
    a = a_end + 1;
    b = b_end + 1;
    ++line;
  }
  return std::nullopt;
}

std::string summary_line(const scenario::RunResult& result) {
  const auto simulated = std::chrono::duration_cast<std::chrono::milliseconds>(result.simulated);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3fs", static_cast<double>(simulated.count()) / 1000);
  return std::string(result.passed() ? "PASS" : "FAIL") + "  " + result.name +
         "  seed=" + std::to_string(result.seed) + "  trace=" + result.trace_hash +
         "  simulated=" + seconds;
}

namespace {

// One section of a failure: at most kShownPerRule violations of each rule, then how many more.
void append_section(std::string& out, const scenario::RunResult& result, bool safety) {
  constexpr std::size_t kShownPerRule = 20;
  std::map<std::string, std::size_t> counts;
  for (const auto& v : result.violations) {
    if (check::is_safety(v) == safety) ++counts[v.rule];
  }
  if (counts.empty()) return;
  out += safety ? "    safety: broken rules\n" : "    expectations and availability\n";
  std::map<std::string, std::size_t> shown;
  for (const auto& v : result.violations) {
    if (check::is_safety(v) != safety || ++shown[v.rule] > kShownPerRule) continue;
    out += "    " + violation_text(result, v) + "\n";
  }
  for (const auto& [rule, count] : counts) {
    if (count > kShownPerRule) {
      out += "    [" + rule + "] ... " + std::to_string(count - kShownPerRule) + " more (" +
             std::to_string(count) + " in all; summary.json lists every one)\n";
    }
  }
}

std::string outcome_counts(const std::map<std::string, int>& counts) {
  std::string out;
  for (const auto& [name, count] : counts) {
    out += (out.empty() ? "" : " ") + name + "=" + std::to_string(count);
  }
  return out;
}

}  // namespace

std::string text_summary(const std::vector<scenario::RunResult>& results) {
  std::string out;
  std::size_t failed = 0;
  std::size_t unsafe = 0;
  std::map<std::string, int> ends;
  std::map<std::string, int> marks;
  for (const auto& result : results) {
    out += summary_line(result) + "\n";
    for (const auto& [end, count] : result.job_ends) ends[end] += count;
    for (const auto& [mark, count] : result.marks) marks[mark] += count;
    if (result.passed()) continue;
    ++failed;
    unsafe += std::ranges::any_of(result.violations, check::is_safety) ? 1 : 0;
    append_section(out, result, true);
    append_section(out, result, false);
    out += "    replay: " + replay_command(result) + "\n";
  }
  out += "jobs at the end: " + (ends.empty() ? std::string("none") : outcome_counts(ends)) + "\n";
  out += "marks reached: " + std::to_string(marks.size()) + "/" +
         std::to_string(check::all_marks().size()) + "\n";
  out += std::to_string(results.size()) + " scenarios: " + std::to_string(results.size() - failed) +
         " passed, " + std::to_string(failed) + " failed (" + std::to_string(unsafe) +
         " with broken safety rules)\n";
  return out;
}

std::string summary_json(const std::vector<scenario::RunResult>& results) {
  nlohmann::ordered_json summary;
  std::size_t passed = 0;
  auto entries = nlohmann::ordered_json::array();
  for (const auto& result : results) {
    if (result.passed()) ++passed;
    auto violations = nlohmann::ordered_json::array();
    for (const auto& v : result.violations) {
      nlohmann::ordered_json violation;
      violation["rule"] = v.rule;
      violation["clause"] = v.clause;
      violation["category"] = std::string(to_string(v.category));
      violation["message"] = v.message;
      violation["safety"] = check::is_safety(v);
      violation["evidence"] = v.evidence;
      const auto event = find_event(result, v.event_seq);
      violation["event"] =
          event ? nlohmann::ordered_json::parse(sim::to_json_line(*event)) : nullptr;
      auto story = nlohmann::ordered_json::array();
      if (event) {
        for (const auto& e : leading_events(result, *event)) story.push_back(human_line(e));
      }
      violation["leading_events"] = std::move(story);
      violations.push_back(std::move(violation));
    }
    nlohmann::ordered_json entry;
    entry["name"] = result.name;
    entry["file"] = result.file;
    entry["seed"] = result.seed;
    entry["status"] = result.passed() ? "pass" : "fail";
    entry["trace_hash"] = result.trace_hash;
    entry["job_ends"] = result.job_ends;
    entry["marks"] = result.marks;
    entry["violations"] = std::move(violations);
    if (!result.passed()) entry["replay"] = replay_command(result);
    entries.push_back(std::move(entry));
  }
  summary["scenarios"] = results.size();
  summary["passed"] = passed;
  summary["failed"] = results.size() - passed;
  summary["results"] = std::move(entries);
  return summary.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string junit_xml(const std::vector<scenario::RunResult>& results) {
  std::size_t failures = 0;
  for (const auto& result : results) failures += result.passed() ? 0 : 1;
  const std::string counts = "tests=\"" + std::to_string(results.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites " + counts + ">\n";
  out += "  <testsuite name=\"onejob.scenarios\" " + counts + ">\n";
  for (const auto& result : results) {
    out += "    <testcase classname=\"scenarios\" name=\"" + xml_escape(result.name) +
           "\" file=\"" + xml_escape(result.file) + "\">\n";
    if (!result.passed()) {
      const auto& first = result.violations.front();
      std::string details;
      for (const auto& violation : result.violations) {
        details += violation_text(result, violation) + "\n";
      }
      details += "replay: " + replay_command(result) + "\n";
      out += "      <failure type=\"" + xml_escape(first.rule) + "\" message=\"" +
             xml_escape(first.message) + "\">" + xml_escape(details) + "</failure>\n";
    }
    out += "      <system-out>seed=" + std::to_string(result.seed) + " trace=" + result.trace_hash +
           "</system-out>\n";
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

namespace {

// The files write_reports wrote in a report folder, one path relative to it per line. The next
// write_reports removes those (an earlier run's traces and pages, which would otherwise look
// current) and nothing else: files of the user's own, in traces/ and html/ too, stay.
constexpr const char* kManifest = ".onejob-reports";

// Whether `relative` names a file write_reports writes: traces/NAME or html/NAME. A manifest
// edited by hand can therefore remove nothing outside those two folders.
bool written_by_reports(const std::filesystem::path& relative) {
  if (relative.is_absolute() || relative.empty()) return false;
  std::vector<std::filesystem::path> parts(relative.begin(), relative.end());
  return parts.size() == 2 && (parts[0] == "traces" || parts[0] == "html") && parts[1] != "." &&
         parts[1] != "..";
}

void remove_previous_reports(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::ifstream in(dir / kManifest);
  std::string line;
  while (std::getline(in, line)) {
    const fs::path relative = fs::path(line).lexically_normal();
    std::error_code error;
    if (written_by_reports(relative) && fs::is_regular_file(dir / relative, error)) {
      fs::remove(dir / relative, error);
    }
  }
}

}  // namespace

namespace {

// Writes every result's trace under `dir`/traces (after removing the previous reports' files);
// returns the hashes of the bytes written, in results' order.
std::vector<std::string> write_trace_files(const std::filesystem::path& dir,
                                           const std::vector<scenario::RunResult>& results) {
  namespace fs = std::filesystem;
  remove_previous_reports(dir);
  fs::create_directories(dir / "traces");
  std::vector<std::string> hashes;
  hashes.reserve(results.size());
  for (const auto& result : results) {
    hashes.push_back(write_trace(trace_path(dir, result), result.history));
  }
  return hashes;
}

}  // namespace

void write_traces(const std::filesystem::path& dir, std::vector<scenario::RunResult>& results) {
  const auto hashes = write_trace_files(dir, results);
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto& hash = results[i].trace_hash;
    ONEJOB_ASSERT(hash.empty() || hash == hashes[i], "a trace hashes to the bytes written");
    hash = hashes[i];
  }
}

void write_summaries(const std::filesystem::path& dir,
                     const std::vector<scenario::RunResult>& results, bool html_for_all) {
  std::string manifest;
  for (const auto& result : results) {
    manifest += trace_path(dir, result).lexically_relative(dir).string() + "\n";
    if (html_for_all || !result.passed()) {
      const auto page = write_timeline(dir, result, replay_command(result));
      manifest += page.lexically_relative(dir).string() + "\n";
    }
  }
  write_file(dir / kManifest, manifest);
  write_file(dir / "summary.txt", text_summary(results));
  write_file(dir / "summary.json", summary_json(results));
  write_file(dir / "junit.xml", junit_xml(results));
}

void write_reports(const std::filesystem::path& dir,
                   const std::vector<scenario::RunResult>& results, bool html_for_all) {
  write_trace_files(dir, results);
  write_summaries(dir, results, html_for_all);
}

}  // namespace onejob::report
