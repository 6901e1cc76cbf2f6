#include <algorithm>
#include <thread>

#include <nlohmann/json.hpp>

#include "harness/real/probe_run.hpp"

namespace onejob::real::probe_detail {
namespace {

bool is_terminal(const std::string& status) { return status == "succeeded" || status == "failed"; }

}  // namespace

std::string Run::credential(const std::string& owner) const {
  return options_.profile.owners.at(owner);  // checked before the run
}

std::string Run::operator_credential(const std::string& owner) const {
  const auto found = options_.profile.operators.find(owner);
  return found == options_.profile.operators.end() ? credential(owner) : found->second;
}

std::string Run::wait_for_job(int request) {
  std::unique_lock lock(mutex_);
  finished_.wait_for(lock, std::chrono::seconds(60), [&] { return outcomes_[request].done; });
  return outcomes_[request].job;
}

void Run::perform(const TimelineEntry& entry, HttpConnection& connection) {
  const std::string& owner = spec_.clients[client_index_.at(entry.client)].owner;
  const auto record = [&](const HttpReply& reply) {
    std::lock_guard lock(mutex_);
    Outcome& outcome = outcomes_[entry.request];
    if (!reply.answered()) {
      outcome.failure = reply.failure;
      return;
    }
    outcome.status = reply.status;
    if (auto job = id_at(reply.body, options_.profile.job_id_pointer)) outcome.job = *job;
  };
  const auto done = [&] {
    order_.place(static_cast<std::size_t>(entry.request));
    std::lock_guard lock(mutex_);
    outcomes_[entry.request].done = true;
    finished_.notify_all();
  };
  const auto skip = [&](const std::string& why) {
    std::lock_guard lock(mutex_);
    notes_.push_back("request " + std::to_string(entry.request) + " (" + entry.client +
                     "): not sent, " + why);
  };
  // Sends until answered, at most 1 + client_retries times (the same request, the same key).
  // `once(wait)` sends once and waits at most `wait` for the answer.
  const auto send = [&](const auto& once) {
    HttpReply reply;
    for (int sent = 0; sent <= spec_.policy.client_retries; ++sent) {
      const auto resend_at = Clock::now() + request_timeout();
      const bool last = sent == spec_.policy.client_retries;
      reply = once(last ? last_answer_wait() : request_timeout());
      order_.place(static_cast<std::size_t>(entry.request));
      record(reply);
      // As the scenario's clients: a 502 or 503 (unavailable) is resent like a lost reply.
      const bool unavailable =
          reply.status == 502 || reply.status == options_.profile.translate(503);
      if (reply.answered() && !unavailable) break;
      // A client learns of a lost reply by its timeout, not by the connection's end.
      if (sent < spec_.policy.client_retries) std::this_thread::sleep_until(resend_at);
    }
    return reply;
  };
  // An operator action's key (none for a create or a read, or an action with key: null).
  const auto key_of_action = [&] {
    const auto key = action_key_sent(entry);
    return key ? keys_.at(*key) : std::string();
  };
  // Every action but a create acts on the job an earlier create learned.
  std::string job;
  if (entry.kind != TimelineEntry::Kind::create_job) {
    job = wait_for_job(entry.target_request);
    if (job.empty()) {
      skip("request " + std::to_string(entry.target_request) + " learned no job id");
      done();
      return;
    }
  }
  switch (entry.kind) {
    case TimelineEntry::Kind::create_job: {
      const std::string key = entry.create_job.key ? keys_.at(*entry.create_job.key) : "";
      const HttpReply reply = send([&](milliseconds wait) {
        return recorder_.create(connection, owner, credential(owner), key, entry.create_job.body,
                                entry.client, wait);
      });
      const auto& profile = options_.profile;
      std::lock_guard lock(mutex_);
      const Outcome& outcome = outcomes_[entry.request];
      if ((reply.status == profile.translate(201) || reply.status == profile.translate(200)) &&
          !outcome.job.empty()) {
        acknowledged_.push_back({owner, credential(owner), outcome.job, entry.request});
      }
      break;
    }
    case TimelineEntry::Kind::get_job: {
      if (entry.method || entry.path) {
        // A probe of the routes (the scenario's paths are the reference's): sent as written,
        // judged by the scenario's expected status, and not part of the black-box history,
        // whose actions are creates, reads, retries and cancels.
        const auto& profile = options_.profile;
        const Headers headers{{profile.auth_header, profile.auth_prefix + credential(owner)}};
        send([&](milliseconds wait) {
          return connection.send(entry.method.value_or(profile.read.method),
                                 substitute(entry.path.value_or(profile.read.path), "job", job),
                                 headers, "", wait);
        });
        break;
      }
      send([&](milliseconds wait) {
        return recorder_.read(connection, owner, credential(owner), job, entry.client, wait);
      });
      break;
    }
    case TimelineEntry::Kind::retry: {
      std::string body = entry.retry_body.value_or("");
      if (entry.provider) body = nlohmann::json{{"provider", *entry.provider}}.dump();
      send([&](milliseconds wait) {
        return recorder_.retry(connection, owner, operator_credential(owner), key_of_action(), job,
                               body, entry.client, wait);
      });
      break;
    }
    case TimelineEntry::Kind::cancel: {
      // The attempt's id, from a read of the job by its creator, straight to the target (the
      // probe looking up what the scenario names, not a client's action: no faults, recorded
      // as client "probe"). A cancel by someone else must still name a real attempt.
      TimelineEntry room;
      const TimelineEntry& create =
          request_entry(spec_, static_cast<std::size_t>(entry.target_request), room);
      const std::string& creator = spec_.clients[client_index_.at(create.client)].owner;
      HttpConnection direct(options_.host, port_);
      // The probe's own lookup, not a judged action: a read that got no answer (a target slowed
      // by a loaded machine) is sent again, three reads in all.
      HttpReply read;
      for (int reads = 0; reads < 3 && !read.answered(); ++reads) {
        read = recorder_.read(direct, creator, credential(creator), job, "probe");
      }
      // The attempt_no-th element of the job's attempts, then the id inside it.
      const std::string attempt = id_at(read.body, options_.profile.attempts_pointer + "/" +
                                                       std::to_string(entry.attempt_no - 1) +
                                                       options_.profile.attempt_id_pointer)
                                      .value_or("");
      if (attempt.empty()) {
        // Which of the two it was: a read that got no answer, or one that did not list it.
        skip("attempt " + std::to_string(entry.attempt_no) + " of job " + job +
             (read.answered()
                  ? " not found in its read (status " + std::to_string(read.status) + ")"
                  : " not found: its read got no answer (" + read.failure + ")"));
        break;
      }
      send([&](milliseconds wait) {
        return recorder_.cancel(connection, owner, operator_credential(owner), key_of_action(), job,
                                attempt, entry.client, wait);
      });
      break;
    }
  }
  done();
}

void Run::run_timeline() {
  const std::vector<std::size_t>& order = order_.order();
  std::atomic<std::size_t> next = 0;
  const std::size_t threads = std::min<std::size_t>(order.size(), 64);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      std::map<std::size_t, std::unique_ptr<HttpConnection>> connections;
      for (std::size_t i = next++; i < order.size(); i = next++) {
        TimelineEntry room;
        const TimelineEntry& entry = request_entry(spec_, order[i], room);
        std::this_thread::sleep_until(origin_ + real(entry.at));
        // At most as long as a client waits for its last answer, and a second more: a request
        // the target holds on to does not stop the timeline.
        order_.wait_for_turn(order[i], last_answer_wait() + milliseconds(1000));
        const std::size_t client = client_index_.at(entry.client);
        auto& connection = connections[client];
        if (!connection) {
          connection = std::make_unique<HttpConnection>("127.0.0.1", proxies_[client]->port_text());
        }
        connection->set_header(std::string(kOrderField), std::to_string(order[i]));
        perform(entry, *connection);
      }
    });
  }
  for (auto& thread : pool) thread.join();
}

// Reads every acknowledged job every `observe_every` while the timeline runs, as client
// "observer": a result that changes between two reads is only seen by someone who reads in
// between, and the scenario's own reads are few.
void Run::observe() {
  if (options_.observe_every <= milliseconds(0)) return;
  HttpConnection connection(options_.host, port_);
  while (!observing_done_) {
    std::vector<Acknowledged> jobs;
    {
      std::unique_lock lock(mutex_);
      finished_.wait_for(lock, options_.observe_every, [&] { return observing_done_.load(); });
      if (observing_done_) return;
      jobs = acknowledged_;
    }
    std::set<std::string> seen;
    for (const auto& job : jobs) {
      if (!seen.insert(job.job).second || observing_done_) continue;
      recorder_.read(connection, job.owner, job.credential, job.job, "observer");
    }
  }
}

// Node faults and pauses, on the target as a whole: a crash is kill -9, a restart starts it
// again, a pause is SIGSTOP until SIGCONT.
void Run::nemesis() {
  struct Act {
    Duration at;
    int kind;  // 0 kill, 1 start, 2 stop, 3 continue
  };
  std::vector<Act> acts;
  for (const auto& fault : spec_.node_faults) {
    acts.push_back({fault.at, fault.kind == scenario::NodeFaultSpec::Kind::crash ? 0 : 1});
  }
  for (const auto& pause : spec_.pauses) {
    acts.push_back({pause.from, 2});
    acts.push_back({pause.until, 3});
  }
  if (acts.empty()) return;
  if (!target_) {
    std::lock_guard lock(mutex_);
    notes_.push_back(std::to_string(acts.size()) +
                     " node faults and pauses not applied: the probe did not start the target "
                     "(--target-cmd)");
    return;
  }
  std::ranges::stable_sort(acts, [](const Act& a, const Act& b) { return a.at < b.at; });
  int paused = 0;
  for (const Act& act : acts) {
    std::this_thread::sleep_until(origin_ + real(act.at));
    std::lock_guard lock(target_mutex_);
    if (act.kind == 0) {
      target_->resume();
      target_->kill();
      paused = 0;
    } else if (act.kind == 1) {
      std::string why;
      if (!target_->running() && !target_->start(options_.host, port_, options_.profile.ready_path,
                                                 options_.ready_bound, why)) {
        std::lock_guard notes(mutex_);
        notes_.push_back("a restart failed: " + why);
      }
    } else if (act.kind == 2) {
      if (paused++ == 0) target_->pause();
    } else if (paused > 0 && --paused == 0) {
      target_->resume();
    }
  }
}

void Run::quiet_phase() {
  std::this_thread::sleep_until(origin_ + real(scenario::faults_end(spec_)));
  quiet_ = true;
  if (target_) {
    std::lock_guard lock(target_mutex_);
    target_->resume();
    std::string why;
    if (!target_->running() && !target_->start(options_.host, port_, options_.profile.ready_path,
                                               options_.ready_bound, why)) {
      notes_.push_back("the restart for the quiet phase failed: " + why);
    }
  }
  recorder_.quiet();
  HttpConnection connection(options_.host, port_);
  std::vector<Acknowledged> jobs;
  {
    std::lock_guard lock(mutex_);
    jobs = acknowledged_;
  }
  std::set<std::string> seen;
  std::erase_if(jobs, [&](const Acknowledged& job) { return !seen.insert(job.job).second; });
  const auto give_up = Clock::now() + options_.settle;
  std::set<std::string> finished;
  while (true) {
    for (const auto& job : jobs) {
      if (finished.contains(job.job)) continue;
      const HttpReply reply =
          recorder_.read(connection, job.owner, job.credential, job.job, "settle");
      const auto history = recorder_.history();
      const auto& last = history.responses.back();
      if (last.job_status) final_status_[job.job] = *last.job_status;
      if (reply.answered() &&
          (reply.status != 200 || (last.job_status && is_terminal(*last.job_status)))) {
        finished.insert(job.job);
      }
    }
    if (finished.size() == jobs.size() || Clock::now() >= give_up) break;
    std::this_thread::sleep_for(milliseconds(250));
  }
  // A provider answers after the job's last read is fine; its execution is ground truth still.
  for (const auto& stub : stubs_) recorder_.add_executions(*stub);
}

void Run::judge_expectations() {
  const auto& profile = options_.profile;
  const auto& expect = spec_.expect;
  for (const auto& response : expect.responses) {
    const Outcome& outcome = outcomes_[response.request];
    std::vector<int> allowed;
    for (const int status : response.statuses) allowed.push_back(profile.translate(status));
    if (std::ranges::find(allowed, outcome.status) == allowed.end()) {
      std::string list;
      for (const int status : allowed)
        list += (list.empty() ? "" : " or ") + std::to_string(status);
      result_.expectation_failures.push_back(
          spec_.file + ":" + std::to_string(response.pos.line) + ": request " +
          std::to_string(response.request) + ": expected " + list + ", got " +
          (outcome.status == 0 ? "no answer (" + outcome.failure + ")"
                               : std::to_string(outcome.status)));
    }
  }
  for (const auto& same : expect.same_job_id) {
    std::set<std::string> ids;
    std::string shown;
    for (const int request : same.requests) {
      const std::string& job = outcomes_[request].job;
      ids.insert(job);
      shown += (shown.empty() ? "" : ", ") + std::to_string(request) + ": " +
               (job.empty() ? std::string("none") : job);
    }
    if (ids.size() != 1 || ids.begin()->empty()) {
      result_.expectation_failures.push_back(spec_.file + ":" + std::to_string(same.pos.line) +
                                             ": expected one job id, got " + shown);
    }
  }
  for (const auto& final : expect.final_jobs) {
    const std::string& job = outcomes_[final.request].job;
    const bool judged = std::ranges::all_of(
        final.statuses, [](const std::string& s) { return s == "succeeded" || s == "failed"; });
    if (final.statuses.empty() || !judged) continue;
    const std::string status = job.empty() ? "" : final_status_[job];
    if (std::ranges::find(final.statuses, status) == final.statuses.end()) {
      result_.expectation_failures.push_back(
          spec_.file + ":" + std::to_string(final.pos.line) + ": the job of request " +
          std::to_string(final.request) + " ended " + (status.empty() ? "unread" : status) +
          ", expected " + final.statuses.front());
    }
  }
}

}  // namespace onejob::real::probe_detail
