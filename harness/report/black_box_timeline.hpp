#pragma once
// A black-box history (a probe's real run, or any history `onejob check` reads) as one
// self-contained HTML page: a lane per client and per provider on the history's clock, each
// request a line from its send to its answer (coloured by status; none: dashed), each provider
// execution a bar from its start to its answer (a hang runs to the page's end), the quiet phase
// marked, and the findings listed above, each linking to the elements of the lines it names
// (outlined). Every element's tooltip is its history line. No script, no network.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "harness/check/black_box.hpp"

namespace onejob::report {

// The page draws at most this many requests and executions (the first ones in time); a longer
// history's page says how many it left out. The findings are always listed in full.
inline constexpr std::size_t kMaxBlackBoxElements = 20'000;

std::string black_box_timeline_html(const check::black_box::History& history,
                                    const std::vector<check::black_box::Finding>& findings,
                                    std::string_view title,
                                    std::size_t max_elements = kMaxBlackBoxElements);

}  // namespace onejob::report
