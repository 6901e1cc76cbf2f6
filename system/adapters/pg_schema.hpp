#pragma once

#include <string_view>

namespace onejob {

// The PostgreSQL DDL of onejob's durable state. Idempotent (CREATE ... IF NOT EXISTS), so it
// may run at every start; it creates missing objects and never alters existing ones (a changed
// column needs a migration, not an edit here). Unqualified names: the tables land in the first
// schema of the connection's search_path. MemoryStore mirrors these semantics exactly.
std::string_view pg_schema_sql();

}  // namespace onejob
