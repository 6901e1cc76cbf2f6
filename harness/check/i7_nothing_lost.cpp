// I7 — no accepted job is lost; reads are owner-scoped.
//
// Checks, against the store's commit log:
//   - every committed job has its first attempt committed with it, so accepted work is queued;
//   - a job read answered 200 shows a job of the asking owner;
//   - a job read answered 404 to the job's own owner asks for a job the store did not yet hold
//     when the request reached the API node (a committed job must be found).
// Does not check:
//   - that the store's final rows still hold every committed job (the runner compares them with
//     the log: violations of "log");
//   - that a client got the id of its job (I1), or what a read showed (I5).
#include "harness/check/invariant.hpp"

namespace onejob::check {

std::vector<Violation> check_nothing_lost(const HistoryModel& model) {
  std::vector<Violation> out;
  for (const auto& [id, job] : model.jobs) {
    const AttemptRecord* first = job.attempts.empty() ? nullptr : model.attempt(job.attempts[0]);
    if (first == nullptr || first->inserted.what.attempt_no != 1) {
      out.push_back({"I7",
                     "the store committed " + job_ref(id) + " without its first attempt",
                     job.inserted.seq,
                     {}});
    }
  }
  for (const auto& exchange : model.exchanges) {
    if (exchange.request.what.route != "get_job" || !exchange.response) continue;
    const auto& asker = exchange.request.what.owner;
    const auto& response = exchange.response->what;
    if (response.status == 200 && response.job_id) {
      const JobRecord* job = model.job(*response.job_id);
      if (job == nullptr || job->inserted.what.owner != asker) {
        out.push_back({"I7",
                       exchange.node + " showed " + job_ref(*response.job_id) + " to owner \"" +
                           asker + "\", who does not own it",
                       exchange.response->seq,
                       {}});
      }
      continue;
    }
    if (response.status != 404) continue;
    const auto request = model.requests.find(exchange.client_request);
    if (request == model.requests.end() || !request->second.first.job_id) continue;
    const JobRecord* job = model.job(*request->second.first.job_id);
    if (job != nullptr && job->inserted.what.owner == asker &&
        job->inserted.seq < exchange.request.seq) {
      out.push_back({"I7",
                     exchange.node + " answered 404 to owner \"" + asker + "\" for " +
                         job_ref(job->id()) + ", which the store holds",
                     exchange.response->seq,
                     {job->inserted.seq}});
    }
  }
  return out;
}

}  // namespace onejob::check
