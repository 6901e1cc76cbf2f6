// The timeline's data: lanes per node, the events and message arrows its script draws, and what
// the violations point at.
#include "harness/report/timeline_lanes.hpp"

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

namespace onejob::report::timeline {
namespace {

// A lane's role, in display order.
enum class Role { client, lb, api, worker, reconciler, certifier, store, provider, other };
constexpr std::array<std::string_view, 9> kRoleNames = {
    "client", "lb", "api", "worker", "reconciler", "certifier", "store", "provider", "other"};
// Which role a node takes when its events name several: the most specific first (a reconciler
// also calls providers, as workers do).
constexpr std::array<Role, 9> kRolePriority = {Role::client,     Role::lb,        Role::api,
                                               Role::reconciler, Role::certifier, Role::worker,
                                               Role::store,      Role::provider,  Role::other};

Role role_of_kind(std::string_view kind) {
  if (kind.starts_with("client.")) return Role::client;
  if (kind.starts_with("lb.")) return Role::lb;
  if (kind.starts_with("api.")) return Role::api;
  if (kind.starts_with("reconciler.")) return Role::reconciler;
  if (kind.starts_with("certification.")) return Role::certifier;
  if (kind.starts_with("worker.") || kind == "provider.call" || kind == "provider.reply") {
    return Role::worker;
  }
  if (kind.starts_with("commit.") || kind == "store.refused") return Role::store;
  if (kind == "provider.execute" || kind == "provider.dedup") return Role::provider;
  return Role::other;
}

}  // namespace

Lanes build_lanes(const sim::History& history) {
  std::map<std::string, unsigned, std::less<>> seen;  // node -> roles seen, as bits
  std::vector<std::string> order;                     // first appearance
  auto see = [&](std::string_view node, Role role) {
    if (node.empty()) return;
    auto [it, fresh] = seen.try_emplace(std::string(node), 0u);
    if (fresh) order.emplace_back(node);
    it->second |= 1u << static_cast<unsigned>(role);
  };
  for (const auto& recorded : history) {
    const Event& event = recorded.event;
    see(recorded.node.str(), role_of_kind(event.kind()));
    if (event.kind() == "net.fault") {
      if (auto from = event.string_field("from")) see(*from, Role::other);
      if (auto to = event.string_field("to")) see(*to, Role::other);
    }
  }
  std::vector<std::pair<Role, std::size_t>> keyed;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const unsigned bits = seen.at(order[i]);
    Role role = Role::other;
    for (const Role candidate : kRolePriority) {
      if (bits & (1u << static_cast<unsigned>(candidate))) {
        role = candidate;
        break;
      }
    }
    keyed.emplace_back(role, i);
  }
  std::ranges::stable_sort(keyed, [](const auto& a, const auto& b) { return a.first < b.first; });
  Lanes lanes;
  for (const auto& [role, i] : keyed) {
    lanes.index.emplace(order[i], static_cast<int>(lanes.names.size()));
    lanes.names.push_back(order[i]);
    lanes.roles.push_back(kRoleNames[static_cast<std::size_t>(role)]);
  }
  return lanes;
}

namespace {

// Flags of one event in the page's data.
enum Flag : int {
  kInjected = 1,
  kViolation = 2,  // a violation's first offending event
  kEvidence = 4,   // an event a violation refers to
  kCommit = 8,     // the store's commit log
  kWinner = 16,    // a compare-and-swap that won
  kDiscarded = 32  // a compare-and-swap that lost, or a result discarded
};

// Message arrows: (from event index, to event index, kind).
struct Edge {
  std::size_t from;
  std::size_t to;
  std::string_view kind;
};

std::vector<Edge> message_edges(const sim::History& history) {
  std::vector<Edge> edges;
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> last_send;  // (request, attempt)
  std::map<std::string, std::size_t> forward_of;                           // request id
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> client_of;  // request id
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> last_response;
  std::map<std::string, std::size_t> open_call;  // provider key -> provider.call
  std::map<std::int64_t, std::size_t> executed;  // attempt id -> provider.execute awaiting reply
  for (std::size_t i = 0; i < history.size(); ++i) {
    const Event& event = history[i].event;
    const std::string& kind = event.kind();
    const auto request = event.int_field("request");
    const auto attempt = event.int_field("attempt");
    if (kind == "client.send" && request && attempt) {
      last_send[{*request, *attempt}] = i;
    } else if (kind == "lb.forward" && request && attempt) {
      if (auto send = last_send.find({*request, *attempt}); send != last_send.end()) {
        edges.push_back({send->second, i, "request"});
      }
      if (auto id = event.string_field("request_id")) {
        forward_of[*id] = i;
        client_of[*id] = {*request, *attempt};
      }
    } else if (kind == "api.request") {
      auto id = event.string_field("request_id");
      if (auto forward = id ? forward_of.find(*id) : forward_of.end();
          forward != forward_of.end()) {
        edges.push_back({forward->second, i, "request"});
      }
    } else if (kind == "api.response") {
      auto id = event.string_field("request_id");
      if (auto client = id ? client_of.find(*id) : client_of.end(); client != client_of.end()) {
        last_response[client->second] = i;
      }
    } else if (kind == "client.receive" && request && attempt) {
      if (auto response = last_response.find({*request, *attempt});
          response != last_response.end()) {
        edges.push_back({response->second, i, "response"});
        last_response.erase(response);
      }
    } else if (kind == "provider.call") {
      if (auto key = event.string_field("provider_key")) open_call[*key] = i;
    } else if (kind == "provider.execute") {
      auto key = event.string_field("provider_key");
      if (auto call = key ? open_call.find(*key) : open_call.end(); call != open_call.end()) {
        edges.push_back({call->second, i, "call"});
        // The reply to come is the calling attempt's.
        if (auto id = history[call->second].event.int_field("attempt_id")) executed[*id] = i;
        open_call.erase(call);
      }
    } else if (kind == "provider.reply") {
      auto id = event.int_field("attempt_id");
      if (auto execute = id ? executed.find(*id) : executed.end(); execute != executed.end()) {
        edges.push_back({execute->second, i, "reply"});
        executed.erase(execute);
      }
    }
  }
  return edges;
}

}  // namespace

std::string short_text(const Event& event) {
  std::string text;
  for (const auto& field : event.fields()) {
    if (text.size() > 200) {
      text += " …";
      break;
    }
    if (!text.empty()) text += ' ';
    text += field.name();
    text += '=';
    switch (field.type()) {
      case Event::Field::Type::integer:
        text += std::to_string(field.number);
        break;
      case Event::Field::Type::boolean:
        text += field.number != 0 ? "true" : "false";
        break;
      case Event::Field::Type::string: {
        const auto value = event.text(field);
        text += value.size() > 60 ? std::string(value.substr(0, 60)) + "…" : std::string(value);
        break;
      }
    }
  }
  return text;
}

ViolationIndex index_violations(const scenario::RunResult& result) {
  ViolationIndex index;
  for (const auto& violation : result.violations) {
    std::vector<std::uint64_t> seqs = violation.evidence;
    if (violation.event_seq) {
      index.offending.insert(*violation.event_seq);
      seqs.push_back(*violation.event_seq);
    }
    index.evidence.insert(violation.evidence.begin(), violation.evidence.end());
    for (const auto seq : seqs) {
      if (seq == 0 || seq > result.history.size()) continue;
      if (auto job = result.history[seq - 1].event.int_field("job_id")) index.jobs.insert(*job);
    }
  }
  return index;
}

Window page_window(const scenario::RunResult& result, std::size_t most) {
  const std::size_t size = result.history.size();
  if (size <= most) return {0, size};
  std::size_t center = 0;
  for (const auto& violation : result.violations) {
    if (violation.event_seq && *violation.event_seq >= 1 && *violation.event_seq <= size) {
      center = *violation.event_seq - 1;
      break;
    }
  }
  const std::size_t first = std::min(center > most / 2 ? center - most / 2 : 0, size - most);
  return {first, most};
}

std::string page_data_json(const scenario::RunResult& result, const Lanes& lanes,
                           const ViolationIndex& violations, Window window) {
  std::vector<std::string> kinds;
  std::map<std::string, int, std::less<>> kind_index;
  nlohmann::json events = nlohmann::json::array();
  for (std::size_t i = window.first; i < window.first + window.count; ++i) {
    const auto& recorded = result.history[i];
    const Event& event = recorded.event;
    const std::string& kind = event.kind();
    auto [it, fresh] = kind_index.try_emplace(kind, static_cast<int>(kinds.size()));
    if (fresh) kinds.push_back(kind);
    int lane = lanes.of(recorded.node.str());
    int peer = -1;
    int flags = recorded.injected ? kInjected : 0;
    if (violations.offending.contains(recorded.seq)) flags |= kViolation;
    if (violations.evidence.contains(recorded.seq)) flags |= kEvidence;
    if (kind.starts_with("commit.")) {
      flags |= kCommit;
      if (auto by = event.string_field("by")) peer = lanes.of(*by);
    }
    if (kind == "commit.cas")
      flags |= event.bool_field("won").value_or(false) ? kWinner : kDiscarded;
    if (kind == "result.discarded") flags |= kDiscarded;
    if (kind == "net.fault") {
      if (auto from = event.string_field("from"); from && lanes.of(*from) >= 0) {
        lane = lanes.of(*from);
      }
      if (auto to = event.string_field("to")) peer = lanes.of(*to);
    } else if (kind == "store.fault") {
      if (lanes.of("store") >= 0) lane = lanes.of("store");
      if (auto node = event.string_field("node")) peer = lanes.of(*node);
    }
    events.push_back({micros(recorded.at), lane, it->second, flags,
                      event.int_field("job_id").value_or(0),
                      event.int_field("attempt_id").value_or(0), peer, short_text(event)});
  }
  nlohmann::json edges = nlohmann::json::array();
  for (const auto& edge : message_edges(result.history)) {
    const auto end = window.first + window.count;
    if (edge.from < window.first || edge.to < window.first || edge.from >= end || edge.to >= end) {
      continue;
    }
    edges.push_back({edge.from - window.first, edge.to - window.first, edge.kind});
  }
  nlohmann::json lane_list = nlohmann::json::array();
  for (std::size_t i = 0; i < lanes.names.size(); ++i) {
    lane_list.push_back({{"name", lanes.names[i]}, {"role", lanes.roles[i]}});
  }
  // What the page opens on: the first violation's offending event, then its evidence (the
  // events that led to it), as indexes into `events`; empty for a passing run.
  nlohmann::json opening = nlohmann::json::array();
  for (const auto& violation : result.violations) {
    if (!violation.event_seq) continue;
    std::vector<std::uint64_t> seqs{*violation.event_seq};
    seqs.insert(seqs.end(), violation.evidence.begin(), violation.evidence.end());
    for (const auto seq : seqs) {
      if (seq > window.first && seq <= window.first + window.count) {
        opening.push_back(seq - 1 - window.first);
      }
    }
    break;
  }
  const nlohmann::json data = {{"first", window.first}, {"lanes", lane_list}, {"kinds", kinds},
                               {"events", events},      {"edges", edges},     {"opening", opening}};
  // Safe inside a <script> element: no '<' can end it early.
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace onejob::report::timeline
