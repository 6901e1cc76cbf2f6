#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "system/events/schema.hpp"

// The reconciler's events: provider status queries for UNKNOWN attempts, resumed failovers.
namespace onejob::events {

struct ReconcilerStatus {
  static constexpr std::string_view kind = "reconciler.status";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::string provider;
  std::string status;  // completed, failed, running, not_found, unreachable
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("provider", self.provider);
    field("status", self.status);
  }
};

struct FailoverResumed {
  static constexpr std::string_view kind = "reconciler.failover_resumed";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
  }
};

// `retry_in_us`: how long the reconciler backs off before its next sweep.
struct ReconcilerStoreError {
  static constexpr std::string_view kind = "reconciler.store_error";
  std::string message;
  std::int64_t retry_in_us = 0;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("message", self.message);
    field("retry_in_us", self.retry_in_us);
  }
};

// A sweep went through after `failures` store errors in a row: the store answers again, and the
// backoff starts over from its base.
struct ReconcilerStoreRecovered {
  static constexpr std::string_view kind = "reconciler.store_recovered";
  std::int64_t failures = 0;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("failures", self.failures);
  }
};

}  // namespace onejob::events
