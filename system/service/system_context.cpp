#include "system/service/system_context.hpp"

#include <set>
#include <stdexcept>

namespace onejob {

const ProviderProfile* SystemConfig::find_provider(std::string_view name) const {
  for (const auto& provider : providers) {
    if (provider.name == name) return &provider;
  }
  return nullptr;
}

void SystemConfig::validate() const {
  if (policy.attempt_deadline <= Duration::zero()) {
    throw std::invalid_argument("attempt deadline must be positive");
  }
  if (policy.lease <= policy.attempt_deadline) {
    throw std::invalid_argument("lease must be longer than the attempt deadline");
  }
  if (policy.reconcile_period <= Duration::zero() || policy.worker_poll <= Duration::zero() ||
      policy.worker_idle_poll <= Duration::zero() || policy.status_timeout <= Duration::zero()) {
    throw std::invalid_argument(
        "reconcile period, status timeout, worker poll and worker idle poll must be positive");
  }
  if (policy.worker_capacity < 1 || policy.attempt_limit < 1 || policy.redrive_limit < 0) {
    throw std::invalid_argument(
        "worker capacity and attempt limit must be at least 1, the re-drive limit at least 0");
  }
  std::set<std::string> names;
  for (const auto& provider : providers) {
    if (provider.name.empty()) throw std::invalid_argument("a provider has no name");
    if (!names.insert(provider.name).second) {
      throw std::invalid_argument("provider \"" + provider.name + "\" is configured twice");
    }
  }
}

}  // namespace onejob
