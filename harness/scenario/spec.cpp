#include "harness/scenario/spec.hpp"

namespace onejob::scenario {

ScenarioError::ScenarioError(const std::string& file, SourceMark mark, const std::string& message)
    : std::runtime_error(mark.line > 0 ? file + ":" + std::to_string(mark.line) + ":" +
                                             std::to_string(mark.column) + ": " + message
                                       : file + ": " + message),
      file_(file),
      mark_(mark),
      message_(message) {}

}  // namespace onejob::scenario
