// PgStore's start-up and its bounds on a wait: many processes opening and migrating one fresh
// schema at once; a server that stops answering (frozen behind a loopback relay: it
// acknowledges what it is sent and replies nothing) turning each call into the port's failure
// within the stated bound, and the store working again once the server thaws; a statement
// stuck on a lock cancelled by the server, with the statement named in the failure.

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <boost/test/unit_test.hpp>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "system/adapters/pg_schema.hpp"

#include "tests/pg/pg_fixture.hpp"
#include "tests/support/recording_sink.hpp"

namespace onejob::pg_test {
namespace {

using Kind = StoreError::Kind;
using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// A loopback TCP relay in front of the server's unix socket that can be frozen: while frozen it
// accepts nothing and forwards nothing, in either direction, but keeps every connection open,
// so the client's kernel sees its bytes acknowledged and waits for a reply that never comes,
// as with a stopped server or a network that swallows the replies.
class FreezableRelay {
 public:
  explicit FreezableRelay(std::string server_socket) : server_socket_{std::move(server_socket)} {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(listener_, 64) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw std::runtime_error("relay: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread{[this] { pump(); }};
  }
  ~FreezableRelay() {
    stopping_ = true;
    thread_.join();
    for (const auto& [client, server] : pairs_) {
      ::close(client);
      ::close(server);
    }
    ::close(listener_);
  }
  FreezableRelay(const FreezableRelay&) = delete;
  FreezableRelay& operator=(const FreezableRelay&) = delete;

  int port() const { return port_; }
  void freeze() { frozen_ = true; }
  void thaw() { frozen_ = false; }

 private:
  int connect_server() const {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    server_socket_.copy(address.sun_path, sizeof address.sun_path - 1);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
      return fd;
    }
    if (fd >= 0) ::close(fd);
    return -1;
  }

  // Bounded by the test's lifetime: every wait is a poll of at most 10 ms.
  void pump() {
    std::array<char, 16384> buffer{};
    while (!stopping_) {
      if (frozen_) {
        std::this_thread::sleep_for(milliseconds{10});
        continue;
      }
      std::vector<pollfd> fds{{listener_, POLLIN, 0}};
      for (const auto& [client, server] : pairs_) {
        fds.push_back({client, POLLIN, 0});
        fds.push_back({server, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 10) <= 0 || frozen_) continue;
      std::vector<std::pair<int, int>> open;
      if (fds[0].revents & POLLIN) {
        const int client = ::accept(listener_, nullptr, nullptr);
        const int server = client < 0 ? -1 : connect_server();
        if (server >= 0) {
          open.emplace_back(client, server);
        } else if (client >= 0) {
          ::close(client);
        }
      }
      for (std::size_t i = 0; i + 1 < fds.size(); i += 2) {
        const auto [client, server] = pairs_[i / 2];
        bool alive = true;
        for (const auto& [from, to, events] : {std::tuple{client, server, fds[i + 1].revents},
                                               std::tuple{server, client, fds[i + 2].revents}}) {
          if (!alive || events == 0) continue;
          const ssize_t n = ::recv(from, buffer.data(), buffer.size(), 0);
          alive =
              n > 0 && ::send(to, buffer.data(), static_cast<std::size_t>(n), MSG_NOSIGNAL) == n;
        }
        if (alive) {
          open.emplace_back(client, server);
        } else {
          ::close(client);
          ::close(server);
        }
      }
      pairs_ = std::move(open);
    }
  }

  std::string server_socket_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> frozen_{false};
  std::atomic<bool> stopping_{false};
  std::vector<std::pair<int, int>> pairs_;  // the pump thread's own
  std::thread thread_;
};

// The server's unix socket, and a TCP connection string that reaches the same database
// through `port` on loopback.
struct Route {
  std::string server_socket;
  std::string via_port;
};
Route route_through(pqxx::connection& admin, int port) {
  pqxx::nontransaction tx{admin};
  std::string directory = tx.exec1("SHOW unix_socket_directories")[0].as<std::string>();
  directory = directory.substr(0, directory.find(','));
  const std::string server_port = tx.exec1("SHOW port")[0].as<std::string>();
  return Route{directory + "/.s.PGSQL." + server_port,
               "host=127.0.0.1 port=" + std::to_string(port) + " dbname=" + admin.dbname() +
                   " user=" + admin.username()};
}

// What a store call threw, and how long it took.
struct TimedCall {
  std::optional<StoreError> error;
  double seconds = 0;
};
template <typename Call>
TimedCall time_call(Call call) {
  const auto start = SteadyClock::now();
  TimedCall ending;
  try {
    call();
  } catch (const StoreError& error) {
    ending.error = error;
  }
  ending.seconds = seconds_since(start);
  return ending;
}

}  // namespace

// Start-up of a fleet: 32 processes open a PgStore on one schema that does not exist yet and
// migrate it, all at once, 20 times over. Forked from a test case with no store of its own,
// so no other thread exists when it forks.
BOOST_AUTO_TEST_CASE(thirty_two_processes_start_on_one_fresh_schema) {
  if (pg_url().empty()) return;
  constexpr int kRounds = 20;
  constexpr int kProcesses = 32;
  pqxx::connection admin{pg_url()};
  int failures = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::string schema =
        "onejob_startup_" + std::to_string(::getpid()) + "_" + std::to_string(round);
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
      const pid_t child = ::fork();
      BOOST_REQUIRE(child >= 0);
      if (child == 0) {
        int status = 0;
        try {
          PgStoreOptions options;
          options.connection_string = pg_url();
          options.schema = schema;
          PgStore store{options};
          store.migrate();
          if (store.schema_version() != static_cast<int>(pg_migrations().size())) status = 3;
        } catch (const std::exception& error) {
          std::fprintf(stderr, "start-up %d.%d: %s\n", round, i, error.what());
          status = 1;
        }
        std::fflush(stderr);
        ::_exit(status);
      }
      children.push_back(child);
    }
    for (const pid_t child : children) {
      int status = 0;
      ::waitpid(child, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
    }
    pqxx::nontransaction tx{admin};
    tx.exec("DROP SCHEMA IF EXISTS " + tx.quote_name(schema) + " CASCADE");
  }
  BOOST_TEST(failures == 0, failures << " of " << kRounds * kProcesses << " start-ups failed");
}

BOOST_FIXTURE_TEST_SUITE(pg_bounds, PgFixture)

// A frozen server: a write in flight ends within the reply bound as maybe_committed, a call
// that must connect ends within the connect bound as unavailable, and once the server thaws the
// same store works again, with nothing acknowledged lost and the in-doubt write either done
// once or not at all.
BOOST_AUTO_TEST_CASE(a_frozen_server_costs_each_call_a_bounded_wait) {
  FreezableRelay relay{route_through(admin(), 0).server_socket};
  PgStoreOptions options;
  options.connection_string = route_through(admin(), relay.port()).via_port;
  options.connect_timeout = milliseconds{2000};
  options.statement_timeout = milliseconds{1000};
  options.reply_timeout = milliseconds{1500};
  PgStore through{options};
  const Created before = create_job(through, "before-freeze");

  relay.freeze();
  const TimedCall write = time_call([&] { run(through.insert_job(new_job("alice", "in-doubt"))); });
  BOOST_REQUIRE(write.error.has_value());
  BOOST_TEST((write.error->kind() == Kind::maybe_committed), write.error->what());
  BOOST_TEST(std::string(write.error->what()).find("no reply within 1500 ms") != std::string::npos,
             write.error->what());
  BOOST_TEST(write.seconds >= 1.4);
  BOOST_TEST(write.seconds <= 1.5 + 1.0);

  // The connection was closed; the next call must open one, and the server does not answer.
  const TimedCall read =
      time_call([&] { run(through.find_job(before.job.owner_id, before.job.id)); });
  BOOST_REQUIRE(read.error.has_value());
  BOOST_TEST((read.error->kind() == Kind::unavailable), read.error->what());
  BOOST_TEST(read.seconds <= 2.0 + 1.5 + 1.0);

  relay.thaw();
  // Thawed: the same store answers again, and every row is as a single-threaded history
  // allows.
  const auto found = run(through.find_job(before.job.owner_id, before.job.id));
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(found->idempotency_key == "before-freeze");
  const auto retried = run(through.insert_job(new_job("alice", "in-doubt")));
  BOOST_TEST((retried.outcome == InsertJobResult::Outcome::inserted ||
              retried.outcome == InsertJobResult::Outcome::unique_violation));
  pqxx::nontransaction tx{raw()};
  BOOST_TEST(
      tx.exec1("SELECT count(*) FROM jobs WHERE idempotency_key = 'in-doubt'")[0].as<int>() == 1);
}

// A statement stuck behind another transaction's lock is cancelled by the server after
// statement_timeout, and the failure names the operation and the cause.
BOOST_AUTO_TEST_CASE(a_statement_stuck_on_a_lock_is_cancelled_and_named) {
  PgStoreOptions options;
  options.connection_string = pg_url();
  options.statement_timeout = milliseconds{800};
  options.reply_timeout = milliseconds{5000};
  PgStore bounded{options};
  const Created created = create_job(bounded, "locked");
  pqxx::work holder{raw()};
  holder.exec_params("SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE", created.job.id);
  const TimedCall stuck =
      time_call([&] { run(bounded.fail_job(created.job.id, "stuck", at_us(900))); });
  holder.abort();
  BOOST_REQUIRE(stuck.error.has_value());
  BOOST_TEST((stuck.error->kind() == Kind::unavailable), stuck.error->what());
  const std::string what = stuck.error->what();
  BOOST_TEST(what.find("fail_job") != std::string::npos, what);
  BOOST_TEST(what.find("statement timeout") != std::string::npos, what);
  BOOST_TEST(stuck.seconds <= 0.8 + 1.0);
  // The lock is gone: the same store does it now.
  BOOST_CHECK_NO_THROW(run(bounded.fail_job(created.job.id, "unstuck", at_us(950))));
}

// What the server says outside a reply goes to the event sink as store.notice, never to stderr: a
// WARNING raised by a statement the store runs (here one it is made to run by a trigger).
BOOST_AUTO_TEST_CASE(server_warnings_reach_the_notice_sink) {
  {
    pqxx::nontransaction tx{raw()};
    tx.exec(
        "CREATE FUNCTION warn_on_job() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "RAISE WARNING 'onejob test warning'; RETURN NEW; END $$; "
        "CREATE TRIGGER warn_on_job BEFORE INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION "
        "warn_on_job()");
  }
  test::RecordingSink sink;
  PgStoreOptions options;
  options.connection_string = pg_url();
  options.events = &sink;
  PgStore noticed{options};
  create_job(noticed, "warned");
  BOOST_REQUIRE(sink.events.size() == 1U);
  BOOST_TEST(sink.events[0].kind() == "store.notice");
  const std::string text = sink.events[0].string_field("text").value_or("");
  BOOST_TEST(text.find("onejob test warning") != std::string::npos, text);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob::pg_test
