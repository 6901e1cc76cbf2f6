#pragma once
// What an I14 report is about, as data (i14_reports.cpp files and matches them): shared by
// nothing else.
#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "system/domain/attempt.hpp"

namespace onejob::check::i14 {

// What a report is about, as data: the kind of report, the attempt or job it names and, by kind,
// the transition, the certification's verdict or a text (the certification's provider, the
// reply's outcome) numbered by the check's own table. Millions of these are filed and matched in
// a run of 100,000 jobs, so they are compared as numbers; describe() gives the words.
struct ReportKey {
  enum class Kind : std::uint8_t {
    job_created,
    attempt_created,
    transition,
    cas,
    job_failed,
    certification,
    write_refused,
    provider_reply,
    status,
    store_error,
  };
  Kind kind = Kind::store_error;
  AttemptState from = AttemptState::starting;  // a transition's
  AttemptState to = AttemptState::starting;
  bool passed = false;     // a certification's verdict
  std::uint32_t text = 0;  // a certification's provider, a reply's outcome (Texts)
  std::int64_t id = 0;     // the job or attempt named
  friend auto operator<=>(const ReportKey&, const ReportKey&) = default;
};

// The texts report keys carry, numbered in order of first sight.
class Texts {
 public:
  std::uint32_t number(const std::string& text) {
    const auto [it, added] = numbers_.try_emplace(text, static_cast<std::uint32_t>(texts_.size()));
    if (added) texts_.push_back(&it->first);
    return it->second;
  }
  const std::string& text(std::uint32_t number) const { return *texts_.at(number); }

 private:
  std::map<std::string, std::uint32_t> numbers_;
  std::vector<const std::string*> texts_;
};

// The words for a report key, as a violation names the report (untrue or missing).
std::string describe(const ReportKey& key, const Texts& texts);

// A key naming only its kind and the job or attempt.
inline ReportKey key_of(ReportKey::Kind kind, std::int64_t id) { return {.kind = kind, .id = id}; }

}  // namespace onejob::check::i14
