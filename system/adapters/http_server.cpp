#include "system/adapters/http_server.hpp"

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <array>
#include <list>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "system/domain/check.hpp"

namespace onejob {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// One open connection, as its node sees it.
struct Session {
  explicit Session(tcp::socket socket) : stream(std::move(socket)) {}
  beast::tcp_stream stream;
  bool busy = false;  // a request has been read and is not yet answered
};

struct Node {
  asio::io_context& io;
  std::string name;
  HttpHandler handler;
  // Touched on the node's thread only.
  std::list<Session*> sessions;
  std::uint64_t requests = 0;
  bool stopping = false;
};

std::string error_body(std::string_view error, std::string_view message) {
  return "{\"error\":\"" + std::string(error) + "\",\"message\":\"" + std::string(message) + "\"}";
}

}  // namespace

struct HttpServer::Impl {
  Impl(asio::io_context& io, const std::string& address, unsigned short port, HttpLimits limits_in)
      : accept_io(io), acceptor(io), limits(limits_in) {
    const tcp::endpoint endpoint(asio::ip::make_address(address), port);
    acceptor.open(endpoint.protocol());
    acceptor.set_option(asio::socket_base::reuse_address(true));
    acceptor.bind(endpoint);
    acceptor.listen(asio::socket_base::max_listen_connections);
  }

  asio::io_context& accept_io;
  tcp::acceptor acceptor;
  HttpLimits limits;
  std::vector<std::unique_ptr<Node>> nodes;
  std::atomic<int> open{0};
  std::atomic<bool> stopping{false};

  Async<void> accept_loop();
  Async<void> serve(Node& node, tcp::socket socket);
  Async<void> answer(Session& session, Node& node, int status, std::string body, unsigned version);
};

// Writes an answer the server gives by itself, then closes the connection the lingering way:
// the client may still be sending (a body over the limit), and closing with its bytes unread
// would reset the connection and could destroy the answer before the client reads it. So the
// server stops sending and reads, discarding, until the client closes, for at most a second and
// a megabyte.
Async<void> HttpServer::Impl::answer(Session& session, Node& node, int status, std::string body,
                                     unsigned version) {
  http::response<http::string_body> response{static_cast<http::status>(status), version};
  response.set(http::field::content_type, "application/json");
  response.set(http::field::server, "onejob");
  response.set("X-Request-Id", node.name + "-" + std::to_string(++node.requests));
  response.keep_alive(false);
  response.body() = std::move(body);
  response.prepare_payload();
  error_code ec;
  session.stream.expires_after(limits.request_timeout);
  co_await http::async_write(session.stream, response, asio::redirect_error(use_async, ec));
  if (ec) co_return;
  session.stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  session.stream.expires_after(std::chrono::seconds(1));
  std::array<char, 16 * 1024> discard{};
  for (std::size_t drained = 0; !ec && drained < (1 << 20);) {
    drained += co_await session.stream.async_read_some(asio::buffer(discard),
                                                       asio::redirect_error(use_async, ec));
  }
}

Async<void> HttpServer::Impl::serve(Node& node, tcp::socket socket) {
  Session session(std::move(socket));
  node.sessions.push_back(&session);
  const auto where = std::prev(node.sessions.end());
  // Room for the largest request the limits allow, and no more: pipelined garbage cannot grow
  // it.
  beast::flat_buffer buffer(limits.header_bytes + limits.body_bytes + 4096);
  while (!node.stopping) {
    error_code ec;
    if (buffer.size() == 0) {
      // Between requests: the idle timeout runs until the next request's first bytes.
      session.stream.expires_after(limits.idle_timeout);
      const auto n = co_await session.stream.async_read_some(buffer.prepare(4096),
                                                             asio::redirect_error(use_async, ec));
      if (ec) break;
      buffer.commit(n);
    }
    session.stream.expires_after(limits.request_timeout);
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(limits.header_bytes));
    parser.body_limit(limits.body_bytes);
    co_await http::async_read_header(session.stream, buffer, parser,
                                     asio::redirect_error(use_async, ec));
    const unsigned version = parser.is_header_done() ? parser.get().version() : 11;
    if (!ec && parser.get()[http::field::expect] == "100-continue") {
      http::response<http::empty_body> go_on{http::status::continue_, version};
      co_await http::async_write(session.stream, go_on, asio::redirect_error(use_async, ec));
    }
    if (!ec && !parser.is_done()) {
      co_await http::async_read(session.stream, buffer, parser,
                                asio::redirect_error(use_async, ec));
    }
    if (ec == http::error::header_limit) {
      co_await answer(session, node, 431,
                      error_body("headers_too_large", "request headers too large"), version);
      break;
    }
    if (ec == http::error::body_limit) {
      co_await answer(session, node, 413, error_body("payload_too_large", "request body too large"),
                      version);
      break;
    }
    if (ec && ec.category() == http::make_error_code(http::error::bad_method).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      co_await answer(session, node, 400, error_body("bad_request", "malformed HTTP request"),
                      version);
      break;
    }
    if (ec) break;  // the client went away, or too slow

    session.busy = true;
    auto message = parser.release();
    Request request{.method = std::string(message.method_string()),
                    .path = std::string(message.target()),
                    .headers = {},
                    .body = std::move(message.body()),
                    .principal = {},
                    .request_id = node.name + "-" + std::to_string(++node.requests)};
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    const std::string request_id = request.request_id;
    Response response;
    try {
      response = co_await node.handler(std::move(request));
    } catch (const std::exception&) {
      response = {500, {}, error_body("internal", "internal error")};
    }
    http::response<http::string_body> reply{static_cast<http::status>(response.status),
                                            message.version()};
    reply.set(http::field::server, "onejob");
    reply.set("X-Request-Id", request_id);
    bool typed = false;
    for (auto& [name, value] : response.headers) {
      typed = typed || beast::iequals(name, "Content-Type");
      reply.insert(name, value);
    }
    if (!typed) reply.set(http::field::content_type, "application/json");
    const bool keep_alive = message.keep_alive() && !node.stopping;
    reply.keep_alive(keep_alive);
    reply.body() = std::move(response.body);
    reply.prepare_payload();
    session.stream.expires_after(limits.request_timeout);
    co_await http::async_write(session.stream, reply, asio::redirect_error(use_async, ec));
    session.busy = false;
    if (ec || !keep_alive) break;
  }
  error_code ignored;
  session.stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  session.stream.socket().close(ignored);
  node.sessions.erase(where);
  --open;
}

Async<void> HttpServer::Impl::accept_loop() {
  std::size_t next = 0;
  while (!stopping) {
    Node& node = *nodes[next++ % nodes.size()];
    error_code ec;
    auto socket = co_await acceptor.async_accept(node.io, asio::redirect_error(use_async, ec));
    if (stopping || ec == asio::error::operation_aborted) break;
    if (ec) {
      // Out of descriptors, or the peer gave up before the accept: go on after a breath.
      asio::steady_timer pause(accept_io, std::chrono::milliseconds(10));
      co_await pause.async_wait(asio::redirect_error(use_async, ec));
      continue;
    }
    if (open.load() >= limits.max_connections) {
      error_code ignored;
      socket.close(ignored);
      continue;
    }
    ++open;
    asio::co_spawn(node.io, serve(node, tcp::socket(std::move(socket))), asio::detached);
  }
}

HttpServer::HttpServer(boost::asio::io_context& accept_io, const std::string& address,
                       unsigned short port, HttpLimits limits)
    : impl_(std::make_unique<Impl>(accept_io, address, port, limits)) {}

HttpServer::~HttpServer() = default;

unsigned short HttpServer::port() const { return impl_->acceptor.local_endpoint().port(); }

void HttpServer::add_node(boost::asio::io_context& io, std::string name, HttpHandler handler) {
  impl_->nodes.push_back(
      std::make_unique<Node>(Node{io, std::move(name), std::move(handler), {}, 0, false}));
}

void HttpServer::start() {
  ONEJOB_ASSERT(!impl_->nodes.empty(), "HttpServer::start needs a node to hand connections to");
  asio::co_spawn(impl_->accept_io, impl_->accept_loop(), asio::detached);
}

void HttpServer::shutdown() {
  impl_->stopping = true;
  asio::post(impl_->accept_io, [impl = impl_.get()] {
    error_code ignored;
    impl->acceptor.close(ignored);
  });
  for (auto& node : impl_->nodes) {
    asio::post(node->io, [node = node.get()] {
      node->stopping = true;
      for (Session* session : node->sessions) {
        if (!session->busy) session->stream.cancel();
      }
    });
  }
}

int HttpServer::open_connections() const { return impl_->open.load(); }

}  // namespace onejob
