// Test helper shared by the tests that run a program as a user would: runs a
// shell command and collects what it prints.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <utility>

namespace ballast::testing {

// Runs `command` with /bin/sh; returns its exit code (-1 when it could not
// start or did not exit) and what it wrote to stdout (redirect stderr in the
// command to collect it too).
inline std::pair<int, std::string> RunShellCommand(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) out += buffer;
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace ballast::testing
