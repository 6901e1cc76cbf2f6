#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "system/ports/clock.hpp"
#include "system/ports/provider_client.hpp"

namespace boost::asio {
class io_context;
}

namespace onejob {

// Where one provider answers the provider protocol (README.md, "Providers over HTTP"):
//   POST {base}/calls          Idempotency-Key: the provider key; X-Deadline-Ms: how long the
//                              caller waits; body {"purpose","operation","prompt","input",
//                              "temperature"}. 200 {"output": "<the model's raw text>"}; any
//                              other status is a definitive refusal ({"error": "..."}).
//   GET  {base}/calls/{key}    200 {"status": "completed", "output": ...} | {"status": "failed",
//                              "reason": ...} | {"status": "running"}; 404: never received.
struct HttpProviderEndpoint {
  std::string name;
  std::string host;
  std::string port;
  std::string base_path;  // without a trailing slash; may be empty
  std::chrono::milliseconds connect_timeout{2'000};
  std::chrono::milliseconds status_timeout{5'000};
};

// Parses "http://HOST:PORT[/BASE]" (no TLS, no user info, no query): the endpoint, or what is
// wrong with the text.
std::variant<HttpProviderEndpoint, std::string> parse_provider_url(std::string name,
                                                                   std::string_view url);

// The providers over HTTP, one connection per call (Boost.Beast). Transport failures map to the
// port's outcomes as the simulated network's do:
//   - nothing sent (no connection by the deadline, refused): rejected, "not sent: ...";
//   - the request was (or may have been) sent, and then the connection broke or the deadline
//     passed with no answer: maybe_delivered — the provider may be working on it;
//   - an answer: answered (200) or rejected (any other status), as the provider said.
// A status lookup that gets no answer is unreachable.
// REQUIRES: io and clock outlive the client; calls run on io's thread.
class HttpProviderClient final : public ProviderClient {
 public:
  HttpProviderClient(boost::asio::io_context& io, const Clock& clock,
                     std::vector<HttpProviderEndpoint> endpoints);
  Async<ProviderReply> call(ProviderCall call) override;
  Async<ProviderStatus> status(std::string provider, std::string provider_key) override;

 private:
  const HttpProviderEndpoint* find(std::string_view name) const;

  boost::asio::io_context& io_;
  const Clock& clock_;
  std::vector<HttpProviderEndpoint> endpoints_;
};

}  // namespace onejob
