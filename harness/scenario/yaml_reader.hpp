#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>
#include <yaml-cpp/node/node.h>

#include "system/domain/time.hpp"

#include "harness/scenario/spec.hpp"

namespace onejob::scenario {

// Strict reading of YAML values: every mistake becomes a ScenarioError naming the file, the line
// and column of the offending node, and what was expected there.
class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  SourcePos pos(const YAML::Node& node) const;
  [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const;

  std::string string(const YAML::Node& node, std::string_view what) const;
  std::uint64_t unsigned_integer(const YAML::Node& node, std::string_view what) const;
  int small_integer(const YAML::Node& node, std::string_view what, int min, int max) const;
  // "250ms", "10s", "1h"; units us, ms, s, m, h.
  Duration duration(const YAML::Node& node, std::string_view what) const;
  // "5ms" (fixed) or {min: 1ms, max: 2s} (drawn uniformly per message or call).
  LatencySpec latency(const YAML::Node& node, std::string_view what) const;
  // Plain true or false; quoted text and YAML 1.1 spellings (yes, on, True) are refused.
  bool boolean(const YAML::Node& node, std::string_view what) const;
  // "10%", "2.5%" or a number from 0 to 1 ("0.1"), in parts per million rounded to nearest.
  Ppm probability(const YAML::Node& node, std::string_view what) const;
  // A YAML value as JSON: quoted scalars stay strings; plain scalars become null, booleans and
  // numbers when they read as such (YAML 1.2 core schema).
  nlohmann::json json(const YAML::Node& node) const;

  void expect_sequence(const YAML::Node& node, std::string_view what) const;

 private:
  nlohmann::json json_at_depth(const YAML::Node& node, int depth, std::size_t& budget) const;

  std::string file_;
};

// A YAML mapping whose keys were checked against the allowed set: no unknown key, no repeated
// key, no key that is not a plain string.
class YamlMap {
 public:
  YamlMap(const YamlReader& reader, const YAML::Node& node, std::string_view what,
          std::vector<std::string_view> allowed);

  std::optional<YAML::Node> get(std::string_view key) const;
  YAML::Node require(std::string_view key) const;
  const YAML::Node& node() const { return node_; }

 private:
  const YamlReader& reader_;
  YAML::Node node_;
  std::string what_;
};

std::optional<Duration> parse_duration(std::string_view text);
// The inverse, in the largest unit that divides it exactly: "90s", "250ms", "1h".
std::string format_duration(Duration duration);

// Why `text` is not a probability (parse_probability's error), or its value.
struct ParsedProbability {
  std::optional<Ppm> ppm;
  std::string problem;  // set when ppm is empty
};
ParsedProbability parse_probability(std::string_view text);

}  // namespace onejob::scenario
