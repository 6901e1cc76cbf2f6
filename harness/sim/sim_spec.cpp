#include "harness/sim/sim_spec.hpp"

#include <algorithm>

#include "system/domain/check.hpp"

namespace onejob::sim {

static_assert(std::size(kLinks) == 4 && kLinks[3].kind == LinkKind::node_store);

bool has_faults(const LinkSpec& link) {
  return std::ranges::any_of(kFaultRates, [&](const FaultRate& f) { return link.*f.rate > 0; });
}

const LinkInfo& link_info(LinkKind kind) {
  const auto index = static_cast<std::size_t>(kind);
  ONEJOB_ASSERT(index < std::size(kLinks) && kLinks[index].kind == kind,
                "kLinks lists every LinkKind in declaration order");
  return kLinks[index];
}

std::optional<LinkKind> parse_link(std::string_view name) {
  for (const auto& link : kLinks) {
    if (link.name == name) return link.kind;
  }
  return std::nullopt;
}

}  // namespace onejob::sim
