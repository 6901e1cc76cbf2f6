#include "system/service/http.hpp"

#include <algorithm>
#include <cctype>

namespace onejob {

std::optional<std::string> find_header(const Headers& headers, std::string_view name) {
  auto same_name = [name](const auto& header) {
    return std::ranges::equal(header.first, name, [](char a, char b) {
      return std::tolower(static_cast<unsigned char>(a)) ==
             std::tolower(static_cast<unsigned char>(b));
    });
  };
  auto it = std::ranges::find_if(headers, same_name);
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

}  // namespace onejob
