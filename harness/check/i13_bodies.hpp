#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>

// What I13's own parsers make of a request body, stated from DESIGN.md's contract rather than
// taken from system/ (a rule must not share a bug with the code it judges).
namespace onejob::check::i13 {

// The deepest nesting of arrays and objects, strings (and their escapes) skipped.
std::size_t depth_of(std::string_view text);
// Whether this checker's parser reads `text` as one JSON value with no object repeating a key
// and no number beyond a double.
bool readable_json(std::string_view text);
// The provider a retry's body names when it is exactly {"provider": a string}, else nothing.
std::optional<std::string> retry_body_provider(const std::string& body);
// A retry's body, when it has one, is exactly {"provider": a string}.
inline bool retry_body_ok(const std::string& body) { return retry_body_provider(body).has_value(); }
// A create's input, as DESIGN.md states the contract: an object whose "text" is a non-empty
// string; extract's also has "fields", a non-empty list of distinct non-empty names, and the
// other operations' have nothing else. Bodies that are not JSON objects are judged elsewhere.
bool create_input_ok(const std::string& body);
// A create's names: "operation" one of classify, summarize, extract; "provider" one of
// `providers` (the run's); "failover", when present, a list of them, none twice and not the
// provider itself. Bodies that are not JSON objects are judged elsewhere.
bool create_names_ok(const std::string& body, const std::set<std::string, std::less<>>& providers);

// What the checker's own parsers make of one request's body, each worked out at most once: the
// answers to a request's resends are judged on the same bytes, which can be a megabyte.
class BodyFacts {
 public:
  explicit BodyFacts(const std::string& body) : body_(body) {}
  const std::string& body() const { return body_; }
  bool create_input_ok() {
    return remember(input_ok_, [&] { return i13::create_input_ok(body_); });
  }
  bool create_names_ok(const std::set<std::string, std::less<>>& providers) {
    return remember(names_ok_, [&] { return i13::create_names_ok(body_, providers); });
  }
  bool readable() {
    return remember(readable_, [&] { return readable_json(body_); });
  }
  std::size_t depth() {
    return remember(depth_, [&] { return depth_of(body_); });
  }

 private:
  template <typename T, typename Work>
  static T remember(std::optional<T>& slot, Work work) {
    if (!slot) slot = work();
    return *slot;
  }
  const std::string& body_;
  std::optional<bool> input_ok_;
  std::optional<bool> names_ok_;
  std::optional<bool> readable_;
  std::optional<std::size_t> depth_;
};

}  // namespace onejob::check::i13
