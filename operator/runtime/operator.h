// Operator: the WeightedJob controller process — informers on WeightedJobs,
// their worker pods, nodes and WeightProfiles; a rate-limited work queue;
// reconcile workers running JobReconciler; the coordinator the worker pods
// talk to; and, optionally, leader election so that of several replicas
// only one reconciles.
//
// No polling loop reaches the API server: changes come from watches; the
// only timed passes are those of running jobs, which read the in-process
// coordinator and write status when what a reader sees changed
// (status_pacing.h).
//
// Thread-safety: Run blocks its caller; Stop (or the Cancellation given to
// Run) may be called from any thread, e.g. a signal handler's watcher.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/common/status.h"
#include "net/kube/client.h"
#include "operator/runtime/job_reconciler.h"

namespace prometheus {
class Collectable;
class Registry;
}  // namespace prometheus

namespace ballast::runtime {

struct OperatorOptions {
  // Only this namespace's WeightedJobs ("" = all namespaces).
  std::string watch_namespace;
  // Where the coordinator listens (the port of the operator's Service).
  std::string coordinator_address = "0.0.0.0";
  uint16_t coordinator_port = 8080;
  ReconcilerOptions reconciler;
  int workers = 2;  // reconciles at once (different jobs)
  // This replica's name: in Events and on the leader Lease.
  std::string identity = "ballast-operator";
  // Compete for the Lease lease_namespace/lease_name; only while holding it
  // listen for workers and reconcile. Losing it ends Run with Unavailable
  // (restart the process).
  bool leader_elect = false;
  std::string lease_namespace = "default";
  std::string lease_name = "ballast-operator";
  // Serve /healthz and /readyz (health.h) on health_address:health_port.
  bool serve_health = false;
  std::string health_address = "0.0.0.0";
  uint16_t health_port = 8081;
  // /healthz fails once a reconcile, or an informer's failing list and
  // watch, has been stuck this long.
  std::chrono::milliseconds health_stall_bound{120000};
  // Label this replica's pod ballast.io/coordinator=leader while it leads
  // (leader_pod.h); own_pod names it.
  bool mark_leader_pod = false;
  std::string own_pod_namespace;
  std::string own_pod_name;
  // API requests sent so far by verb (HttpKubeClient::RequestCounts), for
  // the metric ballast_operator_api_requests_total; optional.
  std::function<std::map<std::string, uint64_t>()> api_request_counts;
};

// Counters for the operator's last log line. The reconcile passes' times are
// the metrics' (ballast_operator_reconcile_seconds and _duration_seconds).
struct OperatorStats {
  uint64_t reconciles = 0;
  uint64_t reconcile_errors = 0;
  uint64_t events_posted = 0;
};

class Operator {
 public:
  // `client` must outlive the operator. `registry`, when not null, receives
  // the operator's metrics (ballast_operator_*).
  Operator(kube::KubeClient& client, OperatorOptions options,
           std::shared_ptr<prometheus::Registry> registry = nullptr);
  ~Operator();
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;

  // Starts the health probes, (removes the leader label from its own pod,
  // competes for the Lease,) starts the coordinator, (labels its pod leader,)
  // the informers and the workers, and runs until Stop. Returns Ok after
  // Stop; Unavailable when the probes or the coordinator cannot listen, the
  // caches do not sync, leadership is lost, or the own pod's label cannot be
  // set (NotFound when POD_NAME names no pod).
  Status Run();
  void Stop();

  OperatorStats Stats() const;
  // The series made when scraped (docs/metrics.md): API requests, queue
  // depth, leadership, and while leading the coordinator's own and its jobs'
  // (coordinator::Server::CollectMetrics). Register it with the Exposer
  // beside the registry; it collects nothing once the operator is destroyed.
  std::shared_ptr<prometheus::Collectable> collectable() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ballast::runtime
