#include "fileio/bounded_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ballast::fileio {
namespace {

// The file descriptor closed when it goes out of scope.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

Status NotRegular(const std::string& path, mode_t mode) {
  return Status::Invalid(fmt::format("{}: {}, not a regular file", path, FileKind(mode)));
}

Status CannotOpen(const std::string& path, int error) {
  if (error == ENOENT || error == ENOTDIR) {
    return Status::NotFound(fmt::format("{}: no such file", path));
  }
  return Status::Invalid(fmt::format("{}: cannot open: {}", path, std::strerror(error)));
}

Status TooLarge(const std::string& path, size_t max_bytes) {
  return Status::Invalid(fmt::format("{}: larger than {} bytes", path, max_bytes));
}

// The bytes of `fd` up to its end or `limit` bytes, whichever comes first;
// Unavailable naming `path` when a read fails.
StatusOr<std::string> ReadUpTo(int fd, size_t limit, const std::string& path) {
  std::string text;
  char buffer[16 << 10];
  while (text.size() < limit) {
    const size_t want = std::min(sizeof buffer, limit - text.size());
    const ssize_t got = read(fd, buffer, want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return Status::Unavailable(fmt::format("{}: read failed: {}", path, std::strerror(errno)));
    }
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  return text;
}

}  // namespace

std::string_view FileKind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a file";
}

StatusOr<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes) {
  struct stat seen {};
  if (stat(path.c_str(), &seen) != 0) return CannotOpen(path, errno);
  if (!S_ISREG(seen.st_mode)) return NotRegular(path, seen.st_mode);
  if (static_cast<uintmax_t>(seen.st_size) > max_bytes) return TooLarge(path, max_bytes);
  // O_NONBLOCK: a FIFO put here since the stat cannot block the open (nor
  // the read); O_NOCTTY: a terminal put here does not become ours.
  const Descriptor fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) return CannotOpen(path, errno);
  struct stat opened {};
  if (fstat(fd.get(), &opened) != 0) return CannotOpen(path, errno);
  if (!S_ISREG(opened.st_mode)) return NotRegular(path, opened.st_mode);
  BALLAST_ASSIGN_OR_RETURN(std::string text, ReadUpTo(fd.get(), max_bytes + 1, path));
  if (text.size() > max_bytes) return TooLarge(path, max_bytes);
  return text;
}

}  // namespace ballast::fileio
