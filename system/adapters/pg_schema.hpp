#pragma once

#include <string_view>
#include <vector>

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

}  // namespace onejob
