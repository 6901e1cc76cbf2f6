#include "system/adapters/pg_connection.hpp"

#include <utility>

#include <algorithm>
#include <map>
#include <string_view>

#include <libpq-fe.h>
#include <poll.h>
#include <sys/socket.h>

#include "system/events/store_events.hpp"

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

// A libpq conninfo value, quoted: single quotes and backslashes escaped.
std::string quoted(std::string_view value) {
  std::string out = "'";
  for (const char c : value) {
    if (c == '\\' || c == '\'') out.push_back('\\');
    out.push_back(c);
  }
  return out + "'";
}

}  // namespace

std::string bounded_conninfo(const PgStoreOptions& options) {
  char* problem = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(options.connection_string.c_str(), &problem);
  if (parsed == nullptr) {
    PQfreemem(problem);
    return options.connection_string;
  }
  std::map<std::string, std::string> given;
  for (const PQconninfoOption* option = parsed; option->keyword != nullptr; ++option) {
    if (option->val != nullptr) given.emplace(option->keyword, option->val);
  }
  PQconninfoFree(parsed);
  const auto whole_seconds = [](std::chrono::milliseconds bound) {
    return std::to_string(std::max<long long>(
        2, std::chrono::duration_cast<std::chrono::seconds>(bound + std::chrono::milliseconds{999})
               .count()));
  };
  if (options.connect_timeout.count() > 0) {
    given.emplace("connect_timeout", whole_seconds(options.connect_timeout));
  }
  // Keepalives notice a peer that vanished while the connection is idle; tcp_user_timeout
  // bounds how long sent data may stay unacknowledged. Both only apply to TCP.
  given.emplace("keepalives", "1");
  given.emplace("keepalives_idle", "10");
  given.emplace("keepalives_interval", "5");
  given.emplace("keepalives_count", "3");
  if (options.reply_timeout.count() > 0) {
    given.emplace("tcp_user_timeout", std::to_string(options.reply_timeout.count()));
  }
  given.emplace("application_name", "onejob");
  std::string conninfo;
  for (const auto& [keyword, value] : given) {
    if (!conninfo.empty()) conninfo.push_back(' ');
    conninfo.append(keyword).append("=").append(quoted(value));
  }
  return conninfo;
}

ReplyWatchdog::ReplyWatchdog() : thread_{[this] { watch(); }} {}

ReplyWatchdog::~ReplyWatchdog() {
  {
    const std::lock_guard lock{mutex_};
    stopping_ = true;
  }
  changed_.notify_one();
  thread_.join();
}

void ReplyWatchdog::arm(int socket, std::chrono::milliseconds bound) {
  if (bound.count() <= 0 || socket < 0) return;
  const std::lock_guard lock{mutex_};
  socket_ = socket;
  deadline_ = std::chrono::steady_clock::now() + bound;
  fired_ = false;
  // Woken only when it would otherwise sleep past the new deadline: calls a few milliseconds
  // apart then cost no context switch each, the watchdog waking about once per bound.
  if (deadline_ < wake_at_) changed_.notify_one();
}

bool ReplyWatchdog::disarm() {
  const std::lock_guard lock{mutex_};
  socket_ = -1;
  return std::exchange(fired_, false);
}

void ReplyWatchdog::watch() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock lock{mutex_};
  while (!stopping_) {
    const auto now = Clock::now();
    if (socket_ >= 0 && now >= deadline_) {
      // Under the lock, so the socket is still the armed operation's: disarm() waits for it.
      ::shutdown(socket_, SHUT_RDWR);
      socket_ = -1;
      fired_ = true;
      continue;
    }
    if (socket_ >= 0) {
      wake_at_ = deadline_;
    } else if (wake_at_ <= now) {
      wake_at_ = Clock::time_point::max();
    }
    if (wake_at_ == Clock::time_point::max()) {
      changed_.wait(lock);
    } else {
      changed_.wait_until(lock, wake_at_);
    }
  }
}

// Hands every message the server sends outside a reply (a WARNING, a FATAL before it closes an
// idle connection) to the options' event sink as store.notice, and to nothing else: returning
// false keeps libpqxx's default (stderr) from seeing it.
class Connection::NoticeHandler final : public pqxx::errorhandler {
 public:
  NoticeHandler(pqxx::connection& connection, EventSink* sink)
      : pqxx::errorhandler{connection}, sink_{sink} {}
  bool operator()(const char message[]) noexcept override {
    if (sink_ == nullptr) return false;
    try {
      std::string_view text{message};
      while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
      events::emit(*sink_, events::StoreNotice{.store = "postgres", .text = std::string{text}});
    } catch (...) {
      // A sink that fails must not take the call with it.
    }
    return false;
  }

 private:
  EventSink* sink_;
};

Connection::Armed::Armed(Connection& owner_, pqxx::connection& connection,
                         std::chrono::milliseconds bound, bool& timed_out_)
    : owner{owner_}, timed_out{timed_out_} {
  owner.watchdog_.arm(connection.sock(), owner.reply_bound_or_default(bound));
}

Connection::Armed::~Armed() {
  timed_out = owner.watchdog_.disarm();
  owner.last_answer_ = std::chrono::steady_clock::now();
}

std::chrono::milliseconds Connection::reply_bound_or_default(
    std::chrono::milliseconds bound) const {
  return bound.count() > 0 ? bound : options_.reply_timeout;
}

Connection::Connection(PgStoreOptions options, std::function<void(pqxx::connection&)> prepare)
    : options_{std::move(options)},
      conninfo_{bounded_conninfo(options_)},
      prepare_{std::move(prepare)} {
  if (options_.conflict_tries < 1) options_.conflict_tries = 1;
  run(
      "connect", Effect::read,
      [this](pqxx::connection& connection) {
        if (options_.schema.empty()) return 0;
        // The schema may not exist yet. open() already named it in the search_path, which
        // PostgreSQL resolves at each lookup, so creating it is enough. Under the schema lock:
        // two processes creating it at once would otherwise both see it absent, and one
        // would fail on pg_namespace's unique index. Checked first, so that a fleet
        // connecting to a schema that exists does not queue on the lock.
        pqxx::work tx{connection};
        if (tx.exec_params("SELECT 1 FROM pg_namespace WHERE nspname = $1", options_.schema)
                .empty()) {
          wait_for_schema_lock(tx);
          tx.exec("CREATE SCHEMA IF NOT EXISTS " + tx.quote_name(options_.schema));
        }
        tx.commit();
        return 0;
      },
      PgStore::kMigrateReplyTimeout);
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
  if (connection_ && (!connection_->is_open() || (std::chrono::steady_clock::now() - last_answer_ >=
                                                      PgStore::kProbeAfterIdle &&
                                                  server_spoke_while_idle(*connection_)))) {
    drop();
  }
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
  connection_ = std::make_unique<pqxx::connection>(conninfo_);
  notices_ = std::make_unique<NoticeHandler>(*connection_, options_.events);
  bool timed_out = false;
  const Armed armed{*this, *connection_, {}, timed_out};
  pqxx::nontransaction tx{*connection_};
  // Every transaction on this connection, autocommit statements included, is READ COMMITTED
  // whatever the database's default: the compare-and-swap and the live-attempt check rely on
  // each statement reading what was committed before it started.
  std::string setup = "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED";
  if (!options_.schema.empty()) {
    setup.append("; SET search_path TO ").append(tx.quote_name(options_.schema));
  }
  setup.append("; SET client_min_messages TO warning");
  setup.append("; SET statement_timeout TO ")
      .append(std::to_string(std::max<long long>(0, options_.statement_timeout.count())));
  tx.exec(setup);
  prepare_(*connection_);
}

void Connection::drop() noexcept {
  notices_.reset();
  connection_.reset();
}

void Connection::settle_failure(const char* operation, Effect effect,
                                const pqxx::pqxx_exception& error, int tries,
                                std::chrono::milliseconds timed_out) {
  using Kind = StoreError::Kind;
  const std::string what = timed_out.count() > 0
                               ? std::string{"postgres: "} + operation + ": no reply within " +
                                     std::to_string(timed_out.count()) +
                                     " ms, so the connection was closed"
                               : describe(operation, error);
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

void wait_for_schema_lock(pqxx::transaction_base& tx) {
  tx.exec("SET LOCAL statement_timeout TO " +
          std::to_string(PgStore::kMigrateReplyTimeout.count()));
  tx.exec_params("SELECT pg_advisory_xact_lock($1)", kSchemaLockId);
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
