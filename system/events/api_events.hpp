#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "system/events/schema.hpp"

// The API node's events: what it was asked and what it answered.
namespace onejob::events {

// A request reached the handler. `route` is the matched route's name (create_job, get_job,
// create_attempt, cancel_attempt, or unknown).
struct ApiRequest {
  static constexpr std::string_view kind = "api.request";
  std::string request_id;
  std::string route;
  std::string method;
  std::string path;
  std::string owner;
  std::string key;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("request_id", self.request_id);
    field("route", self.route);
    field("method", self.method);
    field("path", self.path);
    field("owner", self.owner);
    field("key", self.key);
  }
};

// The handler's answer, before the network carries it (or loses it).
struct ApiResponse {
  static constexpr std::string_view kind = "api.response";
  std::string request_id;
  std::string route;
  std::int64_t status = 0;
  std::string owner;
  std::string key;
  std::optional<std::int64_t> job_id{};
  std::optional<std::int64_t> attempt_id{};
  std::optional<std::string> error{};
  // What went wrong inside (the store's or the program's own words), for whoever reads the
  // node's events; never part of the answer.
  std::optional<std::string> detail{};
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("request_id", self.request_id);
    field("route", self.route);
    field("status", self.status);
    field("owner", self.owner);
    field("key", self.key);
    field("job_id", self.job_id);
    field("attempt_id", self.attempt_id);
    field("error", self.error);
    field("detail", self.detail);
  }
};

// The handler's create committed a new job (its reply reached the handler).
struct JobCreated {
  static constexpr std::string_view kind = "job.created";
  std::int64_t job_id = 0;
  std::string owner;
  std::string key;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("job_id", self.job_id);
    field("owner", self.owner);
    field("key", self.key);
  }
};

}  // namespace onejob::events
