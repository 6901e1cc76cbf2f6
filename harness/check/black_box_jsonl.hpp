#pragma once
// Reads a black-box history in its JSON Lines form (harness/README.md, "Black-box histories"):
// one object per line, "kind" request, response, execution or quiet, each with "t_us". Strict: an
// unknown kind or field, a missing one, a wrong type, a response to no request, or a duplicate
// request id is an error naming the line (and the column, for a syntax error).
#include <istream>
#include <stdexcept>
#include <string>

#include "harness/check/black_box.hpp"

namespace onejob::check::black_box {

// "NAME:LINE[:COL]: what" — bad input, never a crash.
class HistoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `name` is what errors call the source (a file's path).
History read_jsonl(std::istream& in, const std::string& name);
// A file that records no request, response or execution is an error (it judges nothing).
History read_jsonl_file(const std::string& path);

// One line of the form: the inverse of read_jsonl, for writers of histories (the prober).
std::string to_jsonl(const Request& request);
std::string to_jsonl(const Response& response);
std::string to_jsonl(const Execution& execution);
std::string quiet_jsonl(std::int64_t t_us);
std::string policy_jsonl(std::optional<int> attempt_limit, std::optional<int> conflict_status,
                         const std::optional<std::string>& created_location = std::nullopt);

// A finding as reports write it: rule, clause, safety, message, lines.
nlohmann::ordered_json finding_json(const Finding& finding);

}  // namespace onejob::check::black_box
