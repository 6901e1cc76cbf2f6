#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/scenario/runner.hpp"

namespace onejob::report {

// One event for people: "[  12.345678s] api-1  api.response  status=201 job_id=4", with "!"
// before the kind when the harness injected it.
std::string human_line(const sim::TraceEvent& event);
// Simulated microseconds as seconds: "12.345678s".
std::string format_seconds(std::int64_t us);

// The first line where two JSON Lines traces differ, as a short report; nothing when equal.
std::optional<std::string> first_difference(const std::string& ours, const std::string& theirs);
// What keeps `text` from being a onejob trace (JSON Lines of events with seq, t_us, node and
// kind), or nullopt when it is one.
std::optional<std::string> trace_problem(const std::string& text);

// `text` safe inside an XML attribute or element (control characters XML 1.0 forbids become '?').
std::string xml_escape(std::string_view text);

// Writes `content` to `path`, replacing it. Throws std::runtime_error when it cannot.
void write_file(const std::filesystem::path& path, const std::string& content);

// The command line that reruns one scenario with the same seed. Its paths are absolute and
// shell-quoted, so the line works pasted in any directory.
std::string replay_command(const scenario::RunResult& result);
// The command line that reruns a repro file (which holds its own seed) with these defects.
std::string repro_replay_command(std::string_view repro_file, const Defects& defects);
// `path` made absolute against the working directory, `.` and `..` folded (symbolic links
// kept); `path` itself when the working directory cannot be read.
std::string absolute_path(std::string_view path);

// `text` as one shell word: as it is when it needs no quoting, else in single quotes.
std::string shell_quote(std::string_view text);
// The command that runs this program, as the replay lines print it: set once by main() from
// argv[0], made absolute when it is a path (default "onejob").
void set_program(std::string path);
const std::string& program();

// The `--defect NAME` flags that turn `defects` on, each with a leading space ("" for none).
std::string defect_flags(const Defects& defects);

// "PASS  name  seed=N  trace=HASH  simulated=S" for the console.
std::string summary_line(const scenario::RunResult& result);

// The whole run for people: one line per scenario, each failure's violations with the first
// offending event and the replay command, and a total line.
std::string text_summary(const std::vector<scenario::RunResult>& results);

// {"scenarios","passed","failed","results":[{"name","file","seed","status","trace_hash",
//  "violations":[{"rule","clause","category","message","safety","evidence","event",
//  "leading_events"}]}]}; "event" is the offending trace event or null.
std::string summary_json(const std::vector<scenario::RunResult>& results);

// One <testcase> per scenario, failures carrying their violations.
std::string junit_xml(const std::vector<scenario::RunResult>& results);

// Writes summary.txt, summary.json, junit.xml, traces/<name>.jsonl and, for every failing
// scenario (every scenario with `html_for_all`), the timeline html/<name>.html into `dir`
// (created if needed). The traces and pages the previous write_reports in `dir` wrote are
// removed first, as its manifest (`dir`/.onejob-reports) lists them; no other file is.
// Throws std::filesystem::filesystem_error or std::runtime_error when the files cannot be
// written.
void write_reports(const std::filesystem::path& dir,
                   const std::vector<scenario::RunResult>& results, bool html_for_all = false);
// write_reports in two steps, for results whose traces were not hashed (RunOptions::trace_text
// off): write_traces removes the previous reports' files, writes traces/<name>.jsonl and sets
// each result's trace_hash from the bytes written, so a big load's trace is rendered once;
// write_summaries then writes the rest. Throw as write_reports.
void write_traces(const std::filesystem::path& dir, std::vector<scenario::RunResult>& results);
void write_summaries(const std::filesystem::path& dir,
                     const std::vector<scenario::RunResult>& results, bool html_for_all = false);

}  // namespace onejob::report
