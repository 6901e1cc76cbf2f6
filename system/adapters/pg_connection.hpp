#pragma once

// PgStore's connection: opening it (isolation and schema pinned), noticing when the server has
// closed it, re-opening it, and turning every libpqxx failure into the port's StoreError.
// Included only by the PostgreSQL adapter's own .cpp files: it brings libpqxx with it.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <pqxx/pqxx>

#include "system/adapters/pg_store.hpp"

namespace onejob::pg {

// What a failed operation may have left behind, which decides the StoreError it becomes.
enum class Effect {
  read,         // reads only: a failure wrote nothing
  transaction,  // an explicit BEGIN ... COMMIT: only a failure during COMMIT is in doubt
  statement,    // one autocommit write: a connection lost while it ran leaves it in doubt
};

// The advisory lock that serializes every change to the schema (creating it, migrating it)
// among the processes sharing one database: concurrent CREATE ... IF NOT EXISTS statements can
// both see "absent", and one then fails on a catalog unique index.
inline constexpr std::int64_t kSchemaLockId = 0x6f6e656a6f62;  // "onejob"

// The client side of a reply bound. Armed around an operation with the connection's socket, it
// shuts the socket down when the operation has not finished by its deadline: libpq's wait for
// the reply then ends at once (the server "closed" the connection), libpqxx throws, and the
// connection is dropped and re-opened by the next call. A server that is frozen (stopped, or
// behind a network that swallows packets) acknowledges nothing and cancels nothing, so only the
// client can end the wait. One thread per Connection, asleep unless armed.
class ReplyWatchdog {
 public:
  ReplyWatchdog();
  ~ReplyWatchdog();
  ReplyWatchdog(const ReplyWatchdog&) = delete;
  ReplyWatchdog& operator=(const ReplyWatchdog&) = delete;

  // Until disarm(), shut `socket` down once `bound` has passed; a zero bound never fires.
  void arm(int socket, std::chrono::milliseconds bound);
  // True when it fired since arm().
  bool disarm();

 private:
  void watch();

  std::mutex mutex_;
  std::condition_variable changed_;
  int socket_ = -1;  // armed when >= 0
  std::chrono::steady_clock::time_point deadline_;
  // When the watchdog thread wakes next; max() while it waits to be armed.
  std::chrono::steady_clock::time_point wake_at_ = std::chrono::steady_clock::time_point::max();
  bool fired_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

// Takes the schema lock for the rest of `tx`, waiting for it as long as a migration may take
// (PgStore::kMigrateReplyTimeout) rather than the statement_timeout of ordinary statements.
void wait_for_schema_lock(pqxx::transaction_base& tx);

// The connection string with the options' bounds added where it sets none of its own: either
// form libpq accepts (key=value or a URI) is parsed by libpq itself and written back as
// key=value. A string libpq cannot parse is passed on as it is, for libpq to refuse.
std::string bounded_conninfo(const PgStoreOptions& options);

class Connection {
 public:
  // `prepare` registers the prepared statements on each new connection. Connects now; throws
  // StoreError (unavailable) if it cannot.
  Connection(PgStoreOptions options, std::function<void(pqxx::connection&)> prepare);
  // Drops the schema when the options ask for it; never throws.
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs `body(connection)` as one operation named `operation`, within `reply_bound` (the
  // options' reply_timeout when zero) once connected. A serialization failure or a deadlock
  // runs it again (up to conflict_tries in all); every other libpqxx failure leaves as
  // StoreError, and a broken connection is dropped so the next operation opens a new one.
  template <typename Body>
  auto run(const char* operation, Effect effect, Body&& body,
           std::chrono::milliseconds reply_bound = {}) {
    for (int tries = 1;; ++tries) {
      bool timed_out = false;
      try {
        pqxx::connection& connection = ready(operation);
        const Armed armed{*this, connection, reply_bound, timed_out};
        return body(connection);
      } catch (const pqxx::pqxx_exception& error) {
        // throws, or returns to retry
        settle_failure(
            operation, effect, error, tries,
            timed_out ? reply_bound_or_default(reply_bound) : std::chrono::milliseconds{});
      }
    }
  }

 private:
  class NoticeHandler;
  // The watchdog armed for one operation's body; disarmed (noting whether it fired) before
  // the failure, if any, is settled.
  struct Armed {
    Armed(Connection& owner, pqxx::connection& connection, std::chrono::milliseconds bound,
          bool& timed_out);
    ~Armed();
    Armed(const Armed&) = delete;
    Armed& operator=(const Armed&) = delete;
    Connection& owner;
    bool& timed_out;
  };

  std::chrono::milliseconds reply_bound_or_default(std::chrono::milliseconds bound) const;
  pqxx::connection& ready(const char* operation);
  void open();
  // Throws the StoreError that `error` amounts to, or returns when the operation should run
  // again (a conflict with tries left). `timed_out`: the reply bound that ended it, if one did.
  void settle_failure(const char* operation, Effect effect, const pqxx::pqxx_exception& error,
                      int tries, std::chrono::milliseconds timed_out);
  void drop() noexcept;

  PgStoreOptions options_;
  std::string conninfo_;  // options_.connection_string with the bounds added, for every open()
  std::function<void(pqxx::connection&)> prepare_;
  ReplyWatchdog watchdog_;
  std::unique_ptr<pqxx::connection> connection_;
  std::unique_ptr<NoticeHandler> notices_;  // registered on connection_, dropped before it
  // When the last operation's body ended (Armed's destructor): ready() probes the socket only
  // after PgStore::kProbeAfterIdle.
  std::chrono::steady_clock::time_point last_answer_;
};

// Refuses a text parameter with a NUL byte (StoreError rejected): libpq sends text parameters
// as C strings, so it would silently cut the value there, and two idempotency keys that differ
// only after it would become one job.
void require_no_nul(const char* statement, const std::string& value);
template <typename T>
void require_no_nul(const char*, const T&) {}

}  // namespace onejob::pg
