// libFuzzer target: any bytes as the body of POST /jobs and POST /jobs/{id}/attempts, through
// the real ApiHandler on the embedded store. Every request must be answered with a status (no
// exception out of the handler, no crash), a 2xx only for a body that is valid JSON, and the
// provider contract's validators must take any bytes as an output.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "system/adapters/memory_store.hpp"
#include "system/service/api_handler.hpp"
#include "system/service/canonical_json.hpp"
#include "system/service/contract.hpp"
#include "system/service/system_context.hpp"

#include "harness/sim/rng.hpp"
#include "harness/sim/sim_loop.hpp"

namespace {

using namespace onejob;

class NoProviders final : public ProviderClient {
 public:
  Async<ProviderReply> call(ProviderCall) override {
    co_return ProviderReply{ProviderReply::Kind::rejected, {}, "no providers here"};
  }
  Async<ProviderStatus> status(std::string, std::string) override {
    co_return ProviderStatus{ProviderStatus::Kind::not_found, {}, {}};
  }
};

class NoEvents final : public EventSink {
 public:
  void emit(Event) override {}
};

Response handle(sim::SimLoop& loop, ApiHandler& api, Request request) {
  Response response{0, {}, {}};
  boost::asio::co_spawn(
      loop.io(),
      [&api, &response, request = std::move(request)]() mutable -> Async<void> {
        response = co_await api.handle(std::move(request));
      },
      boost::asio::detached);
  loop.run();
  return response;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  sim::SimLoop loop(sim::Rng(1));
  MemoryStore store;
  NoProviders providers;
  NoEvents events;
  SystemConfig config;
  for (const char* name : {"alpha", "beta"}) {
    ProviderProfile profile;
    profile.name = name;
    config.providers.push_back(profile);
  }
  sim::RngRandom random{sim::Rng{1}};
  SystemContext context{store, providers, loop, loop, events, config, random};
  ApiHandler api(context);
  const Response created = handle(loop, api,
                                  Request{.method = "POST",
                                          .path = "/jobs",
                                          .headers = {{"Idempotency-Key", "fuzz"}},
                                          .body = body,
                                          .principal = "alice",
                                          .request_id = "r1"});
  const bool json = std::holds_alternative<CanonicalJson>(canonicalize_json(body));
  if (created.status == 0 || (created.status < 300 && !json)) std::abort();
  const Response retried = handle(loop, api,
                                  Request{.method = "POST",
                                          .path = "/jobs/1/attempts",
                                          .headers = {},
                                          .body = body,
                                          .principal = "alice",
                                          .request_id = "r2"});
  if (retried.status == 0) std::abort();
  for (const char* operation : {"classify", "summarize", "extract"}) {
    (void)validate_output(operation, R"({"text":"x","fields":["total"]})", body);
    (void)validate_input(operation, body);
  }
  return 0;
}
