// I8 — liveness: by the end of the run every job is completed or failed, or is parked in a state
// that only an outside actor can end: blocked on an UNKNOWN attempt (awaiting out-of-band truth)
// or awaiting an operator (its latest attempt was cancelled and nobody retried).
//
// Judged at `run.end`, from the store's commit log. Violations:
//   - a job with an attempt still STARTING or RUNNING when the run ended;
//   - a stuck job: pending, nothing live, its latest attempt not cancelled: no one will act.
// Does not check:
//   - anything when the history has no `run.end` (a run cut short has no end to judge at);
//   - whether faults had healed long enough before the end: a scenario leaves time for that
//     (its default settle time, or a quiet phase);
//   - how long blocked or parked jobs wait.
#include "harness/check/invariant.hpp"

namespace onejob::check {

std::vector<Violation> check_liveness(const HistoryModel& model) {
  std::vector<Violation> out;
  if (!model.end_seq) return out;
  for (const auto& [id, job] : model.jobs) {
    const JobEnd end = model.end_of(job);
    if (end == JobEnd::running) {
      out.push_back(violation("I8.still_running",
                              job_ref(id) + " still has a STARTING or RUNNING attempt at run end",
                              *model.end_seq, {job.inserted.seq}));
    } else if (end == JobEnd::stuck) {
      out.push_back(violation("I8.stuck",
                              job_ref(id) +
                                  " is stuck at run end: pending, no live attempt, and its "
                                  "latest attempt was not cancelled by an operator",
                              *model.end_seq, {job.inserted.seq}));
    }
  }
  return out;
}

}  // namespace onejob::check
