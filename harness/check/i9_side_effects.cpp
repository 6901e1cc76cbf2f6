#include "harness/check/i9_side_effects.hpp"

#include <utility>

#include <charconv>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/check/attempt_facts.hpp"

namespace onejob::check {
namespace {

struct AttemptNumber {
  std::int64_t job_id = 0;
  std::int64_t attempt_no = 0;
  auto operator<=>(const AttemptNumber&) const = default;
};

struct Execution {
  std::string provider;
  std::uint64_t seq = 0;
};

// "J:N" -> job J, attempt N; nothing for any other shape (certification keys among them).
std::optional<AttemptNumber> parse_provider_key(const std::string& key) {
  const auto colon = key.find(':');
  if (colon == std::string::npos) return std::nullopt;
  AttemptNumber number;
  const char* last = key.data() + key.size();
  auto [job_end, job_error] = std::from_chars(key.data(), key.data() + colon, number.job_id);
  auto [no_end, no_error] = std::from_chars(key.data() + colon + 1, last, number.attempt_no);
  if (job_error != std::errc{} || job_end != key.data() + colon || no_error != std::errc{} ||
      no_end != last || number.attempt_no < 1) {
    return std::nullopt;
  }
  return number;
}

bool is_finished(const std::string& state) {
  return state == "SUCCEEDED" || state == "FAILED" || state == "DISCARDED" || state == "CANCELLED";
}

// Which attempt id is attempt N of job J, from the events that say so.
class AttemptNumbers {
 public:
  void record(const Event& event) {
    const auto job_id = event.int_field("job_id");
    const auto attempt_id = event.int_field("attempt_id");
    if (!job_id || !attempt_id) return;
    if (event.kind() == "store.job_inserted") {
      numbers_.try_emplace({*job_id, 1}, *attempt_id);
    } else if (event.kind() == "attempt.created") {
      numbers_.try_emplace({*job_id, event.int_field("attempt_no").value_or(0)}, *attempt_id);
    } else if (event.kind() == "provider.call") {
      if (auto number = parse_provider_key(event.string_field("provider_key").value_or(""))) {
        numbers_.try_emplace(*number, *attempt_id);
      }
    }
  }

  // The attempts numbered 1 .. N-1 of the executing attempt's job, with their ids.
  std::vector<std::pair<AttemptNumber, std::int64_t>> before(const AttemptNumber& executing) const {
    std::vector<std::pair<AttemptNumber, std::int64_t>> earlier;
    for (auto it = numbers_.lower_bound({executing.job_id, 1});
         it != numbers_.end() && it->first < executing; ++it) {
      earlier.emplace_back(it->first, it->second);
    }
    return earlier;
  }

 private:
  std::map<AttemptNumber, std::int64_t> numbers_;
};

// The first earlier attempt that may still be doing its work, with its state.
std::optional<std::pair<AttemptNumber, std::string>> unfinished_before(
    const AttemptNumber& executing, const AttemptNumbers& numbers, const AttemptFacts& facts) {
  for (const auto& [number, attempt_id] : numbers.before(executing)) {
    const auto it = facts.attempts().find(attempt_id);
    // An attempt only provider.call numbered has been claimed: RUNNING at least.
    const std::string state = it == facts.attempts().end() ? "RUNNING" : it->second.state;
    const bool in_doubt = it != facts.attempts().end() && it->second.in_doubt;
    if (!in_doubt && !is_finished(state)) return std::make_pair(number, state);
  }
  return std::nullopt;
}

std::string attempt_name(const AttemptNumber& number) {
  return "attempt " + std::to_string(number.attempt_no) + " of job " +
         std::to_string(number.job_id);
}

}  // namespace

std::vector<Violation> check_side_effects(const sim::History& history) {
  std::vector<Violation> violations;
  AttemptFacts facts;
  AttemptNumbers numbers;
  std::map<std::string, Execution> executed;  // provider_key -> its first execution
  for (const auto& recorded : history) {
    const Event& event = recorded.event;
    facts.record(recorded);
    numbers.record(event);
    if (event.kind() != "provider.execute") continue;
    const auto key = event.string_field("provider_key").value_or("");
    if (key.starts_with("cert:")) continue;
    const auto [first, fresh] = executed.try_emplace(key, Execution{recorded.node, recorded.seq});
    if (!fresh) {
      violations.push_back({"I9",
                            "provider " + recorded.node + " executed key \"" + key +
                                "\" again (first by " + first->second.provider + " at event #" +
                                std::to_string(first->second.seq) + "): its dedup failed",
                            recorded.seq});
      continue;
    }
    const auto number = parse_provider_key(key);
    if (!number || number->attempt_no == 1) continue;
    if (const auto earlier = unfinished_before(*number, numbers, facts)) {
      violations.push_back({"I9",
                            "provider " + recorded.node + " executed " + attempt_name(*number) +
                                " (key \"" + key + "\") while " + attempt_name(earlier->first) +
                                " was still " + earlier->second +
                                ": a duplicate side effect no cancel allowed",
                            recorded.seq});
    }
  }
  return violations;
}

}  // namespace onejob::check
