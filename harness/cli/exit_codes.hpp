#pragma once

namespace onejob::cli {

// Every onejob command's exit status.
constexpr int kExitPass = 0;      // everything held
constexpr int kExitFail = 1;      // a violation, a failed expectation, a surviving defect
constexpr int kExitBadInput = 2;  // bad input: a file, a flag, a path
constexpr int kExitBug = 3;       // onejob's own bug: an always-on assertion failed

}  // namespace onejob::cli
