#include "harness/real/provider_stub.hpp"

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <map>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "system/adapters/http_server.hpp"

#include "harness/sim/sim_provider.hpp"

namespace onejob::real {
namespace {

namespace asio = boost::asio;
using nlohmann::json;

Response answer(int status, const json& body) { return Response{status, {}, body.dump()}; }

}  // namespace

struct ProviderStub::Impl {
  Impl(std::string name_in, std::vector<StubCall> script_in, StubCall otherwise_in,
       unsigned short port, std::vector<std::string> plausible_on_in)
      : name(std::move(name_in)),
        script(std::move(script_in)),
        otherwise(otherwise_in),
        plausible_on(std::move(plausible_on_in)),
        server(accept_io, "127.0.0.1", port, HttpLimits{}) {}

  // What the stub knows of one key.
  struct Record {
    bool done = false;
    bool hangs = false;
    int status = 200;
    json body;
  };

  std::string name;
  std::vector<StubCall> script;
  StubCall otherwise;
  std::vector<std::string> plausible_on;  // operations answered plausible past the script
  // `io` first: destroyed last, after accept_io's pending accept, whose socket is io's.
  asio::io_context io{1};
  asio::io_context accept_io{1};
  asio::executor_work_guard<asio::io_context::executor_type> accepting =
      asio::make_work_guard(accept_io);
  asio::executor_work_guard<asio::io_context::executor_type> working = asio::make_work_guard(io);
  HttpServer server;
  std::thread accept_thread;
  std::thread thread;
  // Touched on `thread` only, but for executions, which tests read from theirs.
  std::map<std::string, Record> records;
  std::size_t scripted = 0;
  mutable std::mutex mutex;
  std::vector<StubExecution> executions;

  Async<Response> handle(Request request);
  Async<Response> call(const Request& request);
};

Async<Response> ProviderStub::Impl::call(const Request& request) {
  const auto key = find_header(request.headers, "Idempotency-Key");
  const auto body = json::parse(request.body, nullptr, false);
  if (!key || key->empty() || !body.is_object() || !body.contains("operation") ||
      !body["operation"].is_string()) {
    co_return answer(400, {{"error", "expected an Idempotency-Key and a JSON call"}});
  }
  asio::steady_timer timer(io);
  if (!records.contains(*key)) {
    const bool certification = body.value("purpose", "") == "certification";
    // As the simulated provider: a certification call gets the provider's default behaviour
    // (a provider that answers plausibly but wrongly does so to certification too) and does not
    // use up the script.
    const bool scripted_call = !certification && scripted < script.size();
    StubCall behaviour = scripted_call ? script[scripted++] : otherwise;
    if (!scripted_call) {
      behaviour.outcome = sim::outcome_past_script(behaviour.outcome, plausible_on,
                                                   body["operation"].get<std::string>());
    }
    StubExecution execution{.key = *key,
                            .purpose = certification ? "certification" : "attempt",
                            .operation = body["operation"].get<std::string>(),
                            .input = body.contains("input") ? body["input"].dump() : "null",
                            .output = {},
                            .outcome = behaviour.outcome,
                            .started = std::chrono::steady_clock::now()};
    Record& record = records[*key];
    if (behaviour.outcome == ProviderOutcome::error) {
      record.status = 503;
      record.body = {{"error", "model overloaded"}};
    } else if (behaviour.outcome == ProviderOutcome::garbled_refusal ||
               behaviour.outcome == ProviderOutcome::garbled_answer) {
      // As the simulated provider, in what JSON text can carry.
      std::string text = sim::garbled_text(behaviour.outcome, execution.operation,
                                           sim::fnv1a64(name + "/" + *key), /*raw=*/false);
      if (behaviour.outcome == ProviderOutcome::garbled_refusal) {
        record.status = 503;
        record.body = {{"error", std::move(text)}};
      } else {
        execution.output = std::move(text);
        record.body = {{"output", execution.output}};
      }
    } else if (behaviour.outcome == ProviderOutcome::hang) {
      record.hangs = true;
    } else {
      execution.output = sim::provider_output(behaviour.outcome, execution.operation,
                                              execution.input, name + "/" + *key);
      record.body = {{"output", execution.output}};
    }
    std::size_t index = 0;
    {
      std::lock_guard lock(mutex);
      index = executions.size();
      executions.push_back(execution);
    }
    timer.expires_after(behaviour.latency);
    co_await timer.async_wait(use_async);
    records[*key].done = true;
    if (!records[*key].hangs) {
      std::lock_guard lock(mutex);
      executions[index].ended = std::chrono::steady_clock::now();
    }
  }
  // A repeat of a key still under way waits for its first answer, as does a hang, forever.
  while (!records[*key].done || records[*key].hangs) {
    timer.expires_after(std::chrono::milliseconds(5));
    co_await timer.async_wait(use_async);
  }
  const Record& record = records[*key];
  co_return answer(record.status, record.body);
}

Async<Response> ProviderStub::Impl::handle(Request request) {
  if (request.method == "POST" && request.path == "/calls") co_return co_await call(request);
  constexpr std::string_view kCalls = "/calls/";
  if (request.method == "GET" && request.path.starts_with(kCalls)) {
    std::string key = request.path.substr(kCalls.size());
    // The client percent-encodes what is not unreserved; provider keys need only ':' back.
    for (std::size_t at; (at = key.find("%3A")) != std::string::npos;) key.replace(at, 3, ":");
    const auto found = records.find(key);
    if (found == records.end()) co_return answer(404, {{"error", "no such call"}});
    const Record& record = found->second;
    if (!record.done || record.hangs) co_return answer(200, {{"status", "running"}});
    if (record.status != 200) {
      co_return answer(200, {{"status", "failed"}, {"reason", record.body.value("error", "")}});
    }
    co_return answer(200, {{"status", "completed"}, {"output", record.body["output"]}});
  }
  co_return answer(404, {{"error", "no such route"}});
}

ProviderStub::ProviderStub(std::string name, std::vector<StubCall> script, StubCall otherwise,
                           unsigned short port, std::vector<std::string> plausible_on)
    : impl_(std::make_unique<Impl>(std::move(name), std::move(script), otherwise, port,
                                   std::move(plausible_on))) {
  impl_->server.add_node(impl_->io, impl_->name, [impl = impl_.get()](Request request) {
    return impl->handle(std::move(request));
  });
  impl_->server.start();
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
  impl_->accept_thread = std::thread([impl = impl_.get()] { impl->accept_io.run(); });
}

ProviderStub::~ProviderStub() {
  impl_->server.shutdown();
  impl_->io.stop();
  impl_->accept_io.stop();
  impl_->thread.join();
  impl_->accept_thread.join();
}

const std::string& ProviderStub::name() const { return impl_->name; }
unsigned short ProviderStub::port() const { return impl_->server.port(); }
std::string ProviderStub::url() const { return "http://127.0.0.1:" + std::to_string(port()); }

std::vector<StubExecution> ProviderStub::executions() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->executions;
}

}  // namespace onejob::real
