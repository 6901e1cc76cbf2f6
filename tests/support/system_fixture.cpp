#include "tests/support/system_fixture.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "system/service/certifier.hpp"
#include "system/service/deadline.hpp"
#include "system/service/reconciler.hpp"
#include "system/service/worker.hpp"

namespace onejob::test {

SystemFixture::SystemFixture()
    : loop(sim::Rng(7)),
      providers(loop),
      context{store, providers, loop, loop, events, config, random},
      api(context) {
  config.policy.attempt_deadline = std::chrono::seconds(10);
  config.policy.lease = std::chrono::seconds(20);
  config.policy.reconcile_period = std::chrono::seconds(5);
  config.policy.worker_poll = std::chrono::milliseconds(100);
  for (const char* name : {"alpha", "beta", "gamma"}) config.providers.push_back({.name = name});
  config.validate();
}

SystemFixture::~SystemFixture() = default;

void SystemFixture::run(Async<void> operation) {
  bool done = false;
  std::exception_ptr error;
  boost::asio::co_spawn(loop.io(), std::move(operation), [&](std::exception_ptr e) {
    error = e;
    done = true;
  });
  run_until_done(done);
  if (error) std::rethrow_exception(error);
}

void SystemFixture::run_until_done(const bool& done) {
  // Time jumps only to instants where something is queued, and stops as soon as the operation
  // completes, so tests can reason about exact instants.
  const Instant limit = loop.now() + std::chrono::hours(24);
  loop.run(loop.now());
  while (!done) {
    const auto next = loop.next_instant();
    if (!next || *next > limit) {
      throw std::runtime_error("operation did not complete within a simulated day");
    }
    loop.run(*next);
  }
}

Request make_request(std::string method, std::string path, std::string body, std::string owner,
                     std::optional<std::string> key) {
  Request request{.method = std::move(method),
                  .path = std::move(path),
                  .headers = {},
                  .body = std::move(body),
                  .principal = std::move(owner),
                  .request_id = "r"};
  if (key) request.headers.emplace_back("Idempotency-Key", *key);
  return request;
}

Response SystemFixture::request(std::string method, std::string path, std::string body,
                                std::string owner, std::optional<std::string> key) {
  return run(api.handle(make_request(std::move(method), std::move(path), std::move(body),
                                     std::move(owner), std::move(key))));
}

Response SystemFixture::create(std::string key, std::string text, std::string provider,
                               std::string failover_json, std::string owner) {
  const auto body = nlohmann::json{{"operation", "classify"},
                                   {"provider", provider},
                                   {"failover", nlohmann::json::parse(failover_json)},
                                   {"input", {{"text", text}}}};
  return request("POST", "/jobs", body.dump(), std::move(owner), std::move(key));
}

bool SystemFixture::certify(const std::string& provider) {
  Certifier certifier(context);
  return run(certifier.certify(*config.find_provider(provider))).passed;
}

void SystemFixture::start_worker(Worker& worker) {
  boost::asio::co_spawn(loop.io(), worker.run(), rethrow_error);
}

void SystemFixture::start_reconciler(Reconciler& reconciler) {
  boost::asio::co_spawn(loop.io(), reconciler.run(), rethrow_error);
}

std::optional<Job> SystemFixture::job(JobId id) { return run(store.load_job(id)); }

std::vector<Attempt> SystemFixture::attempts(JobId id) { return run(store.list_attempts(id)); }

std::int64_t json_int(const Response& response, const std::string& field) {
  const auto body = nlohmann::json::parse(response.body);
  return body.contains(field) && body[field].is_number_integer() ? body[field].get<std::int64_t>()
                                                                 : 0;
}

std::string json_string(const Response& response, const std::string& field) {
  const auto body = nlohmann::json::parse(response.body);
  return body.contains(field) && body[field].is_string() ? body[field].get<std::string>() : "";
}

}  // namespace onejob::test
