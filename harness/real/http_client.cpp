#include "harness/real/http_client.hpp"

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <algorithm>
#include <array>
#include <functional>
#include <optional>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace onejob::real {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

}  // namespace

struct HttpConnection::Impl {
  Impl(std::string host_in, std::string port_in)
      : host(std::move(host_in)), port(std::move(port_in)) {}
  std::string host;
  std::string port;
  asio::io_context io{1};
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  Headers fixed;  // set_header's

  // Runs the io_context until the operations started have finished.
  void run() {
    io.restart();
    io.run();
  }

  error_code connect(std::chrono::milliseconds timeout) {
    error_code ec;
    tcp::resolver resolver(io);
    const auto endpoints = resolver.resolve(host, port, ec);
    if (ec) return ec;
    stream.emplace(io);
    stream->expires_after(timeout);
    stream->async_connect(endpoints, [&ec](error_code e, const tcp::endpoint&) { ec = e; });
    run();
    if (ec) stream.reset();
    buffer.clear();
    return ec;
  }
};

HttpConnection::HttpConnection(std::string host, std::string port)
    : impl_(std::make_unique<Impl>(std::move(host), std::move(port))) {}

HttpConnection::~HttpConnection() = default;

HttpReply HttpConnection::send(const std::string& method, const std::string& target,
                               const Headers& headers, const std::string& body,
                               std::chrono::milliseconds timeout) {
  auto& impl = *impl_;
  HttpReply reply;
  if (!impl.stream) {
    if (const auto ec = impl.connect(timeout)) {
      reply.failure = "connect: " + ec.message();
      return reply;
    }
  }
  http::request<http::string_body> request{http::string_to_verb(method), target, 11};
  if (request.method() == http::verb::unknown) request.method_string(method);
  request.set(http::field::host, impl.host + ":" + impl.port);
  for (const auto& [name, value] : headers) request.insert(name, value);
  for (const auto& [name, value] : impl.fixed) request.set(name, value);
  request.body() = body;
  request.keep_alive(true);
  request.prepare_payload();
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  error_code ec;
  impl.stream->expires_after(timeout);
  http::async_write(*impl.stream, request, [&](error_code e, std::size_t) {
    ec = e;
    if (e) return;
    http::async_read(*impl.stream, impl.buffer, parser,
                     [&ec](error_code e2, std::size_t) { ec = e2; });
  });
  impl.run();
  if (ec) {
    reply.failure = ec.message();
    impl.stream.reset();
    return reply;
  }
  auto& message = parser.get();
  reply.status = static_cast<int>(message.result_int());
  for (const auto& field : message) {
    reply.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  reply.body = std::move(message.body());
  if (!message.keep_alive()) impl.stream.reset();
  return reply;
}

void HttpConnection::set_header(const std::string& name, const std::string& value) {
  auto& fixed = impl_->fixed;
  const auto same = std::ranges::find(fixed, name, &Headers::value_type::first);
  if (same != fixed.end()) {
    same->second = value;
  } else {
    fixed.emplace_back(name, value);
  }
}

std::string HttpConnection::raw(const std::string& host, const std::string& port,
                                const std::string& bytes, std::chrono::milliseconds timeout) {
  Impl impl(host, port);
  if (const auto ec = impl.connect(timeout)) return {};
  std::string received;
  std::array<char, 4096> chunk{};
  std::function<void(error_code, std::size_t)> on_read = [&](error_code ec, std::size_t n) {
    received.append(chunk.data(), n);
    if (!ec) impl.stream->async_read_some(asio::buffer(chunk), on_read);
  };
  impl.stream->expires_after(timeout);
  // Reading from the start: a server may answer (and close) before it has read everything.
  impl.stream->async_read_some(asio::buffer(chunk), on_read);
  asio::async_write(impl.stream->socket(), asio::buffer(bytes), [](error_code, std::size_t) {});
  impl.run();
  return received;
}

}  // namespace onejob::real
