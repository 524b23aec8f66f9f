#include "operator/runtime/operator.h"

#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/summary.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "coordinator/server.h"
#include "net/kube/informer.h"
#include "net/kube/leader_election.h"
#include "net/kube/work_queue.h"
#include "operator/api/kube_views.h"
#include "operator/runtime/efficiency_metrics.h"
#include "operator/runtime/event_recorder.h"
#include "operator/runtime/health.h"
#include "operator/runtime/leader_pod.h"
#include "operator/runtime/reconcile_metrics.h"
#include "operator/runtime/resources.h"
#include "operator/runtime/watch_caches.h"

namespace ballast::runtime {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::chrono::seconds kSyncTimeout{60};
// How long labelling the own pod may retry: at the start (a role binding
// still propagating), and when stopping (within the grace period).
constexpr std::chrono::seconds kLabelPatience{30};
constexpr std::chrono::seconds kUnlabelOnStopPatience{3};

// CPU seconds the calling thread has used.
double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9;
}

// A family of one series without labels.
prometheus::MetricFamily GaugeFamily(const char* name, const char* help, double value) {
  prometheus::MetricFamily family{name, help, prometheus::MetricType::Gauge, {}};
  family.metric.emplace_back();
  family.metric.back().gauge.value = value;
  return family;
}

}  // namespace

// Families computed when scraped, from a source the operator sets and
// clears (the scrape may come while the operator is being destroyed).
class ScrapedMetrics : public prometheus::Collectable {
 public:
  using Source = std::function<std::vector<prometheus::MetricFamily>()>;
  void Attach(Source source) {
    std::lock_guard lock(mu_);
    source_ = std::move(source);
  }
  // After it returns no Collect is inside the source.
  void Detach() { Attach(nullptr); }
  std::vector<prometheus::MetricFamily> Collect() const override {
    std::lock_guard lock(mu_);
    return source_ ? source_() : std::vector<prometheus::MetricFamily>{};
  }

 private:
  mutable std::mutex mu_;
  Source source_;
};

class Operator::Impl {
 public:
  Impl(kube::KubeClient& client, OperatorOptions options,
       std::shared_ptr<prometheus::Registry> registry)
      : client_(client),
        options_(std::move(options)),
        registry_(registry ? registry : std::make_shared<prometheus::Registry>()),
        metrics_(*registry_),
        events_(client, options_.identity),
        queue_(std::chrono::milliseconds(5), std::chrono::milliseconds(30000)) {
    scraped_->Attach([this] { return Scrape(); });
  }

  // No scrape reads this object once it is gone; the probes stop first: they
  // read the members below.
  ~Impl() {
    scraped_->Detach();
    health_.reset();
  }

  std::shared_ptr<prometheus::Collectable> collectable() const { return scraped_; }

  Status Run() {
    BALLAST_RETURN_IF_ERROR(StartProbes());
    // A restarted former leader must not attract workers: the label goes
    // before anything else happens.
    if (options_.mark_leader_pod) {
      BALLAST_RETURN_IF_ERROR(SetLeaderLabel(client_, OwnPodOf(), false, kLabelPatience));
    }
    // A replica listens for workers only while it leads: behind one Service
    // that selects the leader's label (or whose readiness is the
    // coordinator's /healthz), workers reach the leader.
    std::unique_ptr<kube::LeaderElector> elector;
    if (options_.leader_elect) {
      SetRole(HealthInputs::Role::kStandby);
      BALLAST_RETURN_IF_ERROR(AwaitLeadership(elector));
    }
    const Status led = stopping() ? Status::Ok() : Lead();
    if (led.ok() && !stopping()) {
      spdlog::info("operator running namespace={} workers={}",
                   options_.watch_namespace.empty() ? "(all)" : options_.watch_namespace,
                   threads_.size());
      std::unique_lock lock(mu_);
      stop_cv_.wait(lock, [&] { return stop_; });
    }
    Shutdown(elector);
    if (!led.ok()) return led;
    if (lost_leadership_) return Status::Unavailable("lost the leader Lease");
    return Status::Ok();
  }

  void Stop() {
    std::lock_guard lock(mu_);
    stop_ = true;
    stop_cv_.notify_all();
  }

  OperatorStats Stats() const {
    OperatorStats stats;
    std::lock_guard lock(mu_);
    stats.reconciles = reconciles_total_;
    stats.reconcile_errors = reconcile_errors_;
    stats.events_posted = events_.posted();
    return stats;
  }

 private:
  bool stopping() const {
    std::lock_guard lock(mu_);
    return stop_;
  }

  // Waits until every informer has synced (true), kSyncTimeout passed or
  // Stop was called (false); a SIGTERM while the API server refuses us stops
  // the process at once rather than after the timeout.
  bool AwaitSync() {
    const auto deadline = Clock::now() + kSyncTimeout;
    for (const auto& [resource, informer] : caches_->Started()) {
      while (!informer->WaitForSync(std::chrono::milliseconds(100))) {
        if (stopping() || Clock::now() > deadline) return false;
      }
    }
    return true;
  }

  // Serves /healthz and /readyz when asked to; Unavailable when the port
  // cannot be bound.
  Status StartProbes() {
    if (!options_.serve_health) return Status::Ok();
    auto health = HealthServer::Start(options_.health_address, options_.health_port,
                                      [this] { return Probe(); });
    if (!health.ok()) return health.status();
    health_ = std::move(*health);
    spdlog::info("health probes listening address={} port={}", options_.health_address,
                 health_->port());
    return Status::Ok();
  }

  // What the leader does: opens the coordinator's port, labels its pod,
  // syncs the caches and starts the reconcile workers. Ok also when Stop
  // came meanwhile; the caller shuts down what was started.
  Status Lead() {
    coordinator::ServerOptions server_options;
    server_options.address = options_.coordinator_address;
    server_options.port = options_.coordinator_port;
    server_options.wait_timeout_s = 10;
    // A finished job is reconciled at once (its status says Succeeded), not
    // at its next status interval.
    server_options.on_finished = [this](const std::string& job) {
      queue_.Add(JobReconciler::KeyOfCoordinatorJobId(job));
    };
    auto server = coordinator::Server::Start(server_options);
    if (!server.ok()) return server.status();
    {
      std::lock_guard lock(server_mu_);
      server_ = std::move(*server);
    }
    spdlog::info("coordinator listening url={} workers_use={}", server_->url(),
                 options_.reconciler.decide.pods.coordinator_url);
    if (options_.mark_leader_pod) {
      BALLAST_RETURN_IF_ERROR(SetLeaderLabel(client_, OwnPodOf(), true, kLabelPatience));
      labelled_leader_ = true;
    }
    SetRole(HealthInputs::Role::kLeader);
    caches_ = std::make_unique<WatchCaches>(client_, options_.watch_namespace,
                                            options_.reconciler.kueue, queue_);
    {
      std::lock_guard lock(mu_);
      informers_started_ = true;
    }
    if (!AwaitSync()) {
      return stopping() ? Status::Ok()
                        : Status::Unavailable("the informer caches did not sync within 60 s");
    }
    ReconcilerOptions reconciler_options = options_.reconciler;
    reconciler_options.requeue = [this](const std::string& key) { queue_.Add(key); };
    reconciler_ = std::make_unique<JobReconciler>(client_, *server_, caches_->ForReconciler(),
                                                  events_, std::move(reconciler_options));
    for (const auto& job : caches_->jobs().List()) queue_.Add(kube::ObjectKey(*job));
    {
      std::lock_guard lock(mu_);
      running_.assign(std::max(1, options_.workers), std::nullopt);
    }
    for (int i = 0; i < std::max(1, options_.workers); ++i) {
      threads_.emplace_back([this, i] { Work(i); });
    }
    return Status::Ok();
  }

  OwnPod OwnPodOf() const { return {options_.own_pod_namespace, options_.own_pod_name}; }

  void SetRole(HealthInputs::Role role) {
    std::lock_guard lock(mu_);
    role_ = role;
  }

  // What /healthz and /readyz answer now (health.h).
  HealthVerdict Probe() const {
    HealthInputs inputs;
    {
      std::lock_guard lock(mu_);
      inputs.role = role_;
      for (const auto& start : running_) {
        if (start) inputs.reconciles_running.push_back(*start);
      }
      if (informers_started_) {
        for (const auto& [resource, informer] : caches_->Started()) {
          const kube::InformerStats stats = informer->Stats();
          inputs.informers.push_back(
              {resource, informer->HasSynced(), stats.failing_since, stats.last_error});
        }
      }
    }
    return EvaluateHealth(inputs, Clock::now(), options_.health_stall_bound);
  }

  Status AwaitLeadership(std::unique_ptr<kube::LeaderElector>& elector) {
    kube::LeaderElectionConfig config;
    config.lease_namespace = options_.lease_namespace;
    config.lease_name = options_.lease_name;
    config.identity = options_.identity;
    config.on_started_leading = [this] {
      std::lock_guard lock(mu_);
      leading_ = true;
      stop_cv_.notify_all();
    };
    config.on_stopped_leading = [this] {
      spdlog::info("stopped leading lease={}/{}", options_.lease_namespace, options_.lease_name);
      lost_leadership_ = !stopping();
      Stop();
    };
    elector = std::make_unique<kube::LeaderElector>(client_, config);
    elector->Start();
    spdlog::info("waiting for the leader lease lease={}/{} identity={}", options_.lease_namespace,
                 options_.lease_name, options_.identity);
    std::unique_lock lock(mu_);
    stop_cv_.wait(lock, [&] { return leading_ || stop_; });
    return Status::Ok();
  }

  void Work(int index) {
    while (auto key = queue_.Get()) {
      const auto start = Clock::now();
      const double cpu_start = ThreadCpuSeconds();
      SetRunning(index, start);
      StatusOr<ReconcileResult> result = Status::Invalid("not run");
      try {
        result = reconciler_->Reconcile(*key);
      } catch (const std::exception& e) {
        result = Status::Invalid(fmt::format("reconcile of {} threw: {}", *key, e.what()));
      }
      SetRunning(index, std::nullopt);
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      Record(seconds, ThreadCpuSeconds() - cpu_start, result.ok());
      if (!result.ok() && Retried(result.status().code())) {
        spdlog::info("reconcile failed job={} retries={} error=\"{}\"", *key,
                     queue_.NumRequeues(*key), result.status().ToString());
        queue_.Done(*key);
        queue_.AddRateLimited(*key);
        continue;
      }
      if (!result.ok()) {
        // Retrying cannot help (common/status.h): logged once here, and the
        // job is looked at again only when it, its pods or its nodes change.
        spdlog::info("reconcile refused, not retried job={} error=\"{}\"", *key,
                     result.status().ToString());
      }
      queue_.Forget(*key);
      queue_.Done(*key);
      if (result.ok() && result->requeue_after) queue_.AddAfter(*key, *result->requeue_after);
    }
  }

  // One last pass over every job, handing each running job's status to the
  // writer at once: the checkpoint the next leader resumes from is the
  // newest; destroying the reconciler writes it.
  void FlushCheckpoints() {
    if (!reconciler_ || !caches_) return;
    size_t passes = 0;
    for (const auto& job : caches_->jobs().List()) {
      const std::string key = kube::ObjectKey(*job);
      const auto result = reconciler_->Reconcile(key, /*flush_status=*/true);
      if (!result.ok()) {
        spdlog::info("final status not handed over job={} error=\"{}\"", key,
                     result.status().ToString());
      }
      ++passes;
    }
    spdlog::info("final status handed over jobs={}", passes);
  }

  // Marks worker `index` as reconciling since `start` (nullopt: idle), for
  // the liveness probe.
  void SetRunning(int index, std::optional<Clock::time_point> start) {
    std::lock_guard lock(mu_);
    running_[index] = start;
  }

  // Whether a pass that failed with `code` is tried again with backoff: all
  // but Invalid and Terminal, as common/status.h promises.
  static bool Retried(StatusCode code) {
    return code != StatusCode::kInvalid && code != StatusCode::kTerminal;
  }

  void Record(double seconds, double cpu_seconds, bool ok) {
    metrics_.Observe(seconds, cpu_seconds, ok, reconciler_->TrackedJobs());
    std::lock_guard lock(mu_);
    ++reconciles_total_;
    if (!ok) ++reconcile_errors_;
  }

  // The families ScrapedMetrics serves (see Operator::collectable).
  std::vector<prometheus::MetricFamily> Scrape() {
    std::vector<prometheus::MetricFamily> families;
    if (options_.api_request_counts) {
      prometheus::MetricFamily requests{
          "ballast_operator_api_requests_total",
          "Requests the operator has sent to the API server since it started, by verb",
          prometheus::MetricType::Counter,
          {}};
      for (const auto& [verb, count] : options_.api_request_counts()) {
        requests.metric.emplace_back();
        requests.metric.back().label = {{"verb", verb}};
        requests.metric.back().counter.value = static_cast<double>(count);
      }
      if (!requests.metric.empty()) families.push_back(std::move(requests));
    }
    families.push_back(GaugeFamily("ballast_operator_queue_depth",
                                   "WeightedJobs waiting in the work queue to be reconciled",
                                   static_cast<double>(queue_.Len())));
    // The alert BallastNodeBelowBaseline compares each node's ratio with
    // this (prometheus/ballast-rules.yaml), so one flag sets both.
    families.push_back(GaugeFamily("ballast_operator_node_slow_ratio",
                                   "The operator's --node-slow-ratio: a node measured below this "
                                   "ratio to its own baseline (and below its band) is slow",
                                   options_.reconciler.decide.deviation.slow_ratio));
    // The finished jobs' efficiency, from the cache of WeightedJobs: the
    // Run thread sets caches_ before informers_started_, and keeps it until
    // this object is destroyed (after the scrapes are detached).
    bool informers_started = false;
    {
      std::lock_guard lock(mu_);
      informers_started = informers_started_;
    }
    std::lock_guard lock(server_mu_);
    families.push_back(GaugeFamily("ballast_operator_leader",
                                   "1 while this replica leads: it runs the coordinator and "
                                   "reconciles; else 0",
                                   server_ ? 1 : 0));
    if (server_) {
      for (auto& family : server_->CollectMetrics()) families.push_back(std::move(family));
      if (informers_started) {
        const auto jobs = caches_->jobs().List();
        if (auto efficiency = JobEfficiencyFamily(jobs)) {
          families.push_back(std::move(*efficiency));
        }
        if (auto baseline = NodeBaselineFamily(jobs)) families.push_back(std::move(*baseline));
        if (auto energy = JobEnergyFamily(jobs)) families.push_back(std::move(*energy));
      }
    }
    return families;
  }

  void Shutdown(std::unique_ptr<kube::LeaderElector>& elector) {
    SetRole(HealthInputs::Role::kStopping);
    // Workers stop being sent here before the port closes.
    if (labelled_leader_) {
      const Status unlabelled = SetLeaderLabel(client_, OwnPodOf(), false, kUnlabelOnStopPatience);
      if (!unlabelled.ok()) spdlog::info("stopping error=\"{}\"", unlabelled.message());
      labelled_leader_ = false;
    }
    queue_.ShutDown();
    for (auto& thread : threads_) thread.join();
    threads_.clear();
    FlushCheckpoints();
    if (caches_) caches_->Stop();
    reconciler_.reset();
    // Close the listener before giving up the Lease, so that a successor on
    // this host can bind the port.
    {
      std::lock_guard lock(server_mu_);
      server_.reset();
    }
    if (elector) elector->Stop();
  }

  kube::KubeClient& client_;
  const OperatorOptions options_;
  std::shared_ptr<prometheus::Registry> registry_;
  ReconcileMetrics metrics_;
  EventRecorder events_;
  kube::WorkQueue queue_;
  // Set and reset under server_mu_ by the Run thread (which alone reads it
  // without the lock); scrapes read it under server_mu_.
  std::mutex server_mu_;
  std::unique_ptr<coordinator::Server> server_;
  std::shared_ptr<ScrapedMetrics> scraped_ = std::make_shared<ScrapedMetrics>();
  std::unique_ptr<WatchCaches> caches_;
  std::unique_ptr<JobReconciler> reconciler_;
  std::vector<std::thread> threads_;
  std::atomic<bool> lost_leadership_{false};
  std::unique_ptr<HealthServer> health_;
  bool labelled_leader_ = false;  // the Run thread's

  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  bool leading_ = false;
  HealthInputs::Role role_ = HealthInputs::Role::kStarting;
  bool informers_started_ = false;
  std::vector<std::optional<Clock::time_point>> running_;  // per worker thread
  uint64_t reconciles_total_ = 0;
  uint64_t reconcile_errors_ = 0;
};

Operator::Operator(kube::KubeClient& client, OperatorOptions options,
                   std::shared_ptr<prometheus::Registry> registry)
    : impl_(std::make_unique<Impl>(client, std::move(options), std::move(registry))) {}
Operator::~Operator() = default;
Status Operator::Run() { return impl_->Run(); }
void Operator::Stop() { impl_->Stop(); }
OperatorStats Operator::Stats() const { return impl_->Stats(); }
std::shared_ptr<prometheus::Collectable> Operator::collectable() const {
  return impl_->collectable();
}

}  // namespace ballast::runtime
