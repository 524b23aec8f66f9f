#include "operator/controller/worker_objects.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <random>

#include "operator/controller/resources.h"

namespace ballast::controller {
namespace {

using nlohmann::json;

constexpr size_t kMaxLabelLength = 63;
constexpr int64_t kNonRootUid = 65532;  // "nonroot" of distroless images

// FNV-1a: stable across builds and machines, unlike std::hash, so a name
// shortened by one operator version is found again by the next.
uint32_t Fnv1a(const std::string& text) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

// `wanted` as a DNS-1123 label of at most `max` characters: lower case,
// digits and '-', starting and ending alphanumeric; when it had to change,
// it ends in "-" and 8 hex digits of the original's hash.
std::string DnsLabel(const std::string& wanted, size_t max) {
  std::string out;
  bool changed = false;
  for (char c : wanted) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
      changed |= std::isupper(u) != 0;
    } else {
      out += '-';
      changed |= c != '-';
    }
  }
  if (!changed && out.size() <= max && !out.empty() && out.front() != '-' && out.back() != '-') {
    return out;
  }
  const std::string suffix = fmt::format("-{:08x}", Fnv1a(wanted));
  out = out.substr(0, max - suffix.size());
  while (!out.empty() && out.back() == '-') out.pop_back();
  while (!out.empty() && out.front() == '-') out.erase(0, 1);
  return (out.empty() ? "w" : out) + suffix;
}

json Labels(const ObjectMeta& job, const std::string* node) {
  json labels = {{kJobLabel, job.name}, {kManagedByLabel, kManagedBy}};
  if (node) labels[std::string(kNodeLabel)] = DnsLabel(*node, kMaxLabelLength);
  return labels;
}

json Metadata(const ObjectMeta& job, const std::string& name, const std::string* node) {
  return {{"name", name},
          {"namespace", job.ns},
          {"labels", Labels(job, node)},
          {"ownerReferences", json::array({OwnerReference(job)})}};
}

json EnvValue(const std::string& name, const std::string& value) {
  return {{"name", name}, {"value", value}};
}

// Required node affinity to exactly `node` (by the node's name, not a label
// a user could copy to another node).
json AffinityTo(const std::string& node) {
  json term = {{"matchFields", json::array({{{"key", "metadata.name"},
                                             {"operator", "In"},
                                             {"values", json::array({node})}}})}};
  return {{"nodeAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             {{"nodeSelectorTerms", json::array({term})}}}}}};
}

json WorkerContainer(const ObjectMeta& job, const WorkerSpec& worker, const std::string& node,
                     const WorkerPodSettings& settings) {
  json env = json::array({
      EnvValue("BALLAST_COORDINATOR", settings.coordinator_url),
      EnvValue("BALLAST_JOB", settings.coordinator_job),
      EnvValue("BALLAST_WORKER_NAME", node),
      // The metrics' job and namespace labels (docs/metrics.md).
      EnvValue("BALLAST_JOB_NAME", job.name),
      EnvValue("BALLAST_NAMESPACE", job.ns),
      {{"name", "BALLAST_TOKEN"},
       {"valueFrom",
        {{"secretKeyRef", {{"name", TokenSecretName(job.name)}, {"key", kTokenKey}}}}}},
      {{"name", "NODE_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}},
  });
  json container = {
      {"name", "worker"},
      {"image", worker.image.value_or(settings.default_image)},
      {"env", env},
      {"terminationMessagePolicy", "FallbackToLogsOnError"},
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"readOnlyRootFilesystem", true},
        {"runAsNonRoot", true},
        {"capabilities", {{"drop", json::array({"ALL"})}}}}},
  };
  if (worker.image_pull_policy) container["imagePullPolicy"] = *worker.image_pull_policy;
  if (json resources = WorkerResources(worker, settings); !resources.is_null()) {
    container["resources"] = std::move(resources);
  }
  if (settings.metrics_port > 0) {
    container["env"].push_back(
        EnvValue("BALLAST_METRICS_LISTEN", fmt::format("0.0.0.0:{}", settings.metrics_port)));
    container["ports"] = json::array(
        {{{"name", "metrics"}, {"containerPort", settings.metrics_port}, {"protocol", "TCP"}}});
  }
  return container;
}

// The exec workload in the user's image (docs/workloads.md): the worker
// container as built above becomes an init container of the same image that
// bundles the worker into an emptyDir, and the main container runs that
// bundle, through its own loader, in `image`. /tmp is a writable emptyDir, as
// the root file system stays read-only.
void RunInUserImage(json& pod_spec, const std::string& image) {
  json& worker = pod_spec["containers"][0];
  json bundle = worker;
  bundle["name"] = "bundle";
  bundle["args"] = json::array({"bundle", "--to", kBundleMountPath});
  bundle["volumeMounts"] =
      json::array({{{"name", "ballast-bundle"}, {"mountPath", kBundleMountPath}}});
  bundle.erase("env");
  bundle.erase("ports");
  const std::string dir = kBundleMountPath;
  worker["image"] = image;
  worker["command"] =
      json::array({dir + "/ld.so", "--library-path", dir + "/lib", dir + "/ballast-worker"});
  worker["volumeMounts"] = json::array(
      {{{"name", "ballast-bundle"}, {"mountPath", kBundleMountPath}, {"readOnly", true}},
       {{"name", "tmp"}, {"mountPath", "/tmp"}}});
  pod_spec["initContainers"] = json::array({bundle});
  pod_spec["volumes"] = json::array({{{"name", "ballast-bundle"}, {"emptyDir", json::object()}},
                                     {{"name", "tmp"}, {"emptyDir", json::object()}}});
}

}  // namespace

std::string WorkerPodName(const std::string& job, const std::string& node) {
  return DnsLabel(job + "-" + node, kMaxLabelLength);
}

std::string TokenSecretName(const std::string& job) {
  return DnsLabel(job + "-token", kMaxLabelLength);
}

json OwnerReference(const ObjectMeta& job) {
  return {{"apiVersion", kApiVersion}, {"kind", kJobKind},
          {"name", job.name},          {"uid", job.uid},
          {"controller", true},        {"blockOwnerDeletion", true}};
}

json WorkerResources(const WorkerSpec& worker, const WorkerPodSettings& settings) {
  return worker.resources ? *worker.resources : settings.default_resources;
}

double WorkerDuty(const WorkerSpec& worker, const NodeView& node,
                  const WorkerPodSettings& settings) {
  const json resources = WorkerResources(worker, settings);
  if (!resources.is_object()) return 1;
  const auto limit = CpuCores(resources.value("/limits/cpu"_json_pointer, json()));
  if (!limit || !node.cpu_cores) return 1;
  return std::min(1.0, *limit / *node.cpu_cores);
}

json BuildWorkerPod(const ObjectMeta& job, const WeightedJobSpec& spec, const std::string& node,
                    const WorkerPodSettings& settings) {
  json pod_spec = {
      {"restartPolicy", "Never"},
      {"affinity", AffinityTo(node)},
      {"automountServiceAccountToken", false},
      {"enableServiceLinks", false},
      {"terminationGracePeriodSeconds", 30},
      // The sandbox's pause process becomes PID 1 and reaps what the
      // commands of an exec job leave behind; the worker is not PID 1, which
      // would have to reap them itself (and which ignores SIGTERM without a
      // handler).
      {"shareProcessNamespace", true},
      {"securityContext",
       {{"runAsNonRoot", true},
        {"runAsUser", kNonRootUid},
        {"runAsGroup", kNonRootUid},
        {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
      {"containers", json::array({WorkerContainer(job, spec.worker, node, settings)})},
  };
  if (!spec.tolerations.empty()) pod_spec["tolerations"] = spec.tolerations;
  const workload::WorkloadSpec& workload = spec.job.workload;
  if (workload.kind == workload::WorkloadKind::kExec && !workload.exec.image.empty()) {
    RunInUserImage(pod_spec, workload.exec.image);
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", Metadata(job, WorkerPodName(job.name, node), &node)},
          {"spec", pod_spec}};
}

json BuildTokenSecret(const ObjectMeta& job, const std::string& token) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"type", "Opaque"},
          {"metadata", Metadata(job, TokenSecretName(job.name), nullptr)},
          {"stringData", {{kTokenKey, token}}}};
}

std::string NewToken() {
  std::random_device device;
  std::string out;
  for (int i = 0; i < 32; ++i) out += fmt::format("{:02x}", device() & 0xff);
  return out;
}

}  // namespace ballast::controller
