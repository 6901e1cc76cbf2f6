#pragma once

#include "system/service/system_context.hpp"

namespace onejob {

// Provider contract certification: before a provider may receive automatic failover, it must
// show that it honours the operational contract, not just the JSON shape. The suite sends real
// sample inputs for every operation, each prompt rendered through that provider's own template
// and checked against its own limits, at temperature 0, as full round trips through the
// ProviderClient. Each answer must pass the output contract (validate_output) and mean the
// right thing (the expected label, the asked-for values). The result, with every failed check
// as a reason, is recorded in the Store and reported as certification.recorded.
class Certifier {
 public:
  explicit Certifier(SystemContext& context) : context_(context) {}

  Async<Certification> certify(const ProviderProfile& profile);

 private:
  SystemContext& context_;
};

}  // namespace onejob
