#include "system/domain/job.hpp"

#include "system/domain/names.hpp"

namespace onejob {

namespace {

constexpr Named<JobStatus> kJobStatusNames[] = {
    {JobStatus::pending, "pending"},
    {JobStatus::succeeded, "succeeded"},
    {JobStatus::failed, "failed"},
};
static_assert(names_cover(kJobStatusNames));

}  // namespace

std::string_view to_string(JobStatus status) { return name_of(kJobStatusNames, status); }

std::optional<JobStatus> parse_job_status(std::string_view text) {
  return parse_name(kJobStatusNames, text);
}

}  // namespace onejob
