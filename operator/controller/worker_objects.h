// The objects the operator creates for a WeightedJob: one worker pod per
// node and the Secret holding the job's token. Pure functions of the job and
// the operator's settings, so that a reconcile pass builds exactly the same
// objects every time (names are deterministic) and tests can read them.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ballast/version.h"
#include "operator/api/kube_views.h"
#include "operator/api/weighted_job.h"
#include "operator/controller/worker_bundle.h"

namespace ballast::controller {

// What every worker pod gets from the operator's configuration.
struct WorkerPodSettings {
  std::string coordinator_url;  // as workers reach it: the operator's Service
  std::string default_image{kDefaultWorkerImage};
  std::string coordinator_job;  // the job's id at the coordinator
  // The worker container's resources when the job sets no
  // spec.worker.resources (null: none); per architecture, architectures.h.
  nlohmann::json default_resources;
  // Port of the worker's /metrics (0: none). On a real cluster each pod has
  // its own address; the test bed shares one, so it passes 0.
  int metrics_port = 0;
  // The CPU the pod's node declares (ballast.io/emulated-speed), passed as
  // BALLAST_NODE_CPU: the worker runs one command per started core of it
  // when it sees nothing tighter (worker/cpu_budget.h). Unset: not passed.
  std::optional<double> node_cpu;
  // How an exec pod in the user's image gets the worker's bundle on this
  // pod's node (worker_bundle.h, ChooseBundleSource).
  BundleSource bundle = BundleSource::kInitContainer;
};

// "<job>-<node>", made a valid pod name (a DNS-1123 label of at most 63
// characters: lower case, digits, '-'); a name that would be longer, or that
// had characters replaced, ends in a hash of the original so two nodes never
// share a pod name.
std::string WorkerPodName(const std::string& job, const std::string& node);
// "<job>-token" (a DNS subdomain; long names are shortened with a hash).
std::string TokenSecretName(const std::string& job);
// The key under which the Secret holds the token.
inline constexpr const char* kTokenKey = "token";

// The worker container's resources: the template's containers[0].resources
// (spec.worker.resources is its short form), else the settings'
// default_resources (null: none).
nlohmann::json WorkerResources(const api::WeightedJobSpec& spec, const WorkerPodSettings& settings);

// The share of each CPU period the worker on `node` computes
// (balance::WorkerPrior::duty): the worker container's limits.cpu over the
// node's status.capacity.cpu (NodeView::cpu_cores), at most 1, since the
// worker computes on one thread per core it sees and a CPU limit is a CFS
// quota shared by them. 1 when the container has no CPU limit or the node
// states no cores. A worker under a limit computes in bursts, which
// adaptive's first split allows for (docs/history.md). A node held to a speed from outside the pod
// (the test bed's node-level cgroups) is not seen here and counts as steady.
double WorkerDuty(const api::WeightedJobSpec& spec, const api::NodeView& node,
                  const WorkerPodSettings& settings);

// The image ballast-worker comes from for `spec`: spec.worker.image, else
// the settings' default_image.
std::string BallastImage(const api::WeightedJobSpec& spec, const WorkerPodSettings& settings);

// In the three functions below `job` is the WeightedJob's metadata (its
// name, namespace and uid are read).
//
// The controller owner reference to the job (apiVersion, kind, name, uid,
// controller, blockOwnerDeletion), so the garbage collector deletes a job's
// pods and Secret with it.
nlohmann::json OwnerReference(const api::ObjectMeta& job);

// The worker pod of the job (`spec` is its spec as read) on `node`: the
// job's pod template (pod_template.h) with Ballast's parts added
// (docs/crds.md, "spec.template"):
//   - metadata: the template's labels and annotations, plus the labels
//     ballast.io/job, ballast.io/node and app.kubernetes.io/managed-by, the
//     owner reference;
//   - spec: restartPolicy Never (the operator replaces failed pods, counting
//     them against backoffLimit), shareProcessNamespace, required node
//     affinity to that node (matchFields on metadata.name, as DaemonSet pods
//     have; ANDed into each of the template's own required terms); where the
//     template says nothing: no service-account token, no service links, a
//     30 s grace period; the pod's securityContext is Ballast's non-root one
//     (uid and gid 65532, RuntimeDefault seccomp) with the template's keys
//     over it;
//   - containers[0], the worker container: its image (the template's, else
//     the ballast-worker image, BallastImage), Ballast's env first (the
//     coordinator's address, the job, the node, the token from the job's
//     Secret) then the template's, a read-only, capability-free securityContext
//     with the template's keys over it, FallbackToLogsOnError unless the
//     template says otherwise, the resources (WorkerResources), the metrics
//     port when the settings have one.
// Every other field of the template (volumes, volumeMounts, envFrom,
// serviceAccountName, imagePullSecrets, priorityClassName, other containers
// and init containers, ...) is in the pod as the template has it.
//
// An exec job whose worker container's image is not the ballast-worker image
// (RunsInUserImage) runs the worker bundled into that image, with a writable
// emptyDir on /tmp unless the template mounts something there, the pod
// annotated ballast.io/worker-bundle with the settings' bundle source:
//   - init-container: an init container "ballast-bundle" of the
//     ballast-worker image (the worker container's security context, pull
//     policy and resources) runs `ballast-worker bundle --to /ballast` into
//     an emptyDir, ahead of the template's init containers, and the worker
//     container runs /ballast/ld.so --library-path /ballast/lib
//     /ballast/ballast-worker (the emptyDir mounted read-only);
//   - image-volume: the ballast-worker image itself is the volume
//     "ballast-bundle" (its pull policy the worker container's), mounted
//     read-only at /ballast, and the worker container runs
//     /ballast/bundle/ld.so --library-path /ballast/bundle/lib
//     /ballast/bundle/ballast-worker; no init container.
nlohmann::json BuildWorkerPod(const api::ObjectMeta& job, const api::WeightedJobSpec& spec,
                              const std::string& node, const WorkerPodSettings& settings);

// Whether the worker pod of `spec` runs the worker bundled into the user's
// image: an exec job whose worker container's image is not BallastImage.
bool RunsInUserImage(const api::WeightedJobSpec& spec, const WorkerPodSettings& settings);

// The job's token Secret (type Opaque, owned by the job) holding `token`.
nlohmann::json BuildTokenSecret(const api::ObjectMeta& job, const std::string& token);

// A new random token: 32 bytes from the system's random device, hex.
std::string NewToken();

}  // namespace ballast::controller
