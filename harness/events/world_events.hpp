#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "system/domain/names.hpp"
#include "system/events/schema.hpp"

// The simulated world's own events: injected faults, node lives, the phases of a run.
namespace onejob::events {

// The faults the simulator injects, one table: the name each has in a link's net.fault event and
// in a store round trip's store.fault event (empty: it does not happen there). Code that injects
// a fault or reads one back (coverage marks, reports) goes through this table, never a literal.
enum class InjectedFault {
  drop_request,
  drop_response,
  duplicate,
  delay,
  reset,
  partition,
  commit_unknown
};
struct InjectedFaultName {
  InjectedFault fault;
  std::string_view net;
  std::string_view store;
};
inline constexpr InjectedFaultName kInjectedFaults[] = {
    {InjectedFault::drop_request, "drop", "request lost"},
    {InjectedFault::drop_response, "drop", "reply lost"},
    {InjectedFault::duplicate, "duplicate", ""},
    {InjectedFault::delay, "delay", ""},
    {InjectedFault::reset, "reset", "connection reset"},
    {InjectedFault::partition, "partitioned", "partition"},
    {InjectedFault::commit_unknown, "", "commit outcome unknown"},
};
constexpr const InjectedFaultName& injected_fault(InjectedFault fault) {
  return kInjectedFaults[static_cast<std::size_t>(fault)];
}
static_assert(lists_in_order(kInjectedFaults, &InjectedFaultName::fault) &&
                  std::size(kInjectedFaults) ==
                      1 + static_cast<std::size_t>(InjectedFault::commit_unknown),
              "kInjectedFaults lists every InjectedFault once, in declaration order");

// A message on a link was dropped, delayed, duplicated, or stopped by a partition (injected).
// The event's node is the link.
struct NetFault {
  static constexpr std::string_view kind = "net.fault";
  std::string fault;  // kInjectedFaults' net name
  std::string direction;
  std::string from;
  std::string to;
  std::string message;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("fault", self.fault);
    field("direction", self.direction);
    field("from", self.from);
    field("to", self.to);
    field("message", self.message);
  }
};

// A store round trip broke (injected). `maybe_committed`: the statement ran and its reply was
// lost, so the write may have committed (the commit log says whether it did).
struct StoreFault {
  static constexpr std::string_view kind = "store.fault";
  std::string node;
  std::string operation;
  std::string fault;  // kInjectedFaults' store name
  bool maybe_committed = false;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("node", self.node);
    field("operation", self.operation);
    field("fault", self.fault);
    field("maybe_committed", self.maybe_committed);
  }
};

struct NodeStarted {
  static constexpr std::string_view kind = "node.start";
  std::int64_t incarnation = 1;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("incarnation", self.incarnation);
  }
};

struct NodeCrashed {
  static constexpr std::string_view kind = "node.crash";
  template <typename Self, typename F>
  static void fields(Self&, F&&) {}
};

// The node froze (injected) until `until`; it resumes as the same incarnation.
struct NodePaused {
  static constexpr std::string_view kind = "node.pause";
  Instant until{};
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("until_us", self.until);
  }
};

struct NodeResumed {
  static constexpr std::string_view kind = "node.resume";
  template <typename Self, typename F>
  static void fields(Self&, F&&) {}
};

// Faults healed: from here links deliver, partitions are over, crashed nodes are back, and
// clients retry until answered. Availability is judged after this phase.
struct QuietStarted {
  static constexpr std::string_view kind = "world.quiet";
  template <typename Self, typename F>
  static void fields(Self&, F&&) {}
};

// The policy and topology a run used, recorded when it starts, so the rules that judge time
// (liveness) read what the run really had. Durations in microseconds.
struct RunPolicy {
  static constexpr std::string_view kind = "run.policy";
  std::int64_t attempt_deadline_us = 0;
  std::int64_t lease_us = 0;
  std::int64_t reconcile_period_us = 0;
  std::int64_t status_timeout_us = 0;
  std::int64_t worker_poll_us = 0;
  std::int64_t worker_idle_poll_us = 0;
  std::int64_t store_backoff_cap_us = 0;
  std::int64_t worker_capacity = 0;
  std::int64_t attempt_limit = 0;
  std::int64_t redrive_limit = 0;
  std::int64_t workers = 0;
  bool reconciler = false;
  Instant faults_over{};  // when the last fault may act (the quiet phase, or the last action)
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("attempt_deadline_us", self.attempt_deadline_us);
    field("lease_us", self.lease_us);
    field("reconcile_period_us", self.reconcile_period_us);
    field("status_timeout_us", self.status_timeout_us);
    field("worker_poll_us", self.worker_poll_us);
    field("worker_idle_poll_us", self.worker_idle_poll_us);
    field("store_backoff_cap_us", self.store_backoff_cap_us);
    field("worker_capacity", self.worker_capacity);
    field("attempt_limit", self.attempt_limit);
    field("redrive_limit", self.redrive_limit);
    field("workers", self.workers);
    field("reconciler", self.reconciler);
    field("faults_over_us", self.faults_over);
  }
};

// A provider as the run configured it, recorded when it starts (after run.policy), so the rules
// can size a prompt themselves: "{{operation}}" and "{{input}}" in the template stand for the
// operation and the input JSON; a prompt of B bytes is ceil(B / bytes_per_token) tokens.
struct RunProvider {
  static constexpr std::string_view kind = "run.provider";
  std::string name;
  std::string prompt_template;
  std::int64_t max_prompt_tokens = 0;
  std::int64_t bytes_per_token = 0;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("name", self.name);
    field("prompt_template", self.prompt_template);
    field("max_prompt_tokens", self.max_prompt_tokens);
    field("bytes_per_token", self.bytes_per_token);
  }
};

// A partition window as the run scheduled it, recorded when the run starts (after run.provider),
// one for each node it cuts off: while [from, until) (and before the quiet phase heals every
// link), messages to or from `node` on `link` (a kLinks name) are cut in `direction` (both,
// requests or responses). On node_store every store call of the node then fails.
struct RunPartition {
  static constexpr std::string_view kind = "run.partition";
  std::string link;
  std::string node;
  std::string direction;
  Instant from{};
  Instant until{};
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("link", self.link);
    field("node", self.node);
    field("direction", self.direction);
    field("from_us", self.from);
    field("until_us", self.until);
  }
};

// The run ended: at its scheduled end, or earlier, once quiescent (nothing left that would
// move: no request unanswered, no provider working, no work any node would take up).
struct RunEnded {
  static constexpr std::string_view kind = "run.end";
  bool quiescent = false;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("quiescent", self.quiescent);
  }
};

struct CertificationStoreError {
  static constexpr std::string_view kind = "certification.store_error";
  std::string provider;
  std::string message;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("provider", self.provider);
    field("message", self.message);
  }
};

}  // namespace onejob::events
