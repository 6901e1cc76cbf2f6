#pragma once

// onejob's PostgreSQL schema: its steps, and what applies, reads and empties it on a connection.
// Included only by .cpp files (the adapter's and its tests): it brings libpqxx.

#include <string_view>
#include <vector>

#include <pqxx/pqxx>

namespace onejob {

// One step of onejob's PostgreSQL schema. PgStore::migrate() applies, in order, every step a
// database has not recorded in schema_migrations, each in the transaction that records it. A
// step is never edited once released: a changed column is a new step. Unqualified names: the
// objects land in the first schema of the connection's search_path. MemoryStore mirrors these
// semantics exactly.
struct PgMigration {
  int version = 0;  // 1, 2, 3, ... with no gaps
  std::string_view name;
  std::string_view sql;
};

const std::vector<PgMigration>& pg_migrations();

namespace pg {

// Applies, each in its own transaction under the schema lock, every step `c`'s database has not
// recorded; StoreError (unavailable) when the database is at a version newer than this build's.
void apply_migrations(pqxx::connection& c);
// The highest step recorded, 0 on a database never migrated.
int schema_version(pqxx::connection& c);
// Deletes every row and restarts the id sequences, in one transaction.
void delete_all_rows(pqxx::connection& c);

}  // namespace pg

}  // namespace onejob
