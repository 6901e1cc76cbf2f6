// I5 — one winner per job; completed_by never changes; the result is the winner's, both in the
// store and for every reader; every loser is discarded.
//
// Checks, against the store's commit log:
//   - at most one compare-and-swap wins per job; the winning one moves the version from 1 to 2
//     and writes the offered result; a losing one finds the job already won, leaves its
//     completed_by and result as the winner's, and names the winner;
//   - a losing CAS records as the attempt's result the output its own provider produced for it
//     (compared as JSON; discarded_not_own): a discarded result is kept as the loser's own bytes;
//   - the attempt of a winning CAS becomes SUCCEEDED and of a losing one DISCARDED, and no
//     attempt reaches either state without such a CAS;
// and against what readers saw:
//   - a job read (a client's GET) showing the job succeeded shows the log's winner and, compared
//     as JSON by this checker's own parser, the output the winner's provider really produced
//     (simulated outputs differ per provider and attempt, so another attempt's result shows);
//   - a job read that reached the API only after the job was won shows it succeeded;
//   - no answer shows, nested in its body (outside a top-level "result"), the output an attempt's
//     provider produced unless it is the result the answer's job (the execution's, when the answer
//     names none) had won before the answer arrived: a loser's result is discarded and never
//     visible, and no attempt's result is shown before its compare-and-swap. Outputs are compared
//     by the digests of their JSON objects, this checker's parser against the client's.
// Does not check:
//   - that the winner's output was valid (I6);
//   - reads of jobs a client never asked for.
#include <algorithm>
#include <map>
#include <set>

#include "harness/check/invariant.hpp"
#include "harness/check/json_value.hpp"

namespace onejob::check {
namespace {

// A losing compare-and-swap records, as the attempt's discarded result, the output its own
// provider produced for it (compared as JSON): not the winner's, not another attempt's, not bytes
// no provider produced.
void check_discarded_bytes(const HistoryModel& model, const At<Cas>& cas, const std::string& what,
                           std::vector<Violation>& out) {
  const Execution* execution = model.execution_of(cas.what.attempt_id);
  if (execution == nullptr) {
    out.push_back(violation("I5.discarded_not_own",
                            what + ", offering a result its provider never produced", cas.seq, {}));
  } else if (differs_as_json(model.cas_event(cas).result, model.output_of(*execution))) {
    out.push_back(violation("I5.discarded_not_own",
                            what + ", and the result recorded for it is not the output its "
                                   "provider produced for it",
                            cas.seq, {execution->executed.seq}));
  }
}

void check_cas(const HistoryModel& model, const JobRecord& job, std::vector<Violation>& out) {
  const At<Cas>* winner = nullptr;
  for (const auto& cas : job.cas) {
    const auto& c = cas.what;
    const std::string what = attempt_ref(c.attempt_id) + "'s compare-and-swap on " +
                             job_ref(job.id()) + (c.won ? " won" : " lost");
    if (c.won && winner != nullptr) {
      out.push_back(violation(
          "I5.two_winners",
          what + ", but " + attempt_ref(winner->what.attempt_id) + " had already won: two winners",
          cas.seq, {winner->seq}));
    } else if (c.won && (c.expected_version != 1 || c.version != 2)) {
      out.push_back(violation("I5.version_not_bumped_once",
                              what + " moving the version " + std::to_string(c.expected_version) +
                                  " -> " + std::to_string(c.version) + ", not 1 -> 2",
                              cas.seq, {}));
    } else if (c.won && !c.result_offered) {
      out.push_back(violation("I5.result_not_offered",
                              what + " but the job's result is not the bytes it offered", cas.seq,
                              {}));
    } else if (!c.won && winner == nullptr) {
      out.push_back(violation("I5.lost_without_winner", what + " although the job had no winner",
                              cas.seq, {}));
    } else if (!c.won && (c.winner != winner->what.attempt_id ||
                          model.cas_event(cas).job_result != model.cas_event(*winner).result)) {
      out.push_back(violation("I5.loser_reached_job",
                              what + ", and the job's completed_by or result is no longer " +
                                  attempt_ref(winner->what.attempt_id) +
                                  "'s: a loser reached the job",
                              cas.seq, {winner->seq}));
    }
    if (!c.won) check_discarded_bytes(model, cas, what, out);
    if (c.won && winner == nullptr) winner = &cas;
    // The CAS's own attempt transition follows it in the log.
    const AttemptRecord* attempt = model.attempt(c.attempt_id);
    if (attempt == nullptr) continue;
    const auto expected = c.won ? AttemptState::succeeded : AttemptState::discarded;
    auto next =
        std::ranges::find_if(attempt->steps, [&](const auto& s) { return s.seq > cas.seq; });
    if (next == attempt->steps.end() || next->what.to != expected) {
      out.push_back(
          violation("I5.state_after_cas",
                    what + ", but the attempt did not become " + std::string(to_string(expected)),
                    cas.seq, {}));
    }
  }
}

void check_no_cas_endings(const HistoryModel& model, std::vector<Violation>& out) {
  for (const auto& [id, attempt] : model.attempts) {
    const std::int64_t attempt_id = id;  // a lambda may not capture a structured binding (clang)
    for (const auto& step : attempt.steps) {
      const auto to = step.what.to;
      if (to != AttemptState::succeeded && to != AttemptState::discarded) continue;
      const JobRecord* job = model.job(attempt.job_id());
      if (job == nullptr) continue;  // I3 reports an attempt of a job never inserted
      const bool by_cas = std::ranges::any_of(job->cas, [&](const auto& c) {
        return c.what.attempt_id == attempt_id && c.seq < step.seq;
      });
      if (!by_cas) {
        out.push_back(violation("I5.settled_without_cas",
                                "the store made " + attempt_ref(id) + " " +
                                    std::string(to_string(to)) + " without a compare-and-swap",
                                step.seq, {}));
      }
    }
  }
}

// A read answered to a client send that reached every API node only after the job was won must
// show it succeeded.
void check_unfinished_read(const HistoryModel& model, std::int64_t number,
                           const At<events::ClientReceived>& received,
                           std::vector<Violation>& out) {
  const JobRecord* job = model.job(*received.what.job_id);
  const auto* won = job == nullptr ? nullptr : job->won();
  if (won == nullptr) return;
  std::optional<std::uint64_t> first_arrival;
  for (const auto& exchange : model.exchanges) {
    if (exchange.client_request != number || exchange.client_send != received.what.send) {
      continue;
    }
    if (!first_arrival || exchange.request_seq < *first_arrival)
      first_arrival = exchange.request_seq;
  }
  if (!first_arrival || *first_arrival < won->seq) return;
  out.push_back(violation("I5.read_after_win_not_won",
                          "a read of " + job_ref(job->id()) + " that began after " +
                              attempt_ref(won->what.attempt_id) + " won it shows it " +
                              received.what.shown_status.value_or("without a status"),
                          received.seq, {won->seq, *first_arrival}));
}

void check_reads(const HistoryModel& model, std::vector<Violation>& out) {
  for (const auto& [number, request] : model.requests) {
    if (request.action != "get_job") continue;
    for (const auto& received : model.receipts(request)) {
      const auto& r = received.what;
      if (r.status != 200 || !r.job_id) continue;
      if (r.shown_status != "succeeded") {
        // completed_by is set by the winning compare-and-swap, which makes the job succeeded in
        // the same write: a row read at once cannot show a winner and another status.
        if (r.shown_winner) {
          out.push_back(violation("I5.read_wrong_winner",
                                  request.client + " read " + job_ref(*r.job_id) + " as " +
                                      r.shown_status.value_or("without a status") +
                                      " completed by " + attempt_ref(*r.shown_winner) +
                                      ": only a succeeded job has a winner",
                                  received.seq, {}));
          continue;
        }
        check_unfinished_read(model, number, received, out);
        continue;
      }
      const JobRecord* job = model.job(*r.job_id);
      const auto* won = job == nullptr ? nullptr : job->won();
      const std::string what = request.client + " read " + job_ref(*r.job_id) + " as succeeded";
      if (won == nullptr || won->seq > received.seq) {
        out.push_back(violation("I5.read_winner_unknown_to_store",
                                what + ", but the store had no winner for it", received.seq, {}));
        continue;
      }
      const auto winner = won->what.attempt_id;
      if (r.shown_winner != winner) {
        out.push_back(violation("I5.read_wrong_winner",
                                what + " completed by " +
                                    (r.shown_winner ? attempt_ref(*r.shown_winner) : "nobody") +
                                    ", but its winner is " + attempt_ref(winner),
                                received.seq, {won->seq}));
        continue;
      }
      const Execution* execution = model.execution_of(winner);
      if (execution == nullptr) continue;
      if (r.result_digest != json_digest(model.output_of(*execution))) {
        out.push_back(violation("I5.read_wrong_result",
                                what + " with a result that is not the one the winner " +
                                    attempt_ref(winner) + "'s provider produced",
                                received.seq, {won->seq, execution->executed.seq}));
      }
    }
  }
}

// The digest of an output that is a JSON object with members (what a result looks like); nothing
// for any other output, which cannot be told from the objects every answer carries.
std::optional<std::string> object_digest(const std::string& output) {
  const JsonValue held = json_value(output);
  if (!held->is_object() || held->empty()) return std::nullopt;
  return json_digest(output);
}

void check_nested_outputs(const HistoryModel& model, std::vector<Violation>& out) {
  struct Shown {
    const ClientRequest* request;
    At<events::ClientReceived> received;
  };
  // Every digest an answer showed nested, with the answers that showed it.
  std::map<std::string, std::vector<Shown>, std::less<>> shown;
  for (const auto& [number, request] : model.requests) {
    for (auto& received : model.receipts(request)) {
      const auto& nested = received.what.nested_digests;
      if (!nested) continue;
      for (std::size_t from = 0; from <= nested->size();) {
        const auto to = std::min(nested->find(',', from), nested->size());
        shown[nested->substr(from, to - from)].push_back({&request, received});
        from = to + 1;
      }
    }
  }
  if (shown.empty()) return;
  // The output its winner produced, by job (computed when first asked).
  std::map<std::int64_t, std::optional<std::string>> winning_digests;
  const auto winning_digest = [&](const JobRecord& job) -> const std::optional<std::string>& {
    auto [it, fresh] = winning_digests.try_emplace(job.id());
    if (!fresh) return it->second;
    const auto* won = job.won();
    const Execution* execution =
        won == nullptr ? nullptr : model.execution_of(won->what.attempt_id);
    if (execution != nullptr) it->second = json_digest(model.output_of(*execution));
    return it->second;
  };
  std::set<std::pair<std::uint64_t, std::string>> reported;  // (answer, digest)
  for (const auto& execution : model.executions) {
    const auto digest = object_digest(model.output_of(execution));
    if (!digest) continue;
    const auto showing = shown.find(*digest);
    if (showing == shown.end()) continue;
    const auto by_key = model.attempt_by_provider_key.find(execution.executed.what.provider_key);
    const AttemptRecord* attempt =
        by_key == model.attempt_by_provider_key.end() ? nullptr : model.attempt(by_key->second);
    if (attempt == nullptr) continue;
    for (const auto& [request, received] : showing->second) {
      const std::int64_t job_id = received.what.job_id.value_or(attempt->job_id());
      const JobRecord* job = model.job(job_id);
      const auto* won = job == nullptr ? nullptr : job->won();
      if (won != nullptr && won->seq < received.seq && winning_digest(*job) == digest) continue;
      if (!reported.emplace(received.seq, *digest).second) continue;
      out.push_back(violation("I5.discarded_result_shown",
                              request->client +
                                  " received an answer showing, nested in its body, the output " +
                                  attempt_ref(attempt->id()) + "'s provider produced for " +
                                  job_ref(attempt->job_id()) + ", which was not " +
                                  job_ref(job_id) + "'s result when the answer arrived",
                              received.seq, {execution.executed.seq}));
    }
  }
}

}  // namespace

std::vector<Violation> check_one_winner(const HistoryModel& model) {
  std::vector<Violation> out;
  for (const auto& [id, job] : model.jobs) check_cas(model, job, out);
  check_no_cas_endings(model, out);
  check_reads(model, out);
  check_nested_outputs(model, out);
  return out;
}

}  // namespace onejob::check
