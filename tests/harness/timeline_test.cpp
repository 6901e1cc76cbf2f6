#include "harness/report/timeline.hpp"

#include <algorithm>
#include <string>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "harness/scenario/loader.hpp"

#include "tests/support/scenarios.hpp"

namespace onejob::report {
namespace {

std::size_t count(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The element opening that carries `marker`, from its '<' to its '>'.
std::string element_with(const std::string& html, std::string_view marker) {
  const auto at = html.find(marker);
  if (at == std::string::npos) return {};
  const auto open = html.rfind('<', at);
  return html.substr(open, html.find('>', at) - open + 1);
}

nlohmann::json page_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"trace-data\">";
  const auto begin = html.find(open);
  BOOST_REQUIRE(begin != std::string::npos);
  const auto end = html.find("</script>", begin);
  return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

scenario::RunResult reverse_order(Defects defects = {}) {
  const auto spec = scenario::load_scenario_file(std::string(ONEJOB_SCENARIO_DIR) +
                                                 "/reverse_order_completion.yaml");
  scenario::RunOptions options;
  options.defects = defects;
  return scenario::run_scenario(spec, options);
}

BOOST_AUTO_TEST_SUITE(timeline)

BOOST_AUTO_TEST_CASE(reverse_order_completion_shows_winner_discarded_result_and_cancel) {
  const auto result = reverse_order();
  BOOST_REQUIRE(result.passed());
  const auto html = timeline_html(result, "onejob replay x.yaml --seed 22");
  // One lane per node, each with its role.
  for (const auto* lane :
       {"class=\"lane client\" data-node=\"browser\"", "class=\"lane client\" data-node=\"ops\"",
        "class=\"lane lb\" data-node=\"lb\"", "class=\"lane api\" data-node=\"api-1\"",
        "class=\"lane worker\" data-node=\"worker-1\"", "class=\"lane store\" data-node=\"store\"",
        "class=\"lane provider\" data-node=\"alpha\"",
        "class=\"lane provider\" data-node=\"beta\""}) {
    BOOST_TEST_CONTEXT(lane) { BOOST_TEST(count(html, lane) == 1u); }
  }
  // The job: attempt 2 (the fallback) won, attempt 1's late answer was discarded, and attempt 1
  // was cancelled by the operator.
  BOOST_TEST(count(html, "id=\"job-1\"") == 1u);
  BOOST_TEST(count(html, "won by attempt 1002") == 1u);
  BOOST_TEST(count(html, "class=\"cas winner\"") == 1u);
  BOOST_TEST(count(html, "class=\"cas discarded\"") == 1u);
  BOOST_TEST(count(html, "class=\"cancel\"") == 1u);
  BOOST_TEST(count(html, "<rect class=\"bar DISCARDED\"") == 1u);
  BOOST_TEST(count(html, "<rect class=\"bar SUCCEEDED\"") == 1u);
  BOOST_TEST(count(html, "class=\"execution\"") == 2u);  // each attempt ran once
  // Its winner's row is attempt 2's: the winner mark follows attempt 2's label.
  BOOST_TEST(html.find("class=\"cas winner\"") > html.find("attempt 1002 · beta"));
  BOOST_TEST(html.find("class=\"cas discarded\"") < html.find("attempt 1002 · beta"));
  BOOST_TEST(count(html, "<circle class=\"violation-marker\"") == 0u);
  BOOST_TEST(count(html, "data-verdict=\"pass\"") == 1u);
  BOOST_TEST(count(html, "onejob replay x.yaml --seed 22") == 1u);
  BOOST_TEST(count(html, "<dd id=\"seed\">22</dd>") == 1u);
  BOOST_TEST(count(html, "class=\"mark reached\"") == result.marks.size());

  const auto data = page_data(html);
  BOOST_TEST(data["events"].size() == result.history.size());
  std::set<std::string> edge_kinds;
  for (const auto& edge : data["edges"]) edge_kinds.insert(edge[2].get<std::string>());
  BOOST_TEST((edge_kinds == std::set<std::string>{"call", "reply", "request", "response"}));
}

BOOST_AUTO_TEST_CASE(a_failing_run_marks_its_first_offending_event) {
  const auto result = reverse_order(Defects{}.set(Defect::blind_overwrite));
  BOOST_REQUIRE(!result.passed());
  BOOST_REQUIRE(result.violations.front().event_seq.has_value());
  const auto seq = std::to_string(*result.violations.front().event_seq);
  const auto html = timeline_html(result, "replay");
  BOOST_TEST(count(html, "data-verdict=\"fail\"") == 1u);
  BOOST_TEST(count(html, "class=\"violation\"") == result.violations.size());
  BOOST_TEST(element_with(html, "class=\"rule\"").find("span") != std::string::npos);
  // The offending event is listed, and marked on the job's view at that event.
  BOOST_TEST(count(html, "<li class=\"offending\" data-seq=\"" + seq + "\"") >= 1u);
  BOOST_TEST(element_with(html, "class=\"violation-marker\"").find("data-seq=\"" + seq + "\"") !=
             std::string::npos);
  // Two winners: the broken story shows.
  BOOST_TEST(count(html, "class=\"cas winner\"") == 2u);
  // The page data flags it for the lanes' marker.
  const auto data = page_data(html);
  const auto& offending = data["events"][*result.violations.front().event_seq - 1];
  BOOST_TEST((offending[3].get<int>() & 2) == 2);
  // The page opens on the first violation's offending event and all its evidence: both
  // winners' compare-and-swaps, 25 s apart, are in the opening.
  const auto& opening = data["opening"];
  BOOST_REQUIRE(!opening.empty());
  BOOST_TEST(opening[0].get<std::uint64_t>() == *result.violations.front().event_seq - 1);
  int winners = 0;
  for (const auto& index : opening) {
    const auto& event = data["events"][index.get<std::size_t>()];
    if ((event[3].get<int>() & 16) != 0) ++winners;  // WINNER
  }
  BOOST_TEST(winners == 2);
}

BOOST_AUTO_TEST_CASE(a_long_run_pages_its_lanes_around_the_first_violation) {
  const auto result = reverse_order(Defects{}.set(Defect::blind_overwrite));
  const auto offending = *result.violations.front().event_seq;  // 49 of 59
  const auto html = timeline_html(result, "replay", 20);
  const auto data = page_data(html);
  const auto first = data["first"].get<std::size_t>();
  BOOST_TEST(data["events"].size() == 20u);
  BOOST_TEST(first == offending - 1 - 10);  // centred on the offending event
  BOOST_TEST(count(html, "id=\"page-window\"") == 1u);
  BOOST_TEST(count(html, "events #" + std::to_string(first + 1) + "–#" +
                             std::to_string(first + 20) + " of " +
                             std::to_string(result.history.size())) == 1u);
  // The violation's flag sits on its event inside the window; edges stay inside it.
  BOOST_TEST((data["events"][offending - 1 - first][3].get<int>() & 2) == 2);
  for (const auto& edge : data["edges"]) {
    BOOST_TEST(edge[0].get<std::size_t>() < 20u);
    BOOST_TEST(edge[1].get<std::size_t>() < 20u);
  }
  // The whole run fits the default: no window.
  BOOST_TEST(count(timeline_html(result, "replay"), "id=\"page-window\"") == 0u);
}

BOOST_AUTO_TEST_CASE(the_page_is_self_contained_and_survives_hostile_strings) {
  auto spec = test::double_click_spec(2, 1);
  for (auto& entry : spec.timeline) {
    // Markup, then quotes that escape to six bytes each: long text must not break an element.
    entry.create_job.key = "</script><script>alert(1)</script>" + std::string(200, '"');
  }
  const auto result = scenario::run_scenario(spec);
  const auto html = timeline_html(result, "replay '</script>'");
  BOOST_TEST(count(html, "<script") == 2u);  // the data and the page's own script
  BOOST_TEST(count(html, "</script>") == 2u);
  BOOST_TEST(count(html, "alert(1)</script>") == 0u);
  BOOST_TEST(count(html, "<link") == 0u);
  BOOST_TEST(count(html, "src=") == 0u);
  BOOST_TEST(count(html, "@import") == 0u);
  BOOST_TEST(count(html, "url(http") == 0u);
  BOOST_TEST(count(html, "default-src 'none'") == 1u);
  BOOST_TEST(count(html, "<line class=\"commit\"") >= 2u);
  BOOST_TEST(count(html, "<line class=\"commit\"") == count(html, "</title></line>"));
  BOOST_TEST(page_data(html)["events"].size() == result.history.size());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::report
