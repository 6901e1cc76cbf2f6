#include "harness/real/stream_proxy.hpp"

#include <utility>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace onejob::real {
namespace {

// Writes all of `data` to `fd`; false when the peer is gone.
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t written = ::send(fd, data, size, MSG_NOSIGNAL);
    if (written <= 0) return false;
    data += written;
    size -= static_cast<std::size_t>(written);
  }
  return true;
}

// A TCP connection to host:port, or to the Unix socket at `host` when it is a path.
int connect_to(const std::string& host, const std::string& port) {
  if (host.starts_with("/")) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (host.size() >= sizeof address.sun_path) return -1;
    host.copy(address.sun_path, host.size());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* at = found; at && fd < 0; at = at->ai_next) {
    fd = ::socket(at->ai_family, at->ai_socktype | SOCK_CLOEXEC, at->ai_protocol);
    if (fd >= 0 && ::connect(fd, at->ai_addr, at->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

}  // namespace

struct StreamProxy::Impl {
  std::string host;
  std::string port;
  Chooser choose;
  int listener = -1;
  int wake[2] = {-1, -1};  // written once at shutdown: every poll wakes
  unsigned short bound = 0;
  std::atomic<std::uint64_t> accepted = 0;
  std::atomic<std::uint64_t> cut = 0;
  std::mutex mutex;
  std::vector<std::thread> threads;
  std::thread accept_thread;

  void accept_loop() {
    for (;;) {
      pollfd fds[2] = {{listener, POLLIN, 0}, {wake[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) continue;
      if (fds[1].revents != 0) return;
      const int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      ++accepted;
      std::lock_guard lock(mutex);
      threads.emplace_back([this, client] { relay(client); });
    }
  }

  // Relays one connection until either end closes it, a cut, or shutdown.
  void relay(int client) {
    const int server = connect_to(host, port);
    if (server < 0) {
      ::close(client);
      return;
    }
    std::vector<char> buffer(64 * 1024);
    for (bool open = true; open;) {
      pollfd fds[3] = {{client, POLLIN, 0}, {server, POLLIN, 0}, {wake[0], POLLIN, 0}};
      if (::poll(fds, 3, -1) < 0) continue;
      if (fds[2].revents != 0) break;
      for (int side = 0; side < 2 && open; ++side) {
        if (fds[side].revents == 0) continue;
        const int from = side == 0 ? client : server;
        const int to = side == 0 ? server : client;
        const ssize_t got = ::recv(from, buffer.data(), buffer.size(), 0);
        if (got <= 0) {
          open = false;
          break;
        }
        const StreamRule rule =
            choose(side == 0 ? StreamDirection::to_server : StreamDirection::to_client);
        if (rule.cut) {
          ++cut;
          open = false;
          break;
        }
        if (rule.delay.count() > 0) std::this_thread::sleep_for(rule.delay);
        open = write_all(to, buffer.data(), static_cast<std::size_t>(got));
      }
    }
    ::shutdown(client, SHUT_RDWR);
    ::shutdown(server, SHUT_RDWR);
    ::close(client);
    ::close(server);
  }
};

StreamProxy::StreamProxy(std::string server_host, std::string server_port, Chooser choose)
    : impl_(std::make_unique<Impl>()) {
  impl_->host = std::move(server_host);
  impl_->port = std::move(server_port);
  impl_->choose = std::move(choose);
  impl_->listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (impl_->listener < 0 ||
      ::bind(impl_->listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(impl_->listener, 64) != 0 ||
      ::getsockname(impl_->listener, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      ::pipe2(impl_->wake, O_CLOEXEC) != 0) {
    if (impl_->listener >= 0) ::close(impl_->listener);
    throw std::runtime_error("the store proxy cannot listen on 127.0.0.1");
  }
  impl_->bound = ntohs(address.sin_port);
  impl_->accept_thread = std::thread([impl = impl_.get()] { impl->accept_loop(); });
}

StreamProxy::~StreamProxy() {
  const char byte = 0;
  [[maybe_unused]] const auto ignored = ::write(impl_->wake[1], &byte, 1);
  impl_->accept_thread.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(impl_->mutex);
    threads.swap(impl_->threads);
  }
  for (auto& thread : threads) thread.join();
  ::close(impl_->listener);
  ::close(impl_->wake[0]);
  ::close(impl_->wake[1]);
}

unsigned short StreamProxy::port() const { return impl_->bound; }
std::uint64_t StreamProxy::connections() const { return impl_->accepted; }
std::uint64_t StreamProxy::cuts() const { return impl_->cut; }

}  // namespace onejob::real
