#include "system/domain/job.hpp"

namespace onejob {

std::string_view to_string(JobStatus status) {
  switch (status) {
    case JobStatus::pending:
      return "pending";
    case JobStatus::succeeded:
      return "succeeded";
    case JobStatus::failed:
      return "failed";
  }
  return "invalid";
}

std::optional<JobStatus> parse_job_status(std::string_view text) {
  for (auto status : {JobStatus::pending, JobStatus::succeeded, JobStatus::failed}) {
    if (to_string(status) == text) return status;
  }
  return std::nullopt;
}

}  // namespace onejob
