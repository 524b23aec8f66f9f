#include "cli/run/run_logs.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "cli/run/run_cleanup.h"
#include "core/common/utf8.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kLogDirPrefix = "ballast-logs-";

// True when `dir` is a directory (not a link to one) of this user's that
// holds the marker as a regular file: a folder a run made itself.
bool MadeByARun(const fs::path& dir) {
  struct stat info {};
  if (lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != geteuid()) {
    return false;
  }
  struct stat marker {};
  return lstat((dir / kLogDirMarker).c_str(), &marker) == 0 && S_ISREG(marker.st_mode);
}

}  // namespace

std::string TemporaryDirectory() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

std::string LogDirName(pid_t owner, const std::string& job_id) {
  return fmt::format("{}{}-{}", kLogDirPrefix, owner, job_id);
}

pid_t LogDirOwner(const std::string& name) {
  if (!name.starts_with(kLogDirPrefix)) return 0;
  const char* begin = name.data() + kLogDirPrefix.size();
  const char* end = name.data() + name.size();
  pid_t owner = 0;
  const auto [rest, error] = std::from_chars(begin, end, owner);
  if (error != std::errc() || rest == begin || owner <= 0) return 0;
  if (rest + 1 >= end || *rest != '-') return 0;  // "-<job id>", not empty
  return owner;
}

std::vector<std::string> LogDirsToRemove(const std::vector<LogDirEntry>& dirs,
                                         const std::function<bool(pid_t)>& runs, size_t keep) {
  std::vector<const LogDirEntry*> finished;
  for (const LogDirEntry& dir : dirs) {
    const pid_t owner = LogDirOwner(dir.name);
    if (owner != 0 && !runs(owner)) finished.push_back(&dir);
  }
  // Newest first.
  std::sort(finished.begin(), finished.end(), [](const LogDirEntry* a, const LogDirEntry* b) {
    return a->modified != b->modified ? a->modified > b->modified : a->name > b->name;
  });
  std::vector<std::string> remove;
  for (size_t i = keep; i < finished.size(); ++i) remove.push_back(finished[i]->name);
  std::sort(remove.begin(), remove.end());
  return remove;
}

StatusOr<std::string> MakeLogDir(const std::string& parent, const std::string& job_id) {
  const fs::path dir = fs::path(parent) / LogDirName(getpid(), job_id);
  if (mkdir(dir.c_str(), 0755) != 0) {
    return Status::Unavailable(
        fmt::format("cannot create {}: {}", dir.string(), std::strerror(errno)));
  }
  std::ofstream marker(dir / kLogDirMarker);
  marker << "made by ballast run (process " << getpid()
         << "); a later run removes this folder once it is not among the last " << kKeptLogDirs
         << "\n";
  if (!marker.flush()) {
    return Status::Unavailable(fmt::format("cannot create {}", (dir / kLogDirMarker).string()));
  }
  return dir.string();
}

std::vector<std::string> PruneLogDirs(const std::string& parent, size_t keep) {
  std::vector<LogDirEntry> dirs;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(parent, error)) {
    const std::string name = entry.path().filename().string();
    if (LogDirOwner(name) == 0 || !MadeByARun(entry.path())) continue;
    std::error_code ignored;
    const auto modified = fs::last_write_time(entry.path(), ignored);
    if (ignored) continue;
    dirs.push_back({name, std::chrono::file_clock::to_sys(modified)});
  }
  std::vector<std::string> removed;
  for (const std::string& name : LogDirsToRemove(dirs, ProcessRuns, keep)) {
    const fs::path dir = fs::path(parent) / name;
    std::error_code failed;
    fs::remove_all(dir, failed);
    if (failed) {
      spdlog::info("an old log folder stays folder={} error=\"{}\"", dir.string(),
                   failed.message());
      continue;
    }
    removed.push_back(dir.string());
  }
  if (!removed.empty()) {
    spdlog::debug("removed old log folders of earlier runs count={} kept={}", removed.size(), keep);
  }
  return removed;
}

std::string LastLogError(const std::string& path) {
  constexpr std::streamoff kTail = 16 << 10;
  constexpr size_t kMaxBytes = 300;
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size <= 0) return "";
  in.seekg(std::max<std::streamoff>(0, size - kTail));
  std::string tail(static_cast<size_t>(std::min(size, kTail)), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  tail.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  std::string_view found;
  std::string_view last;
  for (size_t start = 0; start < tail.size();) {
    size_t end = tail.find('\n', start);
    if (end == std::string::npos) end = tail.size();
    const std::string_view line(tail.data() + start, end - start);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) last = line;
    if (const size_t error = line.find(" error "); error != std::string_view::npos) {
      found = line.substr(error + 7);
      // spdlog's logger name follows the level: "error ballast-worker ...".
      if (found.starts_with("ballast-worker ")) found.remove_prefix(15);
    }
    start = end + 1;
  }
  const std::string_view line = found.empty() ? last : found;
  return EscapeControls(Utf8Prefix(line, kMaxBytes));
}

}  // namespace ballast::cli
