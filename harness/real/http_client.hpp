#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "system/service/http.hpp"

namespace onejob::real {

// What one exchange came to: an answer, or why there was none.
struct HttpReply {
  int status = 0;  // 0: no answer (see failure)
  Headers headers;
  std::string body;
  std::string failure;
  bool answered() const { return status != 0; }
};

// One keep-alive HTTP/1.1 connection to a server, used by one thread at a time; every call
// blocks until its answer, its failure, or its timeout. After a failure the next call opens a
// new connection. For tests, benchmarks and probes: a real client over a real socket.
class HttpConnection {
 public:
  HttpConnection(std::string host, std::string port);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  HttpReply send(const std::string& method, const std::string& target, const Headers& headers,
                 const std::string& body,
                 std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // A header field sent with every request on this connection from now on, after the call's own
  // (replacing one set before under the same name).
  void set_header(const std::string& name, const std::string& value);

  // Bytes exactly as given, then whatever comes back until the server closes or `timeout`:
  // for requests no well-behaved client would send. Uses a connection of its own.
  static std::string raw(const std::string& host, const std::string& port, const std::string& bytes,
                         std::chrono::milliseconds timeout);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace onejob::real
