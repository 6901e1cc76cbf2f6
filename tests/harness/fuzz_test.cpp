// The fuzzer's cases: valid by construction, written as YAML that loads back into the same run,
// the same for the same (seed, case), and sharded without overlap.
#include <set>

#include <boost/test/unit_test.hpp>

#include "harness/fuzz/campaign.hpp"
#include "harness/fuzz/record_gen.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/scenario/yaml_writer.hpp"

namespace onejob::fuzz {
namespace {

BOOST_AUTO_TEST_SUITE(fuzz_cases)

BOOST_AUTO_TEST_CASE(a_case_written_as_yaml_loads_back_into_the_same_run) {
  for (std::uint64_t index = 0; index < 60; ++index) {
    const auto spec = *generate_case({7, index, {}});
    const auto yaml = scenario::to_yaml(spec, "a comment\non two lines");
    scenario::ScenarioSpec loaded;
    BOOST_REQUIRE_NO_THROW(loaded = scenario::parse_scenario(yaml, spec.file));
    const auto direct = scenario::run_scenario(spec);
    const auto reloaded = scenario::run_scenario(loaded);
    BOOST_TEST(direct.trace_hash == reloaded.trace_hash, "case " << index << "\n" << yaml);
  }
}

BOOST_AUTO_TEST_CASE(the_same_seed_and_index_give_the_same_case_and_others_differ) {
  std::set<std::string> texts;
  for (std::uint64_t index = 0; index < 20; ++index) {
    const auto yaml = scenario::to_yaml(*generate_case({3, index, {}}));
    BOOST_TEST(yaml == scenario::to_yaml(*generate_case({3, index, {}})));
    texts.insert(yaml.substr(yaml.find('\n')));  // past the name line
  }
  BOOST_TEST(texts.size() > 15u);
}

BOOST_AUTO_TEST_CASE(shards_split_a_campaign_without_overlap) {
  CampaignOptions whole{.seed = 5, .cases = 40};
  const auto all = run_campaign(whole);
  BOOST_TEST(all.cases_run == 40u);
  std::uint64_t sharded = 0;
  check::MarkCounts marks;
  for (std::uint64_t shard = 1; shard <= 3; ++shard) {
    CampaignOptions part{.seed = 5, .cases = 40, .shard = shard, .shards = 3};
    const auto result = run_campaign(part);
    sharded += result.cases_run;
    for (const auto& [mark, count] : result.marks) marks[mark] += count;
  }
  BOOST_TEST(sharded == all.cases_run);
  BOOST_TEST((marks == all.marks));
}

BOOST_AUTO_TEST_CASE(a_case_id_is_written_and_read_back) {
  for (const CaseId& id : {CaseId{1, 0, {}}, CaseId{18446744073709551615ULL, 42, {3, 0, 17}}}) {
    std::string problem;
    const auto parsed = parse_case_id(to_string(id), problem);
    BOOST_REQUIRE(parsed.has_value());
    BOOST_TEST(parsed->seed == id.seed);
    BOOST_TEST(parsed->index == id.index);
    BOOST_TEST(parsed->shrink_path == id.shrink_path);
  }
  BOOST_TEST(to_string({9, 4, {2, 0}}) == "9:4:2.0");
  for (const char* bad : {"", "1", "1:", ":1", "1:2:", "1:2:3.", "1:2:x", "-1:2", "1:2:3..4",
                          "18446744073709551616:0"}) {
    std::string problem;
    BOOST_TEST(!parse_case_id(bad, problem).has_value(), bad);
    BOOST_TEST(problem.find("SEED:CASE") != std::string::npos, bad);
  }
}

BOOST_AUTO_TEST_CASE(a_shrink_path_rebuilds_the_smaller_cases_it_names) {
  // Each step of the path picks a candidate: the rebuilt cases differ from the original and
  // from each other, and a path longer than the shrinks available leads nowhere.
  const auto original = scenario::to_yaml(*generate_case({11, 30, {}}));
  const auto first = generate_case({11, 30, {0}});
  const auto second = generate_case({11, 30, {1}});
  BOOST_REQUIRE(first.has_value());
  BOOST_REQUIRE(second.has_value());
  BOOST_TEST(scenario::to_yaml(*first) != original);
  BOOST_TEST(scenario::to_yaml(*first) != scenario::to_yaml(*second));
  BOOST_TEST(scenario::to_yaml(*generate_case({11, 30, {1}})) == scenario::to_yaml(*second));
  BOOST_TEST(!generate_case({11, 30, {1'000'000}}).has_value());
}

// The record generator draws every field of a record in one go: ranges within bounds (a magnitude's
// growing with the size, a category's not), choices by their weights, and shrinks one ranged field
// at a time toward its lower bound, choices never.
BOOST_AUTO_TEST_CASE(a_record_draws_each_field_by_its_rule_and_shrinks_ranges_alone) {
  const auto gen = record<4>({in_range(10, 20), pick(6), one_of({7, 8}), weighted({1, 2}, {1, 0})});
  std::set<int> magnitudes_at_0;
  std::set<int> categories_at_0;
  std::set<int> magnitudes;
  std::set<int> categories;
  std::set<int> choices;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    const auto small = gen(rc::Random(seed), 0).value();
    magnitudes_at_0.insert(small[0]);
    categories_at_0.insert(small[1]);
    const auto full = gen(rc::Random(seed), 100).value();
    magnitudes.insert(full[0]);
    categories.insert(full[1]);
    choices.insert(full[2]);
    BOOST_TEST(full[3] == 1);  // weight 0 is never drawn
  }
  BOOST_TEST((magnitudes_at_0 == std::set<int>{10}));  // size 0: the lower bound only
  BOOST_TEST(categories_at_0.size() == 6u);            // every category at any size
  BOOST_TEST(magnitudes.size() == 10u);
  BOOST_TEST(*magnitudes.begin() == 10);
  BOOST_TEST(*magnitudes.rbegin() == 19);
  BOOST_TEST(categories.size() == 6u);
  BOOST_TEST((choices == std::set<int>{7, 8}));

  const rc::Random random(3);
  auto drawn = gen(random, 100);
  BOOST_TEST((drawn.value() == gen(random, 100).value()));  // the same stream, the same record
  // Find a draw whose two ranged fields are above their bounds.
  for (std::uint64_t seed = 0; drawn.value()[0] == 10 || drawn.value()[1] == 0; ++seed) {
    drawn = gen(rc::Random(seed), 100);
  }
  const auto start = drawn.value();
  auto shrinks = drawn.shrinks();
  bool first_field_done = false;
  int shrinks_seen = 0;
  while (auto next = shrinks.next()) {
    const auto shrunk = next->value();
    ++shrinks_seen;
    const int changed = (shrunk[0] != start[0]) + (shrunk[1] != start[1]);
    BOOST_TEST(changed == 1);  // one field at a time
    BOOST_TEST(shrunk[2] == start[2]);
    BOOST_TEST(shrunk[3] == start[3]);
    if (shrunk[0] != start[0]) {
      BOOST_TEST(!first_field_done);  // fields in order
      BOOST_TEST(shrunk[0] >= 10);
      BOOST_TEST(shrunk[0] < start[0]);
    } else {
      first_field_done = true;
      BOOST_TEST(shrunk[1] < start[1]);
    }
  }
  BOOST_TEST(shrinks_seen >= 2);
  BOOST_TEST(first_field_done);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::fuzz
