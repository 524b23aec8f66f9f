// The worker pods as the user describes them: a WeightedJob's spec.template,
// a core/v1 PodTemplateSpec as in a batch/v1 Job, and the fields Ballast
// owns in it (docs/crds.md, "spec.template").
//
// The template's first container is the worker container: Ballast runs its
// worker there (the user's image, volume mounts, env, envFrom, resources,
// security context are kept), so an exec job's command runs in that
// container's image with everything the user gave it. Every other container
// and init container is the user's and runs beside it as written.
//
// The spec's older keys are short forms written into the template, so a job
// written either way gives the same pods:
//
//   short form                       in the template
//   spec.worker.image                spec.containers[0].image (primes, matmul)
//   spec.workload.exec.image         spec.containers[0].image (exec)
//   spec.worker.imagePullPolicy      spec.containers[0].imagePullPolicy
//   spec.worker.resources            spec.containers[0].resources
//   spec.nodeSelector                spec.nodeSelector (merged key by key)
//   spec.tolerations                 spec.tolerations (appended)
//
// A short form and the template that both give a field with different values
// are refused, naming both paths.
//
// Thread-safety: values and pure functions.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/common/status.h"

namespace ballast::api {

// The worker container's name when the template names no container.
inline constexpr const char* kWorkerContainer = "worker";
// Ballast's init container that bundles the worker into the user's image
// (docs/workloads.md), and the volumes it adds for it.
inline constexpr const char* kBundleContainer = "ballast-bundle";
inline constexpr const char* kBundleVolume = "ballast-bundle";
inline constexpr const char* kTmpVolume = "ballast-tmp";
// Where the bundle of the worker is mounted in the worker container.
inline constexpr const char* kBundleMountPath = "/ballast";
// Where the ballast-worker image holds the same bundle (docker/layout.sh),
// for a pod that mounts the whole image at kBundleMountPath as an image
// volume instead (operator/controller/worker_bundle.h).
inline constexpr const char* kBundleImageDir = "bundle";
// The worker pod's annotation that says which of the two it uses
// ("init-container", "image-volume"; absent when the worker runs in the
// ballast-worker image itself).
inline constexpr const char* kWorkerBundleAnnotation = "ballast.io/worker-bundle";
// The job's token reaches the worker container as a file of a Secret
// volume, not as an environment variable from the Secret: a kubelet that
// asks for the Secret before the API server relates the new pod to its node
// is refused, and a refused variable fails the pod's sync, retried 10 s
// later; a refused volume is mounted again within a second.
inline constexpr const char* kTokenVolume = "ballast-token";
inline constexpr const char* kTokenMountPath = "/var/run/secrets/ballast.io";
inline constexpr const char* kTokenFile = "/var/run/secrets/ballast.io/token";

// The short forms of a spec, read and type-checked (weighted_job.cc).
struct ShortForms {
  // spec.worker.image for primes and matmul, spec.workload.exec.image for
  // exec; image_path says which, for messages.
  std::optional<std::string> image;
  std::string image_path;
  std::optional<std::string> image_pull_policy;          // spec.worker.imagePullPolicy
  std::optional<nlohmann::json> resources;               // spec.worker.resources
  std::map<std::string, std::string> node_selector;      // spec.nodeSelector
  nlohmann::json tolerations = nlohmann::json::array();  // spec.tolerations
};

// The template after the short forms, as every worker pod starts from it.
struct PodTemplate {
  nlohmann::json labels = nlohmann::json::object();       // metadata.labels
  nlohmann::json annotations = nlohmann::json::object();  // metadata.annotations
  // The PodSpec; containers[0] is the worker container (named "worker" when
  // the template had none), its image absent when neither form gives one.
  nlohmann::json spec = {{"containers", nlohmann::json::array({{{"name", kWorkerContainer}}})}};
  // What Ballast reads of it to choose nodes: spec.nodeSelector,
  // spec.tolerations, and the nodeSelectorTerms of the required node
  // affinity (an empty list: none).
  std::map<std::string, std::string> node_selector;
  nlohmann::json tolerations = nlohmann::json::array();
  nlohmann::json node_affinity_terms = nlohmann::json::array();
  bool operator==(const PodTemplate&) const = default;
};

// The template of a spec whose spec.template is `given` (null when absent),
// with `short_forms` written in. Returns Invalid naming the field's path
// (spec.template.spec.nodeName: ...) for a field Ballast owns:
//   - spec.nodeName (each pod is pinned to its node);
//   - spec.restartPolicy other than Never, spec.shareProcessNamespace false;
//   - command or args of containers[0];
//   - an env entry of containers[0] named as one Ballast sets (BALLAST_*,
//     NODE_NAME; NODE_NAME given exactly as Ballast gives it is allowed);
//   - a volumeMount of containers[0] at or below /ballast (its path
//     normalised: /ballast/, /tmp/../ballast, /ballast/lib);
//   - a container or init container named ballast-bundle, a volume named
//     ballast-bundle or ballast-tmp;
//   - the labels ballast.io/job, ballast.io/node, app.kubernetes.io/managed-by,
//     and those of the operator's pods, which the coordinator Service
//     selects: ballast.io/coordinator, app.kubernetes.io/component=operator;
// for a short form that contradicts the template (naming both paths); and for
// a field Ballast reads that has another type than the PodSpec's schema
// gives it. Never throws.
StatusOr<PodTemplate> ReadPodTemplate(const nlohmann::json& given, const ShortForms& short_forms);

// The template's worker container, its spec.containers[0]; when the spec
// has none (or a containers[0] that is not an object), the one
// ReadPodTemplate makes then: {"name": "worker"}. ReadPodTemplate always
// gives one; a PodTemplate built or changed by other code may not, so every
// reader of the worker container goes through this one. Never throws.
const nlohmann::json& WorkerContainerOf(const PodTemplate& pod_template);

// `path` as the container sees it: lexically normalised, without "." and
// empty parts, each ".." taking away the part before it (none above "/"),
// relative paths taken from "/": "/tmp/../ballast/" is "/ballast".
std::string NormalMountPath(std::string_view path);

// NODE_NAME as Ballast sets it in the worker container: the node's name from
// the downward API. A template may give exactly this entry.
nlohmann::json NodeNameEnv();

// Ok when `tolerations` (at `path`) is a list of core/v1 Tolerations whose
// fields have their types; Invalid naming the first that is not.
Status CheckTolerations(const nlohmann::json& tolerations, const std::string& path);

}  // namespace ballast::api
