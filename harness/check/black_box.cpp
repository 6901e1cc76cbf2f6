// The black-box rules. Each states its promise on what clients and provider stubs observed and
// decides with its own oracle: JSON values compared structurally (nlohmann::json's equality, key
// order and spacing ignored), never the judged system's canonical form or fingerprint.
//
// A job's identity, from outside, is its creator's (owner, idempotency key); the job ids a target
// answers with are attached to it by the creates it acknowledged (2xx). A provider execution
// belongs to the job whose create body carried the input the stub received (the body's "input",
// or the whole body when it has none); an execution whose input several identities share is
// linked to none, and the rules that need the link skip it (the prober makes inputs unique).
//
// This file holds the rules about executions, results and attempts (B3-B7, B11, B13-B15, B17) and
// the rule table; black_box_answers.cpp those about keys and answers (B1, B2, B8-B10, B12, B16,
// availability).
#include "harness/check/black_box.hpp"

#include "harness/check/black_box_rules.hpp"
#include "harness/check/json_value.hpp"

namespace onejob::check::black_box {
namespace detail {

// B3: no provider execution for a job starts while an earlier execution for it (another provider
// key) may still be running, unless the job's attempt was cancelled (a cancel of the job sent
// before the second started and acknowledged).
void one_execution_at_a_time(const Index& index, std::vector<Finding>& out) {
  for (const auto& [identity, executions] : index.executions_of_identity) {
    std::vector<std::int64_t> cancels;  // when acknowledged cancels of this job were sent
    const auto jobs = index.jobs_of_identity.find(identity);
    if (jobs != index.jobs_of_identity.end()) {
      for (const auto& [id, request] : index.request_by_id) {
        if (request->action != "cancel" || !request->job || !jobs->second.contains(*request->job)) {
          continue;
        }
        const auto responses = index.responses_by_id.find(id);
        if (responses == index.responses_by_id.end()) continue;
        for (const Response* response : responses->second) {
          if (success(response->status)) cancels.push_back(request->t_us);
        }
      }
    }
    for (std::size_t later = 1; later < executions.size(); ++later) {
      const Execution& second = *executions[later];
      for (std::size_t earlier = 0; earlier < later; ++earlier) {
        const Execution& first = *executions[earlier];
        if (first.provider_key == second.provider_key && first.provider == second.provider) {
          continue;  // the same key twice is B6's
        }
        const bool running = !first.ended_us || *first.ended_us > second.t_us;
        if (!running) continue;
        const bool cancelled =
            std::ranges::any_of(cancels, [&](std::int64_t sent) { return sent <= second.t_us; });
        if (cancelled) continue;
        out.push_back(finding("B3.overlapping_executions",
                              "provider " + second.provider + " started executing key " +
                                  second.provider_key + " for " + describe_identity(identity) +
                                  " while key " + first.provider_key + " (" + first.provider +
                                  ") was still " +
                                  (first.ended_us ? "running" : "running and never answered"),
                              {second.line, first.line}));
        break;
      }
    }
  }
}

// B4: a job shows at most one result and keeps it (any two results that differ, in any order);
// once shown succeeded, every read sent afterwards shows it succeeded.
void one_result(const History& history, const Index& index, std::vector<Finding>& out) {
  std::map<std::string, const Response*> first_result;
  std::map<std::string, const Response*> first_success;
  for (const Response* response : by_arrival(history)) {
    if (!success(response->status)) continue;
    const auto job = index.job_of(*response);
    if (!job) continue;
    if (response->result && !response->result->is_null()) {
      const auto [it, fresh] = first_result.emplace(*job, response);
      if (!fresh && *it->second->result != *response->result) {
        out.push_back(finding("B4.result_changed",
                              "job " + *job + " showed result " + shown(*it->second->result) +
                                  ", later " + shown(*response->result),
                              {response->line, it->second->line}));
      }
    }
    if (response->job_status) {
      // Only a read sent after the success was seen must see it too: one sent before may have
      // been answered from an earlier moment, however late its answer arrived.
      const auto it = first_success.find(*job);
      const Request* request = index.request_of(*response);
      if (it != first_success.end() && *response->job_status != "succeeded" && request &&
          request->t_us > it->second->t_us) {
        out.push_back(
            finding("B4.success_undone",
                    "job " + *job + " was shown succeeded, later " + *response->job_status,
                    {response->line, it->second->line}));
      }
      if (*response->job_status == "succeeded") first_success.emplace(*job, response);
    }
  }
}

// B5: a job's shown result is the output of an execution the providers performed for that job.
void result_from_execution(const History& history, const Index& index, std::vector<Finding>& out) {
  std::set<std::string> reported;
  for (const Response* response : by_arrival(history)) {
    if (!success(response->status) || !response->result || response->result->is_null()) continue;
    const auto job = index.job_of(*response);
    if (!job || reported.contains(*job)) continue;
    const auto identity = index.identity_of_job.find(*job);
    if (identity == index.identity_of_job.end()) continue;  // a job this history never created
    const auto executions = index.candidates_of_identity.find(identity->second);
    const bool performed = executions != index.candidates_of_identity.end() &&
                           std::ranges::any_of(executions->second, [&](const Execution* execution) {
                             return execution->output && *execution->output == *response->result;
                           });
    if (performed) continue;
    reported.insert(*job);
    out.push_back(finding("B5.result_not_executed",
                          "job " + *job + " shows result " + shown(*response->result) +
                              ", which no provider execution for it produced",
                          {response->line}));
  }
}

// B6: each (provider, provider key) executes at most once.
void key_executes_once(const History& history, std::vector<Finding>& out) {
  std::map<std::pair<std::string, std::string>, const Execution*> first;
  for (const auto& execution : history.executions) {
    const auto [it, fresh] =
        first.emplace(std::pair(execution.provider, execution.provider_key), &execution);
    if (fresh) continue;
    out.push_back(finding("B6.key_executed_twice",
                          "provider " + execution.provider + " executed key " +
                              execution.provider_key + " a second time",
                          {execution.line, it->second->line}));
  }
}

// B7: a job is never shown failed while an execution for it is still running (a timed-out call is
// unknown, not failed).
void timeout_is_not_failure(const History& history, const Index& index, std::vector<Finding>& out) {
  std::set<std::string> reported;
  for (const Response* response : by_arrival(history)) {
    if (!success(response->status) || response->job_status != "failed") continue;
    const auto job = index.job_of(*response);
    if (!job || reported.contains(*job)) continue;
    const auto identity = index.identity_of_job.find(*job);
    if (identity == index.identity_of_job.end()) continue;
    const auto executions = index.executions_of_identity.find(identity->second);
    if (executions == index.executions_of_identity.end()) continue;
    // The read took effect between its send and its answer: an execution that started before the
    // send and had not answered by the answer's arrival was running then.
    const Request* request = index.request_of(*response);
    if (!request) continue;
    for (const Execution* execution : executions->second) {
      const bool running = execution->t_us < request->t_us &&
                           (!execution->ended_us || *execution->ended_us > response->t_us);
      if (!running) continue;
      reported.insert(*job);
      out.push_back(finding("B7.failed_while_running",
                            "job " + *job + " was shown failed while provider " +
                                execution->provider + " was still executing its key " +
                                execution->provider_key,
                            {response->line, execution->line}));
      break;
    }
  }
}

// B11: a job moves to another provider on its own only once that provider passed its contract:
// the first execution for a job names its provider; an execution for it on another provider,
// before any operator retry of the job was sent, needs a certification execution on that
// provider that ended before it, and the last such one answered correctly (outcome "ok").
void failover_is_certified(const History& history, const Index& index, std::vector<Finding>& out) {
  for (const auto& [identity, executions] : index.executions_of_identity) {
    const std::int64_t retried = index.first_retry_of(identity);
    const std::string& own = executions.front()->provider;
    std::set<std::string> judged;
    for (const Execution* execution : executions) {
      if (execution->provider == own || execution->t_us >= retried ||
          !judged.insert(execution->provider).second) {
        continue;
      }
      const Execution* last = nullptr;  // the provider's last certification that ended before
      for (const auto& certification : history.executions) {
        if (certification.purpose != "certification" ||
            certification.provider != execution->provider || !certification.ended_us ||
            *certification.ended_us > execution->t_us) {
          continue;
        }
        if (!last || *certification.ended_us >= *last->ended_us) last = &certification;
      }
      if (last && last->outcome == "ok") continue;
      std::vector<std::uint64_t> lines{execution->line, executions.front()->line};
      if (last) lines.push_back(last->line);
      out.push_back(
          finding("B11.uncertified_failover",
                  "the job of " + describe_identity(identity) + ", first executed on " + own +
                      ", was executed on " + execution->provider +
                      (last ? ", whose last certification before it answered " + last->outcome
                            : ", which no certification had passed before it"),
                  std::move(lines)));
    }
  }
}

// B13: where the history declares the target's attempt limit, a job's executions, before any
// operator retry of it was sent, are under at most that many provider keys (an attempt keeps its
// key when it is sent again; each new attempt, a failover's too, has its own).
void attempts_within_limit(const History& history, const Index& index, std::vector<Finding>& out) {
  if (!history.attempt_limit) return;
  for (const auto& [identity, executions] : index.executions_of_identity) {
    const std::int64_t retried = index.first_retry_of(identity);
    std::set<std::pair<std::string, std::string>> keys;
    for (const Execution* execution : executions) {
      if (execution->t_us >= retried) break;
      keys.emplace(execution->provider, execution->provider_key);
      if (static_cast<int>(keys.size()) <= *history.attempt_limit) continue;
      out.push_back(finding("B13.attempts_past_limit",
                            "the job of " + describe_identity(identity) + " was executed under " +
                                std::to_string(keys.size()) + " provider keys, past its limit of " +
                                std::to_string(*history.attempt_limit) + " attempts",
                            {execution->line, executions.front()->line}));
      break;
    }
  }
}

// B14: a live attempt can be cancelled: a cancel refused 409 names an attempt that had
// finished. A finished attempt never runs again, so a read of the job, sent after the refusal
// arrived, that shows the attempt in a live state shows it was live when the cancel was refused.
void live_attempts_cancellable(const History& history, const Index& index,
                               std::vector<Finding>& out) {
  std::map<std::string, std::vector<const Response*>> reads_of_job;  // in arrival order
  for (const Response* response : by_arrival(history)) {
    const Request* request = index.request_of(*response);
    if (request && request->action == "read" && request->job && response->attempts) {
      reads_of_job[*request->job].push_back(response);
    }
  }
  for (const auto& response : history.responses) {
    const Request* request = index.request_of(response);
    if (!request || request->action != "cancel" || response.status != 409 || !request->job ||
        !request->attempt) {
      continue;
    }
    const auto reads = reads_of_job.find(*request->job);
    if (reads == reads_of_job.end()) continue;
    for (const Response* read : reads->second) {
      if (index.request_of(*read)->t_us <= response.t_us) continue;
      const auto shown = std::ranges::find(*read->attempts, *request->attempt, &AttemptShown::id);
      if (shown == read->attempts->end() || !shown->live) continue;
      out.push_back(finding("B14.live_attempt_refused",
                            "a cancel of attempt " + *request->attempt + " (job " + *request->job +
                                ") was refused 409, and a read sent after the refusal shows it " +
                                shown->state + ", still live",
                            {response.line, request->line, read->line}));
      break;
    }
  }
}

// B17: an attempt's life runs one way: once a read showed it finished (not live: succeeded,
// failed, cancelled, discarded, in the target's words), no read sent after that answer arrived
// shows it live again. (A cancelled attempt's late result may still win, but it never runs again:
// finished is final, and B14 leans on that.)
void finished_attempts_stay_finished(const History& history, const Index& index,
                                     std::vector<Finding>& out) {
  // (job, attempt) -> the first answer that showed it finished, in arrival order.
  std::map<std::pair<std::string, std::string>, const Response*> finished;
  for (const Response* response : by_arrival(history)) {
    const Request* request = index.request_of(*response);
    if (!request || request->action != "read" || !request->job || !response->attempts) continue;
    for (const auto& shown : *response->attempts) {
      const auto at = std::pair(*request->job, shown.id);
      const auto earlier = finished.find(at);
      if (!shown.live) {
        finished.emplace(at, response);
      } else if (earlier != finished.end() && request->t_us > earlier->second->t_us) {
        out.push_back(finding("B17.finished_attempt_live",
                              "attempt " + shown.id + " of job " + *request->job +
                                  " was shown finished, and a read sent after that answer shows "
                                  "it " +
                                  shown.state + ", live again",
                              {response->line, request->line, earlier->second->line}));
        finished.erase(earlier);  // one finding per revival
      }
    }
  }
}

// B15: an answer shows a provider's output only as its job's result: no attempt execution's
// output (an object with members) appears anywhere else in an answer's body (nested below its top
// level, or in a text holding JSON), unless it equals the result the answer shows. A discarded
// result, or one not yet the job's, is never visible.
void outputs_shown_only_as_results(const History& history, std::vector<Finding>& out) {
  std::map<std::string, const Execution*> outputs;  // compact text -> first execution
  for (const auto& execution : history.executions) {
    if (execution.purpose != "attempt" || !execution.output || !execution.output->is_object() ||
        execution.output->empty()) {
      continue;
    }
    outputs.emplace(execution.output->dump(), &execution);
  }
  if (outputs.empty()) return;
  for (const auto& response : history.responses) {
    if (!response.body) continue;
    std::set<std::string> nested;  // below the body's top level
    if (response.body->is_structured()) {
      for (const auto& item : *response.body) {
        for_each_object(item,
                        [&nested](const nlohmann::json& object) { nested.insert(object.dump()); });
      }
    }
    for (const auto& text : nested) {
      const auto produced = outputs.find(text);
      if (produced == outputs.end()) continue;
      const Execution& execution = *produced->second;
      if (response.result && *response.result == *execution.output) continue;
      out.push_back(
          finding("B15.output_shown_elsewhere",
                  "an answer (request " + response.id + ") shows, outside its result, " +
                      shown(*execution.output) + ", the output " + execution.provider +
                      " produced under key " + execution.provider_key +
                      (response.result ? ", while its result is " + shown(*response.result)
                                       : ", while it shows no result"),
                  {response.line, execution.line}));
      break;
    }
  }
}

}  // namespace detail

using namespace detail;

const std::vector<Rule>& all_rules() {
  static const std::vector<Rule> rules = {
      {"B1", "one job id per (owner, key) across all answers"},
      {"B2",
       "a reused key with another payload is refused (with the target's status for it, where "
       "declared), never answered with a job; the same payload again is not refused as reused"},
      {"B3", "no execution for a job while an earlier one may still run, unless cancelled"},
      {"B4", "a job shows at most one result, and never changes it or undoes its success"},
      {"B5", "the shown result is the output of an execution performed for that job"},
      {"B6", "each provider key executes at most once"},
      {"B7", "a job is never shown failed while an execution for it still runs"},
      {"B8",
       "nothing acknowledged is lost: an acknowledged create names its job, and that job never "
       "reads 404 to its owner"},
      {"B9",
       "an operator action's key stands for one request, its replay repeats its answer, and "
       "every acknowledgement shows what the action did"},
      {"B10", "a job is its owner's: another owner's read, retry or cancel of it is refused"},
      {"B11",
       "a job moves to another provider on its own only once that provider passed its contract"},
      {"B12",
       "a failure is answered as one to retry under the same key (502, 503, 504), never another "
       "5xx"},
      {"B13", "a job runs at most the target's declared number of attempts"},
      {"B14",
       "a live attempt can be cancelled: a cancel is refused only once its attempt finished"},
      {"B15",
       "a provider's output is shown only as its job's result, never elsewhere in an answer (a "
       "discarded result stays hidden)"},
      {"B16", "a create answered 201 names its job in Location, at the path the target declared"},
      {"B17", "an attempt shown finished is never shown live again"},
  };
  return rules;
}

std::vector<Finding> judge(const History& history) {
  const Index index(history);
  std::vector<Finding> out;
  one_job_per_key(index, out);
  key_reuse_refused(history, index, out);
  one_execution_at_a_time(index, out);
  one_result(history, index, out);
  result_from_execution(history, index, out);
  key_executes_once(history, out);
  timeout_is_not_failure(history, index, out);
  nothing_lost(history, index, out);
  action_keys_stand_for_one_request(history, index, out);
  jobs_stay_their_owners(history, index, out);
  failover_is_certified(history, index, out);
  failures_are_declared(history, index, out);
  attempts_within_limit(history, index, out);
  live_attempts_cancellable(history, index, out);
  finished_attempts_stay_finished(history, index, out);
  outputs_shown_only_as_results(history, out);
  created_jobs_located(history, index, out);
  availability(history, index, out);
  return out;
}

bool is_safety(const Finding& finding) { return finding.rule != "availability"; }

std::string substitute(std::string text, const std::string& name, const std::string& value) {
  const std::string marker = "{" + name + "}";
  for (std::size_t at = text.find(marker); at != std::string::npos;
       at = text.find(marker, at + value.size())) {
    text.replace(at, marker.size(), value);
  }
  return text;
}

std::string evidence_lines(const Finding& finding) {
  std::string text;
  for (const auto line : finding.lines) {
    text += text.empty() ? "line " : ", ";
    text += std::to_string(line);
  }
  return text;
}

}  // namespace onejob::check::black_box
