// MemoryStore against PgStore: one seeded random sequence of store operations runs on both,
// and every returned value, then the whole final state, must read the same. MemoryStore is the
// reference the simulator runs on; this test is what lets a simulated run stand for a run on
// PostgreSQL.
//
// Checks: outcomes, returned rows field by field, thrown exception types and messages, the
// final rows of every job and attempt, per-state listings, expired leases, certifications.
// Does not check: concurrency (one connection, one thread; see pg_attempts_test.cpp for
// SKIP LOCKED and two-connection claims), lost replies, or complete_attempt with a `from` that
// makes its transition illegal (MemoryStore writes the job before it throws, so the stores
// would diverge by design; complete_attempt_with_an_illegal_transition_rolls_back covers PgStore).
//
// Attempts are named by (job_id, attempt_no), which both stores agree on, not by id:
// Both stores spend ids alike (a refused insert_attempt spends none, a refused create spends a
// job id in both), which is what lets a scenario's trace on PostgreSQL equal its trace on
// MemoryStore byte for byte; the test checks the sequences at the end.
#include <utility>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <pqxx/pqxx>

#include "system/adapters/memory_store.hpp"

#include "tests/pg/pg_fixture.hpp"

namespace onejob::pg_test {
namespace {

using S = AttemptState;

constexpr AttemptId kMissingAttempt = 1'000'000'000;
constexpr std::array<S, 7> kAllStates = {S::starting, S::running,   S::unknown,  S::succeeded,
                                         S::failed,   S::cancelled, S::discarded};
const std::vector<AttemptState> kAllStatesList(kAllStates.begin(), kAllStates.end());
const std::vector<std::string> kProviders = {"alpha", "beta", "gamma"};
// Idempotency keys per owner: few enough that creates often collide, enough for many jobs.
constexpr std::uint64_t kKeys = 30;

// ---- describing what a store returned ------------------------------------------------------

std::string join(const std::vector<std::string>& items) {
  std::string joined = "[";
  for (const std::string& item : items) joined += (joined.size() > 1 ? "|" : "") + item;
  return joined + "]";
}

// Renders results with attempts named by their natural key (job:attempt_no).
class Describer {
 public:
  explicit Describer(Store& store) : store_{store} {}

  std::string attempt_ref(AttemptId id) {
    const std::optional<Attempt> found = run(store_.find_attempt(id));
    return found ? std::to_string(found->job_id) + ":" + std::to_string(found->attempt_no)
                 : "missing";
  }

  std::string job(const std::optional<Job>& job) {
    if (!job) return "no-job";
    std::ostringstream out;
    out << "job{" << job->id << " owner=" << job->owner_id << " key=" << job->idempotency_key
        << " fp=" << job->request_fingerprint << " op=" << job->operation
        << " target=" << job->target_provider << " failover=" << join(job->failover)
        << " input=" << job->input_json << " payload=" << job->payload_json
        << " status=" << to_string(job->status) << " version=" << job->version
        << " completed_by=" << (job->completed_by ? attempt_ref(*job->completed_by) : "-")
        << " result=" << job->result << " failure=" << job->failure_reason
        << " created=" << us_of(job->created_at) << "}";
    return out.str();
  }

  std::string attempt(const std::optional<Attempt>& attempt) {
    if (!attempt) return "no-attempt";
    std::ostringstream out;
    out << "attempt{" << attempt->job_id << ":" << attempt->attempt_no
        << " provider=" << attempt->provider << " key=" << attempt->provider_key
        << " origin=" << to_string(attempt->origin) << " state=" << to_string(attempt->state)
        << " owner=" << attempt->lease_owner << " token=" << attempt->lease_token
        << " lease=" << us_of(attempt->lease_expires_at)
        << " created=" << us_of(attempt->created_at) << " finished="
        << (attempt->finished_at ? std::to_string(us_of(*attempt->finished_at)) : "-")
        << " reason=" << reason(attempt->outcome_reason) << " result=" << attempt->result << "}";
    return out.str();
  }

  std::string attempts(const std::vector<Attempt>& attempts) {
    std::string out = "[";
    for (const Attempt& each : attempts) out += attempt(each) + " ";
    return out + "]";
  }

  std::string sweep(const SweepWork& work) {
    return "expired=" + attempts(work.expired) + " unknown=" + attempts(work.unknown) +
           " idle=" + attempts(work.idle) + (work.any_live ? " live" : " none live");
  }

  static std::string state(const std::optional<AttemptState>& state) {
    return state ? std::string{to_string(*state)} : "-";
  }

 private:
  // "lost to attempt <id>" names the winner by id; rename it by natural key.
  std::string reason(const std::string& text) {
    const std::string prefix = "lost to attempt ";
    if (text.rfind(prefix, 0) != 0 || text == prefix + "none") return text;
    return prefix + attempt_ref(std::stoll(text.substr(prefix.size())));
  }

  Store& store_;
};

// ---- the operations ------------------------------------------------------------------------

enum class OpKind {
  insert_job,
  insert_attempt,
  claim,
  update,
  complete,
  fail_job,
  certify,
  read_job,
  read_by_key,
  read_state,
  read_expired,
  read_certification,
};

struct AttemptRef {
  JobId job_id = 0;
  int attempt_no = 0;
};

// One operation, with every input fixed up front so both stores get identical calls. Attempt
// ids are resolved per store from `target`.
struct Op {
  OpKind kind = OpKind::read_job;
  std::string summary;
  NewJob new_job{};
  NewAttempt new_attempt{};
  AttemptUpdate update{};
  CompleteAttempt completion{};
  Certification certification{};
  AttemptRef target{};
  JobId job_id = 0;
  std::string text;  // worker, owner, failure reason or provider, by kind
  std::string key;
  AttemptState state = S::starting;
  Instant now{};
  Instant until{};
};

AttemptId resolve(Store& store, AttemptRef ref) {
  for (const Attempt& attempt : run(store.list_attempts(ref.job_id))) {
    if (attempt.attempt_no == ref.attempt_no) return attempt.id;
  }
  return kMissingAttempt;
}

std::string apply_unguarded(Store& store, const Op& op) {
  Describer describe{store};
  switch (op.kind) {
    case OpKind::insert_job: {
      const InsertJobResult r = run(store.insert_job(op.new_job));
      return std::string{outcome_name(r.outcome)} + " " + describe.job(r.job) + " " +
             describe.attempt(r.initial_attempt);
    }
    case OpKind::insert_attempt: {
      const InsertAttemptResult r = run(store.insert_attempt(op.new_attempt));
      return std::string{outcome_name(r.outcome)} + " " + describe.attempt(r.attempt) +
             " blocking=" + (r.blocking ? describe.attempt_ref(*r.blocking) : "-");
    }
    case OpKind::claim: {
      const std::optional<Attempt> r = run(store.claim_next_attempt(op.text, op.now, op.until));
      return "claim " + describe.attempt(r);
    }
    case OpKind::update: {
      AttemptUpdate update = op.update;
      update.attempt_id = resolve(store, op.target);
      const UpdateAttemptResult r = run(store.update_attempt(std::move(update)));
      return std::string{outcome_name(r.outcome)} + " " + describe.attempt(r.attempt) +
             " before=" + Describer::state(r.before);
    }
    case OpKind::complete: {
      CompleteAttempt completion = op.completion;
      completion.attempt_id = resolve(store, op.target);
      const CompleteAttemptResult r = run(store.complete_attempt(std::move(completion)));
      return std::string{outcome_name(r.outcome)} + " " + describe.job(r.job) + " " +
             describe.attempt(r.attempt) + " before=" + Describer::state(r.before);
    }
    case OpKind::fail_job:
      return run(store.fail_job(op.job_id, op.text, op.now)) ? "failed-job" : "not-failed";
    case OpKind::certify:
      run(store.record_certification(op.certification));
      return "certified";
    case OpKind::read_job:
      return "read " + describe.job(run(store.find_job(op.text, op.job_id))) + " " +
             describe.job(run(store.load_job(op.job_id))) + " " +
             describe.attempts(run(store.list_attempts(op.job_id)));
    case OpKind::read_by_key:
      return "read " + describe.job(run(store.find_job_by_key(op.text, op.key)));
    case OpKind::read_state:
      return "read " + describe.attempts(run(store.find_attempts_in_state(op.state)));
    case OpKind::read_expired:
      return "read " + describe.attempts(run(store.find_expired_leases(op.now))) + " sweep " +
             describe.sweep(run(store.find_sweep_work(op.now)));
    case OpKind::read_certification: {
      const std::optional<Certification> c = run(store.latest_certification(op.text));
      if (!c) return "read no-certification";
      return "read certification{" + c->provider + " passed=" + (c->passed ? "1" : "0") +
             " reasons=" + join(c->reasons) + " at=" + std::to_string(us_of(c->at)) + "}";
    }
  }
  return "invalid";
}

// Exceptions the port documents are part of the behaviour being compared.
std::string apply(Store& store, const Op& op) {
  try {
    return apply_unguarded(store, op);
  } catch (const IllegalTransition& e) {
    return std::string{"threw IllegalTransition: "} + e.what();
  } catch (const std::logic_error& e) {
    return std::string{"threw logic_error: "} + e.what();
  }
}

// ---- the workload --------------------------------------------------------------------------

// Random operations, biased (by peeking at the reference store) towards inputs that get past
// the guards, so that wins, losses and fenced writes all happen, not just refusals.
class Workload {
 public:
  Workload(std::uint64_t seed, MemoryStore& reference) : rng_{seed}, reference_{reference} {}

  Op next() {
    now_us_ += static_cast<std::int64_t>(below(15));
    const std::uint64_t roll = below(100);
    if (roll < 14) return insert_job();
    if (roll < 28) return insert_attempt();
    if (roll < 40) return claim();
    if (roll < 60) return update();
    if (roll < 76) return complete();
    if (roll < 84) return fail_job();
    if (roll < 88) return certify();
    return read();
  }

  std::int64_t job_ids_issued() const { return job_ids_issued_; }
  Instant now() const { return at_us(now_us_); }

 private:
  std::uint64_t below(std::uint64_t n) { return rng_() % n; }
  bool chance(std::uint64_t percent) { return below(100) < percent; }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[below(items.size())];
  }

  // Mostly a job that exists; sometimes any id issued so far (refused creates leave gaps) or
  // one past the last, which no store has.
  JobId pick_job() {
    for (int tries = 0; tries < 4 && chance(90); ++tries) {
      const auto id = static_cast<JobId>(1 + below(job_ids_issued_ + 1));
      if (run(reference_.load_job(id))) return id;
    }
    return static_cast<JobId>(1 + below(job_ids_issued_ + 1));
  }

  // Usually an attempt in one of `preferred` (where the interesting transitions happen), else
  // an attempt of a random job, or (rarely) one that does not exist.
  std::pair<AttemptRef, std::optional<Attempt>> pick_attempt(
      const std::vector<AttemptState>& preferred) {
    if (chance(75)) {
      std::vector<Attempt> candidates;
      for (const AttemptState state : preferred) {
        for (Attempt& attempt : run(reference_.find_attempts_in_state(state))) {
          candidates.push_back(std::move(attempt));
        }
      }
      if (!candidates.empty()) {
        const Attempt& chosen = pick(candidates);
        return {AttemptRef{chosen.job_id, chosen.attempt_no}, chosen};
      }
    }
    const JobId job_id = pick_job();
    const std::vector<Attempt> attempts = run(reference_.list_attempts(job_id));
    if (attempts.empty() || chance(5)) {
      return {AttemptRef{job_id, static_cast<int>(attempts.size()) + 1}, std::nullopt};
    }
    const Attempt& chosen = pick(attempts);
    return {AttemptRef{chosen.job_id, chosen.attempt_no}, chosen};
  }

  std::vector<AttemptState> pick_states(const std::vector<AttemptState>& pool,
                                        std::optional<AttemptState> include) {
    std::vector<AttemptState> states;
    if (include && chance(75)) states.push_back(*include);
    for (const AttemptState state : pool) {
      if (chance(25) && std::ranges::find(states, state) == states.end()) {
        states.push_back(state);
      }
    }
    return states;
  }

  std::optional<std::int64_t> pick_fence(const std::optional<Attempt>& attempt) {
    const std::int64_t token = attempt ? attempt->lease_token : 0;
    const std::uint64_t roll = below(100);
    if (roll < 40) return std::nullopt;
    if (roll < 85) return token;
    return token + (chance(50) ? 1 : -1);
  }

  std::string step_text() { return std::to_string(step_++); }

  Op insert_job() {
    Op op;
    op.kind = OpKind::insert_job;
    std::vector<std::string> failover;
    for (const std::string& provider : kProviders) {
      if (chance(40)) failover.push_back(provider);
    }
    const std::string payload = "{\"n\":" + std::to_string(below(3)) + "}";
    op.new_job = NewJob{
        .owner_id = chance(70) ? "alice" : "bob",
        .idempotency_key = "k" + std::to_string(below(kKeys)),
        .request_fingerprint = "POST /jobs\n" + payload,
        .operation = "classify",
        .target_provider = pick(kProviders),
        .failover = std::move(failover),
        .input_json = "{\"text\":\"t" + step_text() + "\"}",
        .payload_json = payload,
        .created_at = now(),
    };
    // Every insert_job spends a job id in both stores, refused or not.
    ++job_ids_issued_;
    op.summary = "insert_job " + op.new_job.owner_id + "/" + op.new_job.idempotency_key;
    return op;
  }

  Op insert_attempt() {
    Op op;
    op.kind = OpKind::insert_attempt;
    const std::array origins{AttemptOrigin::initial, AttemptOrigin::failover,
                             AttemptOrigin::explicit_retry};
    op.new_attempt = NewAttempt{
        .job_id = pick_job(),
        .provider = pick(kProviders),
        .origin = origins[below(origins.size())],
        .created_at = now(),
    };
    op.summary = "insert_attempt job " + std::to_string(op.new_attempt.job_id);
    return op;
  }

  Op claim() {
    Op op;
    op.kind = OpKind::claim;
    op.text = "w" + std::to_string(below(3));
    op.now = now();
    op.until = at_us(now_us_ + static_cast<std::int64_t>(below(40)));
    op.summary = "claim by " + op.text;
    return op;
  }

  Op update() {
    Op op;
    op.kind = OpKind::update;
    const auto [ref, attempt] = pick_attempt({S::starting, S::running, S::unknown});
    op.target = ref;
    AttemptState to = kAllStates[below(kAllStates.size())];
    if (attempt && chance(70)) {
      // A legal successor when there is one: the common, applied case.
      std::vector<AttemptState> successors;
      for (const auto& [from, next] : legal_attempt_transitions()) {
        if (from == attempt->state && next != S::succeeded && next != S::discarded) {
          successors.push_back(next);
        }
      }
      if (!successors.empty()) to = pick(successors);
    }
    const std::vector<std::string> reasons{"", "deadline passed", "refused", "operator"};
    op.update = AttemptUpdate{
        .attempt_id = 0,
        .from = pick_states(kAllStatesList, attempt ? std::optional{attempt->state} : std::nullopt),
        .to = to,
        .fence = pick_fence(attempt),
        .take_over_as = chance(25) ? std::optional<std::string>{"reconciler"} : std::nullopt,
        .reason = pick(reasons),
        .at = now(),
    };
    op.summary = "update " + std::to_string(ref.job_id) + ":" + std::to_string(ref.attempt_no) +
                 " -> " + std::string{to_string(to)};
    return op;
  }

  Op complete() {
    Op op;
    op.kind = OpKind::complete;
    // Only states from which both SUCCEEDED and DISCARDED are legal (see the file comment).
    const std::vector<AttemptState> completable{S::running, S::unknown, S::cancelled};
    const auto [ref, attempt] = pick_attempt(completable);
    op.target = ref;
    const std::optional<Job> job = run(reference_.load_job(ref.job_id));
    std::optional<AttemptState> current;
    if (attempt && std::ranges::find(completable, attempt->state) != completable.end()) {
      current = attempt->state;
    }
    op.completion = CompleteAttempt{
        .attempt_id = 0,
        .job_id = chance(92) ? ref.job_id : pick_job(),
        .expected_version =
            job && chance(75) ? job->version : static_cast<std::int64_t>(1 + below(3)),
        .from = pick_states(completable, current),
        .fence = pick_fence(attempt),
        .result = "{\"out\":\"r" + step_text() + (chance(20) ? "\\\"caf\xc3\xa9,{}\"}" : "\"}"),
        .at = now(),
    };
    op.summary = "complete " + std::to_string(ref.job_id) + ":" + std::to_string(ref.attempt_no);
    return op;
  }

  Op fail_job() {
    Op op;
    op.kind = OpKind::fail_job;
    op.job_id = pick_job();
    op.text = "no provider left";
    op.now = now();
    op.summary = "fail_job " + std::to_string(op.job_id);
    return op;
  }

  Op certify() {
    Op op;
    op.kind = OpKind::certify;
    const bool passed = chance(60);
    std::vector<std::string> reasons;
    if (!passed) reasons = {"schema", "step " + step_text()};
    op.certification = Certification{
        .provider = pick(kProviders),
        .passed = passed,
        .reasons = reasons,
        // Not in recording order: "latest" means last recorded, not largest `at`.
        .at = at_us(now_us_ - static_cast<std::int64_t>(below(50))),
    };
    op.summary = "certify " + op.certification.provider;
    return op;
  }

  Op read() {
    Op op;
    op.kind = OpKind::read_job;
    switch (below(5)) {
      case 0:
        op.kind = OpKind::read_job;
        op.job_id = pick_job();
        op.text = chance(70) ? "alice" : "bob";
        break;
      case 1:
        op.kind = OpKind::read_by_key;
        op.text = chance(70) ? "alice" : "bob";
        op.key = "k" + std::to_string(below(kKeys));
        break;
      case 2:
        op.kind = OpKind::read_state;
        op.state = kAllStates[below(kAllStates.size())];
        break;
      case 3:
        op.kind = OpKind::read_expired;
        op.now = now();
        break;
      default:
        op.kind = OpKind::read_certification;
        op.text = pick(kProviders);
        break;
    }
    op.summary = "read";
    return op;
  }

  std::mt19937_64 rng_;  // engines, unlike distributions, are the same on every library
  MemoryStore& reference_;
  std::int64_t now_us_ = 0;
  std::int64_t job_ids_issued_ = 0;
  int step_ = 0;
};

// Everything both stores hold, rendered the same way.
std::string final_state(Store& store, std::int64_t job_ids_issued, Instant now) {
  Describer describe{store};
  std::string out;
  for (JobId id = 1; id <= job_ids_issued + 1; ++id) {
    out += describe.job(run(store.load_job(id))) + " " +
           describe.attempts(run(store.list_attempts(id))) + "\n";
  }
  for (const AttemptState state : kAllStates) {
    out += std::string{to_string(state)} + ": " +
           describe.attempts(run(store.find_attempts_in_state(state))) + "\n";
  }
  out += "expired: " + describe.attempts(run(store.find_expired_leases(now))) + "\n";
  out += "sweep: " + describe.sweep(run(store.find_sweep_work(now))) + "\n";
  for (const std::string& provider : kProviders) {
    Op read;
    read.kind = OpKind::read_certification;
    read.text = provider;
    out += apply(store, read) + "\n";
  }
  return out;
}

std::string first_word(const std::string& text) { return text.substr(0, text.find(' ')); }

}  // namespace

BOOST_FIXTURE_TEST_SUITE(pg_differential, PgFixture)

BOOST_DATA_TEST_CASE(memory_and_postgres_agree_on_random_operations,
                     boost::unit_test::data::make({1, 2, 3, 4}), seed) {
  constexpr int kSteps = 500;
  MemoryStore memory;
  PgStore& postgres = store();
  Workload workload{static_cast<std::uint64_t>(seed), memory};
  std::map<std::string, int> outcomes;
  int refused_attempts = 0;

  for (int step = 0; step < kSteps; ++step) {
    const Op op = workload.next();
    const std::string expected = apply(memory, op);
    const std::string actual = apply(postgres, op);
    if (expected != actual) {
      BOOST_ERROR("seed " << seed << " step " << step << " (" << op.summary
                          << ") diverged\n  memory:   " << expected << "\n  postgres: " << actual);
      return;  // later steps would only repeat the divergence
    }
    ++outcomes[first_word(expected)];
    if (first_word(expected) == "live_attempt_exists") ++refused_attempts;
  }

  const std::string memory_state = final_state(memory, workload.job_ids_issued(), workload.now());
  const std::string postgres_state =
      final_state(postgres, workload.job_ids_issued(), workload.now());
  BOOST_TEST(memory_state == postgres_state);

  // No drift in attempt ids: a refused insert spends none, in PostgreSQL as in MemoryStore
  // (max(id) would miss ids spent after the last insert; the sequence counts them all).
  pqxx::nontransaction tx{raw()};
  const auto ids_spent = tx.exec_params1(
                               "SELECT CASE WHEN is_called THEN last_value - $1 + 1 ELSE 0 END "
                               "FROM attempts_id_seq",
                               kFirstAttemptId)[0]
                             .as<std::int64_t>();
  BOOST_TEST(ids_spent == static_cast<std::int64_t>(memory.attempt_count()));
  BOOST_TEST(refused_attempts > 0);

  // The workload is only worth something if it reaches the interesting outcomes.
  std::ostringstream seen;
  for (const auto& [outcome, count] : outcomes) seen << " " << outcome << "=" << count;
  BOOST_TEST_MESSAGE("seed " << seed << ":" << seen.str());
  for (const char* required :
       {"inserted", "unique_violation", "live_attempt_exists", "job_not_found", "applied", "fenced",
        "state_mismatch", "won", "lost", "failed-job", "threw"}) {
    BOOST_TEST(outcomes.contains(required), "seed " << seed << " never reached " << required);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob::pg_test
