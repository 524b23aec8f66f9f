#include "scenario_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "cli_common.h"
#include "common/utf8.h"
#include "local_runner.h"

namespace ballast::cli {

StatusOr<fuzzy::Profile> LoadProfile(const std::string& reference, const std::string& base_dir) {
  auto builtin = fuzzy::BuiltinProfile(reference);
  if (builtin.ok()) return builtin;
  std::filesystem::path path(reference);
  if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
  auto text = ReadFile(path.string());
  if (!text.ok()) {
    return Status::NotFound(reference + ": neither a built-in profile nor a readable file (" +
                            builtin.status().message() + ")");
  }
  return fuzzy::ParseProfile(*text, path.string());
}

StatusOr<LoadedScenario> LoadScenario(const std::string& path) {
  BALLAST_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  LoadedScenario loaded;
  BALLAST_ASSIGN_OR_RETURN(loaded.scenario, sim::ParseScenario(text, path));
  const std::string base = std::filesystem::path(path).parent_path().string();
  BALLAST_ASSIGN_OR_RETURN(loaded.profile, LoadProfile(loaded.scenario.profile, base));
  std::vector<fuzzy::NodeFacts> facts;
  for (const sim::NodeSpec& node : loaded.scenario.nodes) facts.push_back({node.name, node.labels});
  BALLAST_ASSIGN_OR_RETURN(loaded.weights, fuzzy::ComputeWeights(loaded.profile, facts));
  for (const fuzzy::NodeWeight& weight : loaded.weights.nodes) {
    loaded.priors.push_back({weight.name, weight.weight});
  }
  return loaded;
}

namespace {

// Ok when `text` is UTF-8; else Invalid at the line and column of the first
// byte that is not. A job file is YAML, which is UTF-8, and what it says
// reaches the workers as JSON: a command holding a Latin-1 byte would run
// with U+FFFD in its place (common/utf8.h), not as written.
Status CheckUtf8(std::string_view text, const std::string& path) {
  const size_t at = FindInvalidUtf8(text);
  if (at == std::string_view::npos) return Status::Ok();
  const std::string_view before = text.substr(0, at);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t line_start =
      before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1;
  return Status::Invalid(
      fmt::format("{}:{}:{}: byte {:#04x} is not UTF-8 (a job file is YAML, which is UTF-8)", path,
                  line, at - line_start + 1, static_cast<unsigned char>(text[at])));
}

}  // namespace

StatusOr<LoadedJob> LoadJob(const std::string& job_path, const std::string& cluster_path) {
  LoadedJob loaded;
  BALLAST_ASSIGN_OR_RETURN(std::string text, ReadFile(job_path));
  BALLAST_RETURN_IF_ERROR(CheckUtf8(text, job_path));
  BALLAST_ASSIGN_OR_RETURN(loaded.job, job::ParseJob(text, job_path));
  if (cluster_path.empty()) {
    BALLAST_ASSIGN_OR_RETURN(loaded.cluster, DefaultCluster());
  } else {
    BALLAST_ASSIGN_OR_RETURN(std::string cluster_text, ReadFile(cluster_path));
    BALLAST_ASSIGN_OR_RETURN(loaded.cluster, job::ParseCluster(cluster_text, cluster_path));
  }
  const std::string base = std::filesystem::path(job_path).parent_path().string();
  BALLAST_ASSIGN_OR_RETURN(loaded.profile, LoadProfile(loaded.job.profile, base));
  return loaded;
}

}  // namespace ballast::cli
