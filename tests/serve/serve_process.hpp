#pragma once

// `onejob serve` as a child process, for tests that talk to it over a real socket, signal it
// and kill it.

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace onejob::testing {

// Polls `read` every 50 ms until `done` holds of its answer, at most `bound`; the last answer.
template <typename Read, typename Done>
auto wait_for(Read read, Done done,
              std::chrono::milliseconds bound = std::chrono::milliseconds(20'000)) {
  const auto give_up = std::chrono::steady_clock::now() + bound;
  auto last = read();
  while (!done(last) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    last = read();
  }
  return last;
}

// A scratch folder, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes `text` to path()/name; returns the file's path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

// The tokens file the serve tests use: owners alice and bob (tokens "alice-token",
// "bob-token"), and one operator for each ("alice-ops", "bob-ops").
std::string write_test_tokens(const TempDir& dir);

class ServeProcess {
 public:
  // Starts `onejob serve ARGS...` with stdout on a pipe and stderr to `log_file`, and waits (up
  // to a minute) for its "listening on" line. Fails the test when it does not come.
  ServeProcess(const std::vector<std::string>& args, const std::string& log_file);
  ~ServeProcess();  // kills it (SIGKILL) when still running
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  unsigned short port() const { return port_; }
  std::string port_text() const { return std::to_string(port_); }
  int pid() const { return pid_; }
  void signal(int sig) const;
  // Waits up to `bound` for it to exit: its exit code, 128+signal when a signal ended it, or -1
  // when it is still running.
  int wait(std::chrono::milliseconds bound);
  // Its resident memory in KiB (VmRSS), 0 when it cannot be read.
  long rss_kib() const;

 private:
  int pid_ = -1;
  int stdout_fd_ = -1;
  unsigned short port_ = 0;
  bool exited_ = false;
};

}  // namespace onejob::testing
