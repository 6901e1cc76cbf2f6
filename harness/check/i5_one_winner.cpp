#include "harness/check/i5_one_winner.hpp"

#include <utility>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace onejob::check {
namespace {

struct JobOutcome {
  std::optional<std::int64_t> winner;  // completed_by, as far as the history tells
  std::uint64_t winner_seq = 0;        // the event that first named it
  std::optional<std::uint64_t> won_cas_seq;
  std::int64_t won_expected_version = 0;
  std::optional<std::uint64_t> completed_seq;
  std::int64_t completed_attempt = 0;
};

struct LostCas {
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::uint64_t seq = 0;
  bool discarded_after = false;
};

struct FinalState {
  std::string state;
  std::uint64_t seq = 0;
};

std::string seq_ref(std::uint64_t seq) { return "event #" + std::to_string(seq); }

class WinnerChecker {
 public:
  void on_cas(const sim::TraceEvent& recorded);
  void on_completed(const sim::TraceEvent& recorded);
  void on_discarded(const sim::TraceEvent& recorded);
  void on_state(const sim::TraceEvent& recorded);
  // Judges what only the end of the history can tell, and returns every violation in order.
  std::vector<Violation> finish();

 private:
  // A loser's report of completed_by must agree with what the job already has.
  void check_named_winner(std::int64_t job_id, std::int64_t named, const sim::TraceEvent& recorded);
  void report(std::string message, std::uint64_t seq) {
    violations_.push_back({"I5", std::move(message), seq});
  }

  std::map<std::int64_t, JobOutcome> jobs_;
  std::vector<LostCas> lost_;
  std::map<std::int64_t, std::uint64_t> discarded_;  // attempt -> the event recording it
  std::map<std::int64_t, FinalState> final_states_;  // attempt -> its last recorded state
  std::vector<Violation> violations_;
};

void WinnerChecker::check_named_winner(std::int64_t job_id, std::int64_t named,
                                       const sim::TraceEvent& recorded) {
  JobOutcome& job = jobs_[job_id];
  if (!job.winner) {
    // The winner's own events may be missing (its reply was lost); a loser still names it.
    if (named != 0) {
      job.winner = named;
      job.winner_seq = recorded.seq;
    }
    return;
  }
  if (named != *job.winner) {
    report(recorded.event.kind() + " of job " + std::to_string(job_id) + " names winner " +
               std::to_string(named) + ", but its winner is attempt " +
               std::to_string(*job.winner) + " (" + seq_ref(job.winner_seq) +
               "): completed_by changed",
           recorded.seq);
  }
}

void WinnerChecker::on_cas(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const auto job_id = event.int_field("job_id").value_or(0);
  const auto attempt_id = event.int_field("attempt_id").value_or(0);
  const auto named = event.int_field("winner").value_or(0);
  if (!event.bool_field("won").value_or(false)) {
    check_named_winner(job_id, named, recorded);
    lost_.push_back({job_id, attempt_id, recorded.seq, false});
    return;
  }
  JobOutcome& job = jobs_[job_id];
  const std::string what = "attempt " + std::to_string(attempt_id) +
                           " won the compare-and-swap of job " + std::to_string(job_id);
  if (job.won_cas_seq) {
    report(what + ", which was already won (" + seq_ref(*job.won_cas_seq) + "): two winners",
           recorded.seq);
  } else if (job.winner && *job.winner != attempt_id) {
    report(what + ", whose winner was already attempt " + std::to_string(*job.winner) + " (" +
               seq_ref(job.winner_seq) + "): two winners",
           recorded.seq);
  } else if (named != attempt_id) {
    report(what + " but names winner " + std::to_string(named), recorded.seq);
  }
  if (!job.won_cas_seq) {
    job.won_cas_seq = recorded.seq;
    job.won_expected_version = event.int_field("expected_version").value_or(0);
  }
  if (!job.winner) {
    job.winner = attempt_id;
    job.winner_seq = recorded.seq;
  }
}

void WinnerChecker::on_completed(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const auto job_id = event.int_field("job_id").value_or(0);
  const auto attempt_id = event.int_field("attempt_id").value_or(0);
  const auto version = event.int_field("version").value_or(0);
  JobOutcome& job = jobs_[job_id];
  const std::string what =
      "job " + std::to_string(job_id) + " completed by attempt " + std::to_string(attempt_id);
  if (job.completed_seq) {
    report(what + ", but it was already completed by attempt " +
               std::to_string(job.completed_attempt) + " (" + seq_ref(*job.completed_seq) + ")",
           recorded.seq);
  } else {
    job.completed_seq = recorded.seq;
    job.completed_attempt = attempt_id;
  }
  if (!job.winner) {
    report(what + ", but no compare-and-swap was won", recorded.seq);
  } else if (*job.winner != attempt_id) {
    report(what + ", but its winner is attempt " + std::to_string(*job.winner) + " (" +
               seq_ref(job.winner_seq) + ")",
           recorded.seq);
  }
  const bool bumped_once = version == 2 && (!job.won_cas_seq || job.won_expected_version == 1);
  if (!bumped_once) {
    report(what + " at version " + std::to_string(version) +
               ": one completion bumps the initial version 1 exactly once, to 2 (the winning "
               "compare-and-swap expected " +
               std::to_string(job.won_expected_version) + ")",
           recorded.seq);
  }
  if (auto discarded = discarded_.find(attempt_id); discarded != discarded_.end()) {
    report(what + ", whose result was discarded (" + seq_ref(discarded->second) +
               "): a discarded result became visible",
           recorded.seq);
  }
}

void WinnerChecker::on_discarded(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const auto job_id = event.int_field("job_id").value_or(0);
  const auto attempt_id = event.int_field("attempt_id").value_or(0);
  check_named_winner(job_id, event.int_field("winner").value_or(0), recorded);
  const JobOutcome& job = jobs_[job_id];
  if ((job.winner && *job.winner == attempt_id) ||
      (job.completed_seq && job.completed_attempt == attempt_id)) {
    report("result of attempt " + std::to_string(attempt_id) + ", the winner of job " +
               std::to_string(job_id) + ", recorded discarded",
           recorded.seq);
  }
  discarded_.try_emplace(attempt_id, recorded.seq);
  for (auto& lost : lost_) {
    if (lost.job_id == job_id && lost.attempt_id == attempt_id) lost.discarded_after = true;
  }
}

void WinnerChecker::on_state(const sim::TraceEvent& recorded) {
  const Event& event = recorded.event;
  const auto job_id = event.int_field("job_id").value_or(0);
  const auto attempt_id = event.int_field("attempt_id").value_or(0);
  const auto to = event.string_field("to").value_or("");
  final_states_[attempt_id] = {to, recorded.seq};
  if (to == "DISCARDED") discarded_.try_emplace(attempt_id, recorded.seq);
  if (to != "SUCCEEDED") return;
  const JobOutcome& job = jobs_[job_id];
  if (!job.winner || *job.winner != attempt_id) {
    const std::string winner =
        job.winner ? "attempt " + std::to_string(*job.winner) : std::string("no attempt");
    report("attempt " + std::to_string(attempt_id) + " became SUCCEEDED, but the winner of job " +
               std::to_string(job_id) + " is " + winner,
           recorded.seq);
  }
}

std::vector<Violation> WinnerChecker::finish() {
  for (const auto& lost : lost_) {
    const std::string what = "attempt " + std::to_string(lost.attempt_id) +
                             " lost the compare-and-swap of job " + std::to_string(lost.job_id);
    const auto final_state = final_states_.find(lost.attempt_id);
    if (!lost.discarded_after) {
      report(what + ", but no result.discarded records it", lost.seq);
    } else if (final_state == final_states_.end()) {
      report(what + ", but never became DISCARDED", lost.seq);
    } else if (final_state->second.state != "DISCARDED" &&
               final_state->second.state != "SUCCEEDED") {  // SUCCEEDED was reported already
      report(what + ", but ended " + final_state->second.state + " (" +
                 seq_ref(final_state->second.seq) + "), not DISCARDED",
             lost.seq);
    }
  }
  std::ranges::stable_sort(violations_, {}, [](const Violation& v) { return v.event_seq; });
  return std::move(violations_);
}

}  // namespace

std::vector<Violation> check_one_winner(const sim::History& history) {
  WinnerChecker checker;
  for (const auto& recorded : history) {
    const auto& kind = recorded.event.kind();
    if (kind == "job.cas") {
      checker.on_cas(recorded);
    } else if (kind == "job.completed") {
      checker.on_completed(recorded);
    } else if (kind == "result.discarded") {
      checker.on_discarded(recorded);
    } else if (kind == "attempt.state") {
      checker.on_state(recorded);
    }
  }
  return checker.finish();
}

}  // namespace onejob::check
