#include "harness/scenario/runner.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "system/adapters/memory_store.hpp"
#include "system/domain/check.hpp"
#include "system/events/api_events.hpp"

#include "harness/events/client_events.hpp"
#include "harness/report/report.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/sim/rng.hpp"

#include "tests/support/broken_stores.hpp"
#include "tests/support/scenarios.hpp"
#include "tests/support/typed_events.hpp"

namespace onejob {
// Plants corruption in MemoryStore's indexes, to show the store's own checks catch it.
struct MemoryStoreTestAccess {
  // Points the live-attempt index of `job` at `attempt`, whatever the rows say.
  static void point_live_index(MemoryStore& store, JobId job, AttemptId attempt) {
    store.live_attempt_by_job_[job] = attempt;
  }
};
}  // namespace onejob

namespace onejob::scenario {
namespace {

template <events::EventType T>
std::size_t count_of(const RunResult& result) {
  return test::events_of<T>(result.history).size();
}

BOOST_AUTO_TEST_SUITE(scenario_runner)

BOOST_AUTO_TEST_CASE(a_double_click_gives_one_job_and_passes) {
  auto spec = test::double_click_spec(2, 1);
  spec.expect.same_job_id.push_back({{1, 2}, {}});
  spec.expect.jobs = 1;
  const auto result = run_scenario(spec);
  BOOST_TEST(result.passed());
  BOOST_TEST(count_of<events::JobCreated>(result) == 1u);
  BOOST_TEST(count_of<events::ClientReceived>(result) == 2u);
}

BOOST_AUTO_TEST_CASE(same_seed_gives_a_byte_identical_trace) {
  const auto spec = test::double_click_spec(5, 11);
  const auto a = run_scenario(spec);
  const auto b = run_scenario(spec);
  BOOST_TEST(sim::render_jsonl(a.history) == sim::render_jsonl(b.history));
  BOOST_TEST(a.trace_hash == b.trace_hash);
  BOOST_TEST(a.trace_hash.size() == 16u);
}

BOOST_AUTO_TEST_CASE(different_seeds_explore_different_interleavings) {
  const auto spec = test::double_click_spec(5, 0);
  std::set<std::string> hashes;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    hashes.insert(run_scenario(spec, {.seed = seed, .make_store = {}}).trace_hash);
  }
  BOOST_TEST(hashes.size() > 5u);
}

BOOST_AUTO_TEST_CASE(the_determinism_check_names_the_first_event_where_runs_part) {
  const auto spec = test::double_click_spec(3, 5);
  const auto a = run_scenario(spec);
  BOOST_TEST(!compare_runs(a, run_scenario(spec)).has_value());
  // A run that is not a function of its seed: here, simply another seed.
  const auto b = run_scenario(spec, {.seed = 6, .make_store = {}});
  const auto broken = compare_runs(a, b);
  BOOST_REQUIRE(broken.has_value());
  BOOST_TEST(broken->clause == "determinism.traces_differ");
  BOOST_TEST(broken->message.find("instead of " + a.trace_hash) != std::string::npos);
  std::size_t same = 0;
  while (a.history[same].event == b.history[same].event &&
         a.history[same].at == b.history[same].at && a.history[same].node == b.history[same].node) {
    ++same;
  }
  BOOST_TEST(broken->event_seq.value_or(0) == same + 1);
}

// Runs that were not hashed (as the fuzzer runs them) are compared event by event; the hashes
// are worked out only for the report. One field changed in one event is a difference there.
BOOST_AUTO_TEST_CASE(unhashed_runs_are_compared_event_by_event) {
  const auto spec = test::double_click_spec(3, 5);
  const RunOptions unhashed{.seed = std::nullopt, .make_store = {}, .trace_text = false};
  const auto a = run_scenario(spec, unhashed);
  BOOST_TEST(a.trace_hash.empty());
  BOOST_TEST(!compare_runs(a, run_scenario(spec, unhashed)).has_value());
  // A history is packed: an edited one is written again, event by event.
  const auto rewritten = [](const sim::History& history, std::size_t keep, auto edit) {
    sim::History out;
    for (const auto& recorded : history) {
      if (out.size() == keep) break;
      sim::TraceEvent copy = recorded;
      edit(copy);
      out.push_back(copy);
    }
    return out;
  };
  auto b = run_scenario(spec, unhashed);
  const std::size_t changed = b.history.size() / 2;
  b.history = rewritten(b.history, b.history.size(), [&](sim::TraceEvent& recorded) {
    if (recorded.seq == changed + 1) recorded.event.with("extra", std::int64_t{1});
  });
  const auto broken = compare_runs(a, b);
  BOOST_REQUIRE(broken.has_value());
  BOOST_TEST(broken->event_seq.value_or(0) == changed + 1);
  BOOST_TEST(broken->message.find("instead of " + sim::hash_jsonl(a.history)) != std::string::npos);
  BOOST_TEST(broken->message.find("gave trace " + sim::hash_jsonl(b.history)) != std::string::npos);
  // A run that stops early differs at the first event it lacks.
  b = run_scenario(spec, unhashed);
  b.history = rewritten(b.history, b.history.size() - 1, [](sim::TraceEvent&) {});
  const auto shorter = compare_runs(a, b);
  BOOST_REQUIRE(shorter.has_value());
  BOOST_TEST(shorter->event_seq.value_or(0) == a.history.size());
}

// The fuzzer's determinism check runs a case again only to compare its history: unjudged, the run
// has the judged run's history, and neither violations nor job ends where the judged run has them.
BOOST_AUTO_TEST_CASE(an_unjudged_run_has_the_same_history_and_no_verdict) {
  const auto spec = test::double_click_spec(2, 1);
  const auto broken_store = [] { return std::make_unique<test::StoreWithoutUniqueKey>(); };
  const auto judged = run_scenario(spec, {.seed = std::nullopt, .make_store = broken_store});
  BOOST_TEST(!judged.passed());
  BOOST_TEST(!judged.job_ends.empty());
  const auto unjudged =
      run_scenario(spec, {.seed = std::nullopt, .make_store = broken_store, .judge = false});
  BOOST_TEST(unjudged.passed());
  BOOST_TEST(unjudged.job_ends.empty());
  BOOST_TEST(unjudged.trace_hash == judged.trace_hash);
  BOOST_TEST(!compare_runs(judged, unjudged).has_value());
}

BOOST_AUTO_TEST_CASE(a_store_without_the_unique_constraint_is_caught_by_i1) {
  const auto result = run_scenario(test::double_click_spec(2, 1),
                                   {.seed = std::nullopt, .make_store = [] {
                                      return std::make_unique<test::StoreWithoutUniqueKey>();
                                    }});
  BOOST_TEST(!result.passed());
  BOOST_REQUIRE(!result.violations.empty());
  BOOST_TEST(result.violations[0].rule == "I1");
  BOOST_TEST(result.violations[0].event_seq.has_value());
}

std::vector<std::string> rules_broken(const RunResult& result) {
  std::vector<std::string> rules;
  for (const auto& v : result.violations) {
    BOOST_TEST_MESSAGE(v.rule << ": " << v.message);
    if (check::is_safety(v)) rules.push_back(v.rule);
  }
  return rules;
}

template <typename BrokenStore>
RunResult run_on(const std::string& scenario) {
  const auto spec = load_scenario_file(std::string(ONEJOB_SCENARIO_DIR) + "/" + scenario);
  return run_scenario(
      spec, {.seed = std::nullopt, .make_store = [] { return std::make_unique<BrokenStore>(); }});
}

BOOST_AUTO_TEST_CASE(a_store_that_ignores_lease_tokens_is_caught_by_i10) {
  const auto good = run_scenario(
      load_scenario_file(std::string(ONEJOB_SCENARIO_DIR) + "/zombie_worker_fenced.yaml"));
  BOOST_TEST(rules_broken(good).empty());
  const auto rules = rules_broken(run_on<test::StoreIgnoringFences>("zombie_worker_fenced.yaml"));
  BOOST_TEST(std::ranges::count(rules, "I10") >= 1);
}

BOOST_AUTO_TEST_CASE(a_store_that_shows_a_discarded_result_to_readers_is_caught_by_i5) {
  const auto result = run_on<test::StoreShowingLostResults>("reverse_order_completion.yaml");
  const auto rules = rules_broken(result);
  BOOST_TEST(std::ranges::count(rules, "I5") == 1);
  BOOST_TEST(result.violations[0].clause == "I5.read_wrong_result");
}

BOOST_AUTO_TEST_CASE(a_store_whose_reads_hide_a_completion_is_caught_by_i5) {
  const auto result = run_on<test::StoreHidingCompletions>("reverse_order_completion.yaml");
  const auto rules = rules_broken(result);
  BOOST_TEST(std::ranges::count(rules, "I5") == 1);
  BOOST_TEST(result.violations[0].clause == "I5.read_after_win_not_won");
}

BOOST_AUTO_TEST_CASE(a_wrong_expectation_fails_and_names_the_response) {
  auto spec = test::double_click_spec(2, 1);
  spec.expect.responses.push_back({1, {422}, {7, 5}});
  const auto result = run_scenario(spec);
  BOOST_REQUIRE(result.violations.size() == 1u);
  BOOST_TEST(result.violations[0].rule == "expect");
  BOOST_TEST(result.violations[0].clause == "expect.response_status");
  BOOST_TEST(result.violations[0].message.find("line 7") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(replay_lines_quote_what_a_shell_would_split) {
  BOOST_TEST(report::shell_quote("scenarios/x.yaml") == "scenarios/x.yaml");
  BOOST_TEST(report::shell_quote("my scenarios/it's.yaml") == R"('my scenarios/it'\''s.yaml')");
  BOOST_TEST(report::shell_quote("") == "''");
  BOOST_TEST(report::shell_quote("$(rm -rf /)") == "'$(rm -rf /)'");
}

BOOST_AUTO_TEST_CASE(reports_carry_the_summary_contract) {
  auto failing = test::double_click_spec(2, 1);
  failing.expect.jobs = 2;
  const std::vector<RunResult> results = {run_scenario(test::double_click_spec(2, 1)),
                                          run_scenario(failing)};
  const auto summary = nlohmann::json::parse(report::summary_json(results));
  BOOST_TEST(summary["scenarios"] == 2);
  BOOST_TEST(summary["passed"] == 1);
  BOOST_TEST(summary["failed"] == 1);
  const auto& fail = summary["results"][1];
  for (const char* field : {"name", "file", "seed", "status", "trace_hash", "violations"}) {
    BOOST_TEST(fail.contains(field), field);
  }
  BOOST_TEST(fail["status"] == "fail");
  BOOST_TEST(fail["violations"][0]["rule"] == "expect");
  BOOST_TEST(fail["violations"][0]["clause"] == "expect.jobs");
  BOOST_TEST(fail["violations"][0]["category"] == "expectation");
  BOOST_TEST(fail["violations"][0].contains("event"));
  // The file as an absolute path, so that the line works pasted in another directory.
  BOOST_TEST(fail["replay"] == "onejob replay " +
                                   report::shell_quote(report::absolute_path("generated.yaml")) +
                                   " --seed 1 --trace");
  BOOST_TEST(report::absolute_path("generated.yaml").front() == '/');
  BOOST_TEST(report::absolute_path("/a/./b/../c.yaml") == "/a/c.yaml");
  const auto junit = report::junit_xml(results);
  BOOST_TEST(junit.find("<testsuites tests=\"2\" failures=\"1\">") != std::string::npos);
  BOOST_TEST(junit.find("<failure type=\"expect\"") != std::string::npos);
}

// XML 1.0's Char production, decoded strictly: what a conforming parser accepts.
bool well_formed_xml_text(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t count = lead < 0x80         ? 1
                        : (lead >> 5) == 6  ? 2
                        : (lead >> 4) == 14 ? 3
                        : (lead >> 3) == 30 ? 4
                                            : 0;
    if (count == 0 || i + count > text.size()) return false;
    char32_t c = count == 1 ? lead : lead & (0x7F >> count);
    for (std::size_t k = 1; k < count; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      c = (c << 6) | (next & 0x3F);
    }
    const char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < least[count] || (c >= 0xD800 && c <= 0xDFFF)) return false;
    const bool allowed = c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
                         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
    if (!allowed) return false;
    i += count;
  }
  return true;
}

BOOST_AUTO_TEST_CASE(any_bytes_in_a_message_give_valid_utf8_json_and_well_formed_xml) {
  auto failing = test::double_click_spec(2, 1);
  failing.expect.jobs = 2;
  auto result = run_scenario(failing);
  std::string hostile;
  for (int byte = 0; byte < 256; ++byte) hostile += static_cast<char>(byte);
  // U+FFFE, U+FFFF, a surrogate, an overlong '/', a code point past U+10FFFF, a cut sequence.
  hostile += "\xEF\xBF\xBE \xEF\xBF\xBF \xED\xA0\x80 \xC0\xAF \xF4\x90\x80\x80 \xE2\x82";
  hostile += "]]> <tag a=\"b\"> &amp; ' \" ok: \xC3\xA9 \xF0\x9F\x98\x80";
  result.violations.push_back(check::violation("I1.answered_another_job", hostile));
  result.name = hostile;
  const std::vector<RunResult> results = {result};
  // JSON: a strict parser (nlohmann rejects invalid UTF-8) reads it back.
  const auto summary = report::summary_json(results);
  BOOST_REQUIRE(nlohmann::json::parse(summary).is_object());
  // XML: every character is one XML 1.0 allows, and the document parses.
  const auto junit = report::junit_xml(results);
  BOOST_TEST(well_formed_xml_text(junit));
  std::istringstream in(junit);
  boost::property_tree::ptree tree;
  BOOST_REQUIRE_NO_THROW(boost::property_tree::read_xml(in, tree));
  BOOST_TEST(tree.get<int>("testsuites.<xmlattr>.failures") == 1);
  // The readable parts survive.
  BOOST_TEST(junit.find("ok: \xC3\xA9 \xF0\x9F\x98\x80") != std::string::npos);
}

// A corrupted index (job 1's live slot already taken by a phantom attempt 99, so creating job
// 1 leaves it pointing there) is caught by MemoryStore's always-on checks after the write that
// trips over it, and the run reports it as a `run` violation with the assertion's message, not a
// pass.
BOOST_AUTO_TEST_CASE(a_corrupted_memory_store_index_is_a_run_violation) {
  const auto spec = test::double_click_spec(2, 1);
  const auto misfiled = run_scenario(
      spec, {.seed = std::nullopt, .make_store = [] {
               auto store = std::make_unique<MemoryStore>(Defects{}, /*check_indexes=*/true);
               MemoryStoreTestAccess::point_live_index(*store, 1, 99);
               return std::unique_ptr<Store>(std::move(store));
             }});
  BOOST_REQUIRE(!misfiled.violations.empty());
  const auto& violation = misfiled.violations.front();
  BOOST_TEST(violation.clause == "run.assertion");
  BOOST_TEST(violation.message.find("system/adapters/memory_store.cpp:") != std::string::npos);
  BOOST_TEST(violation.message.find("MemoryStore, job 1: the live-attempt index disagrees with "
                                    "the attempts' states") != std::string::npos,
             violation.message);

  // The same plant with the checks off passes unnoticed by every rule: the checks are what
  // catch it.
  const auto unchecked = run_scenario(
      spec, {.seed = std::nullopt, .make_store = [] {
               auto store = std::make_unique<MemoryStore>(Defects{}, /*check_indexes=*/false);
               MemoryStoreTestAccess::point_live_index(*store, 1, 99);
               return std::unique_ptr<Store>(std::move(store));
             }});
  BOOST_TEST(unchecked.passed());
}

// A live-attempt index that names an attempt of another job is caught by the check at the end
// of the run even when no later write touches that job.
BOOST_AUTO_TEST_CASE(the_full_index_check_names_a_stale_live_slot) {
  MemoryStore store(Defects{}, /*check_indexes=*/true);
  MemoryStoreTestAccess::point_live_index(store, 7, 3);
  try {
    store.check_all_indexes();
    BOOST_FAIL("a live slot of a job with no row passed the check");
  } catch (const AssertionFailure& failure) {
    BOOST_TEST(
        failure.what().find("the live-attempt index names attempt 3 of job 7") != std::string::npos,
        failure.what());
  }
}

// A report folder is shared with whatever else the user keeps there: a second run removes the
// first run's traces and pages that it does not write again (so no stale page looks current),
// and never a file onejob did not write, even one named like its own.
BOOST_AUTO_TEST_CASE(reports_remove_only_what_they_wrote) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "onejob-reports-remove-only-their-own";
  fs::remove_all(dir);
  fs::create_directories(dir / "html");
  fs::create_directories(dir / "traces");
  report::write_file(dir / "html" / "mine.html", "the user's page");
  report::write_file(dir / "traces" / "mine.jsonl", "the user's trace");

  auto failing = test::double_click_spec(2, 1);
  failing.name = "first-run";
  failing.expect.jobs = 2;
  report::write_reports(dir, {run_scenario(failing)}, false);
  BOOST_TEST(fs::exists(dir / "html" / "first-run.html"));
  BOOST_TEST(fs::exists(dir / "traces" / "first-run.jsonl"));

  // A manifest edited to point elsewhere removes nothing outside traces/ and html/.
  report::write_file(dir / "keep.txt", "kept");
  {
    std::ofstream manifest(dir / ".onejob-reports", std::ios::app);
    manifest << "keep.txt\nhtml/../keep.txt\n../outside\n/etc/hostname\n";
  }
  auto second = test::double_click_spec(2, 1);
  second.name = "second-run";
  report::write_reports(dir, {run_scenario(second)}, true);
  BOOST_TEST(!fs::exists(dir / "html" / "first-run.html"));
  BOOST_TEST(!fs::exists(dir / "traces" / "first-run.jsonl"));
  BOOST_TEST(fs::exists(dir / "html" / "second-run.html"));
  BOOST_TEST(fs::exists(dir / "traces" / "second-run.jsonl"));
  BOOST_TEST(fs::exists(dir / "html" / "mine.html"));
  BOOST_TEST(fs::exists(dir / "traces" / "mine.jsonl"));
  BOOST_TEST(fs::exists(dir / "keep.txt"));
  fs::remove_all(dir);
}

// `run` hashes a trace as it writes it: the hash is that of the bytes in the file, the same as
// hashing the history in memory, and the summary written after it carries it.
BOOST_AUTO_TEST_CASE(traces_written_in_two_steps_are_hashed_as_written) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "onejob-reports-hashed-as-written";
  fs::remove_all(dir);
  const RunOptions unhashed{.seed = std::nullopt, .make_store = {}, .trace_text = false};
  std::vector<RunResult> results{run_scenario(test::double_click_spec(3, 5), unhashed)};
  BOOST_TEST(results[0].trace_hash.empty());
  report::write_traces(dir, results);
  BOOST_TEST(results[0].trace_hash == run_scenario(test::double_click_spec(3, 5)).trace_hash);
  std::ifstream in(dir / "traces" / (results[0].name + ".jsonl"), std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BOOST_TEST(sim::hex64(sim::fnv1a64(written)) == results[0].trace_hash);
  report::write_summaries(dir, results);
  std::ifstream summary(dir / "summary.json");
  const std::string json((std::istreambuf_iterator<char>(summary)),
                         std::istreambuf_iterator<char>());
  BOOST_TEST(json.find(results[0].trace_hash) != std::string::npos);
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::scenario
