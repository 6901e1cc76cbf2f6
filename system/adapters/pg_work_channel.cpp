#include "system/adapters/pg_work_channel.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <poll.h>
#include <pqxx/pqxx>
#include <sys/eventfd.h>
#include <unistd.h>

#include "system/adapters/pg_connection.hpp"

namespace onejob {

namespace {

class Receiver final : public pqxx::notification_receiver {
 public:
  Receiver(pqxx::connection& connection, const std::string& channel, WorkBell& local,
           std::atomic<std::uint64_t>& received)
      : pqxx::notification_receiver(connection, channel),
        own_pid_(connection.backendpid()),
        local_(local),
        received_(received) {}
  void operator()(const std::string&, int backend_pid) override {
    // Our own NOTIFY comes back too: this process's workers were rung when it was sent.
    if (backend_pid == own_pid_) return;
    ++received_;
    local_.ring();
  }

 private:
  int own_pid_;
  WorkBell& local_;
  std::atomic<std::uint64_t>& received_;
};

}  // namespace

std::string PgWorkChannel::channel_for(const std::string& schema) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a: short, and the same in every process
  for (const unsigned char c : schema) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  char name[40];
  std::snprintf(name, sizeof name, "onejob_work_%016llx", static_cast<unsigned long long>(hash));
  return name;
}

PgWorkChannel::PgWorkChannel(PgStoreOptions options, WorkBell& local)
    : options_(std::move(options)),
      channel_(channel_for(options_.schema)),
      local_(local),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  thread_ = std::thread([this] { run(); });
}

PgWorkChannel::~PgWorkChannel() {
  stopping_ = true;
  wake();
  thread_.join();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void PgWorkChannel::ring() {
  local_.ring();
  pending_ = true;
  wake();
}

void PgWorkChannel::wake() {
  if (wake_fd_ < 0) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(wake_fd_, &one, sizeof one);
}

void PgWorkChannel::run() {
  using namespace std::chrono_literals;
  const std::string conninfo = pg::bounded_conninfo(options_);
  auto backoff = 100ms;
  // Waits for the connection's socket (or none) or a wake, at most `bound`.
  const auto wait = [this](int socket, std::chrono::milliseconds bound) {
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {socket, POLLIN, 0}};
    ::poll(fds, socket >= 0 ? 2 : 1, static_cast<int>(bound.count()));
    std::uint64_t drained = 0;
    [[maybe_unused]] const auto read = ::read(wake_fd_, &drained, sizeof drained);
  };
  while (!stopping_) {
    try {
      pqxx::connection connection{conninfo};
      Receiver receiver{connection, channel_, local_, received_};  // sends LISTEN
      listening_ = true;
      backoff = 100ms;
      local_.ring();  // rings sent while no one listened here are lost: look once
      while (!stopping_) {
        if (pending_.exchange(false)) {
          pqxx::nontransaction tx{connection};
          tx.exec_params("SELECT pg_notify($1, '')", channel_);
        }
        connection.get_notifs();
        if (pending_) continue;
        wait(connection.sock(), 1000ms);
        if (!connection.is_open()) break;
      }
    } catch (const std::exception&) {
      // The channel is a hint: its failures only leave the workers to their idle poll.
    }
    listening_ = false;
    // The whole backoff, whatever rings come meanwhile (each wakes the poll): only a stop cuts
    // it short, so a channel that cannot connect tries at most once per backoff.
    const auto until = std::chrono::steady_clock::now() + backoff;
    for (auto now = std::chrono::steady_clock::now(); !stopping_ && now < until;
         now = std::chrono::steady_clock::now()) {
      wait(-1, std::chrono::duration_cast<std::chrono::milliseconds>(until - now) + 1ms);
    }
    backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
  }
}

}  // namespace onejob
