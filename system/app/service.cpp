#include "system/app/service.hpp"

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <atomic>
#include <mutex>
#include <ostream>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "system/adapters/metrics.hpp"
#include "system/adapters/real_time.hpp"
#include "system/service/api_handler.hpp"
#include "system/service/certifier.hpp"
#include "system/service/doorbell.hpp"
#include "system/service/reconciler.hpp"
#include "system/service/ringing_store.hpp"
#include "system/service/worker.hpp"

namespace onejob {
namespace {

namespace asio = boost::asio;
using SteadyTime = std::chrono::steady_clock;

Response json_answer(int status, std::string body) { return Response{status, {}, std::move(body)}; }

}  // namespace

// One thread of the service and everything it uses alone. Other threads touch only `io` (to
// post to it and stop it) and `finished`.
struct ServiceNode {
  enum class Role { api, worker, reconciler };

  ServiceNode(std::string node_name, Role node_role, std::ostream& log, std::mutex& log_mutex,
              Metrics& metrics, bool logs)
      : name(std::move(node_name)), role(node_role), events(log, log_mutex, name, &metrics) {
    events.set_enabled(logs);
  }

  std::string name;
  Role role;
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> busy = asio::make_work_guard(io);
  AsioTimer timer{io};
  SystemRandom random;
  JsonLogSink events;
  std::unique_ptr<HttpProviderClient> providers;
  std::unique_ptr<Store> connection;
  std::unique_ptr<Store> store;  // the connection, ringing the bells after writes
  std::unique_ptr<Doorbell> work;
  std::unique_ptr<SystemContext> context;
  std::unique_ptr<ApiHandler> api;
  std::unique_ptr<Worker> worker;
  std::unique_ptr<Reconciler> reconciler;
  std::unique_ptr<Certifier> certifier;
  bool stopping = false;                  // on the node's thread
  std::atomic<bool> worker_done = false;  // its Worker::run returned
  std::atomic<bool> finished = false;
  std::thread thread;
};

struct Service::Impl {
  Impl(ServiceOptions options_in, std::ostream& log_in)
      : options(std::move(options_in)),
        log(log_in),
        server(accept_io, options.address, options.port, options.limits) {}

  ServiceOptions options;
  std::ostream& log;
  std::mutex log_mutex;
  WallClock clock;
  Metrics metrics;
  Doorbells bells;  // every worker's and the reconciler's Doorbell
  // The nodes (their io_contexts) before accept_io: destroyed after its pending accept, whose
  // socket belongs to a node's io_context.
  std::vector<std::unique_ptr<ServiceNode>> nodes;
  // options.share_rings's bell, if any; destroyed before the nodes, whose doorbells it rings
  // (their stores ring it in turn, but only on the node threads, which stop() has joined).
  std::unique_ptr<WorkBell> shared_rings;
  WorkBell& rings() { return shared_rings ? *shared_rings : bells; }
  asio::io_context accept_io{1};
  asio::executor_work_guard<asio::io_context::executor_type> accepting =
      asio::make_work_guard(accept_io);
  HttpServer server;
  std::thread accept_thread;
  bool started = false;
  bool stopped = false;

  ServiceNode& add_node(std::string name, ServiceNode::Role role);
  Async<Response> handle(ServiceNode& node, Request request);
  Async<void> certify(ServiceNode& node);
  void report_end(ServiceNode& node, std::exception_ptr error);
};

ServiceNode& Service::Impl::add_node(std::string name, ServiceNode::Role role) {
  auto node = std::make_unique<ServiceNode>(std::move(name), role, log, log_mutex, metrics,
                                            options.json_logs);
  node->providers = std::make_unique<HttpProviderClient>(node->io, clock, options.endpoints);
  node->connection = options.connect(node->events);
  node->store = std::make_unique<RingingStore>(*node->connection, rings());
  if (role == ServiceNode::Role::worker || role == ServiceNode::Role::reconciler) {
    node->work = std::make_unique<Doorbell>(node->timer);
    bells.add(*node->work);
  }
  node->context = std::make_unique<SystemContext>(
      SystemContext{*node->store, *node->providers, clock, node->timer, node->events,
                    options.system, node->random, node->work.get()});
  nodes.push_back(std::move(node));
  return *nodes.back();
}

Async<Response> Service::Impl::handle(ServiceNode& node, Request request) {
  const auto started_at = SteadyTime::now();
  std::string route;
  Response response;
  if (request.path == "/healthz" || request.path == "/readyz" || request.path == "/metrics") {
    route = request.path.substr(1);
    if (request.method != "GET") {
      response = json_answer(405, R"({"error":"method_not_allowed","message":"use GET"})");
    } else if (route == "healthz") {
      response = json_answer(200, R"({"status":"ok"})");
    } else if (route == "metrics") {
      response = {200, {{"Content-Type", "text/plain; version=0.0.4"}}, metrics.render()};
    } else {
      bool ready = true;
      try {
        co_await node.store->find_job(std::string(), 0);
      } catch (const StoreError&) {
        ready = false;
      }
      response = ready ? json_answer(200, R"({"status":"ready"})")
                       : json_answer(503, R"({"error":"store_unavailable","message":"the store )"
                                          R"(does not answer"})");
    }
  } else {
    route = api_route_name(request.path);
    std::optional<Principal> principal;
    if (auto authorization = find_header(request.headers, "Authorization")) {
      principal = options.tokens.authenticate(*authorization);
    }
    // Only a cancel itself needs an operator: another method on its path is the API's 405.
    if (principal && route == "cancel_attempt" && request.method == "POST" &&
        !principal->is_operator) {
      response = json_answer(
          403,
          R"({"error":"operator_only","message":"cancelling an attempt needs an operator token"})");
    } else {
      // Without a valid token the principal stays empty: the API answers 401 and reports it.
      if (principal) request.principal = principal->name;
      response = co_await node.api->handle(std::move(request));
      if (response.status == 401) response.headers.emplace_back("WWW-Authenticate", "Bearer");
    }
  }
  metrics.observe_request_seconds(
      route, std::chrono::duration<double>(SteadyTime::now() - started_at).count());
  co_return response;
}

Async<void> Service::Impl::certify(ServiceNode& node) {
  while (!node.stopping) {
    for (const auto& name : options.certify) {
      if (const ProviderProfile* profile = options.system.find_provider(name)) {
        try {
          co_await node.certifier->certify(*profile);
        } catch (const StoreError&) {
          // Recorded nowhere: the next round tries again; failover waits for a record.
        }
      }
    }
    co_await node.timer.sleep_for(options.recertify_period);
  }
}

void Service::Impl::report_end(ServiceNode& node, std::exception_ptr error) {
  if (node.stopping && !error) return;
  Event ended("service.loop_ended");
  ended.with("node", node.name).with("reason", describe_exception(error));
  node.events.emit(std::move(ended));
}

Service::Service(ServiceOptions options, std::ostream& log)
    : impl_(std::make_unique<Impl>(std::move(options), log)) {
  auto& impl = *impl_;
  impl.options.system.validate();
  if (impl.options.share_rings) impl.shared_rings = impl.options.share_rings(impl.bells);
  for (int i = 0; i < impl.options.api_threads; ++i) {
    auto& node = impl.add_node("api-" + std::to_string(i + 1), ServiceNode::Role::api);
    node.api = std::make_unique<ApiHandler>(*node.context);
    impl.server.add_node(node.io, node.name, [&impl, &node](Request request) {
      return impl.handle(node, std::move(request));
    });
  }
  for (int i = 0; i < impl.options.workers; ++i) {
    auto& node = impl.add_node("worker-" + std::to_string(i + 1), ServiceNode::Role::worker);
    node.worker = std::make_unique<Worker>(*node.context, node.name);
  }
  auto& node = impl.add_node("reconciler", ServiceNode::Role::reconciler);
  node.reconciler = std::make_unique<Reconciler>(*node.context);
  node.certifier = std::make_unique<Certifier>(*node.context);
}

Service::~Service() {
  if (impl_->started && !impl_->stopped) stop();
}

unsigned short Service::port() const { return impl_->server.port(); }

void Service::start() {
  auto& impl = *impl_;
  ONEJOB_ASSERT(!impl.started, "Service::start once");
  impl.started = true;
  for (auto& each : impl.nodes) {
    ServiceNode& node = *each;
    const auto watch = [&impl, &node](std::exception_ptr error) { impl.report_end(node, error); };
    if (node.worker) {
      asio::co_spawn(node.io, node.worker->run(), [&impl, &node](std::exception_ptr error) {
        impl.report_end(node, error);
        node.worker_done = true;
      });
    }
    if (node.reconciler) {
      asio::co_spawn(node.io, node.reconciler->run(), watch);
      asio::co_spawn(node.io, impl.certify(node), watch);
    }
    node.thread = std::thread([&node, &impl] {
      try {
        node.io.run();
      } catch (...) {
        // Out of a coroutine the node spawned: the node is down, as its process would be.
        impl.report_end(node, std::current_exception());
      }
      node.finished = true;
    });
  }
  impl.server.start();
  impl.accept_thread = std::thread([&impl] { impl.accept_io.run(); });
}

bool Service::stop() {
  auto& impl = *impl_;
  ONEJOB_ASSERT(impl.started && !impl.stopped, "Service::stop once, after start");
  impl.stopped = true;
  const auto give_up = SteadyTime::now() + impl.options.shutdown_grace;
  impl.server.shutdown();
  while (impl.server.open_connections() > 0 && SteadyTime::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  bool in_time = impl.server.open_connections() == 0;
  // The loops stop at a safe point: workers claim nothing more and end once what they run has
  // settled or been left to its lease (another process's reconciler takes it over); the
  // reconciler and the certifier keep nothing between two steps, so they simply end.
  for (auto& node : impl.nodes) {
    asio::post(node->io, [&node = *node] {
      node.stopping = true;
      if (node.worker) node.worker->stop();
      if (node.work) node.work->ring();
      if (node.reconciler) node.reconciler->stop();
    });
  }
  const auto workers_done = [&impl] {
    for (auto& node : impl.nodes) {
      if (node->worker && !node->worker_done && !node->finished) return false;
    }
    return true;
  };
  while (!workers_done() && SteadyTime::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  in_time = in_time && workers_done();
  for (auto& node : impl.nodes) node->io.stop();
  for (auto& node : impl.nodes) node->thread.join();
  impl.accepting.reset();
  impl.accept_io.stop();
  impl.accept_thread.join();
  return in_time;
}

}  // namespace onejob
