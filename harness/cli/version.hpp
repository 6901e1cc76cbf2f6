#pragma once

namespace onejob::cli {

// The version `onejob --version` prints: the project's, and `git describe` of the checkout it was
// built from when there was one (cmake/OnejobVersion.cmake writes the definition at build time).
const char* version();

}  // namespace onejob::cli
