#include "harness/check/i2_key_reuse_conflict.hpp"

#include <utility>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace onejob::check {
namespace {

// What the history tells about one (owner, key) pair.
struct Pair {
  bool has_job = false;                // job.created or store.job_inserted seen
  std::optional<std::int64_t> job_id;  // the job the request was told with
  std::optional<std::string> request;  // the request the pair's job stands for
  std::uint64_t request_seq = 0;       // the event that told it
};

using PairKey = std::pair<std::string, std::string>;

std::string pair_name(const PairKey& pair) {
  return "(owner \"" + pair.first + "\", key \"" + pair.second + "\")";
}

// Requests carry whole bodies; a message shows a window of one, starting a little before
// `around` (where it parts from another request).
std::string excerpt(const std::string& request, std::size_t around = 0) {
  constexpr std::size_t kBefore = 20;
  constexpr std::size_t kShown = 70;
  const std::size_t start = around > kBefore ? around - kBefore : 0;
  std::string shown = (start > 0 ? "..." : "") + request.substr(start, kShown) +
                      (start + kShown < request.size() ? "..." : "");
  std::ranges::replace(shown, '\n', ' ');
  return "\"" + shown + "\"";
}

std::size_t first_difference(const std::string& a, const std::string& b) {
  return static_cast<std::size_t>(std::ranges::mismatch(a, b).in1 - a.begin());
}

// "X, but the pair stands for Y", both shown where they part.
std::string conflict(const std::string& request, const std::string& stood_for) {
  const auto at = first_difference(request, stood_for);
  return excerpt(request, at) + ", but the pair stands for " + excerpt(stood_for, at);
}

std::string told_by(const Pair& pair) {
  const std::string job = pair.job_id ? "job " + std::to_string(*pair.job_id) + ", " : "";
  return " (" + job + "event #" + std::to_string(pair.request_seq) + ")";
}

class KeyReuseChecker {
 public:
  void on_job_created(const sim::TraceEvent& recorded);
  void on_job_inserted(const sim::TraceEvent& recorded);
  void on_create_response(const sim::TraceEvent& recorded);
  std::vector<Violation> take() { return std::move(violations_); }

 private:
  void report(std::string message, std::uint64_t seq) {
    violations_.push_back({"I2", std::move(message), seq});
  }

  std::map<PairKey, Pair> pairs_;
  std::vector<Violation> violations_;
};

void KeyReuseChecker::on_job_created(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const PairKey key{event.string_field("owner").value_or(""),
                    event.string_field("key").value_or("")};
  const auto job_id = event.int_field("job_id").value_or(0);
  const auto request = event.string_field("request");
  Pair& pair = pairs_[key];
  // The first creation defines the pair; a later one with the same request is I1's to judge.
  if (pair.request && request && *request != *pair.request) {
    report("job " + std::to_string(job_id) + " created for " + pair_name(key) + " with request " +
               conflict(*request, *pair.request) + told_by(pair) +
               ": a reused key with another request must store nothing",
           recorded.seq);
  }
  if (!pair.request && request) {
    pair.request = *request;
    pair.request_seq = recorded.seq;
    pair.job_id = job_id;
  }
  pair.has_job = true;
}

void KeyReuseChecker::on_job_inserted(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  pairs_[{event.string_field("owner").value_or(""), event.string_field("key").value_or("")}]
      .has_job = true;
}

void KeyReuseChecker::on_create_response(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const PairKey key{event.string_field("owner").value_or(""),
                    event.string_field("key").value_or("")};
  const auto status = event.int_field("status").value_or(0);
  const auto job_id = event.int_field("job_id");
  const auto request = event.string_field("request");
  if (status == 422 && job_id) {
    report("422 response for " + pair_name(key) + " carries job " + std::to_string(*job_id) +
               ": a refused create must return no job id",
           recorded.seq);
  }
  if (!request) return;
  Pair& pair = pairs_[key];
  if (status == 200 || status == 201) {
    if (!pair.request) {
      // The creation went unreported (its reply was lost): the first acceptance stands for it.
      pair.request = *request;
      pair.request_seq = recorded.seq;
      if (!pair.job_id) pair.job_id = job_id;
    } else if (*request != *pair.request) {
      report("response " + std::to_string(status) + " for " + pair_name(key) + " accepts request " +
                 conflict(*request, *pair.request) + told_by(pair) +
                 ": a reused key with another request must be refused with 422",
             recorded.seq);
    }
  } else if (status == 422) {
    if (!pair.has_job) {
      report("422 response for " + pair_name(key) + " but no job exists for that pair",
             recorded.seq);
    } else if (pair.request && *request == *pair.request) {
      report("422 response for " + pair_name(key) + " refuses request " + excerpt(*request) +
                 ", the very request the pair stands for" + told_by(pair),
             recorded.seq);
    }
  }
}

}  // namespace

std::vector<Violation> check_key_reuse_conflict(const sim::History& history) {
  KeyReuseChecker checker;
  for (const auto& recorded : history) {
    const auto& kind = recorded.event.kind();
    if (kind == "job.created") {
      checker.on_job_created(recorded);
    } else if (kind == "store.job_inserted") {
      checker.on_job_inserted(recorded);
    } else if (kind == "api.response" && recorded.event.string_field("route") == "create_job") {
      checker.on_create_response(recorded);
    }
  }
  return checker.take();
}

}  // namespace onejob::check
