#include "system/domain/job.hpp"

namespace onejob {

std::string_view to_string(JobStatus status) {
  switch (status) {
    case JobStatus::pending:
      return "pending";
  }
  return "invalid";
}

}  // namespace onejob
