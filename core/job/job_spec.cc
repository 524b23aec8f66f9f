// ParseJob and ParseCluster: a job or cluster file read as a tree
// (config/document.h) by the one reader of its kind (job_json.h), with the
// file and line put in front of the reader's error.
#include "core/job/job_spec.h"

#include <fmt/format.h>

#include "core/common/json_read.h"
#include "core/common/names.h"
#include "core/config/document.h"
#include "core/job/job_json.h"

namespace ballast::job {
namespace {

using nlohmann::json;
namespace jr = json_read;

// The API version a WeightedJob manifest must name (crds/).
constexpr const char* kJobApiVersion = "ballast.io/v1alpha1";

// Where the spec is in a job file: the whole document, or `spec` of a
// WeightedJob manifest (apiVersion, kind, metadata, spec); and the job's
// name. Invalid naming the path otherwise.
struct SpecAt {
  const json* spec = nullptr;
  std::string path;
  std::string name = "job";
};

StatusOr<SpecAt> FindSpec(const json& root) {
  if (!root.is_object()) {
    return jr::Expected("document", "a job: a map with workload, policy, ...", root);
  }
  if (!jr::Find(root, "kind") && !jr::Find(root, "spec")) return SpecAt{&root, "", "job"};
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(root, "", {"apiVersion", "kind", "metadata", "spec"}));
  BALLAST_ASSIGN_OR_RETURN(const json* api_version, jr::Require(root, "", "apiVersion"));
  if (*api_version != kJobApiVersion) {
    return jr::Expected("apiVersion", fmt::format("\"{}\"", kJobApiVersion), *api_version);
  }
  BALLAST_ASSIGN_OR_RETURN(const json* kind, jr::Require(root, "", "kind"));
  if (*kind != "WeightedJob") return jr::Expected("kind", "\"WeightedJob\"", *kind);
  SpecAt at;
  at.path = "spec";
  if (const json* metadata = jr::Find(root, "metadata")) {
    if (const json* name = jr::Find(*metadata, "name")) {
      BALLAST_ASSIGN_OR_RETURN(at.name, jr::String(*name, "metadata.name"));
      if (Status checked = CheckName(at.name, NameKind::kDnsLabel); !checked.ok()) {
        return Status::InvalidAt("metadata.name", checked.message());
      }
    }
  }
  BALLAST_ASSIGN_OR_RETURN(at.spec, jr::Require(root, "", "spec"));
  return at;
}

}  // namespace

StatusOr<JobSpec> ParseJob(std::string_view yaml, const std::string& file_name) {
  BALLAST_ASSIGN_OR_RETURN(config::Document document, config::ParseYaml(yaml, file_name));
  auto at = FindSpec(document.tree);
  if (!at.ok()) return document.source.Locate(at.status());
  auto job = JobSpecFromJson(*at->spec, at->name, at->path);
  if (!job.ok()) return document.source.Locate(job.status());
  return job;
}

StatusOr<ClusterSpec> ParseCluster(std::string_view yaml, const std::string& file_name) {
  BALLAST_ASSIGN_OR_RETURN(config::Document document, config::ParseYaml(yaml, file_name));
  auto cluster = ClusterFromJson(document.tree);
  if (!cluster.ok()) return document.source.Locate(cluster.status());
  return cluster;
}

}  // namespace ballast::job
