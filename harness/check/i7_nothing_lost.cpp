// I7 — no accepted job is lost; reads and operator actions are owner-scoped.
//
// Checks, against the store's commit log:
//   - every committed job has its first attempt committed with it, so accepted work is queued;
//   - every API answer that names a job (a read, a create, a retry or a cancel, whatever its
//     status) names a job of the asking owner: another owner's job is answered 404, naming
//     nothing;
//   - a job read answered 404 to the job's own owner asks for a job the store did not yet hold
//     when the request reached the API node (a committed job must be found); the job is the one
//     the read's method and path name (api_routes.hpp), whatever the API made of them.
//   - no node but an API node asks the store to write a value it cannot hold (a NUL byte or
//     invalid UTF-8: the commit log's "unstorable" refusal; write_unstorable): a worker, the
//     reconciler or the certifier writes down its own words and what it says of a provider's (a
//     refusal, an output it quotes) as text the store holds, or the write is refused on every
//     try and what it carried (a provider's answer, a certification) is lost. An API node's
//     request may carry such a value from its client: what it answered is I13's.
//   - the store commits no text PostgreSQL cannot hold (unstorable_committed): no text of a
//     commit.* event holds a NUL byte or invalid UTF-8, by the checker's own reading of UTF-8.
//     PgStore refuses such a value, so a store that commits it (the memory store) is not the
//     store the system runs on: what it took would be refused there.
// Does not check:
//   - that the store's final rows still hold every committed job (the runner compares them with
//     the log: violations of "log");
//   - that a client got the id of its job (I1), or what a read showed (I5).
#include <set>

#include "harness/check/api_routes.hpp"
#include "harness/check/invariant.hpp"
#include "harness/events/commit_events.hpp"

namespace onejob::check {

namespace {

void check_unstorable_writes(const HistoryModel& model, std::vector<Violation>& out) {
  std::set<std::string> api_nodes;
  for (const auto& exchange : model.exchanges) api_nodes.insert(exchange.node.str());
  for (const auto& [refused, seq, at] : model.refusals) {
    if (refused.refusal != events::kRefusedUnstorable || api_nodes.contains(refused.by)) continue;
    out.push_back(violation("I7.write_unstorable",
                            refused.by + " asked the store to " + refused.operation +
                                " a value it cannot hold (a NUL byte or invalid UTF-8): refused "
                                "on every try, what it carried is lost",
                            seq, {}));
  }
}

void check_committed_text(const HistoryModel& model, std::vector<Violation>& out) {
  for (const auto& [seq, field] : model.unstorable_commits) {
    out.push_back(violation("I7.unstorable_committed",
                            "the store committed " + model.history->kind(seq - 1) + " with its " +
                                interned(field) +
                                " holding a NUL byte or invalid UTF-8, which PostgreSQL text "
                                "cannot hold: PgStore would have refused the write",
                            seq, {}));
  }
}

}  // namespace

std::vector<Violation> check_nothing_lost(const HistoryModel& model) {
  std::vector<Violation> out;
  for (const auto& [id, job] : model.jobs) {
    const AttemptRecord* first = job.attempts.empty() ? nullptr : model.attempt(job.attempts[0]);
    if (first == nullptr || first->inserted.what.attempt_no != 1) {
      out.push_back(violation("I7.job_without_attempt",
                              "the store committed " + job_ref(id) + " without its first attempt",
                              job.inserted.seq, {}));
    }
  }
  for (const auto& exchange : model.exchanges) {
    if (!exchange.answered()) continue;
    const auto request_read = model.request_of(exchange);
    const auto& request = *request_read;
    const std::string& asker = request.owner;
    const auto response_read = model.response_of(exchange);
    const auto& response = *response_read;
    // Owner scope: whatever the route and status, an answer names only the asker's jobs (another
    // owner's job is as absent as a missing one: 404, naming nothing).
    if (response.job_id) {
      const JobRecord* job = model.job(*response.job_id);
      if (job == nullptr || job->inserted.what.owner() != asker) {
        out.push_back(
            violation("I7.read_across_owners",
                      exchange.node + " answered " + exchange.route + " of owner \"" + asker +
                          "\" with " + std::to_string(response.status) + " naming " +
                          job_ref(*response.job_id) + ", which " +
                          (job == nullptr ? std::string("the store never committed")
                                          : "owner \"" + job->inserted.what.owner() + "\" owns"),
                      exchange.response_seq, {}));
        continue;
      }
    }
    if (response.status != 404) continue;
    // The job the read's path names, by the rules' own reading of the route (not the API's, nor
    // the job the client meant: a probe's path may name another job, or none).
    const Route route = route_of(request.method, request.path);
    if (route.fit != RouteFit::resource || route.name != "get_job") continue;
    const JobRecord* job = model.job(route.id);
    if (job != nullptr && job->inserted.what.owner() == asker &&
        job->inserted.seq < exchange.request_seq) {
      out.push_back(violation("I7.job_hidden_from_owner",
                              exchange.node + " answered 404 to owner \"" + asker + "\" for " +
                                  job_ref(job->id()) + ", which the store holds",
                              exchange.response_seq, {job->inserted.seq}));
    }
  }
  check_unstorable_writes(model, out);
  check_committed_text(model, out);
  return out;
}

}  // namespace onejob::check
