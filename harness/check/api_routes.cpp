#include "harness/check/api_routes.hpp"

#include <charconv>
#include <optional>
#include <vector>

namespace onejob::check {
namespace {

// A positive decimal number, digits only, leading zeros allowed, at most 2^63-1.
std::optional<std::int64_t> decimal_id(std::string_view text) {
  const auto digits = text.find_first_not_of('0');
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos ||
      digits == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view value = text.substr(digits);
  if (value.size() > 19 || (value.size() == 19 && value > "9223372036854775807")) {
    return std::nullopt;
  }
  std::int64_t id = 0;
  std::from_chars(value.data(), value.data() + value.size(), id);
  return id;
}

}  // namespace

Route route_of(std::string_view method, std::string_view path) {
  if (!path.starts_with('/')) return {};
  std::vector<std::string_view> parts;
  for (std::size_t from = 1;;) {
    const auto slash = path.find('/', from);
    parts.push_back(path.substr(from, slash == std::string_view::npos ? slash : slash - from));
    if (slash == std::string_view::npos) break;
    from = slash + 1;
  }
  std::string_view wants = "POST";
  std::string_view name;
  const auto id = parts.size() >= 2 ? decimal_id(parts[1]) : std::nullopt;
  if (parts.size() == 1 && parts[0] == "jobs") {
    name = "create_job";
  } else if (parts.size() == 2 && parts[0] == "jobs" && id) {
    wants = "GET";
    name = "get_job";
  } else if (parts.size() == 3 && id && parts[0] == "jobs" && parts[2] == "attempts") {
    name = "retry";
  } else if (parts.size() == 3 && id && parts[0] == "attempts" && parts[2] == "cancel") {
    name = "cancel";
  } else {
    return {};
  }
  return {method == wants ? RouteFit::resource : RouteFit::other_method, name, id.value_or(0)};
}

std::string_view recorded_name(std::string_view route) {
  if (route == "retry") return "create_attempt";
  if (route == "cancel") return "cancel_attempt";
  return route;
}

}  // namespace onejob::check
