#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "system/ports/async.hpp"
#include "system/service/api_handler.hpp"
#include "system/service/http.hpp"

namespace boost::asio {
class io_context;
}

namespace onejob {

// What the server enforces at the socket, before any handler runs.
struct HttpLimits {
  std::size_t header_bytes = 16 * 1024;    // request line and headers; beyond: 431, then close
  std::size_t body_bytes = kMaxBodyBytes;  // beyond: 413, then close
  // A keep-alive connection with no request under way is closed after this long.
  std::chrono::milliseconds idle_timeout{30'000};
  // A request's header and body must both have arrived this long after its first byte could
  // be read (slowloris), and an answer must be written within it; otherwise the connection is
  // closed.
  std::chrono::milliseconds request_timeout{10'000};
  // Connections open at once; one more is closed as soon as it is accepted.
  int max_connections = 512;
};

// Answers one request on the io_context of the node it arrived on.
using HttpHandler = std::function<Async<Response>(Request)>;

// An HTTP/1.1 server (Boost.Beast) in front of request handlers: keep-alive, pipelining (one
// request at a time per connection, in order), Expect: 100-continue, and HttpLimits. Every
// accepted connection is handed to one node, round robin, and lives on that node's io_context
// and thread; the handler sees a Request (method, target, headers, body, an X-Request-Id of
// the server's own making) and never the socket. The body of an answer the server gives by
// itself (400, 413, 431) is JSON, as the API's are.
class HttpServer {
 public:
  // Binds and listens on address:port at once (port 0: any free port; see port()). Throws
  // std::system_error when it cannot. REQUIRES: accept_io outlives the server.
  HttpServer(boost::asio::io_context& accept_io, const std::string& address, unsigned short port,
             HttpLimits limits);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  unsigned short port() const;

  // A node that takes connections: its io_context (run by its own thread) and its handler.
  // `name` prefixes the request ids it makes. Call before start().
  // REQUIRES: io outlives the server.
  void add_node(boost::asio::io_context& io, std::string name, HttpHandler handler);

  // Begins accepting, on accept_io.
  void start();

  // A graceful stop, callable from any thread: no new connection is accepted; a connection
  // between requests is closed; a request under way is answered with `Connection: close`.
  // Returns at once; open_connections() tells when the last one has gone.
  void shutdown();

  int open_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace onejob
