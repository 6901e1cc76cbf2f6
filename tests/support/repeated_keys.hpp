#pragma once

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace onejob::test {

// nlohmann's own reading of a JSON text through its SAX interface, building nothing: whether some
// object names one key twice (keys as their escapes decode). The references the JSON readers'
// tests compare with (sax_parse's result says whether the text is JSON at all).
class RepeatedKeys {
 public:
  bool repeated = false;

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(nlohmann::json::number_integer_t) { return true; }
  bool number_unsigned(nlohmann::json::number_unsigned_t) { return true; }
  // nlohmann refuses a number beyond a double before it gets here; kept as the rule it is.
  bool number_float(nlohmann::json::number_float_t value, const std::string&) {
    return std::isfinite(value);
  }
  bool string(std::string&) { return true; }
  bool binary(nlohmann::json::binary_t&) { return true; }
  bool start_object(std::size_t) {
    keys_.emplace_back();
    return true;
  }
  bool key(std::string& name) {
    repeated = repeated || !keys_.back().insert(name).second;
    return true;
  }
  bool end_object() {
    keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  template <typename Error>
  bool parse_error(std::size_t, const std::string&, const Error&) {
    return false;
  }

 private:
  std::vector<std::set<std::string>> keys_;
};

// Whether `a` and `b` are the same document with every value of the same kind (1 unsigned, -1
// signed, 1.0 a double, keys in the same order), or both discarded: what the JSON readers' tests
// require of a reader against nlohmann's, which `==` alone does not (1 == 1.0).
inline bool same_json_document(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (auto it = a.begin(), other = b.begin(); it != a.end(); ++it, ++other) {
      if (it.key() != other.key() || !same_json_document(*it, *other)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same_json_document(a[i], b[i])) return false;
    }
    return true;
  }
  return a.is_discarded() || a == b;
}

}  // namespace onejob::test
