#pragma once
// A byte-stream (TCP) proxy on loopback between a target and a server it depends on (its
// database), for the faults a scenario states on that link. The link carries a protocol the
// proxy does not read, so a fault is judged per chunk of bytes as it arrives, by direction:
//   pass   forwarded (after the rule's delay);
//   cut    the message is lost: the proxy closes both connections, so the server sees its
//          client vanish (an uncommitted transaction rolls back) and the target sees its
//          connection fail — a request lost before the server, or a reply lost after it acted.
// A thread per connection: for probes and tests, not for load.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace onejob::real {

enum class StreamDirection { to_server, to_client };

struct StreamRule {
  bool cut = false;
  std::chrono::milliseconds delay{0};
};

class StreamProxy {
 public:
  // Decides the rule for a chunk arriving now in `direction`; called on the connections'
  // threads, possibly at once.
  using Chooser = std::function<StreamRule(StreamDirection direction)>;

  // Listens on 127.0.0.1 (a free port) and connects each connection to server_host:server_port,
  // or to the Unix socket at server_host when it is a path (server_port unused); throws
  // std::runtime_error when it cannot listen.
  StreamProxy(std::string server_host, std::string server_port, Chooser choose);
  ~StreamProxy();  // closes every connection and joins its threads
  StreamProxy(const StreamProxy&) = delete;
  StreamProxy& operator=(const StreamProxy&) = delete;

  unsigned short port() const;
  std::uint64_t connections() const;  // accepted so far
  std::uint64_t cuts() const;         // connections closed by a cut

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace onejob::real
