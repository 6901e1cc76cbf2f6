#include "system/adapters/http_provider.hpp"

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <algorithm>
#include <charconv>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <nlohmann/json.hpp>

namespace onejob {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// A provider's answer is at most this big; a bigger one is treated as no answer.
constexpr std::size_t kMaxAnswerBytes = 4 << 20;

std::string percent_encoded(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == ':') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// The first bytes of a text, for a reason: a provider's body is not ours to repeat whole. Cut
// before a UTF-8 continuation byte, never inside a character.
std::string excerpt(std::string_view text) {
  constexpr std::size_t kLimit = 200;
  if (text.size() <= kLimit) return std::string(text);
  std::size_t cut = kLimit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0u) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

// What one exchange came to.
struct Exchange {
  enum class Stage { not_sent, sent, answered } stage = Stage::not_sent;
  std::string failure;  // when not answered
  int status = 0;
  std::string body;
};

// One request on a fresh connection, bounded by `budget` in all from the connect on. Name
// resolution is not bounded (getaddrinfo cannot be cancelled): give providers as addresses when
// a resolver may hang; the worker's own deadline still bounds the attempt.
Async<Exchange> exchange(asio::io_context& io, const HttpProviderEndpoint& endpoint,
                         http::request<http::string_body> request,
                         std::chrono::milliseconds budget) {
  Exchange result;
  beast::tcp_stream stream(io);
  error_code ec;
  tcp::resolver resolver(io);
  const auto resolved = co_await resolver.async_resolve(endpoint.host, endpoint.port,
                                                        asio::redirect_error(use_async, ec));
  if (ec) {
    result.failure = "cannot resolve " + endpoint.host + ": " + ec.message();
    co_return result;
  }
  const auto until = std::chrono::steady_clock::now() + budget;
  stream.expires_after(std::min(budget, endpoint.connect_timeout));
  co_await stream.async_connect(resolved, asio::redirect_error(use_async, ec));
  if (ec) {
    result.failure = "cannot connect to " + endpoint.host + ":" + endpoint.port + ": " +
                     (ec == beast::error::timeout ? std::string("timed out") : ec.message());
    co_return result;
  }
  stream.expires_at(until);
  // From the first byte written on, the provider may have the request.
  result.stage = Exchange::Stage::sent;
  request.prepare_payload();
  co_await http::async_write(stream, request, asio::redirect_error(use_async, ec));
  if (ec) {
    result.failure = "connection broke while sending: " + ec.message();
    co_return result;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxAnswerBytes);
  co_await http::async_read(stream, buffer, parser, asio::redirect_error(use_async, ec));
  if (ec) {
    result.failure = ec == beast::error::timeout
                         ? "no answer within " + std::to_string(budget.count()) + " ms"
                         : "connection broke before the answer: " + ec.message();
    co_return result;
  }
  result.stage = Exchange::Stage::answered;
  result.status = static_cast<int>(parser.get().result_int());
  result.body = std::move(parser.get().body());
  error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  co_return result;
}

http::request<http::string_body> request_for(const HttpProviderEndpoint& endpoint, http::verb verb,
                                             std::string target) {
  http::request<http::string_body> request{verb, endpoint.base_path + target, 11};
  request.set(http::field::host, endpoint.host + ":" + endpoint.port);
  request.set(http::field::user_agent, "onejob");
  request.keep_alive(false);
  return request;
}

std::string refusal(int status, const std::string& body) {
  const auto json = nlohmann::json::parse(body, nullptr, false);
  std::string reason = "provider answered HTTP " + std::to_string(status);
  if (json.is_object() && json.contains("error") && json["error"].is_string()) {
    reason += ": " + excerpt(json["error"].get<std::string>());
  }
  return reason;
}

}  // namespace

std::variant<HttpProviderEndpoint, std::string> parse_provider_url(std::string name,
                                                                   std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) {
    return "a provider URL starts with http:// (TLS is not supported): \"" + excerpt(url) + "\"";
  }
  std::string_view rest = url.substr(kScheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return "a provider URL has no query or fragment: \"" + excerpt(url) + "\"";
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  while (path.ends_with('/')) path.remove_suffix(1);
  if (authority.find('@') != std::string_view::npos ||
      path.find_first_of("?#") != std::string_view::npos) {
    return "a provider URL has no user, query or fragment: \"" + excerpt(url) + "\"";
  }
  const auto colon = authority.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return "a provider URL names its host and port (http://HOST:PORT[/PATH]): \"" + excerpt(url) +
           "\"";
  }
  const std::string_view port = authority.substr(colon + 1);
  int number = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (error != std::errc{} || end != port.data() + port.size() || number < 1 || number > 65535) {
    return "a provider URL's port is a number from 1 to 65535: \"" + excerpt(url) + "\"";
  }
  HttpProviderEndpoint endpoint;
  endpoint.name = std::move(name);
  endpoint.host = std::string(authority.substr(0, colon));
  endpoint.port = std::string(port);
  endpoint.base_path = std::string(path);
  return endpoint;
}

HttpProviderClient::HttpProviderClient(boost::asio::io_context& io, const Clock& clock,
                                       std::vector<HttpProviderEndpoint> endpoints)
    : io_(io), clock_(clock), endpoints_(std::move(endpoints)) {}

const HttpProviderEndpoint* HttpProviderClient::find(std::string_view name) const {
  for (const auto& endpoint : endpoints_) {
    if (endpoint.name == name) return &endpoint;
  }
  return nullptr;
}

Async<ProviderReply> HttpProviderClient::call(ProviderCall call) {
  const HttpProviderEndpoint* endpoint = find(call.provider);
  if (!endpoint) co_return ProviderReply{ProviderReply::Kind::rejected, {}, "no such provider"};
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(call.deadline - clock_.now());
  if (left <= std::chrono::milliseconds(0)) {
    co_return ProviderReply{ProviderReply::Kind::rejected, {}, "not sent: the deadline had passed"};
  }
  auto request = request_for(*endpoint, http::verb::post, "/calls");
  request.set("Idempotency-Key", call.provider_key);
  request.set("X-Deadline-Ms", std::to_string(left.count()));
  request.set(http::field::content_type, "application/json");
  nlohmann::json body{
      {"purpose", call.purpose == CallPurpose::attempt ? "attempt" : "certification"},
      {"operation", call.operation},
      {"prompt", call.prompt},
      {"input", nlohmann::json::parse(call.input_json, nullptr, false)},
      {"temperature", call.temperature}};
  request.body() = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const Exchange result = co_await exchange(io_, *endpoint, std::move(request), left);
  switch (result.stage) {
    case Exchange::Stage::not_sent:
      co_return ProviderReply{ProviderReply::Kind::rejected, {}, "not sent: " + result.failure};
    case Exchange::Stage::sent:
      co_return ProviderReply{ProviderReply::Kind::maybe_delivered, {}, result.failure};
    case Exchange::Stage::answered:
      break;
  }
  if (result.status != 200) {
    co_return ProviderReply{ProviderReply::Kind::rejected, {}, refusal(result.status, result.body)};
  }
  const auto json = nlohmann::json::parse(result.body, nullptr, false);
  if (json.is_object() && json.contains("output") && json["output"].is_string()) {
    co_return ProviderReply{ProviderReply::Kind::answered, json["output"].get<std::string>(), {}};
  }
  // Not the protocol's envelope: what came back is the output, for the contract to judge.
  co_return ProviderReply{ProviderReply::Kind::answered, result.body, {}};
}

Async<ProviderStatus> HttpProviderClient::status(std::string provider, std::string provider_key) {
  const HttpProviderEndpoint* endpoint = find(provider);
  if (!endpoint) co_return ProviderStatus{ProviderStatus::Kind::not_found, {}, {}};
  auto request = request_for(*endpoint, http::verb::get, "/calls/" + percent_encoded(provider_key));
  const Exchange result =
      co_await exchange(io_, *endpoint, std::move(request), endpoint->status_timeout);
  if (result.stage != Exchange::Stage::answered) {
    co_return ProviderStatus{ProviderStatus::Kind::unreachable, {}, result.failure};
  }
  if (result.status == 404) co_return ProviderStatus{ProviderStatus::Kind::not_found, {}, {}};
  const auto json = nlohmann::json::parse(result.body, nullptr, false);
  const auto text = [&json](const char* name) {
    return json.contains(name) && json[name].is_string() ? json[name].get<std::string>()
                                                         : std::string();
  };
  if (result.status == 200 && json.is_object()) {
    const std::string state = text("status");
    if (state == "completed" && json.contains("output") && json["output"].is_string()) {
      co_return ProviderStatus{ProviderStatus::Kind::completed, text("output"), {}};
    }
    if (state == "failed")
      co_return ProviderStatus{ProviderStatus::Kind::failed, {}, text("reason")};
    if (state == "running") co_return ProviderStatus{ProviderStatus::Kind::running, {}, {}};
  }
  co_return ProviderStatus{
      ProviderStatus::Kind::unreachable,
      {},
      "status lookup answered HTTP " + std::to_string(result.status) + " outside the protocol"};
}

}  // namespace onejob
