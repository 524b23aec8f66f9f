#include "cgroup/cgroup_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ballast::cgroup {
namespace {

constexpr int kMaxDepth = 32;

// `dir` + "/" + `name` into `out` (kMaxCgroupPath bytes). False when too long.
bool Join(char* out, const char* dir, const char* name) {
  const size_t dir_len = strlen(dir);
  const size_t name_len = strlen(name);
  if (dir_len + 1 + name_len >= kMaxCgroupPath) return false;
  memcpy(out, dir, dir_len);
  out[dir_len] = '/';
  memcpy(out + dir_len + 1, name, name_len + 1);
  return true;
}

// Reads up to `size` - 1 bytes of `path` into `text`, NUL-terminated.
// Returns the bytes read, or -1 with errno set.
ssize_t ReadSmall(const char* path, char* text, size_t size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n;
  do {
    n = read(fd, text, size - 1);
  } while (n < 0 && errno == EINTR);
  close(fd);
  text[n > 0 ? n : 0] = '\0';
  return n;
}

bool Exists(const char* dir) { return access(dir, F_OK) == 0; }

void SleepMillisecond() {
  timespec pause{0, 1000000};
  nanosleep(&pause, nullptr);
}

// Milliseconds of the monotonic clock (clock_gettime is async-signal-safe).
long long NowMs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

// The layout of a getdents64 record.
struct Dirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

bool IsDots(const char* name) {
  return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

// RemoveTree of the cgroup whose path is the first `len` bytes of `path`
// (a kMaxCgroupPath buffer, extended in place for the children).
int RemoveAt(char* path, size_t len, int depth) {
  if (depth > kMaxDepth) return 1;
  int stayed = 0;
  const int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 0 : 1;
  alignas(8) char buffer[1024];
  for (;;) {
    const long n = syscall(SYS_getdents64, fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      const auto* entry = reinterpret_cast<const Dirent64*>(buffer + at);
      at += entry->d_reclen;
      if (entry->d_type != DT_DIR || IsDots(entry->d_name)) continue;
      const size_t name_len = strlen(entry->d_name);
      if (len + 1 + name_len >= kMaxCgroupPath) {
        ++stayed;
        continue;
      }
      path[len] = '/';
      memcpy(path + len + 1, entry->d_name, name_len + 1);
      stayed += RemoveAt(path, len + 1 + name_len, depth + 1);
      path[len] = '\0';
    }
  }
  close(fd);
  if (rmdir(path) != 0 && errno != ENOENT) ++stayed;
  return stayed;
}

}  // namespace

bool Kill(const char* dir) {
  char path[kMaxCgroupPath];
  if (!Join(path, dir, "cgroup.kill")) return false;
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool written = write(fd, "1", 1) == 1;
  close(fd);
  return written;
}

bool Empty(const char* dir) {
  char path[kMaxCgroupPath];
  char text[256];
  // cgroup v2: "populated 0" covers the whole subtree.
  if (Join(path, dir, "cgroup.events") && ReadSmall(path, text, sizeof(text)) >= 0) {
    const char* populated = strstr(text, "populated ");
    return populated != nullptr && populated[10] == '0';
  }
  if (!Exists(dir)) return true;
  // cgroup v1 has no cgroup.events: the group's own process list.
  return Join(path, dir, "cgroup.procs") && ReadSmall(path, text, sizeof(text)) == 0;
}

bool WaitEmpty(const char* dir, int timeout_ms) {
  // A clock, not a count of sleeps: each look costs reads, and under load a
  // thousand looks took far more than a second.
  const long long deadline = NowMs() + timeout_ms;
  while (NowMs() < deadline) {
    if (Empty(dir)) return true;
    SleepMillisecond();
  }
  return Empty(dir);
}

int KillListed(const char* dir) {
  char path[kMaxCgroupPath];
  if (!Join(path, dir, "cgroup.procs")) return 0;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  int signalled = 0;
  long pid = 0;
  bool digits = false;
  char buffer[512];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[i];
      if (c >= '0' && c <= '9') {
        pid = pid * 10 + (c - '0');
        digits = true;
        continue;
      }
      if (digits && pid > 0 && kill(static_cast<pid_t>(pid), SIGKILL) == 0) ++signalled;
      pid = 0;
      digits = false;
    }
  }
  if (digits && pid > 0 && kill(static_cast<pid_t>(pid), SIGKILL) == 0) ++signalled;
  close(fd);
  return signalled;
}

int RemoveTree(const char* dir) {
  char path[kMaxCgroupPath];
  const size_t len = strlen(dir);
  if (len >= kMaxCgroupPath) return 1;
  memcpy(path, dir, len + 1);
  return RemoveAt(path, len, 0);
}

bool JoinProcs(const char* procs) {
  const int fd = open(procs, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[16];
  char* end = text + sizeof(text);
  char* digit = end;
  for (unsigned long pid = static_cast<unsigned long>(getpid()); digit == end || pid > 0;
       pid /= 10) {
    *--digit = static_cast<char>('0' + pid % 10);
  }
  const bool moved = write(fd, digit, end - digit) == end - digit;
  close(fd);
  return moved;
}

bool JoinProcsFd(int procs_fd) { return write(procs_fd, "0", 1) == 1; }

std::string V2Mount() {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // "ID PARENT MAJ:MIN ROOT MOUNT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER"
    std::istringstream fields(line);
    std::string id, parent, device, root, mount, field;
    if (!(fields >> id >> parent >> device >> root >> mount)) continue;
    while (fields >> field && field != "-") {
    }
    if (fields >> field && field == "cgroup2") return mount;
  }
  return "";
}

std::vector<pid_t> Processes(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<pid_t> pids;
  auto read = [&pids](const fs::path& group) {
    std::ifstream in(group / "cgroup.procs");
    for (pid_t pid = 0; in >> pid;) pids.push_back(pid);
  };
  std::error_code error;
  if (!fs::is_directory(dir, error)) return pids;
  read(dir);
  for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_directory(error)) read(it->path());
  }
  return pids;
}

int KillAndRemove(const std::string& dir, int timeout_ms) {
  if (!Kill(dir.c_str())) {
    for (pid_t pid : Processes(dir)) kill(pid, SIGKILL);
  }
  WaitEmpty(dir.c_str(), timeout_ms);
  return RemoveTree(dir.c_str());
}

}  // namespace ballast::cgroup
