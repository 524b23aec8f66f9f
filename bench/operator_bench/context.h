// What every phase of ballast_operator_bench shares: its flags, the
// Kubernetes client, the watches of the bench's namespace and what they saw,
// and the steps the phases take alike (nodes counted, jobs created and
// deleted, the operator's metrics once settled, the API server probed), and
// the Sampler that watches the operator while jobs run.
//
// Thread-safety: Probe may be called from any thread (the Sampler's calls
// it); the rest from the bench's thread.
#pragma once
#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "bench/operator_bench/common.h"
#include "bench/operator_bench/metrics.h"
#include "bench/operator_bench/observer.h"
#include "net/kube/informer.h"

namespace ballast::operator_bench {

struct Flags {
  std::string kubeconfig;
  std::string ns;
  int operator_pid = 0;
  std::string metrics_url;
  int sequential = 20;
  int concurrent = 50;
  uint64_t small_limit = 20000;
  int repeat = 3;
  uint64_t limit = 400000;
  std::string policies = "equal,weighted,mms,adaptive";
  std::string pool = "seed000";
  int wide = 0;  // the wide phase on this many nodes, instead of the others
  uint64_t wide_limit = 20'000'000;
  int churn = 0;  // the churn phase with this many jobs, instead of the others
  int churn_wave = 10;
  int churn_every = 100;
  double churn_pause_s = 0;  // after each churn sample, for a profiler to look at the operator
};

class Context {
 public:
  // `client` and `flags` must outlive the context.
  Context(kube::KubeClient& client, const Flags& flags);

  // Starts the watches of the namespace's pods and Secrets of jobs,
  // ConfigMaps and WeightedJobs; true once each has synced (at most 30 s
  // each), false (said on stderr) when one did not.
  bool StartWatches();

  kube::KubeClient& client() const { return client_; }
  const Flags& flags() const { return flags_; }
  Observer& seen() { return seen_; }
  const kube::Informer& pods() const { return pods_; }
  const kube::Informer& jobs() const { return jobs_; }
  // The cached WeightedJob `name`; null when there is none.
  kube::ObjectPtr Job(const std::string& name) const;

  // The operator's VmRSS in MB before the first phase.
  double rss_idle() const { return rss_idle_; }
  void set_rss_idle(double mb) { rss_idle_ = mb; }

  // Ready nodes without NoSchedule/NoExecute taints, with label pool=`pool`
  // when set; 0 when they cannot be listed.
  int EligibleNodes(const std::string& pool);

  // Creates PrimesJob(name, limit, policy, pool); false (said on stderr,
  // "create NAME: why") when the API server refused it.
  bool CreatePrimesJob(const std::string& name, uint64_t limit, const std::string& policy,
                       const std::string& pool);

  // Deletes the jobs and waits until the garbage collector and the node agent
  // have removed their pods, so that the next measurement does not share the
  // API server with that: at most 90 s, and not while only finished pods are
  // left and none has gone for 15 s (the node agent can leave a deleted pod
  // whose worker exited just then Terminating for good). Prints what is left.
  void DeleteJobs(const std::vector<std::string>& names);

  // The operator's /metrics once its reconciles_total has not moved for 3 s
  // (waits at most 60 s).
  Metrics SettledMetrics();

  // A ConfigMap's create round trip and, when `watch` is given, how long
  // after the create began our watch saw it: the API server's share of any
  // create-then-watch chain. Nothing is added when the create fails.
  void Probe(std::vector<double>* rtt, std::vector<double>* watch);

 private:
  kube::KubeClient& client_;
  const Flags& flags_;
  Observer seen_;
  kube::Informer pods_, secrets_, configmaps_, jobs_;
  double rss_idle_ = NAN;
  std::atomic<int> probes_{0};
};

// While jobs run, every second: the reconcile summaries' p99 (each covers
// a sliding window of 60 s, so the worst is kept), the operator's VmRSS,
// and a ConfigMap's create round trip (the API server's latency meanwhile).
// Its figures are read once Stop has returned.
class Sampler {
 public:
  explicit Sampler(Context& context) : context_(context), thread_([this] { Run(); }) {}
  ~Sampler() { Stop({}); }
  // Joins the thread and takes the last p99s from `final_metrics`.
  void Stop(const Metrics& final_metrics);

  double worst_p99 = NAN, worst_cpu_p99 = NAN, peak_rss = 0;
  std::vector<double> api_rtt;  // ms

 private:
  void Run();
  void Take(const Metrics& metrics);

  Context& context_;
  std::atomic<bool> running_{true};
  std::thread thread_;
};

}  // namespace ballast::operator_bench
