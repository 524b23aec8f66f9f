// Test helper: reads a file of /proc/PID whatever becomes of the process.
// A process that exits between the open and the read fails the read with
// ESRCH, and a std::ifstream read through std::istreambuf_iterator throws on
// it ("basic_filebuf::underflow error reading the file: No such process"): a
// test that scanned /proc while one of its commands ended failed so.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace ballast::testing {

// The whole of `path` (a /proc file: cmdline, environ, stat); empty when the
// process is gone, a zombie's (whose cmdline and environ are empty), or
// unreadable.
inline std::string ReadProcFile(const std::filesystem::path& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, got);
  close(fd);
  return got < 0 ? "" : text;
}

}  // namespace ballast::testing
