#include "harness/scenario/yaml_reader.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace onejob::scenario {
namespace {

constexpr int kMaxJsonDepth = 64;
// Aliases let a few lines of YAML name an exponential number of values ("billion laughs");
// a request body never needs more than this many.
constexpr std::size_t kMaxJsonValues = 100'000;

std::string_view kind_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Undefined:
      break;
  }
  return "an undefined value";
}

template <typename T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<Duration> parse_duration(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  auto count = parse_number<std::int64_t>(text.substr(0, digits));
  if (!count) return std::nullopt;
  const std::string_view unit = text.substr(digits);
  std::int64_t per_unit = 0;
  if (unit == "us") {
    per_unit = 1;
  } else if (unit == "ms") {
    per_unit = 1'000;
  } else if (unit == "s") {
    per_unit = 1'000'000;
  } else if (unit == "m") {
    per_unit = 60'000'000;
  } else if (unit == "h") {
    per_unit = 3'600'000'000;
  } else {
    return std::nullopt;
  }
  if (*count > std::numeric_limits<std::int64_t>::max() / per_unit) return std::nullopt;
  return Duration(*count * per_unit);
}

std::string format_duration(Duration duration) {
  constexpr std::pair<std::int64_t, std::string_view> kUnits[] = {
      {3'600'000'000, "h"}, {60'000'000, "m"}, {1'000'000, "s"}, {1'000, "ms"}, {1, "us"}};
  const std::int64_t count = duration.count();
  if (count == 0) return "0s";
  for (const auto& [per_unit, unit] : kUnits) {
    if (count % per_unit == 0) return std::to_string(count / per_unit) + std::string(unit);
  }
  return std::to_string(count) + "us";
}

ParsedProbability parse_probability(std::string_view text) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string_view number_text = percent ? text.substr(0, text.size() - 1) : text;
  // from_chars, unlike strtod and streams, ignores the locale: "0.5" reads the same everywhere.
  auto number = parse_number<double>(number_text);
  if (!number || !std::isfinite(*number)) {
    return {std::nullopt,
            "expected a probability: a percentage such as 10% or 2.5%, or a number from 0 to 1 "
            "such as 0.1"};
  }
  const double scale = percent ? 10'000.0 : 1'000'000.0;
  if (*number < 0) return {std::nullopt, std::string(text) + " is negative (expected 0 to 100%)"};
  if (*number * scale > kPpmOne) {
    return {std::nullopt, std::string(text) + (percent ? " is more than 100%" : " is more than 1") +
                              " (expected a percentage from 0% to 100%, or a number from 0 to 1)"};
  }
  return {static_cast<Ppm>(std::llround(*number * scale)), {}};
}

SourcePos YamlReader::pos(const YAML::Node& node) const {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {};
  return {m.line + 1, m.column + 1};
}

void YamlReader::fail(const YAML::Node& node, const std::string& message) const {
  throw ScenarioError(file_, pos(node), message);
}

std::string YamlReader::string(const YAML::Node& node, std::string_view what) const {
  if (!node.IsScalar()) {
    fail(node, std::string(what) + ": expected a string, found " + std::string(kind_name(node)));
  }
  return node.Scalar();
}

std::uint64_t YamlReader::unsigned_integer(const YAML::Node& node, std::string_view what) const {
  const std::string text = string(node, what);
  std::uint64_t value = 0;
  const char* const end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error == std::errc::result_out_of_range && stop == end) {
    fail(node, std::string(what) + ": " + text + " is too large for a 64-bit count");
  }
  if (error != std::errc{} || stop != end) {
    fail(node, std::string(what) + ": expected a non-negative integer");
  }
  return value;
}

int YamlReader::small_integer(const YAML::Node& node, std::string_view what, int min,
                              int max) const {
  auto value = parse_number<int>(string(node, what));
  if (!value || *value < min || *value > max) {
    fail(node, std::string(what) + ": expected an integer from " + std::to_string(min) + " to " +
                   std::to_string(max));
  }
  return *value;
}

Duration YamlReader::duration(const YAML::Node& node, std::string_view what) const {
  auto value = parse_duration(string(node, what));
  if (!value) {
    fail(node, std::string(what) +
                   ": expected a duration such as 250ms, 10s or 1h (units: us, ms, s, m, h)");
  }
  if (*value > kMaxSpan) {
    fail(node, std::string(what) + ": expected at most " + format_duration(kMaxSpan) +
                   " (the longest simulated span), found " + format_duration(*value));
  }
  return *value;
}

LatencySpec YamlReader::latency(const YAML::Node& node, std::string_view what) const {
  if (node.IsScalar()) {
    const Duration fixed = duration(node, what);
    return {fixed, fixed};
  }
  const std::string name(what);
  YamlMap range(*this, node, name, {"min", "max"});
  LatencySpec latency{duration(range.require("min"), name + " min"),
                      duration(range.require("max"), name + " max")};
  if (latency.max < latency.min) fail(node, name + ": max is less than min");
  return latency;
}

bool YamlReader::boolean(const YAML::Node& node, std::string_view what) const {
  const std::string text = string(node, what);
  if (node.Tag() == "?" && text == "true") return true;
  if (node.Tag() == "?" && text == "false") return false;
  fail(node, std::string(what) + ": expected true or false");
}

Ppm YamlReader::probability(const YAML::Node& node, std::string_view what) const {
  auto parsed = parse_probability(string(node, what));
  if (!parsed.ppm) fail(node, std::string(what) + ": " + parsed.problem);
  return *parsed.ppm;
}

void YamlReader::expect_sequence(const YAML::Node& node, std::string_view what) const {
  if (!node.IsSequence()) {
    fail(node, std::string(what) + ": expected a list, found " + std::string(kind_name(node)));
  }
}

nlohmann::json YamlReader::json(const YAML::Node& node) const {
  std::size_t budget = kMaxJsonValues;
  return json_at_depth(node, 0, budget);
}

nlohmann::json YamlReader::json_at_depth(const YAML::Node& node, int depth,
                                         std::size_t& budget) const {
  if (depth > kMaxJsonDepth) fail(node, "value nested too deeply");
  if (budget == 0) {
    fail(node, "value too large: more than " + std::to_string(kMaxJsonValues) +
                   " values (aliases expanding?)");
  }
  --budget;
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Sequence: {
      auto array = nlohmann::json::array();
      for (const auto& item : node) array.push_back(json_at_depth(item, depth + 1, budget));
      return array;
    }
    case YAML::NodeType::Map: {
      auto object = nlohmann::json::object();
      for (const auto& item : node) {
        const auto key = string(item.first, "key");
        if (object.contains(key)) fail(item.first, "repeated key \"" + key + "\"");
        object[key] = json_at_depth(item.second, depth + 1, budget);
      }
      return object;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string& text = node.Scalar();
  if (node.Tag() != "?") return text;  // quoted or explicitly tagged: a string
  if (text == "null" || text == "~") return nullptr;
  if (text == "true") return true;
  if (text == "false") return false;
  if (auto integer = parse_number<std::int64_t>(text)) return *integer;
  if (auto real = parse_number<double>(text); real && std::isfinite(*real)) return *real;
  return text;
}

YamlMap::YamlMap(const YamlReader& reader, const YAML::Node& node, std::string_view what,
                 std::vector<std::string_view> allowed)
    : reader_(reader), node_(node), what_(what) {
  if (!node.IsMap()) {
    reader.fail(node, what_ + ": expected a mapping, found " + std::string(kind_name(node)));
  }
  std::set<std::string, std::less<>> seen;
  for (const auto& item : node) {
    const std::string key = reader.string(item.first, what_ + " key");
    if (!seen.insert(key).second) reader.fail(item.first, "repeated key \"" + key + "\"");
    bool known = false;
    for (auto name : allowed) known = known || name == key;
    if (!known) {
      std::string expected;
      for (auto name : allowed) expected += (expected.empty() ? "" : ", ") + std::string(name);
      reader.fail(item.first, "unknown key \"" + key + "\" in " + what_ +
                                  " (expected one of: " + expected + ")");
    }
  }
}

std::optional<YAML::Node> YamlMap::get(std::string_view key) const {
  for (const auto& item : node_) {
    if (item.first.Scalar() == key) return item.second;
  }
  return std::nullopt;
}

YAML::Node YamlMap::require(std::string_view key) const {
  auto value = get(key);
  if (!value) reader_.fail(node_, what_ + ": missing required key \"" + std::string(key) + "\"");
  return *value;
}

}  // namespace onejob::scenario
