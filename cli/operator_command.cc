// ballast operator: runs the WeightedJob controller against a Kubernetes API
// server until SIGINT or SIGTERM (operator/runtime/operator.h).
//
// Thread-safety: runs once on the main thread; a signal thread stops it.
#include <fmt/format.h>
#include <malloc.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ballast/version.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "core/history/speed_store.h"
#include "net/kube/http_client.h"
#include "net/kube/kubeconfig.h"
#include "net/prometheus_history_source.h"
#include "operator/controller/architectures.h"
#include "operator/controller/worker_bundle.h"
#include "operator/runtime/history_configmap.h"
#include "operator/runtime/operator.h"

namespace ballast::cli {
namespace {

struct OperatorFlags {
  std::string kubeconfig;
  std::string context;
  std::string watch_namespace;
  std::string coordinator_listen = "0.0.0.0:8080";
  std::string coordinator_url;
  std::string worker_image{kDefaultWorkerImage};
  int worker_metrics_port = 0;
  double status_interval_s = 2;
  double progress_interval_s = 60;
  double progress_step = 25;
  int workers = 2;
  bool leader_elect = false;
  bool kueue = false;
  std::string lease_namespace = "default";
  std::string lease_name = "ballast-operator";
  std::string identity;
  std::string metrics_listen;
  std::string health_listen;
  double health_stall_s = 120;
  bool mark_leader_pod = false;
  std::string worker_architectures;
  std::vector<std::string> worker_image_for;
  std::vector<std::string> worker_resources_for;
  double worker_start_timeout_s = 60;
  std::string worker_bundle = "auto";
  double refused_pod_timeout_s = 30;
  double items_wait_s = 60;
  int64_t worker_pod_ttl_s = 600;
  std::string prometheus_url;
  double prometheus_window_s = net::PrometheusHistoryOptions{}.window_seconds;
  double prometheus_timeout_s = 2;
  std::string history_configmap;
  bool no_history = false;
  double history_full_trust_samples = history::kFullTrustJobs;
  double history_max_age_s = 7 * 24 * 3600;
  double node_slow_ratio = 0.75;  // health::DeviationOptions::slow_ratio
  bool verbose = false;
};

// "host:port" -> host and port. Invalid naming the flag otherwise.
Status SplitHostPort(const std::string& text, const std::string& flag, std::string* host,
                     uint16_t* port) {
  const auto colon = text.rfind(':');
  int value = -1;
  if (colon != std::string::npos) {
    // The whole rest, digits only: "8080x" or "+80" is no port.
    const char* first = text.data() + colon + 1;
    const char* last = text.data() + text.size();
    const auto [end, error] = std::from_chars(first, last, value);
    if (error != std::errc() || end != last || first == last) value = -1;
  }
  if (colon == std::string::npos || value < 0 || value > 65535) {
    return Status::Invalid(fmt::format("{} {}: expected HOST:PORT, e.g. 0.0.0.0:8080", flag, text));
  }
  *host = text.substr(0, colon);
  *port = static_cast<uint16_t>(value);
  return Status::Ok();
}

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "ballast-operator";
  return name;
}

// --mark-leader-pod's pod: $POD_NAME in $POD_NAMESPACE, as the downward API
// sets them. Invalid naming what is missing.
Status OwnPodFrom(const OperatorFlags& flags, runtime::OperatorOptions& options) {
  options.mark_leader_pod = flags.mark_leader_pod;
  if (!flags.mark_leader_pod) return Status::Ok();
  const char* name = std::getenv("POD_NAME");
  const char* ns = std::getenv("POD_NAMESPACE");
  if (!name || !*name || !ns || !*ns) {
    return Status::Invalid(
        "--mark-leader-pod: expected the environment variables POD_NAME and POD_NAMESPACE "
        "(the downward API's metadata.name and metadata.namespace), got " +
        std::string(!name || !*name ? "no POD_NAME" : "no POD_NAMESPACE"));
  }
  options.own_pod_name = name;
  options.own_pod_namespace = ns;
  return Status::Ok();
}

// The worker pods' per-architecture settings and start timeout.
Status WorkerOptionsFrom(const OperatorFlags& flags, runtime::OperatorOptions& options) {
  BALLAST_ASSIGN_OR_RETURN(
      options.reconciler.decide.architectures,
      controller::ParseArchitectureFlags(flags.worker_architectures, flags.worker_image_for,
                                         flags.worker_resources_for));
  if (!(flags.worker_start_timeout_s > 0)) {
    return Status::Invalid(fmt::format("--worker-start-timeout {}: expected seconds > 0",
                                       flags.worker_start_timeout_s));
  }
  options.reconciler.decide.worker_start_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.worker_start_timeout_s * 1000));
  options.reconciler.decide.worker_pod_ttl_s = flags.worker_pod_ttl_s;
  const auto bundle = controller::ParseBundleMode(flags.worker_bundle);
  if (!bundle) {
    return Status::Invalid(fmt::format(
        "--worker-bundle {}: expected auto, image-volume or init-container", flags.worker_bundle));
  }
  options.reconciler.decide.worker_bundle = *bundle;
  if (!(flags.refused_pod_timeout_s >= 0 && flags.refused_pod_timeout_s <= 86400)) {
    return Status::Invalid(fmt::format("--refused-pod-timeout {}: expected seconds in [0, 86400]",
                                       flags.refused_pod_timeout_s));
  }
  options.reconciler.decide.create_backoff.fail_after =
      std::chrono::milliseconds(static_cast<int64_t>(flags.refused_pod_timeout_s * 1000));
  if (!(flags.items_wait_s >= 0 && flags.items_wait_s <= 86400)) {
    return Status::Invalid(
        fmt::format("--items-wait {}: expected seconds in [0, 86400]", flags.items_wait_s));
  }
  options.reconciler.decide.items_wait =
      std::chrono::milliseconds(static_cast<int64_t>(flags.items_wait_s * 1000));
  return Status::Ok();
}

// The store's namespace and name: --history-configmap, else
// <lease-namespace>/<lease-name>-history. Invalid naming the flag otherwise.
StatusOr<std::pair<std::string, std::string>> HistoryConfigMapOf(const OperatorFlags& flags) {
  if (flags.history_configmap.empty()) {
    return std::pair{flags.lease_namespace, flags.lease_name + "-history"};
  }
  return SplitNamespacedName(flags.history_configmap, "--history-configmap");
}

// The history prior's options from the flags; Invalid naming the flag that is wrong.
Status HistoryOptionsFrom(const OperatorFlags& flags, runtime::OperatorOptions& options) {
  if (!(flags.prometheus_window_s >= 60)) {
    return Status::Invalid(
        fmt::format("--prometheus-window {}: expected seconds >= 60", flags.prometheus_window_s));
  }
  if (!(flags.prometheus_timeout_s > 0 && flags.prometheus_timeout_s <= 60)) {
    return Status::Invalid(fmt::format("--prometheus-timeout {}: expected seconds in (0, 60]",
                                       flags.prometheus_timeout_s));
  }
  if (!(flags.history_full_trust_samples > 0)) {
    return Status::Invalid(fmt::format("--history-full-trust-samples {}: expected a number > 0",
                                       flags.history_full_trust_samples));
  }
  if (!(flags.history_max_age_s > 0)) {
    return Status::Invalid(
        fmt::format("--history-max-age {}: expected seconds > 0", flags.history_max_age_s));
  }
  if (!(flags.node_slow_ratio > 0 && flags.node_slow_ratio < 1)) {
    return Status::Invalid(
        fmt::format("--node-slow-ratio {}: expected a number in (0, 1)", flags.node_slow_ratio));
  }
  // The URL and the ConfigMap's name are checked here, before anything starts.
  if (!flags.prometheus_url.empty()) {
    BALLAST_RETURN_IF_ERROR(net::PrometheusHistory::Create({.url = flags.prometheus_url}).status());
  }
  BALLAST_RETURN_IF_ERROR(HistoryConfigMapOf(flags).status());
  options.reconciler.decide.history_prior.full_trust_samples = flags.history_full_trust_samples;
  options.reconciler.decide.history_prior.max_age_seconds = flags.history_max_age_s;
  options.reconciler.decide.deviation.slow_ratio = flags.node_slow_ratio;
  options.reconciler.decide.deviation.max_age_seconds = flags.history_max_age_s;
  return Status::Ok();
}

// Where the history comes from: Prometheus, the ConfigMap store, or nowhere
// (--no-history). Invalid naming the flag that is wrong.
StatusOr<std::shared_ptr<history::HistorySource>> HistorySourceFrom(const OperatorFlags& flags,
                                                                    kube::KubeClient& client) {
  if (flags.no_history) return std::shared_ptr<history::HistorySource>();
  if (!flags.prometheus_url.empty()) {
    net::PrometheusHistoryOptions options;
    options.url = flags.prometheus_url;
    options.window_seconds = flags.prometheus_window_s;
    options.timeout =
        std::chrono::milliseconds(static_cast<int64_t>(flags.prometheus_timeout_s * 1000));
    BALLAST_ASSIGN_OR_RETURN(auto source, net::PrometheusHistory::Create(options));
    spdlog::info("history from prometheus url={} window_s={:g} timeout_s={:g}", options.url,
                 options.window_seconds, flags.prometheus_timeout_s);
    return std::shared_ptr<history::HistorySource>(std::move(source));
  }
  BALLAST_ASSIGN_OR_RETURN(auto configmap, HistoryConfigMapOf(flags));
  const auto& [ns, name] = configmap;
  spdlog::info("history from the store configmap={}/{}", ns, name);
  return std::shared_ptr<history::HistorySource>(
      std::make_shared<runtime::ConfigMapHistory>(client, ns, name));
}

// The probes' address and stall bound.
Status HealthOptionsFrom(const OperatorFlags& flags, runtime::OperatorOptions& options) {
  if (!flags.health_listen.empty()) {
    BALLAST_RETURN_IF_ERROR(SplitHostPort(flags.health_listen, "--health-listen",
                                          &options.health_address, &options.health_port));
    options.serve_health = true;
  }
  if (!(flags.health_stall_s > 0)) {
    return Status::Invalid(
        fmt::format("--health-stall-seconds {}: expected seconds > 0", flags.health_stall_s));
  }
  options.health_stall_bound =
      std::chrono::milliseconds(static_cast<int64_t>(flags.health_stall_s * 1000));
  return Status::Ok();
}

// Where the coordinator listens, and the URL the worker pods reach it at.
Status CoordinatorOptionsFrom(const OperatorFlags& flags, runtime::OperatorOptions& options) {
  BALLAST_RETURN_IF_ERROR(SplitHostPort(flags.coordinator_listen, "--coordinator-listen",
                                        &options.coordinator_address, &options.coordinator_port));
  options.reconciler.decide.pods.coordinator_url =
      flags.coordinator_url.empty()
          ? fmt::format(
                "http://{}:{}",
                options.coordinator_address == "0.0.0.0" ? Hostname() : options.coordinator_address,
                options.coordinator_port)
          : flags.coordinator_url;
  return Status::Ok();
}

// How often a running job's status is written.
Status PacingOptionsFrom(const OperatorFlags& flags, runtime::OperatorOptions& options) {
  if (!(flags.status_interval_s > 0 && flags.status_interval_s <= 3600)) {
    return Status::Invalid(fmt::format("--status-interval {}: expected seconds in (0, 3600]",
                                       flags.status_interval_s));
  }
  if (!(flags.progress_interval_s > 0 && flags.progress_interval_s <= 3600)) {
    return Status::Invalid(fmt::format("--progress-interval {}: expected seconds in (0, 3600]",
                                       flags.progress_interval_s));
  }
  if (!(flags.progress_step > 0 && flags.progress_step <= 100)) {
    return Status::Invalid(fmt::format("--progress-step {}: expected percentage points in (0, 100]",
                                       flags.progress_step));
  }
  options.reconciler.decide.pacing.status_interval =
      std::chrono::milliseconds(static_cast<int64_t>(flags.status_interval_s * 1000));
  // Progress is never written more often than any other change.
  options.reconciler.decide.pacing.progress_interval = std::chrono::milliseconds(
      static_cast<int64_t>(std::max(flags.progress_interval_s, flags.status_interval_s) * 1000));
  options.reconciler.decide.pacing.progress_step = flags.progress_step;
  return Status::Ok();
}

// The operator's options from the flags, part by part, each checked in the
// order the parts are listed; Invalid naming the flag that is wrong.
StatusOr<runtime::OperatorOptions> OptionsFrom(const OperatorFlags& flags) {
  runtime::OperatorOptions options;
  BALLAST_RETURN_IF_ERROR(HealthOptionsFrom(flags, options));
  BALLAST_RETURN_IF_ERROR(OwnPodFrom(flags, options));
  BALLAST_RETURN_IF_ERROR(WorkerOptionsFrom(flags, options));
  BALLAST_RETURN_IF_ERROR(HistoryOptionsFrom(flags, options));
  BALLAST_RETURN_IF_ERROR(CoordinatorOptionsFrom(flags, options));
  BALLAST_RETURN_IF_ERROR(PacingOptionsFrom(flags, options));
  options.watch_namespace = flags.watch_namespace;
  options.workers = flags.workers;
  options.identity = flags.identity.empty() ? Hostname() : flags.identity;
  options.leader_elect = flags.leader_elect;
  options.reconciler.kueue = flags.kueue;
  options.lease_namespace = flags.lease_namespace;
  options.lease_name = flags.lease_name;
  options.reconciler.decide.pods.default_image = flags.worker_image;
  options.reconciler.decide.pods.metrics_port = flags.worker_metrics_port;
  return options;
}

// Prometheus' /metrics on `listen` ("host:port"), serving `registry`; null
// when `listen` is empty.
StatusOr<std::unique_ptr<prometheus::Exposer>> ServeMetrics(
    const std::string& listen, const std::shared_ptr<prometheus::Registry>& registry) {
  if (listen.empty()) return std::unique_ptr<prometheus::Exposer>();
  try {
    auto exposer = std::make_unique<prometheus::Exposer>(listen);
    exposer->RegisterCollectable(registry);
    return exposer;
  } catch (const std::exception& e) {
    return Status::Unavailable(fmt::format("--metrics-listen {}: {}", listen, e.what()));
  }
}

// Runs the operator until it ends by itself (lost leadership, no sync) or
// one of `signals` (blocked in every thread) asks it to stop.
Status RunUntilSignalled(runtime::Operator& op, const sigset_t& signals) {
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    if (returned.load()) return;
    spdlog::info("stopping signal={}", signal);
    op.Stop();
  });
  const Status result = op.Run();
  // Wake the waiter when Run ended by itself.
  returned = true;
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return result;
}

int Run(const OperatorFlags& flags) {
  // SIGINT / SIGTERM stop the operator from a thread of ours (a handler may
  // not take locks). Blocked before any thread starts, so every thread
  // inherits the mask and none dies of the default action.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Every thread (HTTP client pools, informers, the coordinator's listener)
  // would get a malloc arena of its own; two keep the footprint small.
  mallopt(M_ARENA_MAX, 2);
  spdlog::set_level(flags.verbose ? spdlog::level::debug : spdlog::level::info);
  auto options = OptionsFrom(flags);
  if (!options.ok()) return ReportError(options.status());
  auto config = kube::FindClusterConfig(flags.kubeconfig, flags.context);
  if (!config.ok()) return ReportError(config.status());
  auto client = kube::HttpKubeClient::Create(*config);
  if (!client.ok()) return ReportError(client.status());
  options->api_request_counts = [client = client->get()] { return client->RequestCounts(); };
  auto history = HistorySourceFrom(flags, **client);
  if (!history.ok()) return ReportError(history.status());
  options->reconciler.history = std::move(*history);

  auto registry = std::make_shared<prometheus::Registry>();
  auto exposer = ServeMetrics(flags.metrics_listen, registry);
  if (!exposer.ok()) return ReportError(exposer.status());
  runtime::Operator op(**client, *options, registry);
  if (*exposer) (*exposer)->RegisterCollectable(op.collectable());
  const Status result = RunUntilSignalled(op, signals);
  // Speeds recorded in the background are written while the client is here.
  if (options->reconciler.history) {
    if (Status flushed = options->reconciler.history->Flush(); !flushed.ok()) {
      spdlog::info("speeds not recorded error=\"{}\"", flushed.ToString());
    }
  }
  spdlog::info("operator stopped api_requests={} events={}", (*client)->TotalRequests(),
               op.Stats().events_posted);
  if (!result.ok()) return ReportError(result);
  return kExitOk;
}

}  // namespace

// size: a declarative table of the operator's flags, one entry each
void RegisterOperator(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<OperatorFlags>();
  auto* cmd = app.add_subcommand(
      "operator",
      "Run the WeightedJob controller: weigh nodes, start worker pods, coordinate them, keep "
      "status");
  cmd->add_option("--kubeconfig", flags->kubeconfig,
                  "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else the pod's service "
                  "account)");
  cmd->add_option("--context", flags->context, "kubeconfig context (default: current-context)");
  cmd->add_option("-n,--namespace", flags->watch_namespace,
                  "reconcile only this namespace's WeightedJobs (default: all namespaces)");
  cmd->add_option("--coordinator-listen", flags->coordinator_listen,
                  "where the coordinator listens for workers, HOST:PORT")
      ->capture_default_str();
  cmd->add_option("--coordinator-url", flags->coordinator_url,
                  "the coordinator's URL as worker pods reach it, e.g. "
                  "http://ballast-coordinator.ballast-system.svc:8080 (default: this host and "
                  "the listen port)");
  cmd->add_option("--worker-image", flags->worker_image,
                  "worker image of jobs that name none (spec.worker.image; for primes and matmul "
                  "also the image of spec.template's first container)")
      ->capture_default_str();
  cmd->add_option("--worker-metrics-port", flags->worker_metrics_port,
                  "port of each worker pod's /metrics (0: off)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--status-interval", flags->status_interval_s,
                  "seconds between passes over a running job, and the least time between two "
                  "status writes of a change other than progress (a phase is written at once)")
      ->capture_default_str();
  cmd->add_option("--progress-interval", flags->progress_interval_s,
                  "the most seconds between status writes of a running job's progress and "
                  "checkpoint, and so the most a job redoes after an operator dies without "
                  "warning (at least --status-interval)")
      ->capture_default_str();
  cmd->add_option("--progress-step", flags->progress_step,
                  "percentage points of a running job's items or cost that write its progress "
                  "and checkpoint before --progress-interval (no sooner than --status-interval); "
                  "a job shorter than 100 / step intervals redoes at most a step")
      ->capture_default_str();
  cmd->add_option("--workers", flags->workers, "jobs reconciled at once")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_flag("--leader-elect", flags->leader_elect,
                "run as one of several replicas: reconcile only while holding the Lease");
  cmd->add_option("--lease-namespace", flags->lease_namespace, "namespace of the leader Lease")
      ->capture_default_str();
  cmd->add_option("--lease-name", flags->lease_name, "name of the leader Lease")
      ->capture_default_str();
  cmd->add_option("--identity", flags->identity,
                  "this replica's name on the Lease and in Events (default: the host name)");
  cmd->add_option("--metrics-listen", flags->metrics_listen,
                  "serve the operator's Prometheus /metrics on HOST:PORT (default: off; the "
                  "coordinator's are on its own port)");
  cmd->add_option("--health-listen", flags->health_listen,
                  "serve the probes on HOST:PORT: /healthz (liveness: reconciles and watches "
                  "make progress) and /readyz (readiness: caches synced, or a standby replica) "
                  "(default: off)");
  cmd->add_option("--health-stall-seconds", flags->health_stall_s,
                  "/healthz fails once a reconcile has run, or an informer's list and watch "
                  "have failed, this long")
      ->capture_default_str();
  cmd->add_flag("--mark-leader-pod", flags->mark_leader_pod,
                "label this replica's pod ($POD_NAME in $POD_NAMESPACE) "
                "ballast.io/coordinator=leader while it leads, so a Service selecting that label "
                "sends workers to the leader; the label is removed at start and stop");
  cmd->add_option("--worker-architectures", flags->worker_architectures,
                  "only nodes whose kubernetes.io/arch is in this list get a worker, e.g. "
                  "amd64,arm64,arm; the job's status names the others (default: every "
                  "architecture)");
  cmd->add_option("--worker-image-for", flags->worker_image_for,
                  "ARCH=IMAGE: the worker image on nodes of that architecture, unless the job "
                  "names one (as --worker-image) (repeatable)");
  cmd->add_option("--worker-resources-for", flags->worker_resources_for,
                  "ARCH=requests.cpu=100m,limits.memory=256Mi: worker pods' resources on nodes "
                  "of that architecture, unless the job's worker container has resources "
                  "(spec.template's first container, spec.worker.resources) (repeatable)");
  cmd->add_option("--worker-start-timeout", flags->worker_start_timeout_s,
                  "seconds a worker pod may wait for its image (ErrImagePull, ...) before its "
                  "node is given up, and a running worker may take to reach the coordinator "
                  "before a CoordinatorUnreachable event")
      ->capture_default_str();
  cmd->add_option("--worker-bundle", flags->worker_bundle,
                  "how an exec job's worker pods in the user's image get the worker: auto (an "
                  "image volume of the worker image on nodes whose kubelet is 1.36 or later and "
                  "whose runtime mounts one, containerd 2.1+ or CRI-O 1.31+; else an init "
                  "container copies it), image-volume (on every node) or init-container")
      ->capture_default_str();
  cmd->add_option("--refused-pod-timeout", flags->refused_pod_timeout_s,
                  "seconds a job's worker pods may be refused for a reason only a person can "
                  "change (the namespace's PodSecurity level, a missing PriorityClass, an "
                  "admission webhook's denial) before the job fails; refused creates are tried "
                  "again with backoff meanwhile (0: fail at the first refusal)")
      ->capture_default_str();
  cmd->add_option("--items-wait", flags->items_wait_s,
                  "seconds a job waits for the ConfigMap of its items (spec.itemsFrom) to exist "
                  "before it fails, as a pod waits for its ConfigMap: it may come later in the "
                  "same apply (0: fail at once)")
      ->capture_default_str();
  cmd->add_option("--worker-pod-ttl", flags->worker_pod_ttl_s,
                  "seconds after a job finished that its finished worker pods (and their logs) "
                  "are deleted, unless the job's spec.podTTLSecondsAfterFinished says "
                  "otherwise; -1 keeps them")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{-1}, int64_t{std::numeric_limits<int32_t>::max()}));
  cmd->add_option("--prometheus-url", flags->prometheus_url,
                  "learn each node's speed from Prometheus at this URL, e.g. "
                  "http://prometheus.monitoring:9090: one query per job start (default: from the "
                  "store of finished jobs' speeds, --history-configmap)");
  cmd->add_option("--prometheus-window", flags->prometheus_window_s,
                  "seconds of history the Prometheus query reads")
      ->capture_default_str();
  cmd->add_option("--prometheus-timeout", flags->prometheus_timeout_s,
                  "seconds a job's start waits for Prometheus before it starts on the fuzzy "
                  "weights (with a HistoryUnavailable event)")
      ->capture_default_str();
  cmd->add_option("--history-configmap", flags->history_configmap,
                  "NAMESPACE/NAME of the ConfigMap that stores finished jobs' speeds when there "
                  "is no --prometheus-url (default: <lease-namespace>/<lease-name>-history)");
  cmd->add_flag("--no-history", flags->no_history,
                "start every job on the fuzzy weights alone: no history is read or recorded");
  cmd->add_option("--history-full-trust-samples", flags->history_full_trust_samples,
                  "samples of history (jobs that measured a node) at which its prior is the "
                  "history alone; fewer blend it with the fuzzy weight")
      ->capture_default_str();
  cmd->add_option("--history-max-age", flags->history_max_age_s,
                  "seconds after which a node's history is stale and its prior is the fuzzy "
                  "weight")
      ->capture_default_str();
  cmd->add_option("--node-slow-ratio", flags->node_slow_ratio,
                  "a finished job that measured a node below this ratio of its own baseline "
                  "(and below the band of its history) names it in a NodeBelowBaseline Warning")
      ->capture_default_str();
  cmd->add_flag("--kueue", flags->kueue,
                "admit jobs labelled kueue.x-k8s.io/queue-name through Kueue: each gets a "
                "Workload and runs once Kueue admits it (Kueue's CRDs must be installed; "
                "docs/operator.md, \"Kueue\")");
  cmd->add_flag("-v,--verbose", flags->verbose, "log debug messages");
  cmd->footer(
      "\nThe operator needs the CRDs (kubectl apply -f crds/ -f crds/profiles/) and RBAC to read\n"
      "nodes, WeightProfiles and WeightedJobs, to write their status, and to manage pods,\n"
      "Secrets and Events. See docs/operator.md.\n\n"
      "Examples:\n"
      "  # beside a cluster, workers reaching this machine at 10.0.0.5:\n"
      "  ballast operator --coordinator-url http://10.0.0.5:8080\n"
      "  # in a pod behind the chart's Service:\n"
      "  ballast operator --leader-elect --lease-namespace ballast-system \\\n"
      "    --coordinator-url http://ballast-coordinator.ballast-system.svc:8080");
  cmd->callback([flags, exit_code] { *exit_code = Run(*flags); });
}

}  // namespace ballast::cli
