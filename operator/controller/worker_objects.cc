#include "operator/controller/worker_objects.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <random>

#include "core/common/json_read.h"
#include "operator/api/labels.h"
#include "operator/api/pod_template.h"

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

json Labels(const api::ObjectMeta& job, const std::string* node) {
  json labels = {{api::kJobLabel, job.name}, {api::kManagedByLabel, api::kManagedBy}};
  if (node) labels[std::string(api::kNodeLabel)] = DnsLabel(*node, kMaxLabelLength);
  return labels;
}

json Metadata(const api::ObjectMeta& job, const std::string& name, const std::string* node) {
  return {{"name", name},
          {"namespace", job.ns},
          {"labels", Labels(job, node)},
          {"ownerReferences", json::array({OwnerReference(job)})}};
}

json EnvValue(const std::string& name, const std::string& value) {
  return {{"name", name}, {"value", value}};
}

// `user`'s keys over `defaults` (when `user` is an object).
json Merged(json defaults, const json& user) {
  if (user.is_object()) {
    for (const auto& [key, value] : user.items()) defaults[key] = value;
  }
  return defaults;
}

// The template's required node affinity with every term also requiring
// exactly `node` (by the node's name, not a label a user could copy to
// another node); one term of that alone when the template has none.
json PinnedAffinity(json affinity, const std::string& node) {
  const json pin = {{"key", "metadata.name"}, {"operator", "In"}, {"values", json::array({node})}};
  if (!affinity.is_object()) affinity = json::object();
  json& required = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
  json terms = json_read::At(required, "nodeSelectorTerms");
  if (!terms.is_array() || terms.empty()) terms = json::array({json::object()});
  for (json& term : terms) term["matchFields"].push_back(pin);
  required = {{"nodeSelectorTerms", terms}};
  return affinity;
}

// Ballast's env of the worker container, then the template's (so that the
// template's values may refer to Ballast's as $(NODE_NAME)).
json WorkerEnv(const api::ObjectMeta& job, const std::string& node,
               const WorkerPodSettings& settings, const json& user) {
  json env = json::array({
      EnvValue("BALLAST_COORDINATOR", settings.coordinator_url),
      EnvValue("BALLAST_JOB", settings.coordinator_job),
      EnvValue("BALLAST_WORKER_NAME", node),
      // The metrics' job and namespace labels (docs/metrics.md).
      EnvValue("BALLAST_JOB_NAME", job.name),
      EnvValue("BALLAST_NAMESPACE", job.ns),
      EnvValue("BALLAST_TOKEN_FILE", api::kTokenFile),
      api::NodeNameEnv(),
  });
  if (settings.metrics_port > 0) {
    env.push_back(
        EnvValue("BALLAST_METRICS_LISTEN", fmt::format("0.0.0.0:{}", settings.metrics_port)));
  }
  if (settings.node_cpu)
    env.push_back(EnvValue("BALLAST_NODE_CPU", fmt::format("{:g}", *settings.node_cpu)));
  if (user.is_array()) {
    for (const json& entry : user) {
      if (entry != api::NodeNameEnv()) env.push_back(entry);  // the one a template may repeat
    }
  }
  return env;
}

// A container's security context as Ballast gives it: the worker
// container's before the template's keys, the bundle's whole.
json ContainerSecurity() {
  return {{"allowPrivilegeEscalation", false},
          {"readOnlyRootFilesystem", true},
          {"runAsNonRoot", true},
          {"capabilities", {{"drop", json::array({"ALL"})}}}};
}

// The worker container: the template's containers[0] with Ballast's parts.
json WorkerContainer(const api::ObjectMeta& job, const api::WeightedJobSpec& spec,
                     const std::string& node, const WorkerPodSettings& settings,
                     const std::string& image) {
  json container = api::WorkerContainerOf(spec.pod_template);
  container["image"] = image;
  container["env"] = WorkerEnv(job, node, settings, json_read::At(container, "env"));
  container["securityContext"] =
      Merged(ContainerSecurity(), json_read::At(container, "securityContext"));
  if (!container.contains("terminationMessagePolicy")) {
    container["terminationMessagePolicy"] = "FallbackToLogsOnError";
  }
  if (json resources = WorkerResources(spec, settings); !resources.is_null()) {
    container["resources"] = std::move(resources);
  }
  if (settings.metrics_port > 0) {
    if (!container["ports"].is_array()) container["ports"] = json::array();
    container["ports"].push_back(
        {{"name", "metrics"}, {"containerPort", settings.metrics_port}, {"protocol", "TCP"}});
  }
  return container;
}

bool MountsAt(const json& container, const std::string& path) {
  const json* mounts = json_read::Find(container, "volumeMounts");
  if (!mounts || !mounts->is_array()) return false;
  for (const json& mount : *mounts) {
    const json* mount_path = json_read::Find(mount, "mountPath");
    if (mount_path && mount_path->is_string() &&
        api::NormalMountPath(mount_path->get<std::string>()) == path) {
      return true;
    }
  }
  return false;
}

// `item` appended to the list at `key` of `object` (made a list if absent).
void Append(json& object, const char* key, json item) {
  if (!object[key].is_array()) object[key] = json::array();
  object[key].push_back(std::move(item));
}

// The bundle init container's security context: Ballast's alone, whatever
// the template gives the worker container (privileged, capabilities), so
// that Ballast's own container never runs with more than it needs. Its user
// is the pod's when that is not root, so its files belong to the pod's user;
// uid and gid 65532 otherwise.
json BundleSecurity(const json& pod_security) {
  json security = ContainerSecurity();
  security["seccompProfile"] = {{"type", "RuntimeDefault"}};
  const json* user = json_read::Find(pod_security, "runAsUser");
  if (!user || !user->is_number_integer() || user->get<int64_t>() <= 0) {
    security["runAsUser"] = kNonRootUid;
    security["runAsGroup"] = kNonRootUid;
  }
  return security;
}

// The init container that copies the bundle of the ballast-worker image
// `ballast_image` into the emptyDir kBundleVolume, the worker container's
// pull policy and resources.
json BundleInitContainer(const json& pod_spec, const std::string& ballast_image) {
  const json& worker = pod_spec["containers"][0];
  json bundle = {
      {"name", api::kBundleContainer},
      {"image", ballast_image},
      {"args", json::array({"bundle", "--to", api::kBundleMountPath})},
      {"volumeMounts",
       json::array({{{"name", api::kBundleVolume}, {"mountPath", api::kBundleMountPath}}})},
      {"terminationMessagePolicy", "FallbackToLogsOnError"},
      {"securityContext", BundleSecurity(json_read::At(pod_spec, "securityContext"))},
  };
  for (const char* key : {"imagePullPolicy", "resources"}) {
    if (worker.contains(key)) bundle[key] = worker[key];
  }
  return bundle;
}

// The exec workload in the user's image (docs/workloads.md): the worker
// container runs the bundle of the ballast-worker image `ballast_image`,
// through its own loader, in its own image; the bundle is copied into an
// emptyDir by an init container, or is the image itself mounted as an image
// volume (`source`). /tmp is a writable emptyDir (the root file system stays
// read-only) unless the template mounts something there.
void RunInUserImage(json& pod_spec, const std::string& ballast_image, BundleSource source) {
  json& worker = pod_spec["containers"][0];
  const bool image_volume = source == BundleSource::kImageVolume;
  std::string dir = api::kBundleMountPath;
  if (image_volume) dir += std::string("/") + api::kBundleImageDir;
  worker["command"] =
      json::array({dir + "/ld.so", "--library-path", dir + "/lib", dir + "/ballast-worker"});
  Append(worker, "volumeMounts",
         {{"name", api::kBundleVolume}, {"mountPath", api::kBundleMountPath}, {"readOnly", true}});
  if (image_volume) {
    json image = {{"reference", ballast_image}};
    if (worker.contains("imagePullPolicy")) image["pullPolicy"] = worker["imagePullPolicy"];
    Append(pod_spec, "volumes", {{"name", api::kBundleVolume}, {"image", image}});
  } else {
    Append(pod_spec, "volumes", {{"name", api::kBundleVolume}, {"emptyDir", json::object()}});
  }
  if (!MountsAt(worker, "/tmp")) {
    Append(worker, "volumeMounts", {{"name", api::kTmpVolume}, {"mountPath", "/tmp"}});
    Append(pod_spec, "volumes", {{"name", api::kTmpVolume}, {"emptyDir", json::object()}});
  }
  if (image_volume) return;
  json init = json::array({BundleInitContainer(pod_spec, ballast_image)});
  for (const json* container : json_read::ObjectsAt(pod_spec, "initContainers")) {
    init.push_back(*container);
  }
  pod_spec["initContainers"] = init;
}

// The worker container's image: the template's, else the ballast-worker image.
std::string WorkerImage(const api::WeightedJobSpec& spec, const WorkerPodSettings& settings) {
  const json* given = json_read::Find(api::WorkerContainerOf(spec.pod_template), "image");
  return given && given->is_string() ? given->get<std::string>() : BallastImage(spec, settings);
}

// The pod's spec: the template's with Ballast's parts.
json WorkerPodSpec(const api::ObjectMeta& job, const api::WeightedJobSpec& spec,
                   const std::string& node, const WorkerPodSettings& settings) {
  json pod_spec = spec.pod_template.spec;
  // Ballast's choices where the template makes none.
  const json defaults = {{"automountServiceAccountToken", false},
                         {"enableServiceLinks", false},
                         {"terminationGracePeriodSeconds", 30}};
  for (const auto& [key, value] : defaults.items()) {
    if (!json_read::Find(pod_spec, key)) pod_spec[key] = value;
  }
  pod_spec["restartPolicy"] = "Never";
  // The sandbox's pause process becomes PID 1 and reaps what the commands of
  // an exec job leave behind; the worker is not PID 1, which would have to
  // reap them itself (and which ignores SIGTERM without a handler).
  pod_spec["shareProcessNamespace"] = true;
  pod_spec["securityContext"] = Merged({{"runAsNonRoot", true},
                                        {"runAsUser", kNonRootUid},
                                        {"runAsGroup", kNonRootUid},
                                        {"seccompProfile", {{"type", "RuntimeDefault"}}}},
                                       json_read::At(pod_spec, "securityContext"));
  pod_spec["affinity"] = PinnedAffinity(json_read::At(pod_spec, "affinity"), node);
  pod_spec["containers"][0] =
      WorkerContainer(job, spec, node, settings, WorkerImage(spec, settings));
  if (RunsInUserImage(spec, settings)) {
    RunInUserImage(pod_spec, BallastImage(spec, settings), settings.bundle);
  }
  // The job's token as a file (pod_template.h, kTokenVolume), readable by
  // whatever user the template runs the worker as.
  Append(pod_spec["containers"][0], "volumeMounts",
         {{"name", api::kTokenVolume}, {"mountPath", api::kTokenMountPath}, {"readOnly", true}});
  Append(pod_spec, "volumes",
         {{"name", api::kTokenVolume},
          {"secret",
           {{"secretName", TokenSecretName(job.name)},
            {"items", json::array({{{"key", kTokenKey}, {"path", "token"}}})},
            {"defaultMode", 0444}}}});
  return pod_spec;
}

}  // namespace

std::string WorkerPodName(const std::string& job, const std::string& node) {
  return DnsLabel(job + "-" + node, kMaxLabelLength);
}

std::string TokenSecretName(const std::string& job) {
  return DnsLabel(job + "-token", kMaxLabelLength);
}

json OwnerReference(const api::ObjectMeta& job) {
  return {{"apiVersion", api::kApiVersion},
          {"kind", api::kJobKind},
          {"name", job.name},
          {"uid", job.uid},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

json WorkerResources(const api::WeightedJobSpec& spec, const WorkerPodSettings& settings) {
  const json* resources = json_read::Find(api::WorkerContainerOf(spec.pod_template), "resources");
  return resources ? *resources : settings.default_resources;
}

std::string BallastImage(const api::WeightedJobSpec& spec, const WorkerPodSettings& settings) {
  return spec.worker_image.value_or(settings.default_image);
}

bool RunsInUserImage(const api::WeightedJobSpec& spec, const WorkerPodSettings& settings) {
  return spec.job.workload.kind == workload::WorkloadKind::kExec &&
         WorkerImage(spec, settings) != BallastImage(spec, settings);
}

double WorkerDuty(const api::WeightedJobSpec& spec, const api::NodeView& node,
                  const WorkerPodSettings& settings) {
  const json resources = WorkerResources(spec, settings);
  if (!resources.is_object()) return 1;
  const auto limit = api::CpuCores(json_read::At(json_read::At(resources, "limits"), "cpu"));
  if (!limit || !node.cpu_cores) return 1;
  return std::min(1.0, *limit / *node.cpu_cores);
}

json BuildWorkerPod(const api::ObjectMeta& job, const api::WeightedJobSpec& spec,
                    const std::string& node, const WorkerPodSettings& settings) {
  json metadata = Metadata(job, WorkerPodName(job.name, node), &node);
  metadata["labels"] = Merged(spec.pod_template.labels, metadata["labels"]);
  if (!spec.pod_template.annotations.empty()) {
    metadata["annotations"] = spec.pod_template.annotations;
  }
  if (RunsInUserImage(spec, settings)) {
    metadata["annotations"][api::kWorkerBundleAnnotation] = BundleSourceName(settings.bundle);
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", metadata},
          {"spec", WorkerPodSpec(job, spec, node, settings)}};
}

json BuildTokenSecret(const api::ObjectMeta& job, const std::string& token) {
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
