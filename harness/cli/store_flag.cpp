#include "harness/cli/store_flag.hpp"

#include <atomic>
#include <string_view>

#include <unistd.h>

#include "system/adapters/pg_store.hpp"

namespace onejob::cli {
namespace {

// Unique among the processes sharing one database (fuzz --jobs forks; CI may run several
// commands at once): the process id and a counter. Never part of a trace.
std::string next_schema_name() {
  static std::atomic<unsigned> counter{0};
  return "onejob_run_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
}

std::unique_ptr<PgStore> open_pg(const std::string& uri, const std::string& schema, bool owner) {
  PgStoreOptions options;
  options.connection_string = uri;
  options.schema = schema;
  options.drop_schema_on_close = owner;
  auto store = std::make_unique<PgStore>(std::move(options));
  if (owner) store->migrate();
  return store;
}

std::unique_ptr<PgStore> open_scratch(const std::string& uri) {
  return open_pg(uri, next_schema_name(), true);
}

}  // namespace

std::string StoreChoice::describe() const {
  if (!postgres) return "memory";
  return uri.empty() ? "postgres (libpq defaults)" : "postgres (" + uri + ")";
}

std::optional<std::string> parse_store(const std::string& text, StoreChoice& out) {
  constexpr std::string_view kPrefix = "postgres=";
  if (text == "memory") {
    out = StoreChoice{};
  } else if (text == "postgres") {
    out = StoreChoice{.postgres = true, .uri = {}};
  } else if (text.starts_with(kPrefix) && text.size() > kPrefix.size()) {
    out = StoreChoice{.postgres = true, .uri = text.substr(kPrefix.size())};
  } else {
    return "--store: expected memory, postgres or postgres=URI, found \"" + text + "\"";
  }
  return std::nullopt;
}

std::optional<std::string> store_defect_problem(const StoreChoice& store, const Defects& defects) {
  if (!store.postgres) return std::nullopt;
  for (const auto& info : all_defects()) {
    if (info.in_store && defects.has(info.defect)) {
      return "--defect " + std::string(info.name) +
             ": planted in the embedded store; PostgreSQL's constraints cannot be switched off"
             " (use --store memory)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> check_store(const StoreChoice& store) {
  if (!store.postgres) return std::nullopt;
  try {
    open_scratch(store.uri);
  } catch (const StoreError& error) {
    return "--store " + store.describe() + ": " + error.what();
  }
  return std::nullopt;
}

std::function<std::unique_ptr<Store>()> store_factory(const StoreChoice& store) {
  if (!store.postgres) return {};
  return [uri = store.uri]() -> std::unique_ptr<Store> { return open_scratch(uri); };
}

SharedSchema open_shared_schema(const StoreChoice& store) {
  SharedSchema shared;
  shared.schema = next_schema_name();
  shared.owner = open_pg(store.uri, shared.schema, true);
  shared.connect = [uri = store.uri, schema = shared.schema]() -> std::unique_ptr<Store> {
    return open_pg(uri, schema, false);
  };
  return shared;
}

}  // namespace onejob::cli
