// WatchCaches: the operator's watches of the API server and their caches —
// WeightedJobs, their worker pods (indexed by the job label), Nodes,
// WeightProfiles, and with Kueue the jobs' Workloads (indexed like the pods)
// and the ResourceFlavors (kueue.h). Every change enqueues the jobs it
// concerns: a job's own, its pods' and its Workload's owner, and every job
// for a node whose placement changed (labels, readiness, taints, cordon: a
// heartbeat wakes none), a profile or a flavor.
//
// Thread-safety: the informers' own (net/kube/informer.h); construct and
// Stop from one thread.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "net/kube/client.h"
#include "net/kube/informer.h"
#include "net/kube/work_queue.h"
#include "operator/runtime/job_reconciler.h"

namespace ballast::runtime {

class WatchCaches {
 public:
  // Starts every watch of namespace `ns` ("" for all), Kueue's with `kueue`;
  // the jobs' last, so that their first adds find the other caches filling.
  WatchCaches(kube::KubeClient& client, const std::string& ns, bool kueue, kube::WorkQueue& queue);
  WatchCaches(const WatchCaches&) = delete;  // its handlers hold it
  WatchCaches& operator=(const WatchCaches&) = delete;

  // The informers started, each with the resource it watches.
  std::vector<std::pair<const char*, kube::Informer*>> Started() const;
  // What the reconciler reads.
  Caches ForReconciler() const;
  const kube::Informer& jobs() const { return *jobs_; }
  void Stop();

 private:
  std::unique_ptr<kube::Informer> jobs_, pods_, nodes_, profiles_, workloads_, flavors_;
};

}  // namespace ballast::runtime
