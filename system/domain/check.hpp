#pragma once

// Always-on assertions (TigerBeetle's style): preconditions, postconditions and invariants that
// hold in every build, release included, because the release build is the one that runs the
// catalogue, the fuzzer and the selftest. A failed assertion is a bug in onejob's own code, never
// bad input and never an expected failure, so it is not a std::exception: the handlers that turn
// a std::exception into an answer (an API node's 500) cannot swallow it. It unwinds to whoever
// runs the code: the scenario runner records it as a `run` violation with this message; a
// command line prints it and exits.

#include <utility>

#include <exception>
#include <string>
#include <string_view>

namespace onejob {

class AssertionFailure {
 public:
  explicit AssertionFailure(std::string message) : message_(std::move(message)) {}
  // "file:line: assertion CONDITION failed: MESSAGE", the path from the source root.
  const std::string& what() const { return message_; }

 private:
  std::string message_;
};

// What ended a loop or a thread, in words: a std::exception's what(), an AssertionFailure's
// message, "returned" for no exception at all.
std::string describe_exception(std::exception_ptr error);

namespace detail {
[[noreturn]] void assertion_failed(const char* file, int line, const char* condition,
                                   std::string_view message);
}  // namespace detail

}  // namespace onejob

// ONEJOB_ASSERT(condition, message): `message` (anything a std::string_view accepts, e.g. a
// literal or a std::string expression) is evaluated only when the condition is false.
#define ONEJOB_ASSERT(condition, message)                                            \
  do {                                                                               \
    if (!(condition)) [[unlikely]] {                                                 \
      ::onejob::detail::assertion_failed(__FILE__, __LINE__, #condition, (message)); \
    }                                                                                \
  } while (false)
