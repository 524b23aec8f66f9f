#include "cli/run/run_containment.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cgroup/cgroup_tree.h"

namespace ballast::cli {

namespace fs = std::filesystem;

StatusOr<std::unique_ptr<RunContainment>> RunContainment::Create(const std::string& group) {
  const std::string mount = cgroup::V2Mount();
  if (mount.empty()) return Status::Unavailable("cgroup v2 is not mounted");
  const fs::path dir = fs::path(mount) / "ballast" / group;
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return Status::Unavailable(
        fmt::format("cannot make the cgroup {}: {}", dir.string(), error.message()));
  }
  if (access((dir / "cgroup.kill").c_str(), W_OK) != 0) {
    fs::remove(dir, error);
    return Status::Unavailable("cgroup v2 here has no cgroup.kill (Linux 5.14 and later have it)");
  }
  return std::unique_ptr<RunContainment>(new RunContainment(dir.string()));
}

RunContainment::~RunContainment() {
  if (!killed_) KillAll(std::chrono::seconds(2));
}

StatusOr<std::string> RunContainment::AddNode(const std::string& name) {
  const fs::path dir = fs::path(dir_) / name;
  std::error_code error;
  fs::create_directory(dir, error);
  if (error) {
    return Status::Unavailable(
        fmt::format("cannot make the cgroup {}: {}", dir.string(), error.message()));
  }
  return dir.string();
}

size_t RunContainment::ClearNode(const std::string& node_dir) {
  const size_t left = cgroup::Processes(node_dir).size();
  cgroup::Kill(node_dir.c_str());
  cgroup::WaitEmpty(node_dir.c_str(), 1000);
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(node_dir, error)) {
    if (entry.is_directory(error)) cgroup::RemoveTree(entry.path().c_str());
  }
  if (left > 0) {
    spdlog::info("killed what a worker left processes={} cgroup={}", left, node_dir);
  }
  return left;
}

ContainmentReport RunContainment::KillAll(std::chrono::milliseconds patience) {
  killed_ = true;
  ContainmentReport report;
  report.by_cgroup = true;
  report.where = dir_;
  report.killed = cgroup::Processes(dir_).size();
  cgroup::Kill(dir_.c_str());
  cgroup::WaitEmpty(dir_.c_str(), static_cast<int>(patience.count()));
  report.remaining = cgroup::Processes(dir_).size();
  report.groups_left = RemoveGroups(dir_);
  if (report.killed > 0 || report.remaining > 0 || !report.groups_left.empty()) {
    spdlog::info("killed the run's processes cgroup={} killed={} remaining={} groups_left={}", dir_,
                 report.killed, report.remaining, report.groups_left.size());
  }
  return report;
}

std::vector<LeftGroup> RemoveGroups(const std::string& dir) {
  std::vector<LeftGroup> left;
  if (cgroup::RemoveTree(dir.c_str()) == 0) return left;
  // Those that stayed, deepest first, each tried once more for its error.
  std::vector<fs::path> groups = {dir};
  std::error_code error;
  for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_directory(error)) groups.push_back(it->path());
  }
  std::sort(groups.begin(), groups.end(),
            [](const fs::path& a, const fs::path& b) { return a.string() > b.string(); });
  for (const fs::path& group : groups) {
    if (rmdir(group.c_str()) == 0 || errno == ENOENT) continue;
    const int cause = errno;
    size_t processes = 0;  // in this group itself
    std::ifstream procs(group / "cgroup.procs");
    for (pid_t pid = 0; procs >> pid;) ++processes;
    bool below = false;
    for (const auto& entry : fs::directory_iterator(group, error)) {
      below = below || entry.is_directory(error);
    }
    std::string why = processes == 1  ? std::string("1 process remains in it")
                      : processes > 0 ? fmt::format("{} processes remain in it", processes)
                      : below         ? "a cgroup below it remains"
                                      : fmt::format("rmdir: {}", std::strerror(cause));
    left.push_back({group.string(), std::move(why)});
  }
  return left;
}

}  // namespace ballast::cli
