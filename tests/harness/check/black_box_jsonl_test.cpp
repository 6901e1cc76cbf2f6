// The black-box histories' JSON Lines form reads back what it wrote and refuses malformed lines
// by line and column; the page of a history outlines what each finding names.
#include "harness/check/black_box_jsonl.hpp"

#include <sstream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "harness/check/black_box.hpp"
#include "harness/report/black_box_timeline.hpp"

#include "tests/harness/check/black_box_story.hpp"

namespace onejob::check::black_box {
namespace {

using nlohmann::json;
using namespace testing;  // NOLINT: the stories' vocabulary

}  // namespace

BOOST_AUTO_TEST_SUITE(black_box_jsonl)

BOOST_AUTO_TEST_CASE(a_history_written_reads_back_to_the_same_verdicts) {
  auto s = clean();
  s.create("r9", 200, "alice", "k1").answer("r9", 210, 201, "8").quiet(300);
  std::string text;
  const auto& h = s.history();
  // Written in line order: requests, responses and executions interleaved as the story made them.
  std::vector<std::pair<std::uint64_t, std::string>> lines;
  for (const auto& r : h.requests) lines.emplace_back(r.line, to_jsonl(r));
  for (const auto& r : h.responses) lines.emplace_back(r.line, to_jsonl(r));
  for (const auto& e : h.executions) lines.emplace_back(e.line, to_jsonl(e));
  lines.emplace_back(14, quiet_jsonl(300));
  std::ranges::sort(lines);
  for (const auto& [number, line] : lines) text += line + "\n";
  std::istringstream in(text);
  const History read = read_jsonl(in, "h.jsonl");
  BOOST_TEST(read.requests.size() == h.requests.size());
  BOOST_TEST(read.responses.size() == h.responses.size());
  BOOST_TEST(read.executions.size() == h.executions.size());
  BOOST_TEST((read.quiet_from_us == std::optional<std::int64_t>(300)));
  const auto found = judge(read);
  BOOST_REQUIRE_EQUAL(found.size(), 1u);
  BOOST_TEST(found[0].clause == "B1.two_job_ids");
  BOOST_TEST(found[0].lines == (std::vector<std::uint64_t>{13, 2}));
}

BOOST_AUTO_TEST_CASE(a_policy_line_declares_the_attempt_limit) {
  std::istringstream in(policy_jsonl(3, std::nullopt) + "\n");
  BOOST_TEST((read_jsonl(in, "h").attempt_limit == std::optional<int>(3)));
}

BOOST_AUTO_TEST_CASE(a_created_location_and_a_location_read_back_as_written) {
  Request create{.line = 1, .t_us = 0, .id = "r1", .client = "c", .owner = "a", .action = "create"};
  create.key = "k";
  create.body = nlohmann::json::object();
  Response answer{.line = 2, .t_us = 5, .id = "r1", .status = 201};
  answer.job = "7";
  answer.location = "";  // the answer had no Location header
  std::istringstream in(policy_jsonl(std::nullopt, std::nullopt, "/v1/jobs/{job}") + "\n" +
                        to_jsonl(create) + "\n" + to_jsonl(answer) + "\n");
  const History h = read_jsonl(in, "h");
  BOOST_TEST((h.created_location == std::optional<std::string>("/v1/jobs/{job}")));
  BOOST_TEST((h.responses.at(0).location == std::optional<std::string>("")));
  BOOST_TEST(clauses(h) == std::vector<std::string>{"B16.location_wrong"});
}

BOOST_AUTO_TEST_CASE(integer_job_ids_read_as_their_text) {
  std::istringstream in(
      R"({"kind":"request","t_us":0,"id":"r1","owner":"a","action":"create","key":"k","body":{}})"
      "\n"
      R"({"kind":"response","t_us":1,"id":"r1","status":201,"job":7})"
      "\n");
  const History h = read_jsonl(in, "h");
  BOOST_TEST((h.responses.at(0).job == std::optional<std::string>("7")));
}

BOOST_AUTO_TEST_CASE(malformed_lines_are_named_by_line_and_column_or_field) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"kind\":\"quiet\",\"t_us\":1}\n{\"kind\": nope}\n", "h:2:11: syntax error"},
      {"[1,2]\n", "h:1:1: expected a JSON object"},
      {R"({"t_us":1})", "h:1: field \"kind\": missing"},
      {R"({"kind":"quiet","t_us":-1})", "h:1: field \"t_us\": expected microseconds"},
      {R"({"kind":"quiet","t_us":1,"extra":2})", "h:1: field \"extra\": unknown field"},
      {R"({"kind":"gossip","t_us":1})", "h:1: field \"kind\": expected request, response"},
      {R"({"kind":"request","t_us":1,"id":"r","owner":"a","action":"retry","job":"7","attempt":"1"})",
       "h:1: field \"attempt\": only a cancel names an attempt"},
      {R"({"kind":"request","t_us":1,"id":"r","owner":"a","action":"create","body":{}})",
       "h:1: field \"key\": a create needs its idempotency key"},
      {R"({"kind":"request","t_us":1,"id":"r","owner":"a","action":"read"})",
       "h:1: field \"job\": a read needs the job it acts on"},
      {R"({"kind":"request","t_us":1,"id":"r","owner":"a","action":"delete","job":1})",
       "h:1: field \"action\": expected create, read, retry or cancel"},
      {R"({"kind":"policy","t_us":0,"attempt_limit":0})",
       "h:1: field \"attempt_limit\": expected an integer from 1 to 1000000"},
      {R"({"kind":"policy","t_us":0,"attempt_limit":2})"
       "\n"
       R"({"kind":"policy","t_us":0,"attempt_limit":2})",
       "h:2: field \"kind\": a second policy line"},
      {R"({"kind":"policy","t_us":0,"created_location":"/jobs/"})",
       "h:1: field \"created_location\": expected a text naming the job as {job}"},
      {R"({"kind":"response","t_us":1,"id":"r","status":700})",
       "h:1: field \"status\": expected an HTTP status"},
      {R"({"kind":"response","t_us":1,"id":"nobody","status":200})",
       "h:1: field \"id\": a response to request \"nobody\", which the history does not have"},
      {R"({"kind":"execution","t_us":5,"provider":"p","provider_key":"k","input":{},)"
       R"("outcome":"ok","ended_us":4})",
       "h:1: field \"ended_us\": before the execution started"},
      {R"({"kind":"request","t_us":1,"id":"r","owner":"a","action":"read","job":1})"
       "\n"
       R"({"kind":"request","t_us":1,"id":"r","owner":"a","action":"read","job":1})",
       "h:2: field \"id\": request \"r\" appears twice"},
      {std::string(300, '[') + std::string(300, ']'), "h:1: nested deeper than 256 levels"},
  };
  for (const auto& [text, expected] : cases) {
    std::istringstream in(text);
    try {
      read_jsonl(in, "h");
      BOOST_ERROR("accepted: " << text);
    } catch (const HistoryError& error) {
      BOOST_TEST(std::string(error.what()).starts_with(expected),
                 "for " << text << "\n  got: " << error.what() << "\n  expected: " << expected);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(black_box_page)

BOOST_AUTO_TEST_CASE(the_page_outlines_what_each_finding_names_and_escapes_what_it_shows) {
  auto s = clean();
  s.certify(1, 5, "beta", "ok")
      .execute(150, 160, "beta", "p7-2", "ok", kOther)
      .act("r9", 200, "alice", "read", "7")
      .answer("r9", 210, 200, "7", "succeeded", kOther);
  auto history = s.history();
  history.requests.front().client = "<script>alert(1)</script>";
  const auto findings = judge(history);
  BOOST_REQUIRE_EQUAL(findings.size(), 1u);
  const std::string page = report::black_box_timeline_html(history, findings, "a <title>");
  BOOST_TEST(page.find("B4.result_changed") != std::string::npos);
  // Every line the finding names is an anchor the list links to, drawn outlined.
  for (const auto line : findings.front().lines) {
    const std::string anchor = "id=\"line-" + std::to_string(line) + "\"";
    BOOST_TEST(page.find(anchor) != std::string::npos, anchor);
    BOOST_TEST(page.find("href=\"#line-" + std::to_string(line) + "\"") != std::string::npos);
  }
  BOOST_TEST(page.find("class=\"finding\"") != std::string::npos);
  BOOST_TEST(page.find("<script>") == std::string::npos);
  BOOST_TEST(page.find("a &lt;title&gt;") != std::string::npos);
  // A clean history's page says so, and outlines nothing.
  const std::string clean_page = report::black_box_timeline_html(clean().history(), {}, "clean");
  BOOST_TEST(clean_page.find("none: every black-box rule holds") != std::string::npos);
  BOOST_TEST(clean_page.find("class=\"finding\"") == std::string::npos);
  // A long history's page draws what it may and says how much it left out.
  const std::string short_page = report::black_box_timeline_html(history, findings, "cut", 4);
  BOOST_TEST(short_page.find("the lanes draw the first 4 of ") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob::check::black_box
