#include "harness/real/fault_proxy.hpp"

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <sys/socket.h>

#include "harness/real/http_client.hpp"

namespace onejob::real {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// Fields that describe one hop's connection, not the message: each side sets its own. The
// sender's order number is for the proxy alone.
bool hop_by_hop(std::string_view name) {
  for (const std::string_view hop :
       {std::string_view("host"), std::string_view("connection"),
        std::string_view("content-length"), std::string_view("transfer-encoding"),
        std::string_view("keep-alive"), kOrderField}) {
    if (name.size() == hop.size() &&
        std::equal(name.begin(), name.end(), hop.begin(),
                   [](char a, char b) { return (a | 0x20) == (b | 0x20); })) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view to_string(ProxyFault fault) {
  switch (fault) {
    case ProxyFault::none:
      return "none";
    case ProxyFault::drop_request:
      return "drop_request";
    case ProxyFault::drop_response:
      return "drop_response";
    case ProxyFault::duplicate:
      return "duplicate";
    case ProxyFault::delay:
      return "delay";
  }
  return "none";
}

struct FaultProxy::Impl {
  Impl(std::string host, std::string port, Chooser choose_in, std::chrono::milliseconds timeout,
       Placed placed_in)
      : target_host(std::move(host)),
        target_port(std::move(port)),
        choose(std::move(choose_in)),
        placed(std::move(placed_in)),
        target_timeout(timeout),
        acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {}

  std::string target_host;
  std::string target_port;
  Chooser choose;
  Placed placed;
  std::chrono::milliseconds target_timeout;
  asio::io_context io{1};
  tcp::acceptor acceptor;
  std::atomic<bool> stopping = false;
  std::thread accept_thread;

  mutable std::mutex mutex;  // guards everything below
  std::vector<ProxyEvent> events;
  struct Connection {
    int fd = -1;  // open until its thread has left `connections`
    std::thread thread;
  };
  std::map<std::uint64_t, Connection> connections;
  std::uint64_t accepted = 0;
  std::vector<std::thread> finished;

  // The rule for the next request, and its number.
  std::pair<ProxyRule, std::uint64_t> next_rule(const std::string& method,
                                                const std::string& target) {
    std::lock_guard lock(mutex);
    const std::size_t index = events.size();
    const ProxyRule rule = choose(index + 1);
    events.push_back(ProxyEvent{
        .number = index + 1, .method = method, .target = target, .fault = rule.fault, .status = 0});
    return {rule, index + 1};
  }
  void answered(std::uint64_t number, int status) {
    std::lock_guard lock(mutex);
    events[number - 1].status = status;
  }

  void accept_loop() {
    while (true) {
      tcp::socket socket(io);
      error_code ec;
      acceptor.accept(socket, ec);
      if (stopping) return;
      if (ec) continue;
      std::lock_guard lock(mutex);
      const std::uint64_t id = ++accepted;
      Connection& connection = connections[id];
      connection.fd = socket.native_handle();
      connection.thread =
          std::thread([this, id, s = std::move(socket)]() mutable { serve(id, std::move(s)); });
    }
  }

  void serve(std::uint64_t id, tcp::socket socket) {
    HttpConnection upstream(target_host, target_port);
    beast::flat_buffer buffer;
    while (!stopping) {
      // No limits of the proxy's own: the target's limits (an oversized body's 413) are what a
      // probe observes. 64 MiB bounds the proxy's memory.
      http::request_parser<http::string_body> parser;
      parser.body_limit(std::uint64_t{64} << 20);
      parser.header_limit(std::uint32_t{1} << 20);
      error_code ec;
      http::read(socket, buffer, parser, ec);
      if (ec) break;
      http::request<http::string_body> request = parser.release();
      const std::string method(request.method_string());
      const std::string target(request.target());
      const auto [rule, number] = next_rule(method, target);
      const auto order = request.find(std::string(kOrderField));
      const auto place = [&, tagged = order != request.end() && placed] {
        if (tagged) placed(std::string_view(order->value().data(), order->value().size()));
      };
      if (rule.fault == ProxyFault::drop_request) {
        place();
        break;
      }
      if (rule.fault == ProxyFault::delay) {
        if (rule.overtaken) place();
        std::this_thread::sleep_for(rule.delay);
      }
      Headers headers;
      for (const auto& field : request) {
        if (!hop_by_hop(std::string_view(field.name_string().data(), field.name_string().size()))) {
          headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
        }
      }
      HttpReply reply = upstream.send(method, target, headers, request.body(), target_timeout);
      if (!(rule.fault == ProxyFault::delay && rule.overtaken)) place();
      if (rule.fault == ProxyFault::duplicate) {
        upstream.send(method, target, headers, request.body(), target_timeout);
      }
      answered(number, reply.status);
      if (!reply.answered() || rule.fault == ProxyFault::drop_response) break;
      http::response<http::string_body> response{static_cast<http::status>(reply.status), 11};
      for (const auto& [name, value] : reply.headers) {
        if (!hop_by_hop(name)) response.insert(name, value);
      }
      response.body() = std::move(reply.body);
      response.keep_alive(request.keep_alive());
      response.prepare_payload();
      http::write(socket, response, ec);
      if (ec || !request.keep_alive()) break;
    }
    // Out of `connections` before its descriptor closes, so the destructor never shuts down a
    // descriptor the system has handed to someone else; joined by the destructor from `finished`.
    {
      std::lock_guard lock(mutex);
      const auto found = connections.find(id);
      finished.push_back(std::move(found->second.thread));
      connections.erase(found);
    }
    error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }
};

FaultProxy::FaultProxy(std::string target_host, std::string target_port,
                       std::vector<ProxyRule> script, ProxyRule otherwise,
                       std::chrono::milliseconds target_timeout)
    : FaultProxy(std::move(target_host), std::move(target_port),
                 [script = std::move(script), otherwise](std::uint64_t number) {
                   return number <= script.size() ? script[number - 1] : otherwise;
                 },
                 target_timeout, {}) {}

FaultProxy::FaultProxy(std::string target_host, std::string target_port, Chooser choose,
                       std::chrono::milliseconds target_timeout, Placed placed)
    : impl_(std::make_unique<Impl>(std::move(target_host), std::move(target_port),
                                   std::move(choose), target_timeout, std::move(placed))) {
  impl_->accept_thread = std::thread([impl = impl_.get()] { impl->accept_loop(); });
}

FaultProxy::~FaultProxy() {
  impl_->stopping = true;
  // A blocked accept() is woken by a connection of our own; blocked reads by shutting their
  // sockets down (the descriptors stay open until their threads close them).
  {
    asio::io_context io;
    tcp::socket wake(io);
    error_code ignored;
    wake.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port()), ignored);
  }
  impl_->accept_thread.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(impl_->mutex);
    for (auto& [id, connection] : impl_->connections) ::shutdown(connection.fd, SHUT_RDWR);
  }
  // Each thread moves itself to `finished` as it ends; wait for all of them.
  while (true) {
    {
      std::lock_guard lock(impl_->mutex);
      if (impl_->connections.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  {
    std::lock_guard lock(impl_->mutex);
    threads = std::move(impl_->finished);
  }
  for (auto& thread : threads) thread.join();
}

unsigned short FaultProxy::port() const { return impl_->acceptor.local_endpoint().port(); }
std::string FaultProxy::port_text() const { return std::to_string(port()); }

std::vector<ProxyEvent> FaultProxy::events() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->events;
}

}  // namespace onejob::real
