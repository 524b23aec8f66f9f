#include "operator/api/weighted_job.h"

#include "core/common/json_read.h"
#include "core/job/job_json.h"

namespace ballast::api {
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

// spec.worker into `forms` (pull policy, resources; the image for primes and
// matmul) and `image`.
Status ReadWorker(const json& node, ShortForms& forms, std::optional<std::string>& image) {
  const std::string path = "spec.worker";
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, {"image", "imagePullPolicy", "resources"}));
  if (const json* given = jr::Find(node, "image")) {
    BALLAST_ASSIGN_OR_RETURN(image, jr::String(*given, jr::Field(path, "image")));
  }
  if (const json* policy = jr::Find(node, "imagePullPolicy")) {
    BALLAST_ASSIGN_OR_RETURN(forms.image_pull_policy,
                             jr::String(*policy, jr::Field(path, "imagePullPolicy")));
  }
  if (const json* resources = jr::Find(node, "resources")) {
    BALLAST_RETURN_IF_ERROR(
        jr::ExpectObject(*resources, jr::Field(path, "resources"), {"requests", "limits"}));
    forms.resources = *resources;
  }
  return Status::Ok();
}

// The short forms of `spec` (for a job of `workload`), read and typed.
Status ReadShortForms(const json& spec, const workload::WorkloadSpec& workload, ShortForms& forms,
                      std::optional<std::string>& worker_image) {
  if (const json* selector = jr::Find(spec, "nodeSelector")) {
    BALLAST_ASSIGN_OR_RETURN(forms.node_selector, ParseSelector(*selector));
  }
  if (const json* tolerations = jr::Find(spec, "tolerations")) {
    BALLAST_RETURN_IF_ERROR(CheckTolerations(*tolerations, "spec.tolerations"));
    forms.tolerations = *tolerations;
  }
  if (const json* worker = jr::Find(spec, "worker")) {
    BALLAST_RETURN_IF_ERROR(ReadWorker(*worker, forms, worker_image));
  }
  if (workload.kind != workload::WorkloadKind::kExec) {
    forms.image = worker_image;
    forms.image_path = "spec.worker.image";
  } else if (!workload.exec.image.empty()) {
    forms.image = workload.exec.image;
    forms.image_path = "spec.workload.exec.image";
  }
  return Status::Ok();
}

// The Kubernetes-only keys of `spec` into `out`.
Status ParseKubernetesKeys(const json& spec, WeightedJobSpec& out) {
  if (const json* suspend = jr::Find(spec, "suspend")) {
    BALLAST_ASSIGN_OR_RETURN(out.suspend, jr::Bool(*suspend, "spec.suspend"));
  }
  if (const json* timeout = jr::Find(spec, "workerStartTimeoutSeconds")) {
    BALLAST_ASSIGN_OR_RETURN(out.worker_start_timeout_s,
                             jr::Int(*timeout, "spec.workerStartTimeoutSeconds", 1, 86400));
  }
  ShortForms forms;
  BALLAST_RETURN_IF_ERROR(ReadShortForms(spec, out.job.workload, forms, out.worker_image));
  const json* given = jr::Find(spec, "template");
  BALLAST_ASSIGN_OR_RETURN(out.pod_template, ReadPodTemplate(given ? *given : json(), forms));
  return Status::Ok();
}

// spec.ttlSecondsAfterFinished and spec.podTTLSecondsAfterFinished into
// `parsed` (ParsedSpec).
Status ParseTtls(const json& spec, ParsedSpec& parsed) {
  if (const json* ttl = jr::Find(spec, "ttlSecondsAfterFinished")) {
    BALLAST_ASSIGN_OR_RETURN(parsed.ttl_seconds_after_finished,
                             jr::Int(*ttl, "spec.ttlSecondsAfterFinished", 0, INT32_MAX));
  }
  if (const json* ttl = jr::Find(spec, "podTTLSecondsAfterFinished")) {
    BALLAST_ASSIGN_OR_RETURN(parsed.pod_ttl_seconds_after_finished,
                             jr::Int(*ttl, "spec.podTTLSecondsAfterFinished", -1, INT32_MAX));
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
  if (Status ttls = ParseTtls(spec, parsed); !ttls.ok()) {
    parsed.error = {Reason::kInvalidSpec, ttls};
    return parsed;
  }
  auto job = job::JobSpecFromJson(spec, name);
  if (!job.ok()) {
    // An error in spec.policy carries its own reason, told by the field the
    // error is about (its path), not by its text.
    const Status& error = job.status();
    parsed.error = {error.IsAbout("spec.policy") ? Reason::kInvalidPolicy : Reason::kInvalidSpec,
                    error};
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

history::HistoryKey HistoryKey(const WeightedJobSpec& spec) {
  const workload::WorkloadKind kind = spec.job.workload.kind;
  const history::HistoryKey by_kind(kind);
  if (kind != workload::WorkloadKind::kExec) return by_kind;
  std::string repository = jr::TextAt(WorkerContainerOf(spec.pod_template), "image");
  if (repository.empty()) return by_kind;
  repository = repository.substr(0, repository.find('@'));  // without a digest
  const size_t colon = repository.rfind(':');
  const size_t slash = repository.rfind('/');
  // A tag is after the last colon past the last slash (host:port/name has one before).
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    repository.resize(colon);
  }
  return history::HistoryKey(kind, repository);
}

}  // namespace ballast::api
