// The scenario loader's limits on the file itself: files it cannot read or must not (special
// files, over 1 MiB), and YAML whose aliases would expand past the loader's bounds.
#include <string>

#include <boost/test/unit_test.hpp>

#include "harness/scenario/loader.hpp"
#include "harness/scenario/yaml_writer.hpp"

#include "tests/support/scenario_text.hpp"

namespace onejob::scenario {
namespace {

using test::error_of;

BOOST_AUTO_TEST_SUITE(scenario_loader)

BOOST_AUTO_TEST_CASE(an_unreadable_file_is_a_scenario_error) {
  BOOST_CHECK_THROW(load_scenario_file("/nonexistent/x.yaml"), ScenarioError);
}

BOOST_AUTO_TEST_CASE(an_alias_bomb_in_a_body_is_refused_not_expanded) {
  // Ten levels of ten aliases each: 10^10 values if expanded.
  std::string text =
      "name: bomb\nseed: 1\nclients: [{name: c, owner: o}]\ntimeline:\n  - at: 0s\n"
      "    create_job:\n      client: c\n      key: k\n      body:\n"
      "        a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level <= 9; ++level) {
    const std::string previous = "*a" + std::to_string(level - 1);
    text += "        a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int j = 0; j < 10; ++j) text += (j ? ", " : "") + previous;
    text += "]\n";
  }
  const auto error = error_of(text);
  BOOST_TEST(error.find("more than 200000 values once aliases are expanded") != std::string::npos,
             error);
}

BOOST_AUTO_TEST_CASE(a_file_that_aliases_one_body_in_every_step_is_bounded_per_file) {
  // Each body is small enough alone; two thousand uses of it are not.
  std::string text =
      "name: many\nseed: 1\nproviders: [{name: alpha}]\nclients: [{name: c, owner: o}]\n"
      "timeline:\n  - {at: 0s, create_job: {client: c, key: k0, body: &b {operation: classify, "
      "provider: alpha, input: {text: t, list: [";
  for (int i = 0; i < 200; ++i) text += (i ? ", " : "") + std::to_string(i);
  text += "]}}}}\n";
  for (int i = 1; i < 2000; ++i) {
    text += "  - {at: 0s, create_job: {client: c, key: k" + std::to_string(i) + ", body: *b}}\n";
  }
  const auto error = error_of(text);
  BOOST_TEST(error.find("once aliases are expanded") != std::string::npos, error);
}

BOOST_AUTO_TEST_CASE(special_files_and_oversized_files_are_refused) {
  for (const char* path : {"/dev/zero", "/dev/null", "/tmp"}) {
    try {
      load_scenario_file(path);
      BOOST_FAIL("loaded " << path);
    } catch (const ScenarioError& error) {
      BOOST_TEST(std::string(error.what()).find("not a regular file") != std::string::npos);
    }
  }
  const std::string big(2 << 20, '#');
  const auto error = error_of(big);
  BOOST_TEST(error.find("larger than 1048576 bytes") != std::string::npos, error);
}

BOOST_AUTO_TEST_CASE(an_action_with_key_null_is_sent_keyless_and_written_back) {
  const std::string text = R"(name: keyless
seed: 1
providers: [{name: alpha}]
clients: [{name: ops, owner: alice}]
timeline:
  - {at: 0s, create_job: {client: ops, key: k, body: {operation: classify, provider: alpha, input: {text: x}}}}
  - {at: 1s, cancel: {client: ops, request: 1, attempt: 1, key: null}}
  - {at: 2s, retry: {client: ops, request: 1, key: null}}
  - {at: 3s, retry: {client: ops, request: 1, key: "op-3"}}
  - {at: 4s, retry: {client: ops, request: 1}}
)";
  const auto spec = parse_scenario(text, "s.yaml");
  BOOST_REQUIRE(spec.timeline.size() == 5u);
  BOOST_TEST(spec.timeline[1].keyless);
  BOOST_TEST(spec.timeline[2].keyless);
  BOOST_TEST(!spec.timeline[3].keyless);
  BOOST_TEST(spec.timeline[3].action_key.value_or("") == "op-3");
  BOOST_TEST(!spec.timeline[4].keyless);
  BOOST_TEST(!spec.timeline[4].action_key);
  const auto written = to_yaml(spec);
  BOOST_TEST(to_yaml(parse_scenario(written, "again.yaml")) == written);
  BOOST_TEST(written.find("attempt: 1, key: null}") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::scenario
