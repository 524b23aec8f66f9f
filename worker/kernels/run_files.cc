// The files one run of an exec command shares with it (run_files.h).
#include "worker/kernels/run_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <utility>

#include "core/workload/item_list.h"
#include "worker/kernels/factories.h"

namespace ballast::kernels {
namespace {

// The directories of the runs' files: TMPDIR/ballast-run-<worker pid>-XXXXXX.
constexpr std::string_view kRunDirPrefix = "ballast-run-";

// "a FIFO", "a directory", ... for a file that is not a regular one.
const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

// The first `max` bytes of the regular file `path`. The command may have
// put anything there: a symbolic link is not followed and a FIFO or device
// is not opened for long (O_NONBLOCK), so nothing it does makes the worker
// wait. NotFound when there is no file; Invalid naming what is there
// instead of a regular file.
StatusOr<std::string> ReadRegularFile(const std::string& path, size_t max) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(path);
    if (errno == ELOOP) {
      return Status::Invalid("the file BALLAST_RESULT_FILE names is a symbolic link, not a file");
    }
    return Status::Invalid(
        fmt::format("cannot read the file BALLAST_RESULT_FILE names: {}", std::strerror(errno)));
  }
  struct stat info {};
  std::string text;
  const bool stated = fstat(fd, &info) == 0;
  if (!stated || !S_ISREG(info.st_mode)) {
    const std::string kind = stated ? KindOf(info.st_mode) : "unreadable";
    close(fd);
    return Status::Invalid(
        fmt::format("the file BALLAST_RESULT_FILE names is {}, not a regular file", kind));
  }
  text.resize(max);
  size_t got = 0;
  while (got < max) {
    const ssize_t n = read(fd, text.data() + got, max - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(got);
  return text;
}

// Writes `text` to `path`, a new or regular file; a link or a FIFO the
// command left there is refused at once rather than followed or waited on.
Status WriteFile(const std::string& path, const std::string& text) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  struct stat info {};
  if (fd < 0 || fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    const int saved = errno;
    if (fd >= 0) close(fd);
    return Status::Unavailable(fmt::format("cannot write {}: {}", path,
                                           fd >= 0 ? "not a regular file" : std::strerror(saved)));
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const int saved = errno;
  if (close(fd) != 0 || done < text.size()) {
    return Status::Unavailable(fmt::format("cannot write {}: {}", path, std::strerror(saved)));
  }
  return Status::Ok();
}

// Copies the run's result to `<keep_dir>/<begin>-<end>.json`, whole or not
// at all (written beside it, then renamed).
Status Keep(const std::string& text, const std::string& keep_dir, balance::Range items) {
  std::error_code error;
  std::filesystem::create_directories(keep_dir, error);
  const std::string name = fmt::format("{}/{}-{}.json", keep_dir, items.begin, items.end);
  const std::string part = fmt::format("{}.part-{}", name, getpid());
  BALLAST_RETURN_IF_ERROR(WriteFile(part, text));
  if (std::rename(part.c_str(), name.c_str()) != 0) {
    const int saved = errno;
    unlink(part.c_str());
    return Status::Invalid(
        fmt::format("cannot keep the result in {}: {}", name, std::strerror(saved)));
  }
  return Status::Ok();
}

}  // namespace

std::string RunDirParent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

StatusOr<std::unique_ptr<RunFiles>> RunFiles::Make(const workload::WorkloadSpec& spec,
                                                   balance::Range items) {
  const bool values = spec.item_values != nullptr;
  const bool result = !spec.exec.result.merge.empty();
  auto files = std::unique_ptr<RunFiles>(new RunFiles);
  if (!values && !result) return files;
  // Named after this worker, so that a worker killed before it removed
  // its runs' directories has them removed by the next (RemoveStaleRunDirs).
  std::string pattern = fmt::format("{}/{}{}-XXXXXX", RunDirParent(), kRunDirPrefix, getpid());
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::Unavailable(fmt::format("cannot make a directory for the run in {}: {}", pattern,
                                           std::strerror(errno)));
  }
  files->dir_ = pattern;
  if (values) {
    files->items_file_ = files->dir_ + "/items";
    BALLAST_RETURN_IF_ERROR(WriteFile(
        files->items_file_, workload::ItemLines(*spec.item_values, items.begin, items.end)));
  }
  if (result) files->result_file_ = files->dir_ + "/result.json";
  return files;
}

RunFiles::~RunFiles() {
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

void RunFiles::AddEnvironment(std::vector<std::string>* env) const {
  if (!items_file_.empty()) env->push_back("BALLAST_ITEMS_FILE=" + items_file_);
  if (!result_file_.empty()) env->push_back("BALLAST_RESULT_FILE=" + result_file_);
}

void RunFiles::ClearResult() const {
  if (!result_file_.empty()) unlink(result_file_.c_str());
}

StatusOr<workload::HandedBack> RunFiles::TakeResult(const workload::ResultSpec& spec,
                                                    balance::Range items, int code) const {
  if (result_file_.empty()) return workload::HandedBack{};
  auto read = ReadRegularFile(result_file_, spec.max_bytes + 1);
  if (read.status().code() == StatusCode::kNotFound) {
    return Status::Invalid("exited 0 but wrote no result to the file BALLAST_RESULT_FILE names");
  }
  BALLAST_ASSIGN_OR_RETURN(const std::string text, std::move(read));
  BALLAST_ASSIGN_OR_RETURN(workload::HandedBack back,
                           workload::ReadResultFile(text, spec, items, "result file"));
  if (!spec.keep_dir.empty() && (code == 0 || !back.failed.empty())) {
    BALLAST_RETURN_IF_ERROR(Keep(text, spec.keep_dir, items));
  }
  return back;
}

size_t RemoveStaleRunDirs(const std::string& parent) {
  std::error_code error;
  size_t removed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(parent, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kRunDirPrefix)) continue;
    // ballast-run-<pid>-XXXXXX: the worker <pid> made it.
    const std::string_view rest = std::string_view(name).substr(kRunDirPrefix.size());
    pid_t pid = 0;
    const auto [end, parsed] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    if (parsed != std::errc() || end == rest.data() || *end != '-' || pid <= 0) continue;
    // A worker still running keeps its own; one gone left these behind.
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;
    // Only a directory of this user's own, not a symbolic link: /tmp is
    // shared, and another user's tree (or a link to one) named so is theirs.
    struct stat info {};
    if (lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_uid != geteuid()) {
      continue;
    }
    std::error_code ignored;
    if (std::filesystem::remove_all(entry.path(), ignored) > 0) ++removed;
  }
  return removed;
}

}  // namespace ballast::kernels
