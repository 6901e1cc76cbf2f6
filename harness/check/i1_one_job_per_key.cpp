// I1 — one job per (owner, idempotency key); every accepted create names the stored job.
//
// Checks, against the store's commit log:
//   - the store commits at most one job per (owner, key);
//   - the store commits jobs only for an (owner, key) that some client sent with a create: a key
//     nobody sent (one a load balancer or a node made up) is a second job for one click;
//   - every create an API node answered 200 or 201, and every such answer a client received,
//     carries the id of the job the store had committed for that (owner, key) by then;
//   - 201 (Created) is the answer of the exchange that created the job, and of no other: the
//     job's insert committed on that API node's connection while the exchange was under way,
//     and no other exchange was answered 201 for it (`created_not_inserted`); when the node
//     committed the insert while create exchanges of that (owner, key) were under way there, and
//     each of them was answered with a status that is no 5xx (the insert's reply reached the
//     node: a lost reply is a 503), one of them is 201 (`insert_not_created`).
// Does not check:
//   - whether the request matched the stored one (I2);
//   - creates without an Idempotency-Key (refused with 400 before the store).
#include <utility>

#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

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

// One create exchange as check_created_answers reads it.
struct CreateSeen {
  const ApiExchange* exchange = nullptr;
  const std::vector<std::int64_t>* jobs = nullptr;  // the store's jobs for its (owner, key)
  std::optional<std::int64_t> created{};            // the job a 201 names
};

// One request, its every arrival on one node (in order), from the first.
struct CreateRequest {
  std::span<const CreateSeen> arrivals;
  const ApiExchange& first() const { return *arrivals.front().exchange; }
};

// `seen` (every create exchange, in the model's order) as requests: the arrivals on one node under
// one request id. Arrivals of one request id were forwarded for one client send, so only the
// arrivals one node had of one send (rare: a duplicate, or the balancer's retry landing on the
// same node) are read for their request ids.
std::vector<CreateRequest> create_requests(const HistoryModel& model,
                                           std::vector<CreateSeen>& seen) {
  const auto same_send = [](const CreateSeen& a, const CreateSeen& b) {
    return a.exchange->node == b.exchange->node &&
           a.exchange->client_request == b.exchange->client_request &&
           a.exchange->client_send == b.exchange->client_send;
  };
  std::ranges::stable_sort(seen, [](const CreateSeen& a, const CreateSeen& b) {
    const int node = a.exchange->node.str().compare(b.exchange->node.str());
    if (node != 0) return node < 0;
    return std::pair(a.exchange->client_request, a.exchange->client_send) <
           std::pair(b.exchange->client_request, b.exchange->client_send);
  });
  std::vector<CreateRequest> requests;
  for (std::size_t i = 0; i < seen.size();) {
    std::size_t end = i + 1;
    while (end < seen.size() && same_send(seen[end], seen[i])) ++end;
    if (end - i > 1) {
      // Sorted by request id within the send, in model order among equals.
      std::vector<std::pair<std::string, CreateSeen>> named;
      for (std::size_t k = i; k < end; ++k) {
        named.emplace_back(model.request_of(*seen[k].exchange)->request_id, seen[k]);
      }
      std::ranges::stable_sort(named, {}, &std::pair<std::string, CreateSeen>::first);
      for (std::size_t k = i; k < end; ++k) seen[k] = named[k - i].second;
      for (std::size_t k = i; k < end;) {
        std::size_t same = k + 1;
        while (same < end && named[same - i].first == named[k - i].first) ++same;
        requests.push_back({std::span<const CreateSeen>(seen).subspan(k, same - k)});
        k = same;
      }
    } else {
      requests.push_back({std::span<const CreateSeen>(seen).subspan(i, 1)});
    }
    i = end;
  }
  return requests;
}

// The creates under way on the node whose connection committed a job's insert, as the commit
// log and the API nodes' records place them: only one of them made that insert. A request the
// network duplicated reaches its node twice under one request id, and which of its answers
// belongs to which arrival is unknown: such a request is judged as one, under way from its first
// arrival to its last answer.
void check_created_answers(const HistoryModel& model, std::vector<CreateSeen>& seen,
                           std::vector<Violation>& out) {
  const auto requests = create_requests(model, seen);
  // By job: the requests under way on the inserting node across the insert, and the exchanges
  // answered 201 naming the job (in the order answered).
  std::vector<std::pair<std::int64_t, const CreateRequest*>> spanning;
  std::vector<std::pair<std::int64_t, const ApiExchange*>> created;
  for (const auto& request : requests) {
    for (const auto& arrival : request.arrivals) {
      if (arrival.created) created.emplace_back(*arrival.created, arrival.exchange);
    }
    const auto* jobs = request.arrivals.front().jobs;
    if (jobs == nullptr) continue;
    for (const auto id : *jobs) {
      const auto& inserted = model.jobs.at(id).inserted;
      const auto spans = [&](const CreateSeen& arrival) {
        return !arrival.exchange->answered() || arrival.exchange->response_seq > inserted.seq;
      };
      if (inserted.what.by == request.first().node && request.first().request_seq < inserted.seq &&
          std::ranges::any_of(request.arrivals, spans)) {
        spanning.emplace_back(id, &request);
      }
    }
  }
  std::ranges::stable_sort(spanning, {}, &std::pair<std::int64_t, const CreateRequest*>::first);
  std::ranges::sort(created, [](const auto& a, const auto& b) {
    return std::pair(a.first, a.second->response_seq) < std::pair(b.first, b.second->response_seq);
  });
  auto span_at = spanning.begin();
  auto created_at = created.begin();
  while (span_at != spanning.end() || created_at != created.end()) {
    const std::int64_t id = span_at == spanning.end() ? created_at->first
                            : created_at == created.end()
                                ? span_at->first
                                : std::min(span_at->first, created_at->first);
    std::vector<const CreateRequest*> spans_job;
    for (; span_at != spanning.end() && span_at->first == id; ++span_at) {
      spans_job.push_back(span_at->second);
    }
    std::vector<const ApiExchange*> created_job;
    for (; created_at != created.end() && created_at->first == id; ++created_at) {
      created_job.push_back(created_at->second);
    }
    const auto& inserted = model.jobs.at(id).inserted;
    const ApiExchange* first_created = nullptr;
    for (const auto* answer : created_job) {
      // A 201 given before the store had the job is answered_key_has_no_job.
      if (answer->response_seq < inserted.seq) continue;
      const bool spans = std::ranges::any_of(spans_job, [answer](const CreateRequest* request) {
        return std::ranges::find(request->arrivals, answer, &CreateSeen::exchange) !=
               request->arrivals.end();
      });
      if (spans && first_created == nullptr) {
        first_created = answer;
        continue;
      }
      const std::string what = answer->node + " answered 201 (Created) for " + job_ref(id);
      out.push_back(
          violation("I1.created_not_inserted",
                    spans ? what + ", which another create of its key was already answered 201 for"
                          : what + ", but its insert did not commit on " + answer->node +
                                "'s connection while that request was handled (" +
                                inserted.what.by + " committed it)",
                    answer->response_seq,
                    {inserted.seq, spans ? first_created->response_seq : answer->request_seq}));
    }
    if (spans_job.empty() || !created_job.empty()) continue;
    const bool all_heard = std::ranges::all_of(spans_job, [](const CreateRequest* request) {
      return std::ranges::all_of(request->arrivals, [](const CreateSeen& arrival) {
        return arrival.exchange->answered() && arrival.exchange->status < 500;
      });
    });
    if (!all_heard) continue;
    const ApiExchange& last = *spans_job.back()->arrivals.back().exchange;
    out.push_back(violation(
        "I1.insert_not_created",
        inserted.what.by + " committed the insert of " + job_ref(id) +
            " while creates of its key were under way there, and answered each of them without "
            "a 5xx, but none 201 (Created): " +
            last.node + " answered " + std::to_string(last.status),
        last.response_seq, {inserted.seq}));
  }
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
  std::vector<CreateSeen> seen;  // every create exchange, for check_created_answers
  const auto found = [&model](const std::string& owner, const std::string& key) {
    const auto entry = model.jobs_by_key.find({owner, key});
    return entry == model.jobs_by_key.end() ? nullptr : &entry->second;
  };
  for (const auto& exchange : model.exchanges) {
    if (exchange.route != "create_job") continue;
    CreateSeen& one = seen.emplace_back();
    one.exchange = &exchange;
    if (!exchange.answered()) {
      const auto request = model.request_of(exchange);
      one.jobs = found(request->owner, request->key);
      continue;
    }
    const auto response = model.response_of(exchange);
    one.jobs = found(response->owner, response->key);
    if (response->status == 201 && response->job_id && model.job(*response->job_id) != nullptr) {
      one.created = response->job_id;
    }
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
  check_created_answers(model, seen, out);
  return out;
}

}  // namespace onejob::check
