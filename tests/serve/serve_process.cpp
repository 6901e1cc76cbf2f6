#include "tests/serve/serve_process.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <boost/test/unit_test.hpp>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "system/service/tokens.hpp"

namespace onejob::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "onejob-serve-XXXXXX").string();
  BOOST_REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  const std::string file = path_ + "/" + name;
  std::ofstream out(file, std::ios::binary);
  out << text;
  BOOST_REQUIRE(out.good());
  return file;
}

std::string write_test_tokens(const TempDir& dir) {
  return dir.write("tokens.txt",
                   "# the serve tests' tokens\n"
                   "sha256:" +
                       sha256_hex("alice-token") + " alice\n" + "sha256:" +
                       sha256_hex("bob-token") + " bob\n" + "sha256:" + sha256_hex("alice-ops") +
                       " alice operator\n" + "sha256:" + sha256_hex("bob-ops") + " bob operator\n");
}

ServeProcess::ServeProcess(const std::vector<std::string>& args, const std::string& log_file) {
  // Everything the child needs is made here, before fork: the tests start processes from
  // several threads at once, and a child of a multi-threaded parent may only make async-signal-
  // safe calls until it execs (an allocation there can wait forever on a lock another thread of
  // the parent held at the fork). The descriptors are close-on-exec, so that processes started
  // at once do not inherit each other's pipes; dup2 clears the flag on the copies kept.
  std::vector<std::string> all{ONEJOB_BINARY, "serve"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : all) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int pipe_fds[2];
  BOOST_REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
  const int log_fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  pid_ = ::fork();
  BOOST_REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    if (log_fd >= 0) ::dup2(log_fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (log_fd >= 0) ::close(log_fd);
  ::close(pipe_fds[1]);
  stdout_fd_ = pipe_fds[0];
  std::string seen;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  const std::regex listening("listening on http://[^:]+:([0-9]+)");
  std::smatch match;
  while (!std::regex_search(seen, match, listening)) {
    pollfd poll_fd{stdout_fd_, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0 || ::poll(&poll_fd, 1, static_cast<int>(left.count())) <= 0) break;
    char chunk[256];
    const auto n = ::read(stdout_fd_, chunk, sizeof chunk);
    if (n <= 0) break;
    seen.append(chunk, static_cast<std::size_t>(n));
  }
  if (!std::regex_search(seen, match, listening)) {
    // Not left running: a process that never started must not hold ports or store connections
    // into the tests after this one.
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    exited_ = true;
    std::ifstream log(log_file);
    std::stringstream text;
    text << log.rdbuf();
    BOOST_FAIL("onejob serve did not start; stdout: " << seen << " stderr: " << text.str());
  }
  port_ = static_cast<unsigned short>(std::stoi(match[1].str()));
}

ServeProcess::~ServeProcess() {
  if (!exited_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  ::close(stdout_fd_);
}

void ServeProcess::signal(int sig) const { ::kill(pid_, sig); }

int ServeProcess::wait(std::chrono::milliseconds bound) {
  if (exited_) return 0;
  const auto give_up = std::chrono::steady_clock::now() + bound;
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() >= give_up) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

long ServeProcess::rss_kib() const {
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmRSS:")) return std::atol(line.c_str() + 6);
  }
  return 0;
}

}  // namespace onejob::testing
