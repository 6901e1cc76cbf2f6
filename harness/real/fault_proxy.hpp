#pragma once
// A fault-injecting HTTP proxy between clients and a target, both on loopback. Each request it
// receives takes the next rule of its script (then `otherwise`):
//   none           forwarded, and the target's answer passed back;
//   drop_request   never forwarded: the client's connection is closed with no answer;
//   drop_response  forwarded, the target's answer thrown away: the target did the work, the
//                  client sees its connection closed (the reply lost on the way back);
//   duplicate      forwarded twice (a retransmission): the client gets the first answer;
//   delay          forwarded after `delay`.
// A target that does not answer within `target_timeout` leaves the client with no answer too.
// A request carrying the field `kOrderField` is one a sender numbered: the proxy takes the field
// off before forwarding, and tells its `Placed` callback once the request's place in the
// target's order is fixed (the target answered or failed to, or the request was dropped, or a
// delay that lets later requests overtake it began), so the sender can hold later requests until
// then.
// A thread per client connection: for tests and probes, not for load.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace onejob::real {

enum class ProxyFault { none, drop_request, drop_response, duplicate, delay };
std::string_view to_string(ProxyFault fault);

struct ProxyRule {
  ProxyFault fault = ProxyFault::none;
  std::chrono::milliseconds delay{0};
  // A delay that reorders: the request gives up its place when the delay begins, and later
  // requests may reach the target first. Otherwise a delayed request keeps its place.
  bool overtaken = false;
};

// The header field that numbers a sender's request (see above); never forwarded.
inline constexpr std::string_view kOrderField = "Onejob-Order";

// What the proxy did with one request: the rule it applied and what the target answered (0: it
// did not, or was not asked).
struct ProxyEvent {
  std::uint64_t number = 0;  // 1-based, in arrival order
  std::string method;
  std::string target;
  ProxyFault fault = ProxyFault::none;
  int status = 0;
};

class FaultProxy {
 public:
  // Decides the rule for request `number` (1-based, arrival order) when it arrives; called on
  // the connection's thread, one call at a time.
  using Chooser = std::function<ProxyRule(std::uint64_t number)>;
  // Told the `kOrderField` value of a request whose place is fixed; called on the connection's
  // thread, once per time the request is sent.
  using Placed = std::function<void(std::string_view order)>;

  FaultProxy(std::string target_host, std::string target_port, std::vector<ProxyRule> script,
             ProxyRule otherwise = {},
             std::chrono::milliseconds target_timeout = std::chrono::seconds(10));
  FaultProxy(std::string target_host, std::string target_port, Chooser choose,
             std::chrono::milliseconds target_timeout = std::chrono::seconds(10),
             Placed placed = {});
  ~FaultProxy();  // closes every connection and joins its threads
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  unsigned short port() const;
  std::string port_text() const;
  std::vector<ProxyEvent> events() const;  // thread-safe

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace onejob::real
