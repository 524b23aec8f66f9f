#include "worker/probe/probe_command.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>

#include "core/common/utf8.h"
#include "net/kube/http_client.h"
#include "net/kube/kubeconfig.h"
#include "worker/probe/benchmark.h"
#include "worker/probe/board_condition_writer.h"
#include "worker/probe/node_labeller.h"
#include "worker/probe/probe_metrics.h"
#include "worker/probe/report.h"
#include "worker/stop_signals.h"

namespace ballast::worker {
namespace {

std::string EnvOr(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

void Print(const ProbeReport& report, const std::string& output) {
  if (output == "json") {
    std::printf("%s\n", DumpJson(ReportToJson(report), 2).c_str());
  } else {
    for (const probe::Warning& warning : report.warnings) {
      std::fprintf(stderr, "warning: %s\n", warning.message.c_str());
    }
    if (const std::string note = probe::BoardNote(report.facts); !note.empty()) {
      std::fprintf(stderr, "note: %s (no ballast.io/board label)\n", note.c_str());
    }
    // What --apply would raise on the Node: by hand, a board that cannot join
    // yet (no memory cgroup) says so here.
    for (const probe::BoardCondition& c : probe::BoardConditions(report.facts)) {
      if (c.status != "True") continue;
      std::fprintf(stderr, "condition: %s %s: %s\n", c.type.c_str(), c.reason.c_str(),
                   c.message.c_str());
    }
    for (const auto& [key, value] : report.labels) {
      std::printf("%s=%s\n", key.c_str(), value.c_str());
    }
  }
  std::fflush(stdout);
}

std::string LogWarnings(const ProbeReport& report) {
  std::string text;
  for (const probe::Warning& warning : report.warnings) text += warning.message + "\n";
  return text;
}

// One pass: metrics, then (when a labeller is given) labels, their Events, and
// the board's conditions with theirs (BoardConditionWriter). Returns the
// API server's error, if any.
Status Pass(const ProbeReport& report, NodeLabeller* labeller, BoardConditionWriter* conditions,
            ProbeMetrics& metrics) {
  metrics.Update(report);
  if (labeller == nullptr) return Status::Ok();
  const int before = labeller->applies();
  BALLAST_RETURN_IF_ERROR(labeller->Apply(report.labels, probe::BoardNote(report.facts)));
  const bool applied = labeller->applies() != before;
  if (applied) {
    spdlog::info("node labelled labels={} left_to_others={} warnings={}",
                 report.labels.size() - labeller->conflicts().size(), labeller->conflicts().size(),
                 report.warnings.size());
    for (const probe::Warning& conflict : labeller->conflicts()) {
      spdlog::info("warning {}", conflict.message);
    }
  }
  BALLAST_RETURN_IF_ERROR(
      labeller->Report(labeller->Notice(ProfileWarnings(report), report.labels, report.facts)));
  const int writes = conditions->writes();
  BALLAST_RETURN_IF_ERROR(conditions->Update(probe::BoardConditions(report.facts),
                                             probe::TemperatureNote(report.facts)));
  if (conditions->writes() != writes) {
    for (const probe::BoardCondition& c : probe::BoardConditions(report.facts)) {
      spdlog::info("node condition type={} status={} reason={}", c.type, c.status, c.reason);
    }
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<kube::HttpKubeClient>> Connect(const ProbeOptions& options) {
  BALLAST_ASSIGN_OR_RETURN(kube::ClusterConfig config,
                           kube::FindClusterConfig(options.kubeconfig, ""));
  kube::HttpClientOptions http;
  http.user_agent = options.field_manager;
  return kube::HttpKubeClient::Create(config, http);
}

// The benchmark when --benchmark is given, else nullopt. Run once per
// process: it keeps a core busy, and repeating it on a node that computes
// would measure the node's load rather than its speed.
StatusOr<std::optional<probe::BenchmarkScore>> MaybeBenchmark(const ProbeOptions& options) {
  if (!options.benchmark) return std::optional<probe::BenchmarkScore>();
  BALLAST_ASSIGN_OR_RETURN(probe::BenchmarkScore score,
                           RunBenchmark(std::chrono::milliseconds(options.benchmark_ms)));
  return std::optional<probe::BenchmarkScore>(std::move(score));
}

// MaybeBenchmark for the loop, its score logged.
StatusOr<std::optional<probe::BenchmarkScore>> LoggedBenchmark(const ProbeOptions& options) {
  BALLAST_ASSIGN_OR_RETURN(auto bench, MaybeBenchmark(options));
  if (bench) {
    spdlog::info("benchmark score={:.4g} bucket={} spread={:.3f} samples={}", bench->median,
                 bench->bucket, bench->spread, bench->samples);
  }
  return bench;
}

// What --apply writes to the Node: its labels and its board's conditions,
// through one client; all null without --apply.
struct NodeWriters {
  std::unique_ptr<kube::HttpKubeClient> client;
  std::unique_ptr<NodeLabeller> labeller;
  std::unique_ptr<BoardConditionWriter> conditions;

  static StatusOr<NodeWriters> Connect(const ProbeOptions& options) {
    NodeWriters writers;
    if (!options.apply) return writers;
    BALLAST_ASSIGN_OR_RETURN(writers.client, ballast::worker::Connect(options));
    writers.labeller =
        std::make_unique<NodeLabeller>(*writers.client, options.node, options.field_manager);
    writers.conditions = std::make_unique<BoardConditionWriter>(*writers.client, options.node,
                                                                options.field_manager);
    return writers;
  }
};

// Probes, labels and serves, every options.interval_s until `cancel` (once
// without an interval); the benchmark's score `bench` added to each report.
// Returns the program's exit code.
int Repeat(const ProbeOptions& options, const NodeWriters& writers, ProbeMetrics& metrics,
           const std::optional<probe::BenchmarkScore>& bench, kube::Cancellation& cancel) {
  const auto interval = std::chrono::milliseconds(static_cast<int64_t>(options.interval_s * 1000));
  std::string logged;
  while (true) {
    auto report = Probe(options.root);
    if (!report.ok()) {
      spdlog::error("{}", report.status().message());
      return 2;
    }
    if (bench) AddBenchmark(*report, *bench);
    if (const std::string text = LogWarnings(*report); text != logged) {
      for (const probe::Warning& w : report->warnings) spdlog::info("warning {}", w.message);
      logged = text;
    }
    const Status status = Pass(*report, writers.labeller.get(), writers.conditions.get(), metrics);
    if (!status.ok()) {
      spdlog::error("labelling failed node={} error=\"{}\"", options.node, status.ToString());
      if (options.interval_s <= 0) return 1;
    }
    if (options.interval_s <= 0) return 0;
    const auto wait = status.ok() ? interval : std::min(interval, std::chrono::milliseconds(10000));
    if (cancel.WaitFor(wait)) break;
  }
  spdlog::info("stopped");
  return 0;
}

// --apply and/or --interval: probe, label, serve, repeat until a signal.
int RunLoop(const ProbeOptions& options) {
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %l ballast-probe %v");
  if (options.apply && options.node.empty()) {
    spdlog::error("--apply needs --node or NODE_NAME (the downward API's spec.nodeName)");
    return 2;
  }
  kube::Cancellation cancel;
  // SIGTERM and SIGINT cancel the loop's wait, for as long as the loop runs.
  std::optional<StopSignalThread> stop_signals;
  if (options.interval_s > 0) {
    stop_signals.emplace(nullptr, [&cancel] {
      spdlog::info("stop requested");
      cancel.Cancel();
    });
  }
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  auto metrics =
      ProbeMetrics::Create(options.metrics_listen, options.node.empty() ? host : options.node);
  if (!metrics.ok()) {
    spdlog::error("{}", metrics.status().message());
    return 1;
  }
  if ((*metrics)->port() != 0) spdlog::info("metrics served port={}", (*metrics)->port());
  auto writers = NodeWriters::Connect(options);
  if (!writers.ok()) {
    spdlog::error("no API server error=\"{}\"", writers.status().message());
    return 1;
  }
  const auto bench = LoggedBenchmark(options);
  if (!bench.ok()) {
    spdlog::error("{}", bench.status().message());
    return 1;
  }
  return Repeat(options, *writers, **metrics, *bench, cancel);
}

}  // namespace

// size: a declarative table of the probe's flags, one entry each
CLI::App* AddProbeCommand(CLI::App& app, ProbeOptions* options) {
  options->root = EnvOr("BALLAST_PROBE_ROOT", options->root);
  options->node = EnvOr("NODE_NAME", "");
  options->metrics_listen = EnvOr("BALLAST_METRICS_LISTEN", "");
  CLI::App* probe = app.add_subcommand(
      "probe",
      "read this node's facts (board, CPU, RAM, word sizes, OS, boot disk, power) from\n"
      "ROOT's /proc, /sys and OS files and print the ballast.io/ labels they give, as\n"
      "key=value lines (warnings on stderr) or as JSON with the facts. With --apply, label\n"
      "the Node by server-side apply, write the board's throttling state as Node\n"
      "conditions, and keep doing so every --interval (docs/probe.md).");
  // The last --root, --interval and --metrics-listen win: the chart's
  // probe.extraArgs can point the DaemonSet elsewhere (a tree per node).
  probe
      ->add_option("--root", options->root,
                   "the root to read: / or a host's root mounted in a pod [BALLAST_PROBE_ROOT]")
      ->capture_default_str()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  probe->add_option("-o,--output", options->output, "text: key=value lines; json: everything")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  probe->add_flag("--apply", options->apply,
                  "label the Node by server-side apply (field manager --field-manager), post an "
                  "Event when a fact the profile needs cannot be read, and write the board's "
                  "conditions (BallastBoardUnderVoltage, BallastBoardThrottled, "
                  "BallastBoardNoMemoryCgroup) on the Node's "
                  "status with an Event when one changes");
  probe->add_option("--node", options->node, "the Node to label [NODE_NAME]");
  probe->add_option("--kubeconfig", options->kubeconfig,
                    "kubeconfig (default: $KUBECONFIG, ~/.kube/config, else the pod's account)");
  probe
      ->add_option("--interval", options->interval_s,
                   "probe again every this many seconds until SIGTERM, relabelling when the "
                   "labels change (0: once)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  probe
      ->add_option("--metrics-listen", options->metrics_listen,
                   "serve the facts as Prometheus gauges on host:port [BALLAST_METRICS_LISTEN]")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  probe
      ->add_option("--field-manager", options->field_manager, "the server-side apply field manager")
      ->capture_default_str();
  probe->add_flag("--benchmark", options->benchmark,
                  "time the built-in primes workload on one core (once, at start) and report "
                  "the score: JSON, label ballast.io/bench-score, gauge "
                  "ballast_node_benchmark_score (off by default: it keeps a core busy)");
  probe
      ->add_option("--benchmark-ms", options->benchmark_ms,
                   "the benchmark's time budget in milliseconds")
      ->capture_default_str()
      ->check(CLI::Range(50, 60000));
  return probe;
}

int RunProbeCommand(const ProbeOptions& options) {
  if (options.apply || options.interval_s > 0) return RunLoop(options);
  auto report = Probe(options.root);
  if (!report.ok()) {
    std::fprintf(stderr, "ballast-worker probe: %s\n", report.status().message().c_str());
    return 2;
  }
  const auto bench = MaybeBenchmark(options);
  if (!bench.ok()) {
    std::fprintf(stderr, "ballast-worker probe: %s\n", bench.status().message().c_str());
    return 1;
  }
  if (*bench) AddBenchmark(*report, **bench);
  Print(*report, options.output);
  return 0;
}

}  // namespace ballast::worker
