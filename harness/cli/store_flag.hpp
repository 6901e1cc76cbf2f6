#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "system/ports/event_sink.hpp"
#include "system/ports/store.hpp"
#include "system/ports/work_signal.hpp"
#include "system/service/defects.hpp"

namespace CLI {
class App;
}

namespace onejob::cli {

// `--store memory | postgres | postgres=URI`: the store scenarios run on.
struct StoreChoice {
  bool postgres = false;
  // libpq connection string or URI; empty: libpq's defaults and the PG* environment variables.
  std::string uri;
  // PgStore's bounds on a wait (PgStoreOptions): connect, statement, reply.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds{3}};
  std::chrono::milliseconds statement_timeout{std::chrono::seconds{5}};
  std::chrono::milliseconds reply_timeout{std::chrono::seconds{6}};

  std::string describe() const;
};

// `--pg-timeouts CONNECT,STATEMENT,REPLY` (durations: 2s, 500ms, 0 for none): the problem with
// `text`, or nothing after setting the bounds of `out` (empty `text`: the defaults stay).
std::optional<std::string> parse_pg_timeouts(const std::string& text, StoreChoice& out);
// Declares --pg-timeouts on `command`, its text going to `into` (for parse_pg_timeouts).
void add_pg_timeouts_flag(CLI::App& command, std::string& into);

// The problem with `text`, or nothing when it is a store.
std::optional<std::string> parse_store(const std::string& text, StoreChoice& out);

// The problem with running `defects` on `store`: PostgreSQL cannot have the store-level ones.
std::optional<std::string> store_defect_problem(const StoreChoice& store, const Defects& defects);

// Connects once and applies the migrations in a throwaway schema: the problem, when the
// database cannot be used, before any scenario runs.
std::optional<std::string> check_store(const StoreChoice& store);

// What RunOptions::make_store takes: empty for the memory store (the runner's default). For
// PostgreSQL each call lends a PgStore on a migrated schema of its own, emptied with its ids
// restarted at 1, so every scenario and fuzz case starts from empty tables as the memory store
// does; the schema returns to the process's pool when the store is destroyed, and is dropped
// with everything in it when the process's last run lets go of the factory.
std::function<std::unique_ptr<Store>()> store_factory(const StoreChoice& store);

// One fresh schema shared by the connections of a run whose components each need their own:
// `owner` created and migrated it and drops it when destroyed; connect() opens another PgStore
// on it, and connect_reporting(sink) one whose server notices go to `sink` as store.notice.
// REQUIRES: store.postgres. Throws StoreError when the database cannot be used.
struct SharedSchema {
  std::unique_ptr<Store> owner;
  std::string schema;
  std::function<std::unique_ptr<Store>(EventSink*)> connect_reporting;
  std::function<std::unique_ptr<Store>()> connect;
};
SharedSchema open_shared_schema(const StoreChoice& store);

// Connections to a named schema that outlives the process (`onejob serve`): each call opens one
// whose notices go to `events` (when given) and applies the migrations, which is safe when many
// processes start at once and does nothing once they are applied. Throws StoreError.
// REQUIRES: store.postgres.
std::function<std::unique_ptr<Store>(EventSink*)> durable_schema(const StoreChoice& store,
                                                                 std::string schema);

// The bell that carries work rings between the processes serving one schema (LISTEN/NOTIFY on
// a connection of its own; see PgWorkChannel). REQUIRES: store.postgres.
std::function<std::unique_ptr<WorkBell>(WorkBell& local)> work_channel(const StoreChoice& store,
                                                                       std::string schema);

}  // namespace onejob::cli
