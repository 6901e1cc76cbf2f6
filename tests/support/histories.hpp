#pragma once

#include <string>

#include "harness/sim/trace.hpp"

namespace onejob::test {

// Builds hand-made histories for checker tests: each add() appends one event with the next seq.
class HistoryBuilder {
 public:
  HistoryBuilder& add(std::string node, Event event) {
    history_.push_back(
        sim::TraceEvent{history_.size() + 1, Instant{}, std::move(node), std::move(event), false});
    return *this;
  }
  const sim::History& history() const { return history_; }

 private:
  sim::History history_;
};

inline Event job_created(std::int64_t job_id, std::string owner, std::string key) {
  return Event("job.created").with("job_id", job_id).with("owner", owner).with("key", key);
}

inline Event create_response(int status, std::int64_t job_id, std::string owner, std::string key) {
  return Event("api.response")
      .with("route", "create_job")
      .with("status", status)
      .with("owner", owner)
      .with("key", key)
      .with("job_id", job_id);
}

}  // namespace onejob::test
