// I1 — one job per (owner, idempotency key); every accepted create names the stored job.
//
// Checks, against the store's commit log:
//   - the store commits at most one job per (owner, key);
//   - the store commits jobs only for an (owner, key) that some client sent with a create: a key
//     nobody sent (one a load balancer or a node made up) is a second job for one click;
//   - every create an API node answered 200 or 201, and every such answer a client received,
//     carries the id of the job the store had committed for that (owner, key) by then.
// Does not check:
//   - whether the request matched the stored one (I2);
//   - creates without an Idempotency-Key (refused with 400 before the store).
#include <algorithm>
#include <deque>
#include <set>

#include "harness/check/invariant.hpp"

namespace onejob::check {
namespace {

// Whether the answer was wrong (and reported).
bool check_answer(const HistoryModel& model, const std::string& owner, const std::string& key,
                  std::int64_t status, std::optional<std::int64_t> job_id, std::uint64_t seq,
                  const char* who, std::vector<Violation>& out) {
  if (status != 200 && status != 201) return false;
  const JobRecord* stored = model.job_for_key(owner, key, seq);
  const std::string what = std::string(who) + " got " + std::to_string(status) + " for key \"" +
                           key + "\" of owner \"" + owner + "\"";
  if (stored == nullptr) {
    out.push_back(violation("I1.answered_key_has_no_job",
                            what + ", but the store has no job for that key", seq, {}));
    return true;
  }
  if (job_id == stored->id()) return false;
  out.push_back(violation("I1.answered_another_job",
                          what + " naming " + (job_id ? job_ref(*job_id) : "no job") +
                              ", but the store's job for that key is " + job_ref(stored->id()),
                          seq, {stored->inserted.seq}));
  return true;
}

}  // namespace

std::vector<Violation> check_one_job_per_key(const HistoryModel& model) {
  std::vector<Violation> out;
  for (const auto& [owner_key, ids] : model.jobs_by_key) {
    for (std::size_t i = 1; i < ids.size(); ++i) {
      const auto& first = model.jobs.at(ids.front());
      const auto& again = model.jobs.at(ids[i]);
      out.push_back(violation("I1.second_job_for_key",
                              "the store committed " + job_ref(again.id()) + " for key \"" +
                                  owner_key.second + "\" of owner \"" + owner_key.first +
                                  "\", which " + job_ref(first.id()) + " already holds",
                              again.inserted.seq, {first.inserted.seq}));
    }
  }
  // The keyed creates clients sent, decoded once: (request, its owner and key). The (owner, key)
  // is the model's entry in jobs_by_key when the store has a job for it, else a copy kept here:
  // a long history's hundred thousand creates hold pointers, not strings.
  using OwnerKey = std::pair<std::string, std::string>;
  struct KeyedCreate {
    std::int64_t number;
    const ClientRequest* request;
    const OwnerKey* owner_key;
  };
  std::vector<KeyedCreate> creates;
  std::deque<OwnerKey> unstored;        // keys sent that the store has no job for
  std::vector<const OwnerKey*> stored;  // entries of jobs_by_key that a client sent
  for (const auto& [number, request] : model.requests) {
    const auto first = model.first_send(request);
    if (first->action != "create_job" || !first->key) continue;
    OwnerKey sent{first->owner, *first->key};
    const OwnerKey* owner_key = nullptr;
    if (auto entry = model.jobs_by_key.find(sent); entry != model.jobs_by_key.end()) {
      owner_key = &entry->first;
      stored.push_back(owner_key);
    } else {
      owner_key = &unstored.emplace_back(std::move(sent));
    }
    creates.push_back({number, &request, owner_key});
  }
  std::ranges::sort(stored);
  for (const auto& [id, job] : model.jobs) {
    const auto& inserted = job.inserted.what;
    if (std::ranges::binary_search(stored, inserted.owner_key)) continue;
    out.push_back(violation("I1.job_nobody_sent",
                            "the store committed " + job_ref(id) + " for key \"" + inserted.key() +
                                "\" of owner \"" + inserted.owner() + "\", which no client sent",
                            job.inserted.seq, {}));
  }
  // One anomaly, one violation: a wrong answer is reported where the API node gave it, and at
  // the client only when no API answer explains it.
  std::set<std::int64_t> reported;
  for (const auto& exchange : model.exchanges) {
    if (exchange.route != "create_job" || !exchange.answered()) continue;
    const auto response = model.response_of(exchange);
    if (check_answer(model, response->owner, response->key, response->status, response->job_id,
                     exchange.response_seq, exchange.node.c_str(), out)) {
      reported.insert(exchange.client_request);
    }
  }
  for (const auto& create : creates) {
    if (reported.contains(create.number)) continue;
    for (const auto& received : model.receipts(*create.request)) {
      check_answer(model, create.owner_key->first, create.owner_key->second, received.what.status,
                   received.what.job_id, received.seq, create.request->client.c_str(), out);
    }
  }
  return out;
}

}  // namespace onejob::check
