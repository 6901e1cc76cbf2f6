#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "system/ports/store.hpp"
#include "system/service/defects.hpp"

namespace onejob::cli {

// `--store memory | postgres | postgres=URI`: the store scenarios run on.
struct StoreChoice {
  bool postgres = false;
  // libpq connection string or URI; empty: libpq's defaults and the PG* environment variables.
  std::string uri;

  std::string describe() const;
};

// The problem with `text`, or nothing when it is a store.
std::optional<std::string> parse_store(const std::string& text, StoreChoice& out);

// The problem with running `defects` on `store`: PostgreSQL cannot have the store-level ones.
std::optional<std::string> store_defect_problem(const StoreChoice& store, const Defects& defects);

// Connects once and applies the migrations in a throwaway schema: the problem, when the
// database cannot be used, before any scenario runs.
std::optional<std::string> check_store(const StoreChoice& store);

// What RunOptions::make_store takes: empty for the memory store (the runner's default). For
// PostgreSQL each call opens a PgStore on a fresh schema of its own (migrated, dropped with
// everything in it when the store is destroyed), so every scenario and fuzz case starts from
// empty tables and sequences at 1, as the memory store does.
std::function<std::unique_ptr<Store>()> store_factory(const StoreChoice& store);

// One fresh schema shared by the connections of a run whose components each need their own:
// `owner` created and migrated it and drops it when destroyed; connect() opens another PgStore
// on it. REQUIRES: store.postgres. Throws StoreError when the database cannot be used.
struct SharedSchema {
  std::unique_ptr<Store> owner;
  std::string schema;
  std::function<std::unique_ptr<Store>()> connect;
};
SharedSchema open_shared_schema(const StoreChoice& store);

}  // namespace onejob::cli
