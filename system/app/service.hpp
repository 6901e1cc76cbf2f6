#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "system/adapters/http_provider.hpp"
#include "system/adapters/http_server.hpp"
#include "system/ports/store.hpp"
#include "system/service/system_context.hpp"
#include "system/service/tokens.hpp"

namespace onejob {

// Everything `onejob serve` runs with.
struct ServiceOptions {
  std::string address = "127.0.0.1";
  unsigned short port = 8080;  // 0: any free port
  int api_threads = 2;         // API nodes, each with its own thread and store connection
  int workers = 2;             // worker nodes, likewise
  HttpLimits limits;
  SystemConfig system;  // policy, provider profiles, defects (none in production)
  std::vector<HttpProviderEndpoint> endpoints;  // one per provider profile
  // Providers the certifier checks at start and then every recertify_period.
  std::vector<std::string> certify;
  Duration recertify_period = std::chrono::hours(1);
  TokenTable tokens;
  // How long a graceful stop waits for requests in flight and for the loops to reach a safe
  // point before it cuts them off.
  std::chrono::milliseconds shutdown_grace{10'000};
  bool json_logs = true;  // one JSON line per event on the log stream
  // Opens one store connection; the store's notices go to `events`. Called once per node, on
  // the thread that builds the service. Throws StoreError when the store cannot be reached.
  std::function<std::unique_ptr<Store>(EventSink& events)> connect;
  // Carries work rings to the other processes sharing the store (PostgreSQL's LISTEN/NOTIFY):
  // given this process's own bell, returns the bell its writes ring, which rings `local` and
  // tells the others, and rings `local` when another process tells it. Empty: rings stay in
  // this process (the memory store has no other).
  std::function<std::unique_ptr<WorkBell>(WorkBell& local)> share_rings;
};

// The reference system as a real HTTP service: API nodes behind an HttpServer, workers, and one
// reconciler that also certifies providers, every one on a thread of its own with its own
// io_context, timer, randomness, provider client and store connection, on real time
// (WallClock, so instants in a shared database mean the same in every process and after a
// restart). The same service code as the simulation runs; only the adapters differ.
//
// Besides the job API (api_handler.hpp), every node answers:
//   GET /healthz   200 while the process serves
//   GET /readyz    200 when its store connection answers (a PostgreSQL connection is only
//                  opened on a migrated schema), 503 otherwise
//   GET /metrics   Prometheus text format
// The job API needs `Authorization: Bearer <token>`, checked against the token table; the
// token's principal owns what it creates. Cancelling an attempt needs an operator token.
class Service {
 public:
  // Builds every node and binds the listening socket. Throws std::system_error (the address)
  // or StoreError (a connection).
  Service(ServiceOptions options, std::ostream& log);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  unsigned short port() const;

  // Starts every thread: from now on requests are answered and work is done.
  void start();

  // A graceful stop, from any thread but the service's own: stop accepting, close idle
  // connections, answer requests in flight (each with Connection: close), stop the loops at a
  // safe point (attempts in flight are left to their leases), all within shutdown_grace; what
  // still runs then is cut off. Returns true when everything finished within the grace.
  bool stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace onejob
