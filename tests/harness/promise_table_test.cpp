// The promise table (harness/README.md, "Promise table") against the code and the catalogue:
// every promise has a clause, every safety clause has a promise, and every clause has at least one
// scenario that requires it (`requires:` in the scenario file).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"
#include "harness/scenario/loader.hpp"

namespace onejob {
namespace {

struct Row {
  std::string promise;  // "P1"
  std::vector<std::string> clauses;
  std::vector<std::string> scenarios;
};

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string cell;
  std::getline(in, cell, '|');  // before the first bar
  while (std::getline(in, cell, '|')) out.push_back(cell);
  return out;
}

std::vector<std::string> backticked(const std::string& text) {
  static const std::regex kTick("`([^`]+)`");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kTick);
       it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

// The rows of the table under the header "| # | Promise | Clauses | Oracle | Scenarios | Fuzz".
std::vector<Row> read_table(const std::string& readme) {
  std::vector<Row> rows;
  std::stringstream in(readme);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.starts_with("| # | Promise | Clauses | Oracle | Scenarios |")) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (!line.starts_with("|")) break;
    const auto columns = cells(line);
    if (columns.size() < 6 || columns[0].find("---") != std::string::npos) continue;
    Row row;
    row.promise = backticked(columns[0]).empty() ? columns[0] : backticked(columns[0])[0];
    std::erase(row.promise, ' ');
    row.clauses = backticked(columns[2]);
    row.scenarios = backticked(columns[4]);
    rows.push_back(std::move(row));
  }
  return rows;
}

// What is wrong with the table, given each scenario's name and the clauses it requires.
std::vector<std::string> table_problems(
    const std::vector<Row>& rows,
    const std::map<std::string, std::vector<std::string>>& required_by_scenario) {
  std::vector<std::string> problems;
  if (rows.empty()) problems.push_back("no promise table found");
  std::map<std::string, std::set<std::string>> scenarios_of_clause;  // from the scenarios
  for (const auto& [scenario, clauses] : required_by_scenario) {
    for (const auto& clause : clauses) scenarios_of_clause[clause].insert(scenario);
  }
  std::set<std::string> in_table;
  for (const auto& row : rows) {
    if (row.clauses.empty()) problems.push_back("promise " + row.promise + " has no clause");
    for (const auto& clause : row.clauses) {
      in_table.insert(clause);
      if (!check::is_safety_clause(clause)) {
        problems.push_back("promise " + row.promise + " names " + clause +
                           ", which no checker has");
      }
    }
    for (const auto& scenario : row.scenarios) {
      auto found = required_by_scenario.find(scenario);
      if (found == required_by_scenario.end()) {
        problems.push_back("promise " + row.promise + " names scenario " + scenario +
                           ", which the catalogue does not have");
        continue;
      }
      const bool requires_one = std::ranges::any_of(row.clauses, [&](const std::string& clause) {
        return std::ranges::find(found->second, clause) != found->second.end();
      });
      if (!requires_one) {
        problems.push_back("promise " + row.promise + " names scenario " + scenario +
                           ", which requires none of its clauses");
      }
    }
  }
  for (const auto clause : check::all_safety_clauses()) {
    const std::string id(clause);
    if (!in_table.contains(id)) problems.push_back(id + " is in no promise");
    if (!scenarios_of_clause.contains(id)) {
      problems.push_back(id + " has no scenario that requires it");
    }
  }
  return problems;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::map<std::string, std::vector<std::string>> catalogue_requirements() {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& entry : std::filesystem::directory_iterator(ONEJOB_SCENARIO_DIR)) {
    if (entry.path().extension() != ".yaml") continue;
    const auto spec = scenario::load_scenario_file(entry.path().string());
    out[spec.name] = spec.required;
  }
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

bool mentions(const std::vector<std::string>& problems, const std::string& text) {
  return std::ranges::any_of(problems, [&](const std::string& problem) {
    return problem.find(text) != std::string::npos;
  });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(promise_table)

BOOST_AUTO_TEST_CASE(every_promise_has_a_clause_and_every_clause_a_promise_and_a_scenario) {
  const auto rows = read_table(read_file(ONEJOB_HARNESS_README));
  const auto problems = table_problems(rows, catalogue_requirements());
  BOOST_TEST(problems.empty(), joined(problems));
  BOOST_TEST(rows.size() >= 20u);
}

BOOST_AUTO_TEST_CASE(a_clause_that_loses_its_last_requiring_scenario_fails) {
  const auto rows = read_table(read_file(ONEJOB_HARNESS_README));
  auto required = catalogue_requirements();
  const std::string clause = "I11.replay_unmarked";
  for (auto& [scenario, clauses] : required) std::erase(clauses, clause);
  const auto problems = table_problems(rows, required);
  BOOST_TEST(mentions(problems, clause + " has no scenario that requires it"), joined(problems));
}

BOOST_AUTO_TEST_CASE(a_promise_without_a_clause_and_a_clause_without_a_promise_fail) {
  auto rows = read_table(read_file(ONEJOB_HARNESS_README));
  BOOST_TEST_REQUIRE(!rows.empty());
  const std::string dropped = rows.front().clauses.empty() ? "" : rows.front().clauses.front();
  std::vector<Row> changed;
  for (auto row : rows) {
    std::erase(row.clauses, dropped);
    changed.push_back(std::move(row));
  }
  changed.front().clauses.clear();
  const auto problems = table_problems(changed, catalogue_requirements());
  BOOST_TEST(mentions(problems, "promise " + changed.front().promise + " has no clause"),
             joined(problems));
  BOOST_TEST(mentions(problems, dropped + " is in no promise"), joined(problems));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob
