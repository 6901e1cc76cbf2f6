#include "harness/sim/sim_spec.hpp"

#include <algorithm>

namespace onejob::sim {

static_assert(lists_in_order(kLinks, &LinkInfo::kind) &&
                  std::size(kLinks) == 1 + static_cast<std::size_t>(LinkKind::node_store),
              "kLinks lists every LinkKind once, in declaration order");

bool has_faults(const LinkSpec& link) {
  return std::ranges::any_of(kFaultRates, [&](const FaultRate& f) { return link.*f.rate > 0; });
}

const LinkInfo& link_info(LinkKind kind) { return kLinks[static_cast<std::size_t>(kind)]; }

std::optional<LinkKind> parse_link(std::string_view name) {
  for (const auto& link : kLinks) {
    if (link.name == name) return link.kind;
  }
  return std::nullopt;
}

}  // namespace onejob::sim
