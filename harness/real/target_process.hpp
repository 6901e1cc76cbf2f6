#pragma once
// The target as a child process the probe owns (`--target-cmd`): started with /bin/sh, killed
// with SIGKILL, paused with SIGSTOP and resumed with SIGCONT — the nemesis on a real service.
// The command runs in a process group of its own, and every signal goes to the whole group.
#include <chrono>
#include <string>

namespace onejob::real {

class TargetProcess {
 public:
  // `command` runs as `/bin/sh -c "exec COMMAND"`; its stdout and stderr are appended to
  // `log_file`. Nothing starts until start().
  TargetProcess(std::string command, std::string log_file);
  ~TargetProcess();  // kills it when still running
  TargetProcess(const TargetProcess&) = delete;
  TargetProcess& operator=(const TargetProcess&) = delete;

  // Starts it (when not running) and waits up to `bound` until GET `ready_path` on
  // host:port answers 200 while it still runs (an answer after it exited came from another
  // process on that port). False when it exited or did not get ready in time (it is then
  // killed); `why` says which, and exited_before_ready() whether it exited.
  bool start(const std::string& host, const std::string& port, const std::string& ready_path,
             std::chrono::milliseconds bound, std::string& why);
  bool exited_before_ready() const { return exited_before_ready_; }
  void kill();    // SIGKILL, and reaped
  void pause();   // SIGSTOP
  void resume();  // SIGCONT
  bool running();
  int starts() const { return starts_; }
  const std::string& log_file() const { return log_file_; }

 private:
  std::string command_;
  std::string log_file_;
  int pid_ = -1;
  int starts_ = 0;
  bool exited_before_ready_ = false;
};

}  // namespace onejob::real
