#include "harness/cli/flags.hpp"

#include <charconv>
#include <cstdint>

#include <CLI/CLI.hpp>
#include <malloc.h>

namespace onejob::cli {
namespace {

// The problem with `text` as an unsigned decimal integer from `least` to `most`, or nothing.
std::string integer_problem(const std::string& text, std::uint64_t least, std::uint64_t most) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || value < least || value > most) {
    return "expected an integer from " + std::to_string(least) + " to " + std::to_string(most) +
           ", found \"" + text + "\"";
  }
  return {};
}

}  // namespace

const CLI::Validator& unsigned64() {
  static const CLI::Validator check(
      [](std::string& text) { return integer_problem(text, 0, UINT64_MAX); }, "UINT64");
  return check;
}

const CLI::Validator& positive64() {
  static const CLI::Validator check(
      [](std::string& text) { return integer_problem(text, 1, UINT64_MAX); }, "UINT64 > 0");
  return check;
}

CLI::Validator integer_from_to(std::uint64_t least, std::uint64_t most) {
  return CLI::Validator(
      [least, most](std::string& text) { return integer_problem(text, least, most); },
      std::to_string(least) + ".." + std::to_string(most));
}

const CLI::Validator& non_empty_path() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        return text.empty() ? std::string("expected a path, found an empty one") : std::string();
      },
      "PATH");
  return check;
}

void add_defect_option(CLI::App& command, std::vector<std::string>& names) {
  command.add_option(
      "--defect", names,
      "Run the system with this named defect (repeatable; 'onejob defects' lists them)");
}

void keep_freed_memory() {
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
}

void add_report_dir_option(CLI::App& command, std::string& dir, const std::string& what) {
  command.add_option("--report-dir", dir, what)->capture_default_str()->check(non_empty_path());
}

}  // namespace onejob::cli
