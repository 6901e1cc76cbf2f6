#pragma once
// How a target job API is spoken to: its routes, the idempotency-key header, how an owner (and
// an operator) authenticates, where the job id, status, result and attempts sit in its answers
// (JSON pointers), the status codes it uses, and what its job statuses are called. The default
// is `onejob serve`'s; harness/real/onejob-serve.profile.yaml is the same as a file, and the
// README ("`onejob probe`") documents every field.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/check/black_box.hpp"

namespace onejob::real {

struct Route {
  std::string method;
  std::string path;  // "{job}" stands for a job's id, "{attempt}" for an attempt's id
};

struct TargetProfile {
  std::string name = "onejob-serve";
  Route create{"POST", "/jobs"};
  Route read{"GET", "/jobs/{job}"};
  Route retry{"POST", "/jobs/{job}/attempts"};
  Route cancel{"POST", "/attempts/{attempt}/cancel"};
  std::string ready_path = "/readyz";  // answers 200 once the target takes requests
  std::string key_header = "Idempotency-Key";
  // The header that marks a replayed operator action's answer (its value "true", in any case);
  // empty: the target does not mark replays, and the history records no mark.
  std::string replay_header = "Idempotent-Replayed";
  // Where a create answered `created` says its job lives, in its Location header ("{job}" for
  // the job's id); empty: the target promises none, and B16 does not judge it.
  std::string created_location = "/jobs/{job}";
  std::string auth_header = "Authorization";
  std::string auth_prefix = "Bearer ";
  // The credential each owner sends, and the one an operator acting on that owner's jobs sends
  // (retries and cancels; the owner's own when absent).
  std::map<std::string, std::string> owners{{"alice", "alice-token"},
                                            {"bob", "bob-token"},
                                            {"mallory", "mallory-token"},
                                            {"batch-user", "batch-user-token"}};
  std::map<std::string, std::string> operators{
      {"alice", "alice-ops"}, {"bob", "bob-ops"}, {"mallory", "mallory-ops"}};
  // JSON pointers into an answer's body (a job's, or a create's).
  std::string job_id_pointer = "/job_id";
  std::string status_pointer = "/status";
  std::string result_pointer = "/result";
  std::string error_pointer = "/error";
  std::string attempts_pointer = "/attempts";      // an array, oldest first
  std::string attempt_id_pointer = "/attempt_id";  // inside one element of it
  // In a retry's or cancel's answer: the state of the attempt it names ("": not read).
  std::string attempt_state_pointer = "/state";
  // The target's words for the statuses the rules speak of (succeeded, failed); a word not
  // listed is passed through as it is.
  std::map<std::string, std::string> status_words;
  // The target's words for the attempt states an acknowledged action shows (starting: a
  // retry's new attempt; cancelled: a cancel's attempt), each to the rules' word.
  std::map<std::string, std::string> attempt_state_words{{"STARTING", "starting"},
                                                         {"CANCELLED", "cancelled"}};
  // The target's words for the attempt states that may still run (not finished).
  std::set<std::string> live_attempt_words{"STARTING", "RUNNING", "UNKNOWN"};
  // The codes the target answers with, by meaning: created, replayed, conflict (a reused key
  // with another body), in_flight (a retry while an attempt may still run), not_found,
  // unavailable. A scenario's expected codes are the reference's and are translated.
  std::map<std::string, int> codes{{"created", 201},   {"replayed", 200},  {"conflict", 422},
                                   {"in_flight", 409}, {"not_found", 404}, {"unavailable", 503}};
  // Fixed loopback ports for the provider stubs, by provider name (0 or absent: any free port),
  // for a target started elsewhere and configured with them in advance.
  std::map<std::string, unsigned short> stub_ports;

  // The target's code for the reference's `status` (unchanged when the meaning is not mapped).
  int translate(int reference_status) const;
  // The rules' word for the target's job status `word`.
  std::string status_of(const std::string& word) const;
  // The rules' word for the target's attempt state `word`.
  std::string attempt_state_of(const std::string& word) const;
};

// Reads and validates a profile file; throws scenario::ScenarioError ("file:line:col: what").
// Keys left out keep the defaults above.
TargetProfile load_profile_file(const std::string& path);
TargetProfile parse_profile(const std::string& yaml_text, const std::string& file);

// "{name}" replaced by `value` everywhere in `text` (the black-box rules' own, which B16 fills a
// history's created_location with).
using check::black_box::substitute;

}  // namespace onejob::real
