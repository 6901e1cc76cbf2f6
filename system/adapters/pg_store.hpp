#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "system/ports/event_sink.hpp"
#include "system/ports/store.hpp"

namespace onejob {

// How a PgStore reaches its database.
struct PgStoreOptions {
  // Anything libpq accepts ("host=... dbname=..." or a postgresql:// URI); the PG* environment
  // variables fill in what it leaves out.
  std::string connection_string;
  // When set, every connection works in this schema (its search_path), created if missing.
  std::string schema;
  // Drop `schema`, with everything in it, when the store is destroyed: a throwaway database
  // for one run.
  bool drop_schema_on_close = false;
  // How often one operation is tried when PostgreSQL aborts it for a concurrent transaction
  // (serialization failure, deadlock) before it fails with StoreError::Kind::conflict.
  int conflict_tries = 5;
  // Bounds on every wait, so that a server that stops answering (a frozen host, a network
  // black hole) costs one call a bounded time, after which the call fails as the port says
  // (unavailable, or maybe_committed for a write that was under way), instead of holding its
  // thread forever. Zero turns one off.
  //   connect_timeout    opening a connection, its start-up included (libpq's connect_timeout:
  //                      whole seconds, at least 2)
  //   statement_timeout  the server cancels a statement that runs longer, lock waits included
  //   reply_timeout      the client stops waiting for the server's reply to an operation
  //                      (a whole transaction) and closes the connection: the bound when the
  //                      server itself is frozen. Longer than statement_timeout, so that a
  //                      slow statement is cancelled by the server first.
  // So one call on a frozen server fails within connect_timeout + reply_timeout (the first
  // only when it has to connect). Migrations wait up to kMigrateReplyTimeout for the schema
  // lock and their DDL instead. TCP connections also get keepalives and a tcp_user_timeout of
  // reply_timeout, unless the connection string sets those itself.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds{3}};
  std::chrono::milliseconds statement_timeout{std::chrono::seconds{5}};
  std::chrono::milliseconds reply_timeout{std::chrono::seconds{6}};
  // Where the server's warnings (and a FATAL it sends while the connection is idle) go, one
  // store.notice event each (system/events/store_events.hpp), emitted on the thread making the
  // call; never to stderr. Dropped when null. NOTICE-level chatter ("already exists,
  // skipping") is not sent at all (client_min_messages = warning).
  EventSink* events = nullptr;
};

// The durable store on PostgreSQL (libpqxx), with the schema of pg_migrations(). It gives the
// semantics MemoryStore models, with the database's constraints doing the refusing.
//
// Every call does its database round trips synchronously and only then completes: it never
// suspends, so it blocks the thread running the io_context for that long (never longer than
// the options' bounds: connect_timeout + reply_timeout), and to the caller (and to the
// simulator) each call is one atomic step. One connection, serialized by a mutex,
// so calls from several threads are safe but do not run in parallel. Several PgStores (several
// processes) may share one database.
//
// Isolation is pinned, whatever the database's default: every transaction runs READ COMMITTED,
// which the compare-and-swap and the one-live-attempt check rely on. A create (insert_job) and
// a completion (complete_attempt) are one statement each, so one round trip.
//
// Failures are the port's: nothing but StoreError leaves a call, apart from the programming
// errors the port names (IllegalTransition and std::logic_error from update_attempt and
// complete_attempt, after which nothing was written).
//   unavailable      the server could not be reached or refused the statement; nothing was
//                    written. A lost connection is re-opened by the next call, so a lost
//                    backend costs at most the call that was using it (a connection idle
//                    for kProbeAfterIdle or more that the server closed is noticed and
//                    replaced before it is used; one that answered more recently is not
//                    checked, see pg_connection.hpp).
//   maybe_committed  the connection broke while a write's COMMIT (or its one statement) was
//                    under way: it may or may not have happened; read the rows to find out.
//   conflict         PostgreSQL kept aborting the transaction for concurrent ones
//                    (serialization failure, deadlock) conflict_tries times; nothing written.
//   rejected         a value PostgreSQL text cannot hold (a NUL byte, which libpq would cut
//                    the string at, or invalid UTF-8); nothing was sent or written.
class PgStore final : public Store {
 public:
  static constexpr std::chrono::milliseconds kMigrateReplyTimeout{std::chrono::seconds{60}};
  // How long a connection must have been idle before a call checks, with one poll() of its
  // socket, whether the server closed it meanwhile. The check turns a goodbye the server sent
  // while the connection sat idle (pg_terminate_backend, a shutdown) into a new connection
  // instead of a failed call. In a shorter gap a goodbye is about as likely to come during the
  // next call as before it, while the system call is a measurable share of a call made in a
  // busy loop (about 1.5 us of 100 on a virtual machine).
  static constexpr std::chrono::microseconds kProbeAfterIdle{1000};

  // Connects immediately, and creates the options' schema if it is missing (under the schema
  // lock, so any number of processes may start on one fresh schema at once); throws
  // StoreError (unavailable) if it cannot.
  explicit PgStore(const std::string& connection_string);
  explicit PgStore(PgStoreOptions options);
  ~PgStore() override;
  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;

  // Applies the steps of pg_migrations() the database has not recorded yet, in order, each in
  // one transaction with its row in schema_migrations. Safe to repeat and to run from several
  // processes at once (an advisory lock serializes them). Throws StoreError (unavailable) when
  // the database records a step this build does not know: it was migrated by a newer build.
  void migrate();
  // The highest step the database records; 0 before any.
  int schema_version();
  // Deletes every row of every table and restarts the ids at 1, in one transaction: the store
  // is then as a freshly migrated one, without the cost of a new schema (a scratch store that
  // serves one run after another). Never on a database anyone else is using.
  void clear();

  Async<InsertJobResult> insert_job(NewJob job) override;
  Async<std::optional<Job>> find_job_by_key(std::string owner_id,
                                            std::string idempotency_key) override;
  Async<std::optional<Job>> find_job(std::string owner_id, JobId id) override;
  Async<std::optional<Job>> load_job(JobId id) override;
  Async<bool> fail_job(JobId id, std::string reason, Instant at) override;

  Async<InsertAttemptResult> insert_attempt(NewAttempt attempt) override;
  Async<std::optional<Attempt>> find_attempt(AttemptId id) override;
  Async<std::optional<ActionRecord>> find_action(std::string owner_id,
                                                 std::string idempotency_key) override;
  Async<std::vector<Attempt>> list_attempts(JobId job_id) override;
  Async<std::vector<Attempt>> find_attempts_in_state(AttemptState state) override;
  Async<std::vector<Job>> find_idle_jobs() override;
  Async<std::vector<Attempt>> find_expired_leases(Instant now) override;
  Async<SweepWork> find_sweep_work(Instant now) override;
  Async<std::optional<Attempt>> claim_next_attempt(std::string worker, Instant now,
                                                   Instant lease_expires_at) override;
  Async<UpdateAttemptResult> update_attempt(AttemptUpdate update) override;
  Async<CompleteAttemptResult> complete_attempt(CompleteAttempt completion) override;

  Async<void> record_certification(Certification certification) override;
  Async<std::optional<Certification>> latest_certification(std::string provider) override;

 private:
  // Defined in pg_store.cpp, so that only that file pays for (and sees) libpqxx.
  class Session;
  std::unique_ptr<Session> session_;
};

}  // namespace onejob
