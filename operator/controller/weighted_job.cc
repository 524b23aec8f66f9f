#include "operator/controller/weighted_job.h"

#include <fmt/format.h>

#include "core/common/json_read.h"
#include "core/job/job_json.h"

namespace ballast::controller {
namespace {

using nlohmann::json;
namespace jr = json_read;

StatusOr<std::map<std::string, std::string>> ParseSelector(const json& node) {
  if (!node.is_object())
    return jr::Expected("spec.nodeSelector", "an object of label: value", node);
  std::map<std::string, std::string> selector;
  for (const auto& [key, value] : node.items()) {
    BALLAST_ASSIGN_OR_RETURN(selector[key], jr::String(value, jr::Field("spec.nodeSelector", key)));
  }
  return selector;
}

Status CheckTolerations(const json& node) {
  if (!node.is_array()) return jr::Expected("spec.tolerations", "a list of tolerations", node);
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string path = jr::Element("spec.tolerations", i);
    const json& toleration = node[i];
    BALLAST_RETURN_IF_ERROR(jr::ExpectObject(
        toleration, path, {"key", "operator", "value", "effect", "tolerationSeconds"}));
    for (const char* key : {"key", "operator", "value", "effect"}) {
      if (const json* value = jr::Find(toleration, key)) {
        BALLAST_RETURN_IF_ERROR(jr::String(*value, jr::Field(path, key)).status());
      }
    }
    if (const json* seconds = jr::Find(toleration, "tolerationSeconds")) {
      BALLAST_RETURN_IF_ERROR(
          jr::Int(*seconds, jr::Field(path, "tolerationSeconds"), INT64_MIN).status());
    }
  }
  return Status::Ok();
}

StatusOr<WorkerSpec> ReadWorker(const json& node) {
  const std::string path = "spec.worker";
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, {"image", "imagePullPolicy", "resources"}));
  WorkerSpec worker;
  if (const json* image = jr::Find(node, "image")) {
    BALLAST_ASSIGN_OR_RETURN(worker.image, jr::String(*image, jr::Field(path, "image")));
  }
  if (const json* policy = jr::Find(node, "imagePullPolicy")) {
    BALLAST_ASSIGN_OR_RETURN(worker.image_pull_policy,
                             jr::String(*policy, jr::Field(path, "imagePullPolicy")));
  }
  if (const json* resources = jr::Find(node, "resources")) {
    BALLAST_RETURN_IF_ERROR(
        jr::ExpectObject(*resources, jr::Field(path, "resources"), {"requests", "limits"}));
    worker.resources = *resources;
  }
  return worker;
}

// The Kubernetes-only keys of `spec` into `out`.
Status ParseKubernetesKeys(const json& spec, WeightedJobSpec& out) {
  if (const json* suspend = jr::Find(spec, "suspend")) {
    BALLAST_ASSIGN_OR_RETURN(out.suspend, jr::Bool(*suspend, "spec.suspend"));
  }
  if (const json* ttl = jr::Find(spec, "ttlSecondsAfterFinished")) {
    BALLAST_ASSIGN_OR_RETURN(out.ttl_seconds_after_finished,
                             jr::Int(*ttl, "spec.ttlSecondsAfterFinished", 0, INT32_MAX));
  }
  if (const json* selector = jr::Find(spec, "nodeSelector")) {
    BALLAST_ASSIGN_OR_RETURN(out.node_selector, ParseSelector(*selector));
  }
  if (const json* tolerations = jr::Find(spec, "tolerations")) {
    BALLAST_RETURN_IF_ERROR(CheckTolerations(*tolerations));
    out.tolerations = *tolerations;
  }
  if (const json* worker = jr::Find(spec, "worker")) {
    BALLAST_ASSIGN_OR_RETURN(out.worker, ReadWorker(*worker));
  }
  return Status::Ok();
}

}  // namespace

ParsedSpec ParseWeightedJobSpec(const json& spec, const std::string& name) {
  ParsedSpec parsed;
  if (!spec.is_object()) {
    parsed.error = {Reason::kInvalidSpec, jr::Expected("spec", "an object", spec)};
    return parsed;
  }
  auto job = job::JobSpecFromJson(spec, name);
  if (!job.ok()) {
    // An error in spec.policy carries its own reason.
    const bool policy = job.status().message().rfind("spec.policy", 0) == 0;
    parsed.error = {policy ? Reason::kInvalidPolicy : Reason::kInvalidSpec, job.status()};
    return parsed;
  }
  WeightedJobSpec out;
  out.job = std::move(*job);
  Status kube = ParseKubernetesKeys(spec, out);
  if (!kube.ok()) {
    parsed.error = {Reason::kInvalidSpec, kube};
    return parsed;
  }
  parsed.spec = std::move(out);
  return parsed;
}

}  // namespace ballast::controller
