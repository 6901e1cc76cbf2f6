// Links system/ alone (no harness, no test framework) and drives it for real: a real
// io_context, the steady clock and an Asio timer, an in-process provider. Proves the reference
// system stands on its own and runs outside the simulator.
#include <utility>

#include <iostream>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "system/adapters/memory_store.hpp"
#include "system/adapters/real_time.hpp"
#include "system/service/api_handler.hpp"
#include "system/service/worker.hpp"

namespace {

using namespace onejob;

// Answers every classify call correctly after a real (short) wait.
class InProcessProvider final : public ProviderClient {
 public:
  explicit InProcessProvider(Timer& timer) : timer_(timer) {}
  Async<ProviderReply> call(ProviderCall) override {
    co_await timer_.sleep_for(std::chrono::milliseconds(5));
    co_return ProviderReply{
        ProviderReply::Kind::answered, R"({"label":"billing","confidence":0.9})", {}};
  }
  Async<ProviderStatus> status(std::string, std::string) override {
    co_return ProviderStatus{ProviderStatus::Kind::not_found, {}, {}};
  }

 private:
  Timer& timer_;
};

class CountingSink final : public EventSink {
 public:
  void emit(Event) override { ++count; }
  int count = 0;
};

Async<int> scenario(ApiHandler& api, Worker& worker, Store& store) {
  Request create{.method = "POST",
                 .path = "/jobs",
                 .headers = {{"Idempotency-Key", "click-1"}},
                 .body = R"({"operation":"classify","provider":"alpha","input":{"text":"x"}})",
                 .principal = "alice",
                 .request_id = "1"};
  const Response first = co_await api.handle(create);
  const Response second = co_await api.handle(create);
  if (first.status != 201 || second.status != 200 || first.body != second.body) co_return 1;
  if (!co_await worker.run_once()) co_return 2;
  auto job = co_await store.load_job(1);
  if (!job || job->status != JobStatus::succeeded) co_return 3;
  co_return 0;
}

}  // namespace

int main() {
  boost::asio::io_context io;
  MemoryStore store;
  SteadyClock clock;
  AsioTimer timer(io);
  InProcessProvider provider(timer);
  CountingSink events;
  SystemConfig config;
  config.providers.push_back({.name = "alpha"});
  config.validate();
  SystemRandom random;
  SystemContext context{store, provider, clock, timer, events, config, random};
  ApiHandler api(context);
  Worker worker(context, "worker-1");
  int code = -1;
  // Stop as soon as the scenario is done: the attempt's deadline timer would otherwise keep the
  // io_context busy until it expires.
  boost::asio::co_spawn(io, scenario(api, worker, store), [&](std::exception_ptr error, int r) {
    code = error ? 4 : r;
    io.stop();
  });
  io.run();
  std::cout << (code == 0 ? "system/ ran on its own: " : "system/ failed step ")
            << (code == 0 ? std::to_string(events.count) + " events" : std::to_string(code))
            << "\n";
  return code;
}
