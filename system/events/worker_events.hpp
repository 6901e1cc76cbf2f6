#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "system/events/schema.hpp"

// A worker's events about the provider calls it makes and the store errors it survives.
namespace onejob::events {

struct ProviderCalled {
  static constexpr std::string_view kind = "provider.call";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::string provider;
  std::string provider_key;
  Instant deadline{};
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("provider", self.provider);
    field("provider_key", self.provider_key);
    field("deadline_us", self.deadline);
  }
};

// `reply`: to_string(ProviderReply::Kind); `late`: after the attempt's deadline had passed.

struct ProviderReplied {
  static constexpr std::string_view kind = "provider.reply";
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::string provider;
  std::string reply;
  bool late = false;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("provider", self.provider);
    field("reply", self.reply);
    field("late", self.late);
  }
};

// `maybe_committed`: the write may have committed without its reply. `retry_in_us`: how long
// the worker backs off before it tries again (the claim, or the attempt's read or write).
struct WorkerStoreError {
  static constexpr std::string_view kind = "worker.store_error";
  std::string worker;
  std::int64_t attempt_id = 0;
  bool maybe_committed = false;
  std::string message;
  std::int64_t retry_in_us = 0;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("worker", self.worker);
    field("attempt_id", self.attempt_id);
    field("maybe_committed", self.maybe_committed);
    field("message", self.message);
    field("retry_in_us", self.retry_in_us);
  }
};

// A claim's reply was lost, so the worker looked for RUNNING attempts leased to its name that it
// is not running, and took this one up under the lease the store holds (`token`).
struct WorkerAdopted {
  static constexpr std::string_view kind = "worker.adopted";
  std::string worker;
  std::int64_t job_id = 0;
  std::int64_t attempt_id = 0;
  std::int64_t token = 0;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("worker", self.worker);
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("token", self.token);
  }
};

}  // namespace onejob::events
