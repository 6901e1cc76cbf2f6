#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "system/events/schema.hpp"

// What clients sent and saw, and what the load balancer did with their requests. `request` is
// the timeline entry's number; `send` counts the client's sends of it (resends reuse the key).
// In the trace `send` is written under the key "attempt", as traces have always had it: renaming
// the key would change every recorded trace and its hash.
namespace onejob::events {

// The id a client's request carries ("r<request>.<send>"), and the id under which the balancer
// forwards its try `lb_try` (1-based) to an API node ("r<request>.<send>.<lb_try>").
// (Built by appending: g++ 12 warns falsely (-Wrestrict) on "r" + std::to_string(...) inlined.)
inline std::string client_request_id(std::int64_t request, std::int64_t send) {
  std::string id = "r";
  id += std::to_string(request);
  id += '.';
  id += std::to_string(send);
  return id;
}
inline std::string forwarded_request_id(std::int64_t request, std::int64_t send,
                                        std::int64_t lb_try) {
  std::string id = client_request_id(request, send);
  id += '.';
  id += std::to_string(lb_try);
  return id;
}

// `action`: create_job, get_job, retry, cancel. `body` is recorded on a create's first send (its
// resends send the same bytes) and on every send of a retry that names a provider; `path` on every
// send of an operator's retry or cancel (the cancel's path names the attempt the console found).
struct ClientSent {
  static constexpr std::string_view kind = "client.send";
  std::int64_t request = 0;
  std::int64_t send = 0;  // trace key "attempt"
  std::string action;
  std::string owner;
  std::optional<std::string> key{};
  std::optional<std::string> body{};
  std::optional<std::int64_t> job_id{};
  std::optional<std::int64_t> attempt_no{};
  std::optional<std::string> path{};
  std::optional<std::string> method{};  // when not the action's own (a route probe)
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("request", self.request);
    field("attempt", self.send);
    field("action", self.action);
    field("owner", self.owner);
    field("key", self.key);
    field("body", self.body);
    field("job_id", self.job_id);
    field("attempt_no", self.attempt_no);
    field("path", self.path);
    field("method", self.method);
  }
};

struct ClientSkipped {
  static constexpr std::string_view kind = "client.skip";
  std::int64_t request = 0;
  std::string reason;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("request", self.request);
    field("reason", self.reason);
  }
};

// A response reached the client. The client reads the body itself: `job_id` when it names one;
// for a job read, the job status it shows, its completed_by and a digest of its result (16 hex
// digits of FNV-1a 64 over the result re-serialized by the client's own JSON library); for an
// operator's action, the attempt it names and the state it shows; for a refusal, its "error"
// code. From the headers: `replayed` when Idempotent-Replayed is "true", `retry_after` as sent.
struct ClientReceived {
  static constexpr std::string_view kind = "client.receive";
  std::int64_t request = 0;
  std::int64_t send = 0;  // trace key "attempt"
  std::int64_t status = 0;
  std::string body_digest;
  std::optional<std::int64_t> job_id{};
  std::optional<std::string> shown_status{};
  std::optional<std::int64_t> shown_winner{};
  std::optional<bool> winner_null{};  // true when the body's "completed_by" is null
  std::optional<std::string> result_digest{};
  bool duplicate = false;
  std::optional<std::int64_t> attempt_id{};
  std::optional<std::string> shown_state{};
  std::optional<std::string> error{};
  std::optional<bool> replayed{};
  std::optional<std::string> retry_after{};
  std::optional<bool> shown_blocked{};          // a job read's "blocked"
  std::optional<std::int64_t> shown_version{};  // a job read's "version", when an integer
  // A job read's "attempts" as "id:STATE:attempt_no:origin:provider:reason" entries joined by ','
  // ("?" for an entry without an integer attempt_id and a text state; "?" for an attempt_no that
  // is no integer, an origin, provider or reason that is no text; the reason as the FNV-1a digest
  // of its text, in hex); absent when the body has no "attempts" array.
  std::optional<std::string> shown_attempts{};
  std::optional<std::int64_t> shown_attempt_no{};  // a retry's answer's "attempt_no"
  // A body's "operation" and "provider" when they are texts, and its "failover" list as its names
  // joined by ',' ("?" for an entry that is not a text; absent when the body has no such list):
  // what a job read shows of the request the job was created with.
  std::optional<std::string> shown_operation{};
  std::optional<std::string> shown_provider{};
  std::optional<std::string> shown_failover{};
  // A body with "failure_reason": true when it is a non-empty text (a reason), false otherwise.
  std::optional<bool> shows_failure_reason{};
  std::optional<std::string> failure_reason_digest{};  // its FNV-1a digest, in hex, when a text
  std::optional<bool> quotes_store{};       // true when the body quotes a store failure's own words
  std::optional<std::string> request_id{};  // a failure body's "request_id"
  // The digests of the JSON objects nested in the body below its top level, outside a top-level
  // "result" (and of every string there that holds a JSON object): sorted, each once, joined by
  // ','; absent when there are none. What an attempt's result shown where it must not be looks
  // like to a reader.
  std::optional<std::string> nested_digests{};
  std::optional<std::string> location{};  // the answer's Location header, when it has one
  // The answer's Content-Type when it is not exactly application/json ("" when it has none).
  std::optional<std::string> content_type{};
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("request", self.request);
    field("attempt", self.send);
    field("status", self.status);
    field("body_digest", self.body_digest);
    field("job_id", self.job_id);
    field("shown_status", self.shown_status);
    field("shown_winner", self.shown_winner);
    field("winner_null", self.winner_null);
    field("result_digest", self.result_digest);
    field("duplicate", self.duplicate);
    field("attempt_id", self.attempt_id);
    field("shown_state", self.shown_state);
    field("error", self.error);
    field("replayed", self.replayed);
    field("retry_after", self.retry_after);
    field("shown_blocked", self.shown_blocked);
    field("shown_version", self.shown_version);
    field("shown_attempts", self.shown_attempts);
    field("shown_attempt_no", self.shown_attempt_no);
    field("shown_operation", self.shown_operation);
    field("shown_provider", self.shown_provider);
    field("shown_failover", self.shown_failover);
    field("shows_failure_reason", self.shows_failure_reason);
    field("failure_reason_digest", self.failure_reason_digest);
    field("quotes_store", self.quotes_store);
    field("request_id", self.request_id);
    field("nested_digests", self.nested_digests);
    field("location", self.location);
    field("content_type", self.content_type);
  }
};

// The load balancer forwards a client's request to an API node as `request_id` (the id the API
// node's events carry).
struct LbForwarded {
  static constexpr std::string_view kind = "lb.forward";
  std::int64_t request = 0;
  std::int64_t send = 0;  // trace key "attempt"
  std::int64_t lb_try = 1;
  std::string to;
  std::string request_id;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("request", self.request);
    field("attempt", self.send);
    field("try", self.lb_try);
    field("to", self.to);
    field("request_id", self.request_id);
  }
};

struct LbDroppedLate {
  static constexpr std::string_view kind = "lb.drop_late";
  std::int64_t request = 0;
  std::int64_t send = 0;  // trace key "attempt"
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("request", self.request);
    field("attempt", self.send);
  }
};

}  // namespace onejob::events
