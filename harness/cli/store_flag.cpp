#include "harness/cli/store_flag.hpp"

#include <atomic>
#include <mutex>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <unistd.h>

#include "system/adapters/pg_store.hpp"
#include "system/adapters/pg_work_channel.hpp"
#include "system/ports/store_wrapper.hpp"

#include "harness/scenario/yaml_reader.hpp"

namespace onejob::cli {
namespace {

// Unique among the processes sharing one database (fuzz --jobs forks; CI may run several
// commands at once): the process id and a counter. Never part of a trace.
std::string next_schema_name() {
  static std::atomic<unsigned> counter{0};
  return "onejob_run_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
}

PgStoreOptions pg_options(const StoreChoice& choice, const std::string& schema) {
  PgStoreOptions options;
  options.connection_string = choice.uri;
  options.connect_timeout = choice.connect_timeout;
  options.statement_timeout = choice.statement_timeout;
  options.reply_timeout = choice.reply_timeout;
  options.schema = schema;
  return options;
}

std::unique_ptr<PgStore> open_pg(const StoreChoice& choice, const std::string& schema, bool owner,
                                 EventSink* events = nullptr) {
  PgStoreOptions options = pg_options(choice, schema);
  options.events = events;
  options.drop_schema_on_close = owner;
  auto store = std::make_unique<PgStore>(std::move(options));
  if (owner) store->migrate();
  return store;
}

std::unique_ptr<PgStore> open_scratch(const StoreChoice& choice) {
  return open_pg(choice, next_schema_name(), true);
}

// The scratch stores of one process: each a migrated schema of its own, lent to one run at a
// time and emptied (rows deleted, ids back to 1) before each loan, so every scenario and fuzz
// case still starts from empty tables and ids from 1 as the memory store does, without paying
// for a new schema each time. Stores are only ever used by the process that opened them: after
// a fork, the child leaves its parent's alone (closing one would end the parent's connection).
class ScratchPool : public std::enable_shared_from_this<ScratchPool> {
 public:
  explicit ScratchPool(StoreChoice choice) : choice_{std::move(choice)} {}
  ~ScratchPool() {
    if (::getpid() != pid_) {
      for (auto& store : idle_) (void)store.release();
    }
  }
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;

  std::unique_ptr<Store> lend();

 private:
  class Loan;
  void give_back(std::unique_ptr<PgStore> store) {
    const std::lock_guard lock{mutex_};
    if (::getpid() == pid_) {
      idle_.push_back(std::move(store));
    } else {
      (void)store.release();
    }
  }

  const StoreChoice choice_;
  const pid_t pid_ = ::getpid();
  std::mutex mutex_;
  std::vector<std::unique_ptr<PgStore>> idle_;
};

// One run's use of a pooled store; returns it to the pool when the run lets go of it.
class ScratchPool::Loan final : public StoreWrapper {
 public:
  Loan(std::shared_ptr<ScratchPool> pool, std::unique_ptr<PgStore> store)
      : StoreWrapper{*store}, pool_{std::move(pool)}, store_{std::move(store)} {}
  ~Loan() override { pool_->give_back(std::move(store_)); }
  Loan(const Loan&) = delete;
  Loan& operator=(const Loan&) = delete;

 private:
  std::shared_ptr<ScratchPool> pool_;
  std::unique_ptr<PgStore> store_;
};

std::unique_ptr<Store> ScratchPool::lend() {
  std::unique_ptr<PgStore> store;
  {
    const std::lock_guard lock{mutex_};
    if (::getpid() == pid_ && !idle_.empty()) {
      store = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (store) {
    store->clear();
  } else {
    store = open_scratch(choice_);
  }
  return std::make_unique<Loan>(shared_from_this(), std::move(store));
}

}  // namespace

std::string StoreChoice::describe() const {
  if (!postgres) return "memory";
  return uri.empty() ? "postgres (libpq defaults)" : "postgres (" + uri + ")";
}

std::optional<std::string> parse_store(const std::string& text, StoreChoice& out) {
  constexpr std::string_view kPrefix = "postgres=";
  if (text == "memory") {
    out.postgres = false;
    out.uri.clear();
  } else if (text == "postgres") {
    out.postgres = true;
    out.uri.clear();
  } else if (text.starts_with(kPrefix) && text.size() > kPrefix.size()) {
    out.postgres = true;
    out.uri = text.substr(kPrefix.size());
  } else {
    return "--store: expected memory, postgres or postgres=URI, found \"" + text + "\"";
  }
  return std::nullopt;
}

std::optional<std::string> parse_pg_timeouts(const std::string& text, StoreChoice& out) {
  if (text.empty()) return std::nullopt;
  std::vector<std::chrono::milliseconds> bounds;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    std::optional<Duration> bound;
    if (part == "0") {
      bound = Duration{0};
    } else {
      bound = scenario::parse_duration(part);
    }
    if (!bound || *bound < Duration{0} || *bound > std::chrono::hours{1}) {
      return "--pg-timeouts: expected CONNECT,STATEMENT,REPLY as durations from 0 to 1h (such as "
             "3s,5s,6s), found \"" +
             text + "\"";
    }
    bounds.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(*bound));
    start = comma + 1;
  }
  if (bounds.size() != 3) {
    return "--pg-timeouts: expected three durations, CONNECT,STATEMENT,REPLY, found \"" + text +
           "\"";
  }
  out.connect_timeout = bounds[0];
  out.statement_timeout = bounds[1];
  out.reply_timeout = bounds[2];
  return std::nullopt;
}

void add_pg_timeouts_flag(CLI::App& command, std::string& into) {
  command
      .add_option("--pg-timeouts", into,
                  "PostgreSQL's bounds on a wait: connecting, one statement (the server cancels "
                  "it), one reply (the client closes the connection); a call on a frozen server "
                  "fails within CONNECT + REPLY. Durations such as 2s or 500ms; 0 turns one off "
                  "(default 3s,5s,6s)")
      ->type_name("CONNECT,STATEMENT,REPLY");
}

std::optional<std::string> store_defect_problem(const StoreChoice& store, const Defects& defects) {
  if (!store.postgres) return std::nullopt;
  for (const auto& info : all_defects()) {
    if (info.in_store && defects.has(info.defect)) {
      return "--defect " + std::string(info.name) +
             ": planted in the embedded store; PostgreSQL's constraints cannot be switched off"
             " (use --store memory)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> check_store(const StoreChoice& store) {
  if (!store.postgres) return std::nullopt;
  try {
    open_scratch(store);
  } catch (const StoreError& error) {
    return "--store " + store.describe() + ": " + error.what();
  }
  return std::nullopt;
}

std::function<std::unique_ptr<Store>()> store_factory(const StoreChoice& store) {
  if (!store.postgres) return {};
  return [pool = std::make_shared<ScratchPool>(store)]() -> std::unique_ptr<Store> {
    return pool->lend();
  };
}

SharedSchema open_shared_schema(const StoreChoice& store) {
  SharedSchema shared;
  shared.schema = next_schema_name();
  shared.owner = open_pg(store, shared.schema, true);
  shared.connect_reporting = [store,
                              schema = shared.schema](EventSink* events) -> std::unique_ptr<Store> {
    return open_pg(store, schema, false, events);
  };
  shared.connect = [reporting = shared.connect_reporting] { return reporting(nullptr); };
  return shared;
}

std::function<std::unique_ptr<Store>(EventSink*)> durable_schema(const StoreChoice& store,
                                                                 std::string schema) {
  return [store, schema = std::move(schema)](EventSink* events) -> std::unique_ptr<Store> {
    auto connection = open_pg(store, schema, false, events);
    connection->migrate();
    return connection;
  };
}

std::function<std::unique_ptr<WorkBell>(WorkBell& local)> work_channel(const StoreChoice& store,
                                                                       std::string schema) {
  return [options = pg_options(store, schema)](WorkBell& local) {
    return std::make_unique<PgWorkChannel>(options, local);
  };
}

}  // namespace onejob::cli
