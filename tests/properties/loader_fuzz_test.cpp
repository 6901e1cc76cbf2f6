// The loader on hostile input: every mutation of every real scenario either loads or is refused
// with a ScenarioError that names file:line:col. Never a crash, never another exception.
// CI runs a few hundred cases; long runs: RC_PARAMS="max_success=200000" onejob_tests
// --run_test=loader_fuzz.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/test/unit_test.hpp>
#include <rapidcheck/boost_test.h>

#include "harness/scenario/loader.hpp"

namespace onejob::scenario {
namespace {

std::vector<std::string> seed_corpus() {
  std::vector<std::string> texts;
  for (const auto& entry : std::filesystem::directory_iterator(ONEJOB_SCENARIO_DIR)) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    std::ostringstream text;
    text << in.rdbuf();
    texts.push_back(text.str());
  }
  std::sort(texts.begin(), texts.end());
  return texts;
}

// Fragments that stress YAML and the schema: structure, anchors, tags, numbers, names.
const std::vector<std::string> kTokens = {":",          "- ",
                                          "{",          "}",
                                          "[",          "]",
                                          "\n",         "  ",
                                          "\t",         "&a ",
                                          "*a",         "!!str ",
                                          "'",          "\"",
                                          "#",          "---\n",
                                          "...\n",      "? ",
                                          "|",          ">",
                                          "~",          "null",
                                          "true",       "-1",
                                          "1e999",      "99999999999999999999",
                                          "0.5%",       "150%",
                                          "1h",         "0ms",
                                          "nan",        "worker-9",
                                          "api-0",      "at:",
                                          "crash:",     "request: 99",
                                          "\xff\xfe",   "\x00",
                                          "\\u0000",    "<<: *a",
                                          "%YAML 1.2\n"};

BOOST_AUTO_TEST_SUITE(loader_fuzz)

RC_BOOST_PROP(mutated_scenarios_load_or_fail_with_a_location, ()) {
  static const auto corpus = seed_corpus();
  RC_PRE(!corpus.empty());
  std::string text = *rc::gen::elementOf(corpus);
  const int edits = *rc::gen::inRange(1, 8);
  for (int i = 0; i < edits; ++i) {
    const auto at = *rc::gen::inRange<std::size_t>(0, text.size() + 1);
    switch (*rc::gen::inRange(0, 4)) {
      case 0:
        text.insert(std::min(at, text.size()), *rc::gen::elementOf(kTokens));
        break;
      case 1:
        text.erase(std::min(at, text.size()), *rc::gen::inRange<std::size_t>(0, 20));
        break;
      case 2:
        if (at < text.size()) text[at] = static_cast<char>(*rc::gen::inRange(0, 256));
        break;
      default:
        text.resize(std::min(at, text.size()));
    }
  }
  try {
    parse_scenario(text, "fuzz.yaml");
  } catch (const ScenarioError& error) {
    RC_ASSERT(std::string(error.what()).starts_with("fuzz.yaml:"));
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::scenario
