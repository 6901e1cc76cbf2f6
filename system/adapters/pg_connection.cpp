#include "system/adapters/pg_connection.hpp"

#include <utility>

#include <string_view>

#include <poll.h>

namespace onejob::pg {
namespace {

// The first line of a libpqxx message ("ERROR:  ..." and its context lines are noise here).
std::string first_line(const char* what) {
  std::string_view text{what};
  return std::string{text.substr(0, text.find('\n'))};
}

std::string describe(const char* operation, const pqxx::pqxx_exception& error) {
  return std::string{"postgres: "} + operation + ": " + first_line(error.base().what());
}

// An idle connection has nothing to read. When it does, the server has written to it on its
// own: a FATAL goodbye (pg_terminate_backend, a shutdown) or the end of the stream. Either way
// the next statement on it would fail, so it is replaced first.
bool server_spoke_while_idle(const pqxx::connection& connection) {
  pollfd socket{.fd = connection.sock(), .events = POLLIN, .revents = 0};
  if (socket.fd < 0) return true;
  return ::poll(&socket, 1, 0) != 0;
}

bool connection_lost(std::string_view sqlstate) {
  // Class 08: connection exception. 57P01-57P03: the server is shutting down, crashed, or not
  // yet accepting connections.
  return sqlstate.starts_with("08") || sqlstate == "57P01" || sqlstate == "57P02" ||
         sqlstate == "57P03";
}

}  // namespace

Connection::Connection(PgStoreOptions options, std::function<void(pqxx::connection&)> prepare)
    : options_{std::move(options)}, prepare_{std::move(prepare)} {
  if (options_.conflict_tries < 1) options_.conflict_tries = 1;
  run("connect", Effect::read, [this](pqxx::connection& connection) {
    if (options_.schema.empty()) return 0;
    // The schema may not exist yet. open() already named it in the search_path, which
    // PostgreSQL resolves at each lookup, so creating it is enough.
    pqxx::nontransaction tx{connection};
    tx.exec("CREATE SCHEMA IF NOT EXISTS " + tx.quote_name(options_.schema));
    return 0;
  });
}

Connection::~Connection() {
  if (!options_.drop_schema_on_close || options_.schema.empty()) return;
  try {
    pqxx::connection& connection = ready("drop schema");
    pqxx::nontransaction tx{connection};
    tx.exec("DROP SCHEMA IF EXISTS " + tx.quote_name(options_.schema) + " CASCADE");
  } catch (const std::exception&) {
    // A throwaway schema left behind is not worth failing a destructor for.
  }
}

pqxx::connection& Connection::ready(const char* operation) {
  if (connection_ && (!connection_->is_open() || server_spoke_while_idle(*connection_))) drop();
  if (!connection_) {
    try {
      open();
    } catch (const pqxx::pqxx_exception& error) {
      drop();
      throw StoreError(StoreError::Kind::unavailable,
                       describe(operation, error) + " (connecting; nothing was sent)");
    }
  }
  return *connection_;
}

void Connection::open() {
  connection_ = std::make_unique<pqxx::connection>(options_.connection_string);
  pqxx::nontransaction tx{*connection_};
  // Every transaction on this connection, autocommit statements included, is READ COMMITTED
  // whatever the database's default: the compare-and-swap and the live-attempt check rely on
  // each statement reading what was committed before it started.
  std::string setup = "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED";
  if (!options_.schema.empty()) {
    setup.append("; SET search_path TO ").append(tx.quote_name(options_.schema));
  }
  tx.exec(setup);
  prepare_(*connection_);
}

void Connection::drop() noexcept { connection_.reset(); }

void Connection::settle_failure(const char* operation, Effect effect,
                                const pqxx::pqxx_exception& error, int tries) {
  using Kind = StoreError::Kind;
  const std::string what = describe(operation, error);
  const auto lost = [&](const std::string& note) {
    drop();
    if (effect == Effect::statement) {
      throw StoreError(Kind::maybe_committed,
                       what +
                           " (the connection was lost while the write ran: it may or may"
                           " not have committed)" +
                           note);
    }
    throw StoreError(Kind::unavailable,
                     what + " (the connection was lost; nothing was written)" + note);
  };
  if (dynamic_cast<const pqxx::in_doubt_error*>(&error) != nullptr ||
      dynamic_cast<const pqxx::statement_completion_unknown*>(&error) != nullptr) {
    drop();
    throw StoreError(Kind::maybe_committed,
                     what + " (the reply to COMMIT was lost: it may or may not have committed)");
  }
  if (dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr) lost("");
  // libpqxx 6.4 throws these for SQLSTATE 40001 and 40P01 without the state itself, and not as
  // sql_error: recognise them by type.
  if (dynamic_cast<const pqxx::serialization_failure*>(&error) != nullptr ||
      dynamic_cast<const pqxx::deadlock_detected*>(&error) != nullptr) {
    if (tries < options_.conflict_tries) return;
    throw StoreError(Kind::conflict, what + " (aborted for concurrent transactions " +
                                         std::to_string(tries) + " times; nothing was written)");
  }
  if (dynamic_cast<const pqxx::transaction_rollback*>(&error) != nullptr) {
    throw StoreError(Kind::unavailable, what + " (rolled back; nothing was written)");
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&error)) {
    const std::string& state = sql->sqlstate();
    if (connection_lost(state)) lost("");
    if (state.starts_with("22")) {  // data exception: e.g. text that is not UTF-8
      throw StoreError(Kind::rejected, what + " (nothing was written)");
    }
    // The statement failed and its transaction rolled back. The connection stays usable unless
    // libpq says otherwise.
    if (connection_ && !connection_->is_open()) drop();
    throw StoreError(Kind::unavailable, what + " (the statement failed; nothing was written)");
  }
  // Anything else libpqxx throws (a usage or internal error, a value it cannot convert) leaves
  // the connection in a state nobody can vouch for.
  drop();
  throw StoreError(Kind::unavailable, what);
}

void require_no_nul(const char* statement, const std::string& value) {
  if (value.find('\0') != std::string::npos) {
    throw StoreError(StoreError::Kind::rejected,
                     std::string{"postgres: "} + statement +
                         ": a text parameter contains a NUL byte, which PostgreSQL text cannot"
                         " hold; nothing was sent");
  }
}

}  // namespace onejob::pg
