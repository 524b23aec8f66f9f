#include "worker/probe/tree_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <vector>

namespace ballast::worker {
namespace {

constexpr int kMaxLinks = 40;
constexpr size_t kMaxDirEntries = 65536;

std::deque<std::string> Split(const std::string& path) {
  std::deque<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t slash = path.find('/', start);
    const std::string part = path.substr(start, slash - start);
    if (!part.empty() && part != ".") parts.push_back(part);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return parts;
}

std::string Join(const std::string& root, const std::vector<std::string>& parts) {
  std::string path = root == "/" ? "" : root;
  for (const std::string& part : parts) path += "/" + part;
  return path.empty() ? "/" : path;
}

probe::FileRead Unreadable(std::string error) {
  probe::FileRead read;
  read.state = probe::FileRead::State::kUnreadable;
  read.error = std::move(error);
  return read;
}

// Reads `path` (already resolved in the root) when it is a regular file.
// Its type is looked at with lstat before it is opened, so a FIFO, a socket
// or a device node is never opened (opening one can block, wake a writer
// waiting on a FIFO, or reset a device); the open itself cannot block or
// take a terminal (O_NONBLOCK, O_NOCTTY) and fstat checks that it is still
// the same regular file, in case the tree changed in between.
probe::FileRead ReadBounded(const std::string& path, size_t max_bytes) {
  probe::FileRead read;
  struct stat before {};
  if (lstat(path.c_str(), &before) != 0) {
    read.state =
        errno == ENOENT ? probe::FileRead::State::kMissing : probe::FileRead::State::kUnreadable;
    read.error = std::strerror(errno);
    return read;
  }
  if (!S_ISREG(before.st_mode)) return Unreadable("not a regular file");
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    read.state =
        errno == ENOENT ? probe::FileRead::State::kMissing : probe::FileRead::State::kUnreadable;
    read.error = std::strerror(errno);
    return read;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != before.st_dev ||
      st.st_ino != before.st_ino) {
    close(fd);
    return Unreadable("not a regular file");
  }
  std::string content(max_bytes + 1, '\0');
  size_t got = 0;
  while (got < content.size()) {
    const ssize_t n = ::read(fd, content.data() + got, content.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      read.state = probe::FileRead::State::kUnreadable;
      read.error = std::strerror(errno);
      close(fd);
      return read;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  read.state = got > max_bytes ? probe::FileRead::State::kTooLong : probe::FileRead::State::kOk;
  content.resize(std::min(got, max_bytes));
  read.content = std::move(content);
  return read;
}

// The names in directory `relative` matching `pattern`, sorted; at most
// kMaxDirEntries are looked at.
std::vector<std::string> ListMatching(const std::string& root, const std::string& relative,
                                      const std::string& pattern) {
  std::vector<std::string> names;
  auto dir_path = ResolveInRoot(root, relative);
  if (!dir_path.ok()) return names;
  DIR* dir = opendir(dir_path->c_str());
  if (dir == nullptr) return names;
  size_t seen = 0;
  while (const dirent* entry = readdir(dir)) {
    if (++seen > kMaxDirEntries) break;
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) == 0) names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// The relative paths `pattern` names: itself when it has no '*', else every
// existing match (at most kMaxGlobMatches).
std::vector<std::string> Expand(const std::string& root, const std::string& pattern) {
  std::vector<std::string> paths = {""};
  for (const std::string& part : Split(pattern)) {
    std::vector<std::string> next;
    for (const std::string& prefix : paths) {
      const std::string base = prefix.empty() ? "" : prefix + "/";
      if (part.find('*') == std::string::npos) {
        next.push_back(base + part);
        continue;
      }
      for (const std::string& name : ListMatching(root, prefix, part)) {
        if (next.size() >= probe::kMaxGlobMatches) break;
        next.push_back(base + name);
      }
    }
    paths = std::move(next);
  }
  return paths;
}

}  // namespace

StatusOr<std::string> ResolveInRoot(const std::string& root, const std::string& relative) {
  std::vector<std::string> done;
  std::deque<std::string> todo = Split(relative);
  int links = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.front());
    todo.pop_front();
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(part);
    const std::string path = Join(root, done);
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return Status::NotFound(path + ": no such file");
      return Status::Unavailable(fmt::format("{}: {}", path, std::strerror(errno)));
    }
    if (!S_ISLNK(st.st_mode)) continue;
    if (++links > kMaxLinks) return Status::Invalid(path + ": too many symbolic links");
    char target[4096];
    const ssize_t n = readlink(path.c_str(), target, sizeof(target) - 1);
    if (n < 0) return Status::Unavailable(fmt::format("{}: {}", path, std::strerror(errno)));
    const std::string link(target, static_cast<size_t>(n));
    done.pop_back();
    if (!link.empty() && link.front() == '/') done.clear();
    std::deque<std::string> parts = Split(link);
    todo.insert(todo.begin(), parts.begin(), parts.end());
  }
  return Join(root, done);
}

StatusOr<probe::Snapshot> ReadSnapshot(const std::string& root) {
  struct stat st {};
  if (stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Invalid(fmt::format("--root {}: not a directory", root));
  }
  std::string base = root;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  probe::Snapshot snapshot;
  for (const probe::ProbeFile& file : probe::ProbeFiles()) {
    for (const std::string& relative : Expand(base, file.pattern)) {
      auto path = ResolveInRoot(base, relative);
      probe::FileRead read;
      if (path.ok()) {
        read = ReadBounded(*path, file.max_bytes);
      } else if (path.status().code() != StatusCode::kNotFound) {
        read.state = probe::FileRead::State::kUnreadable;
        read.error = path.status().message();
      }
      snapshot.files[relative] = std::move(read);
    }
  }
  char real[PATH_MAX];
  if (realpath(base.c_str(), real) != nullptr && std::string(real) == "/") {
    struct utsname name {};
    if (uname(&name) == 0) snapshot.live_machine = name.machine;
    const long page = sysconf(_SC_PAGESIZE);
    if (page > 0) snapshot.live_page_size = static_cast<uint64_t>(page);
  }
  return snapshot;
}

}  // namespace ballast::worker
