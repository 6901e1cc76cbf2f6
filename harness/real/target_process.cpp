#include "harness/real/target_process.hpp"

#include <csignal>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/real/http_client.hpp"

namespace onejob::real {

TargetProcess::TargetProcess(std::string command, std::string log_file)
    : command_(std::move(command)), log_file_(std::move(log_file)) {}

TargetProcess::~TargetProcess() { kill(); }

bool TargetProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

bool TargetProcess::start(const std::string& host, const std::string& port,
                          const std::string& ready_path, std::chrono::milliseconds bound,
                          std::string& why) {
  if (!running()) {
    const int log = ::open(log_file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log < 0) {
      why = "cannot open the target's log " + log_file_;
      return false;
    }
    const std::string shell = "exec " + command_;
    const int pid = ::fork();
    if (pid < 0) {
      ::close(log);
      why = "fork failed";
      return false;
    }
    if (pid == 0) {
      ::setpgid(0, 0);
      ::dup2(log, STDOUT_FILENO);
      ::dup2(log, STDERR_FILENO);
      const int null = ::open("/dev/null", O_RDONLY);
      if (null >= 0) ::dup2(null, STDIN_FILENO);
      ::execl("/bin/sh", "sh", "-c", shell.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::setpgid(pid, pid);  // both sides: whichever runs first
    ::close(log);
    pid_ = pid;
    ++starts_;
  }
  exited_before_ready_ = false;
  const auto exited = [&] {
    exited_before_ready_ = true;
    why = "the target command exited before it was ready (its output: " + log_file_ + ")";
    return false;
  };
  const auto give_up = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < give_up) {
    if (!running()) return exited();
    HttpConnection connection(host, port);
    if (connection.send("GET", ready_path, {}, "", std::chrono::seconds(1)).status == 200) {
      return running() || exited();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  why = "the target did not answer 200 on " + ready_path + " within " +
        std::to_string(bound.count()) + " ms (its output: " + log_file_ + ")";
  kill();
  return false;
}

void TargetProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void TargetProcess::pause() {
  if (running()) ::kill(-pid_, SIGSTOP);
}

void TargetProcess::resume() {
  if (pid_ > 0) ::kill(-pid_, SIGCONT);
}

}  // namespace onejob::real
