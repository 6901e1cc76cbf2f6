#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "system/adapters/pg_store.hpp"
#include "system/ports/work_signal.hpp"

namespace onejob {

// The WorkBell of processes that share one PostgreSQL schema: LISTEN/NOTIFY carries a ring from
// the process whose write left work to the workers of every other process. ring() rings this
// process's own workers (`local`) at once and has the channel's thread send a NOTIFY; a
// notification from another process rings `local`. A hint, like every ring: when the channel's
// connection is down, rings are lost and the workers' idle poll finds the work; when it comes
// back, `local` is rung once, since rings may have been lost meanwhile.
//
// One connection of its own, on a thread of its own. Rings that arrive while a NOTIFY is being
// sent become one more NOTIFY, so a burst of writes costs at most two.
class PgWorkChannel final : public WorkBell {
 public:
  // Starts listening (on its thread; the constructor does not wait for the connection).
  // REQUIRES: `local` outlives the channel.
  PgWorkChannel(PgStoreOptions options, WorkBell& local);
  ~PgWorkChannel() override;
  PgWorkChannel(const PgWorkChannel&) = delete;
  PgWorkChannel& operator=(const PgWorkChannel&) = delete;

  void ring() override;

  // The channel's name for `schema` (an identifier PostgreSQL accepts whatever the schema's name).
  static std::string channel_for(const std::string& schema);
  // Notifications from other processes that rang `local`, so far (for tests and metrics).
  std::uint64_t received() const { return received_.load(); }
  // Whether the channel is listening right now.
  bool listening() const { return listening_.load(); }

 private:
  void run();
  void wake();

  PgStoreOptions options_;
  std::string channel_;
  WorkBell& local_;
  int wake_fd_ = -1;  // an eventfd: ring() and the destructor wake the thread's poll()
  std::atomic<bool> pending_ = false;
  std::atomic<bool> stopping_ = false;
  std::atomic<bool> listening_ = false;
  std::atomic<std::uint64_t> received_ = 0;
  std::thread thread_;
};

}  // namespace onejob
