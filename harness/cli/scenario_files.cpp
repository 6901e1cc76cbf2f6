#include "harness/cli/scenario_files.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "harness/scenario/loader.hpp"

namespace onejob::cli {

namespace fs = std::filesystem;
using scenario::ScenarioError;
using scenario::ScenarioSpec;

namespace {

bool is_scenario_file(const fs::path& path) {
  return path.extension() == ".yaml" || path.extension() == ".yml";
}

}  // namespace

std::string default_catalogue() {
  std::error_code error;
  if (fs::exists("scenarios", error)) return "scenarios";
  const fs::path binary = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    const fs::path installed = binary.parent_path().parent_path() / "share/onejob/scenarios";
    if (fs::is_directory(installed, error)) return installed.string();
    // A build folder inside the source tree (build/onejob, run from anywhere).
    const fs::path source = binary.parent_path().parent_path() / "scenarios";
    if (fs::is_directory(source, error)) return source.string();
  }
  return "scenarios";
}

std::vector<std::string> find_scenario_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code error;
    const auto status = fs::status(path, error);
    if (fs::is_directory(status)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        if (entry.is_regular_file() && is_scenario_file(entry.path())) {
          found.push_back(entry.path().lexically_normal().string());
        }
      }
      std::ranges::sort(found);
      if (found.empty()) throw ScenarioError(path, {}, "no *.yaml or *.yml scenario files here");
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(status)) {
      files.push_back(fs::path(path).lexically_normal().string());
    } else {
      throw ScenarioError(path, {}, "no such file or directory");
    }
  }
  return files;
}

std::optional<std::vector<ScenarioSpec>> load_all(const std::vector<std::string>& files) {
  std::vector<ScenarioSpec> specs;
  std::map<std::string, std::string> file_by_name;
  bool ok = true;
  for (const auto& file : files) {
    try {
      auto spec = scenario::load_scenario_file(file);
      auto [it, fresh] = file_by_name.emplace(spec.name, file);
      if (!fresh) {
        throw ScenarioError(file, spec.name_pos,
                            "scenario name \"" + spec.name + "\" is already used by " + it->second);
      }
      specs.push_back(std::move(spec));
    } catch (const ScenarioError& error) {
      std::cerr << error.what() << "\n";
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return specs;
}

}  // namespace onejob::cli
