// `ballast-worker probe`: reads the node's facts from a root directory, prints
// them, and with --apply labels its own Node (server-side apply as field
// manager ballast-probe), posts an Event when a fact the profile needs cannot
// be read, serves the facts as Prometheus gauges and relabels every
// --interval until SIGTERM (docs/probe.md).
//
// Thread-safety: RunProbeCommand runs once, on the main thread.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace ballast::worker {

struct ProbeOptions {
  std::string root = "/";
  std::string output = "text";  // text | json
  bool apply = false;
  std::string node;            // the Node to label [NODE_NAME]
  std::string kubeconfig;      // "" = $KUBECONFIG, ~/.kube/config, or the pod's account
  double interval_s = 0;       // 0: probe once; else relabel every interval until SIGTERM
  std::string metrics_listen;  // host:port of /metrics, "" = off
  std::string field_manager = "ballast-probe";
  bool benchmark = false;   // run the micro-benchmark (once, at start)
  int benchmark_ms = 2000;  // its time budget
};

// Adds the `probe` subcommand to `app`, filling `options`. Returns it.
CLI::App* AddProbeCommand(CLI::App& app, ProbeOptions* options);

// Runs the probe. Returns the exit code: 0 done (warnings allowed), 1 the API
// server failed (without --interval), the metrics port cannot be bound or the
// benchmark's kernel failed,
// 2 a root that is not a directory or --apply without a node name.
int RunProbeCommand(const ProbeOptions& options);

}  // namespace ballast::worker
