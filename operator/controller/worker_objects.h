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
#include "operator/controller/kube_views.h"
#include "operator/controller/weighted_job.h"

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
};

// "<job>-<node>", made a valid pod name (a DNS-1123 label of at most 63
// characters: lower case, digits, '-'); a name that would be longer, or that
// had characters replaced, ends in a hash of the original so two nodes never
// share a pod name.
std::string WorkerPodName(const std::string& job, const std::string& node);
// "<job>-token" (a DNS subdomain; long names are shortened with a hash).
std::string TokenSecretName(const std::string& job);
// Where the bundle of the worker is mounted in exec-in-user-image pods.
inline constexpr const char* kBundleMountPath = "/ballast";
// The key under which the Secret holds the token.
inline constexpr const char* kTokenKey = "token";

// The worker container's resources: the job's spec.worker.resources, else
// the settings' default_resources (null: none).
nlohmann::json WorkerResources(const WorkerSpec& worker, const WorkerPodSettings& settings);

// The share of each CPU period the worker on `node` computes
// (balance::WorkerPrior::duty): the worker container's limits.cpu over the
// node's status.capacity.cpu (NodeView::cpu_cores), at most 1, since the
// worker computes on one thread per core it sees and a CPU limit is a CFS
// quota shared by them. 1 when the container has no CPU limit or the node
// states no cores. A worker under a limit computes in bursts, which
// adaptive's first split allows for (docs/history.md). A node held to a speed from outside the pod
// (the test bed's node-level cgroups) is not seen here and counts as steady.
double WorkerDuty(const WorkerSpec& worker, const NodeView& node,
                  const WorkerPodSettings& settings);

// In the three functions below `job` is the WeightedJob's metadata (its
// name, namespace and uid are read).
//
// The controller owner reference to the job (apiVersion, kind, name, uid,
// controller, blockOwnerDeletion), so the garbage collector deletes a job's
// pods and Secret with it.
nlohmann::json OwnerReference(const ObjectMeta& job);

// The worker pod of the job (`spec` is its spec as read) on `node`: labels
// ballast.io/job and ballast.io/node, the owner reference, required node
// affinity to that node (matchFields on metadata.name, as DaemonSet pods
// have), the job's tolerations, the job's worker image and resources, the
// token from the job's Secret, a non-root, read-only, capability-free
// security context, restartPolicy Never (the operator replaces failed pods,
// counting them against backoffLimit) and the coordinator's address in the
// environment.
//
// An exec job whose workload.exec.image is set runs in that image instead:
// an init container "bundle" of the worker image (same security context,
// pull policy and resources) runs `ballast-worker bundle --to /ballast` into
// an emptyDir, and the "worker" container runs the user's image with command
// /ballast/ld.so --library-path /ballast/lib /ballast/ballast-worker (the
// emptyDir mounted read-only) and a writable emptyDir on /tmp; env, security
// context and resources as for any worker.
nlohmann::json BuildWorkerPod(const ObjectMeta& job, const WeightedJobSpec& spec,
                              const std::string& node, const WorkerPodSettings& settings);

// The job's token Secret (type Opaque, owned by the job) holding `token`.
nlohmann::json BuildTokenSecret(const ObjectMeta& job, const std::string& token);

// A new random token: 32 bytes from the system's random device, hex.
std::string NewToken();

}  // namespace ballast::controller
