#include "system/domain/check.hpp"

namespace onejob {

std::string describe_exception(std::exception_ptr error) {
  if (!error) return "returned";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (const AssertionFailure& failure) {
    return failure.what();
  } catch (...) {
    return "an unknown exception";
  }
}

}  // namespace onejob

namespace onejob::detail {

void assertion_failed(const char* file, int line, const char* condition, std::string_view message) {
  // The path from the source root: the message is the same whatever directory built it.
  std::string_view path(file);
  std::size_t from = 0;
  for (std::string_view root : {"/system/", "/harness/", "/tests/"}) {
    if (auto at = path.rfind(root); at != std::string_view::npos && at + 1 > from) from = at + 1;
  }
  path.remove_prefix(from);
  throw AssertionFailure(std::string(path) + ":" + std::to_string(line) + ": assertion " +
                         condition + " failed: " + std::string(message));
}

}  // namespace onejob::detail
