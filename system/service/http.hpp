#pragma once

#include <utility>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace onejob {

// Transport-agnostic HTTP messages: the API handler never sees a socket.
using Headers = std::vector<std::pair<std::string, std::string>>;

// The value of the first header with this name (names compare case-insensitively).
std::optional<std::string> find_header(const Headers& headers, std::string_view name);

struct Request {
  std::string method;
  std::string path;
  Headers headers;
  std::string body;
  // The authenticated caller, set by the authentication layer in front of the handler; the
  // owner of anything created. Empty means unauthenticated. Never taken from the body.
  std::string principal;
  // Correlates the request with its events (X-Request-Id); carries no meaning otherwise.
  std::string request_id;
};

struct Response {
  int status = 0;
  Headers headers;
  std::string body;  // JSON
};

}  // namespace onejob
