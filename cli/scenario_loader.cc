#include "cli/scenario_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "cli/cli_common.h"
#include "cli/run/local_runner.h"
#include "core/common/json_read.h"
#include "core/config/document.h"
#include "core/job/job_json.h"
#include "operator/api/weighted_job.h"

namespace ballast::cli {

StatusOr<fuzzy::Profile> LoadProfile(const std::string& reference, const std::string& base_dir) {
  auto builtin = fuzzy::BuiltinProfile(reference);
  if (builtin.ok()) return builtin;
  std::filesystem::path path(reference);
  if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
  auto text = ReadFile(path.string());
  if (text.status().code() == StatusCode::kNotFound) {
    return Status::NotFound(reference + ": neither a built-in profile nor a readable file (" +
                            builtin.status().message() + ")");
  }
  if (!text.ok()) return text.status();  // a file that is there, but not one to read
  return fuzzy::ParseProfile(*text, path.string());
}

StatusOr<LoadedScenario> LoadScenario(const std::string& path) {
  BALLAST_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  LoadedScenario loaded;
  BALLAST_ASSIGN_OR_RETURN(loaded.scenario, sim::ParseScenario(text, path));
  const std::string base = std::filesystem::path(path).parent_path().string();
  BALLAST_ASSIGN_OR_RETURN(loaded.profile, LoadProfile(loaded.scenario.profile, base));
  std::vector<fuzzy::NodeFacts> facts;
  for (const sim::EmulatedNode& node : loaded.scenario.nodes)
    facts.push_back({node.name, node.labels});
  BALLAST_ASSIGN_OR_RETURN(loaded.weights, fuzzy::ComputeWeights(loaded.profile, facts));
  for (const fuzzy::NodeWeight& weight : loaded.weights.nodes) {
    loaded.priors.push_back({weight.name, weight.weight});
  }
  return loaded;
}

Status ReadListedItems(job::JobSpec* job, const std::string& job_path,
                       const std::string& base_dir) {
  const job::ItemSource& source = job->item_source;
  if (!source.pending()) return Status::Ok();
  if (!source.config_map.empty()) {
    return Status::Invalid(fmt::format(
        "{}: spec.itemsFrom.configMap: a ConfigMap is read on Kubernetes; for ballast run give "
        "spec.itemsFrom.file (the same text, one item a line)",
        job_path));
  }
  std::filesystem::path path(source.file);
  if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
  // Only keeps a huge file from being read whole: the list's own bound is
  // checked as it is read, and a file holds more than it (blank lines, "\r",
  // blanks, costs written longer than JSON writes them).
  constexpr size_t kMostBytes = 4 * workload::kMaxItemListBytes;
  auto text = ReadFile(path.string(), kMostBytes);
  if (!text.ok()) {
    return text.status().WithPrefix(fmt::format("{}: spec.itemsFrom.file: ", job_path));
  }
  return job::ResolveItems(job, *text, path.string());
}

namespace {

// The history key of the job in `text` (LoadedJob::history_key), `job` as
// ParseJob read it.
history::HistoryKey HistoryKeyOf(std::string_view text, const std::string& job_path,
                                 const job::JobSpec& job) {
  const history::HistoryKey kind(job.workload.kind);
  if (job.workload.kind != workload::WorkloadKind::kExec) return kind;
  auto document = config::ParseYaml(text, job_path);
  if (!document.ok()) return kind;
  const nlohmann::json& tree = document->tree;
  // A bare spec, or the spec of a WeightedJob manifest (job::ParseJob's rule).
  const bool manifest = json_read::Find(tree, "kind") || json_read::Find(tree, "spec");
  const nlohmann::json* spec = manifest ? json_read::Find(tree, "spec") : &tree;
  if (!spec) return kind;
  const api::ParsedSpec parsed = api::ParseWeightedJobSpec(*spec, job.name);
  return parsed.spec ? api::HistoryKey(*parsed.spec) : kind;
}

}  // namespace

StatusOr<LoadedJob> LoadJob(const std::string& job_path, const std::string& cluster_path) {
  LoadedJob loaded;
  BALLAST_ASSIGN_OR_RETURN(std::string text, ReadFile(job_path));
  BALLAST_ASSIGN_OR_RETURN(loaded.job, job::ParseJob(text, job_path));
  loaded.history_key = HistoryKeyOf(text, job_path, loaded.job);
  const std::string base = std::filesystem::path(job_path).parent_path().string();
  BALLAST_RETURN_IF_ERROR(ReadListedItems(&loaded.job, job_path, base));
  if (cluster_path.empty()) {
    BALLAST_ASSIGN_OR_RETURN(loaded.cluster, DefaultCluster());
  } else {
    BALLAST_ASSIGN_OR_RETURN(std::string cluster_text, ReadFile(cluster_path));
    BALLAST_ASSIGN_OR_RETURN(loaded.cluster, job::ParseCluster(cluster_text, cluster_path));
  }
  BALLAST_ASSIGN_OR_RETURN(loaded.profile, LoadProfile(loaded.job.profile, base));
  return loaded;
}

}  // namespace ballast::cli
