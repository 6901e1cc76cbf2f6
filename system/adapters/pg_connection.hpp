#pragma once

// PgStore's connection: opening it (isolation and schema pinned), noticing when the server has
// closed it, re-opening it, and turning every libpqxx failure into the port's StoreError.
// Included only by the PostgreSQL adapter's own .cpp files: it brings libpqxx with it.

#include <functional>
#include <memory>
#include <string>

#include <pqxx/pqxx>

#include "system/adapters/pg_store.hpp"

namespace onejob::pg {

// What a failed operation may have left behind, which decides the StoreError it becomes.
enum class Effect {
  read,         // reads only: a failure wrote nothing
  transaction,  // an explicit BEGIN ... COMMIT: only a failure during COMMIT is in doubt
  statement,    // one autocommit write: a connection lost while it ran leaves it in doubt
};

class Connection {
 public:
  // `prepare` registers the prepared statements on each new connection. Connects now; throws
  // StoreError (unavailable) if it cannot.
  Connection(PgStoreOptions options, std::function<void(pqxx::connection&)> prepare);
  // Drops the schema when the options ask for it; never throws.
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs `body(connection)` as one operation named `operation`. A serialization failure or a
  // deadlock runs it again (up to conflict_tries in all); every other libpqxx failure leaves as
  // StoreError, and a broken connection is dropped so the next operation opens a new one.
  template <typename Body>
  auto run(const char* operation, Effect effect, Body&& body) {
    for (int tries = 1;; ++tries) {
      try {
        return body(ready(operation));
      } catch (const pqxx::pqxx_exception& error) {
        settle_failure(operation, effect, error, tries);  // throws, or returns to retry
      }
    }
  }

 private:
  pqxx::connection& ready(const char* operation);
  void open();
  // Throws the StoreError that `error` amounts to, or returns when the operation should run
  // again (a conflict with tries left).
  void settle_failure(const char* operation, Effect effect, const pqxx::pqxx_exception& error,
                      int tries);
  void drop() noexcept;

  PgStoreOptions options_;
  std::function<void(pqxx::connection&)> prepare_;
  std::unique_ptr<pqxx::connection> connection_;
};

// Refuses a text parameter with a NUL byte (StoreError rejected): libpq sends text parameters
// as C strings, so it would silently cut the value there, and two idempotency keys that differ
// only after it would become one job.
void require_no_nul(const char* statement, const std::string& value);
template <typename T>
void require_no_nul(const char*, const T&) {}

}  // namespace onejob::pg
