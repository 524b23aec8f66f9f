// Shared by the tests and benchmarks that start programs with fork/exec and wait
// for them: waits for a child with a bound.
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

namespace ballast::testing {

// The exit code of child `pid` as a shell reports it (128 + the signal when
// killed); -1, after SIGKILL, when it has not ended within `patience`.
inline int WaitExit(pid_t pid, std::chrono::seconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

}  // namespace ballast::testing
