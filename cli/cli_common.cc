#include "cli/cli_common.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/common/json_read.h"
#include "core/config/document.h"
#include "fileio/bounded_file.h"

namespace ballast::cli {

StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  return fileio::ReadBoundedFile(path, max_bytes);
}

Status WriteFile(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return Status::NotFound(
          fmt::format("{}: cannot create file: {}", path, std::strerror(errno)));
    }
    out << text;
    if (!out.flush()) return Status::Unavailable(fmt::format("{}: write failed", path));
  }
  std::error_code error;
  std::filesystem::rename(temp, path, error);
  if (error) return Status::Unavailable(fmt::format("{}: {}", path, error.message()));
  return Status::Ok();
}

Status CheckWritable(const std::string& path, std::string_view flag) {
  const std::filesystem::path file(path);
  const std::string dir = file.has_parent_path() ? file.parent_path().string() : ".";
  struct stat info {};
  if (stat(dir.c_str(), &info) != 0) {
    return Status::Invalid(fmt::format("{} {}: the directory {} does not exist", flag, path, dir));
  }
  if (!S_ISDIR(info.st_mode)) {
    return Status::Invalid(fmt::format("{} {}: {} is {}, not a directory", flag, path, dir,
                                       fileio::FileKind(info.st_mode)));
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return Status::Invalid(fmt::format("{} {}: the directory {} is not writable: {}", flag, path,
                                       dir, std::strerror(errno)));
  }
  if (stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    return Status::Invalid(
        fmt::format("{} {}: {}, not a regular file", flag, path, fileio::FileKind(info.st_mode)));
  }
  return Status::Ok();
}

StatusOr<std::pair<std::string, std::string>> SplitNamespacedName(const std::string& text,
                                                                  const std::string& flag) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() ||
      text.find('/', slash + 1) != std::string::npos) {
    return Status::Invalid(fmt::format("{} {}: expected NAMESPACE/NAME", flag, text));
  }
  return std::pair{text.substr(0, slash), text.substr(slash + 1)};
}

int ReportError(const Status& status) {
  fmt::print(stderr, "ballast: {}\n", status.message());
  const bool bad_input =
      status.code() == StatusCode::kInvalid || status.code() == StatusCode::kNotFound;
  return bad_input ? kExitBadInput : kExitFailure;
}

StatusOr<balance::PolicySpec> PolicyByName(const std::string& text) {
  // name[:key=value]...: the options, as a job file's policy object holds
  // them (each value typed as a YAML file's plain value would be: 8 a
  // number, false a boolean, none a string); the whole text labels the
  // results, so two forms of one policy stay apart in a comparison.
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  nlohmann::json policy = {{"name", parts[0]}};
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t equals = parts[i].find('=');
    if (equals == 0 || equals == std::string::npos || equals + 1 == parts[i].size()) {
      return Status::Invalid(fmt::format("policy '{}': '{}': expected an option as key=value",
                                         json_read::Cut(text), json_read::Cut(parts[i])));
    }
    const std::string key = parts[i].substr(0, equals);
    if (key == "name" || key == "label" || policy.contains(key)) {
      return Status::Invalid(fmt::format("policy '{}': option {} given twice or reserved",
                                         json_read::Cut(text), json_read::Cut(key)));
    }
    policy[key] = config::ResolvePlainScalar(parts[i].substr(equals + 1));
  }
  if (parts.size() > 1) policy["label"] = text;
  auto spec = balance::PolicyFromJson(policy, "");
  if (!spec.ok()) {
    return Status::Invalid(
        fmt::format("policy '{}': {}", json_read::Cut(text), spec.status().message()));
  }
  return spec;
}

void RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace ballast::cli
