// The `load:` statement: a generated load, kept as its arrivals and made into requests when
// asked for; and the timeline entry's optional texts it relies on.
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "harness/bench/generated_load.hpp"
#include "harness/scenario/loader.hpp"

#include "tests/support/scenario_text.hpp"

namespace onejob::scenario {
namespace {

using test::check_error;
using test::replace_first;

BOOST_AUTO_TEST_SUITE(scenario_load)

const std::string kLoad = R"(name: generated
seed: 3
providers:
  - {name: alpha}
  - {name: beta}
load:
  jobs: 10
  clients: 3
  owners: 2
  start: 1s
  every: 100ms
  double_click: 20%
  double_click_after: 150ms
  key: "k-{n}"
  bodies:
    - {operation: classify, provider: alpha, input: {text: "job {n}"}}
    - {operation: classify, provider: beta, input: {text: "job {n}", n: "{n}{n}"}}
)";

BOOST_AUTO_TEST_CASE(a_load_expands_into_clients_and_creates) {
  const auto spec = parse_scenario(kLoad, "s.yaml");
  BOOST_REQUIRE(spec.clients.size() == 3u);
  BOOST_TEST(spec.clients[0].name == "load-1");
  BOOST_TEST(spec.clients[0].owner == "owner-1");
  BOOST_TEST(spec.clients[1].owner == "owner-2");
  BOOST_TEST(spec.clients[2].owner == "owner-1");
  // Ten jobs, two of them (0 and 5) double-clicked: twelve creates in time order, each made
  // when asked for.
  BOOST_TEST(spec.timeline.empty());
  BOOST_REQUIRE(request_count(spec) == 12u);
  const auto entry_of = [&spec](std::size_t number) {
    TimelineEntry room;
    return TimelineEntry(request_entry(spec, number, room));
  };
  std::vector<std::string> keys;
  for (std::size_t number = 1; number <= request_count(spec); ++number) {
    const auto entry = entry_of(number);
    BOOST_TEST(entry.request == static_cast<int>(number));
    BOOST_TEST((entry.kind == TimelineEntry::Kind::create_job));
    BOOST_TEST(entry.client == entry.create_job.client);
    BOOST_TEST(entry.client == request_client(spec, number));
    BOOST_TEST((entry.at == request_at(spec, number)));
    if (number > 1) BOOST_TEST((entry.at >= request_at(spec, number - 1)));
    keys.push_back(entry.create_job.key.value_or("(none)"));
  }
  const std::vector<std::string> expected{"k-0", "k-1", "k-0", "k-2", "k-3", "k-4",
                                          "k-5", "k-6", "k-5", "k-7", "k-8", "k-9"};
  BOOST_TEST(keys == expected, boost::test_tools::per_element());
  using std::chrono::milliseconds;
  BOOST_TEST((request_at(spec, 1) == milliseconds(1000)));
  BOOST_TEST((request_at(spec, 3) == milliseconds(1150)));  // job 0 again
  BOOST_TEST((request_at(spec, 12) == milliseconds(1900)));
  // Job n goes to client (n mod 3) + 1, with body n mod 2, "{n}" replaced everywhere.
  BOOST_TEST(entry_of(2).client == "load-2");
  BOOST_TEST(entry_of(2).create_job.body ==
             R"({"input":{"n":"11","text":"job 1"},"operation":"classify","provider":"beta"})");
  BOOST_TEST(entry_of(1).create_job.body ==
             R"({"input":{"text":"job 0"},"operation":"classify","provider":"alpha"})");
  // The run lasts past the last create, as a written timeline's does.
  BOOST_TEST((run_end(spec) > milliseconds(1900)));
}

BOOST_AUTO_TEST_CASE(a_load_joins_a_written_timeline_and_its_expectations) {
  const std::string text = R"(name: mixed
seed: 1
providers: [{name: alpha}]
clients:
  - {name: browser, owner: alice}
load: {jobs: 3, every: 1s, key: null, arrivals: random}
timeline:
  - at: 0s
    create_job: {client: browser, key: a, body: {operation: classify, provider: alpha}}
expect:
  responses:
    - {request: 4, status: 201}
)";
  const auto spec = parse_scenario(text, "s.yaml");
  BOOST_REQUIRE(request_count(spec) == 4u);
  BOOST_TEST(spec.timeline.size() == 1u);
  BOOST_TEST(request_client(spec, 1) == "browser");
  BOOST_TEST(spec.clients.size() == 2u);
  for (std::size_t number = 2; number <= 4; ++number) {
    TimelineEntry room;
    const auto& entry = request_entry(spec, number, room);
    BOOST_TEST(entry.request == static_cast<int>(number));
    BOOST_TEST(!entry.create_job.key.has_value());
    // Random arrivals stay within their own second.
    const auto second = static_cast<int>(number) - 2;
    BOOST_TEST(
        (entry.at >= std::chrono::seconds(second) && entry.at < std::chrono::seconds(second + 1)));
  }
  // The same seed draws the same instants; another seed others.
  const auto again = parse_scenario(text, "s.yaml");
  const auto other = parse_scenario(replace_first(text, "seed: 1", "seed: 2"), "s.yaml");
  bool all_same = true;
  for (std::size_t number = 2; number <= 4; ++number) {
    BOOST_TEST((request_at(again, number) == request_at(spec, number)));
    all_same = all_same && request_at(other, number) == request_at(spec, number);
  }
  BOOST_TEST(!all_same);
}

BOOST_AUTO_TEST_CASE(a_bad_load_is_refused_with_its_place) {
  const auto with = [](const std::string& from, const std::string& to) {
    return replace_first(kLoad, from, to);
  };
  check_error(with("  jobs: 10", "  jobs: 0"), "7:9", "load.jobs: expected 1 to 1000000");
  check_error(with("  jobs: 10", "  jobs: 1000001"), "7:9", "load.jobs: expected 1 to 1000000");
  check_error(with("  owners: 2", "  owners: 4"), "9:11", "load.owners: expected an integer");
  check_error(with("  every: 100ms", "  over: 1s\n  every: 100ms"), "7:3",
              "give either every or over");
  check_error(with("  every: 100ms\n", ""), "7:3", "missing how the arrivals are spaced");
  check_error(with("  every: 100ms", "  over: 5us"), "11:9",
              "shorter than one microsecond per job");
  check_error(with("  every: 100ms", "  every: 0ms"), "11:10", "load.every: expected more than 0");
  // 720h is the longest run: job 999 would arrive at 999h.
  check_error(replace_first(with("  jobs: 10", "  jobs: 1000"), "every: 100ms", "every: 1h"),
              "11:10", "the last arrival would come after 720h");
  check_error(with("  double_click: 20%", "  double_click: 120%"), "12:17", "load.double_click");
  check_error(with("  every: 100ms", "  every: 100ms\n  arrivals: poisson"), "12:13",
              "load.arrivals: expected even");
  check_error(with("  bodies:\n", "  bodies: []\n  old_bodies:\n"), "16:3",
              "unknown key \"old_bodies\" in load");
  check_error(with("    - {operation: classify, provider: alpha, input: {text: \"job {n}\"}}",
                   "    - just text"),
              "16:7", "load.bodies: expected each body as a JSON object");
  check_error(replace_first(kLoad, "load:", "clients: [{name: load-2, owner: x}]\nload:"), "8:3",
              "generated client \"load-2\" is already defined under clients");
}

BOOST_AUTO_TEST_CASE(the_bench_loads_are_files_that_say_what_the_bench_runs) {
  for (const auto& [file, jobs] :
       {std::pair{"load-100k-faults.yaml", 100'000}, std::pair{"load-1m-faults.yaml", 1'000'000}}) {
    std::ifstream in(std::string(ONEJOB_BENCH_LOADS) + "/" + file);
    std::stringstream text;
    text << in.rdbuf();
    // The file is the bench's text after its comment lines.
    std::string body = text.str();
    while (body.starts_with("#")) body.erase(0, body.find('\n') + 1);
    BOOST_TEST(body == bench::generated_load_yaml(static_cast<std::uint64_t>(jobs), true));
  }
}

// A timeline entry's optional texts behave as std::optional<std::string>: copies are deep and
// equal, an unset one is only equal to an unset one.
BOOST_AUTO_TEST_CASE(an_optional_text_is_copied_compared_and_reset_as_an_optional) {
  OptionalText unset;
  OptionalText set = std::string("op-1");
  BOOST_TEST(!unset);
  BOOST_TEST(!unset.has_value());
  BOOST_TEST(unset.value_or("fallback") == "fallback");
  BOOST_TEST_REQUIRE(set.has_value());
  BOOST_TEST(*set == "op-1");
  BOOST_TEST(set->size() == 4u);
  OptionalText copy = set;
  *copy = "op-2";  // the copy owns its text
  BOOST_TEST(*set == "op-1");
  BOOST_TEST(!(copy == set));
  copy = set;
  BOOST_TEST((copy == set));
  BOOST_TEST(!(unset == set));
  BOOST_TEST((unset == OptionalText(std::nullopt)));
  copy.reset();
  BOOST_TEST((copy == unset));
  TimelineEntry entry;
  entry.action_key = "op-9";
  const TimelineEntry again = entry;
  BOOST_TEST(again.action_key.value_or("") == "op-9");
  BOOST_TEST(!again.provider);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::scenario
