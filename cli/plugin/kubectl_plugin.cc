// kubectl-ballast: the `ballast` program run under the name kubectl-ballast
// (a kubectl plugin: `kubectl ballast ...`). Its subcommands read the live
// cluster as kubectl does (--kubeconfig, $KUBECONFIG, ~/.kube/config, else
// the pod's service account; --context, -n/--namespace) and reuse what the
// file-based commands compute: the weights and the fit of `ballast weights`
// (weights.h), the report renderer of `ballast run` (plugin_report.h), and
// a live view of a job (plugin_top.h). This file only wires flags, talks to
// the API server and prints; every decision is in those headers.
//
// Thread-safety: runs once on the main thread.
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ballast/version.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/fit_speeds.h"
#include "cli/plugin/plugin_cluster.h"
#include "cli/plugin/plugin_live.h"
#include "cli/plugin/plugin_report.h"
#include "cli/plugin/plugin_top.h"
#include "cli/stop_signals.h"
#include "cli/weights.h"
#include "core/common/duration.h"
#include "core/fuzzy/profile.h"
#include "core/fuzzy/profile_json.h"
#include "net/kube/http_client.h"
#include "operator/runtime/resources.h"

namespace ballast::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct PluginFlags {
  std::string kubeconfig;
  std::string context;
  std::string ns;
};

// The API server of the flags, and the namespace to use.
struct Cluster {
  std::unique_ptr<kube::HttpKubeClient> client;
  std::string ns;
  kube::ClusterConfig config;
};

// A client of the cluster whose requests give up after `timeout`.
StatusOr<std::unique_ptr<kube::HttpKubeClient>> ClientOf(const kube::ClusterConfig& config,
                                                         std::chrono::seconds timeout) {
  kube::HttpClientOptions options;
  options.user_agent = "kubectl-ballast/" + std::string(kVersion);
  options.request_timeout = timeout;
  return kube::HttpKubeClient::Create(config, options);
}

StatusOr<Cluster> Connect(const PluginFlags& flags) {
  BALLAST_ASSIGN_OR_RETURN(kube::ClusterConfig config,
                           kube::FindClusterConfig(flags.kubeconfig, flags.context));
  BALLAST_ASSIGN_OR_RETURN(auto client, ClientOf(config, std::chrono::seconds(20)));
  std::string ns = flags.ns.empty() ? config.default_namespace : flags.ns;
  return Cluster{std::move(client), std::move(ns), std::move(config)};
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The WeightedJob `name` in the cluster's namespace; NotFound saying how to
// list them.
StatusOr<nlohmann::json> GetJob(Cluster& cluster, const std::string& name) {
  auto job = cluster.client->Get(runtime::WeightedJobs().In(cluster.ns).Named(name));
  if (job.status().code() == StatusCode::kNotFound) {
    return Status::NotFound(fmt::format(
        "WeightedJob {} not found in namespace {} (kubectl get weightedjobs -n {}; -n NAMESPACE "
        "names another)",
        name, cluster.ns, cluster.ns));
  }
  return job;
}

// --profile: a file when one exists at that path, else the cluster's
// WeightProfile of that name.
StatusOr<fuzzy::Profile> LoadClusterProfile(Cluster& cluster, const std::string& spec) {
  std::error_code error;
  if (std::filesystem::is_regular_file(spec, error)) {
    BALLAST_ASSIGN_OR_RETURN(std::string text, ReadFile(spec));
    return fuzzy::ParseProfile(text, spec);
  }
  auto object = cluster.client->Get(runtime::WeightProfiles().Named(spec));
  if (object.status().code() == StatusCode::kNotFound) {
    return Status::NotFound(
        fmt::format("--profile {}: no WeightProfile of that name in the cluster (kubectl get "
                    "weightprofiles), and no such file",
                    spec));
  }
  if (!object.ok()) return object.status();
  auto profile = fuzzy::ProfileFromJson(*object);
  if (!profile.ok()) {
    return Status::Invalid(fmt::format("WeightProfile {}: {}", spec, profile.status().message()));
  }
  return profile;
}

// The cluster's nodes (those `selector` selects) as NodeList text, which the
// file-based commands read.
StatusOr<std::string> ClusterNodesText(Cluster& cluster, const std::string& selector) {
  kube::ListOptions options;
  options.label_selector = selector;
  options.limit = 500;
  BALLAST_ASSIGN_OR_RETURN(kube::ObjectList list, cluster.client->List(runtime::Nodes(), options));
  if (list.items.empty()) {
    return Status::NotFound(selector.empty() ? std::string("the cluster has no nodes")
                                             : fmt::format("no node matches -l {}", selector));
  }
  nlohmann::json node_list = {{"apiVersion", "v1"}, {"kind", "NodeList"}, {"items", list.items}};
  return node_list.dump();
}

// ---- weights ---------------------------------------------------------------

struct WeightsFlags {
  std::string profile = "raspberry-pi";
  std::string selector;
  std::string output = "table";
};

int RunWeights(const PluginFlags& flags, const WeightsFlags& weights) {
  auto cluster = Connect(flags);
  if (!cluster.ok()) return ReportError(cluster.status());
  auto profile = LoadClusterProfile(*cluster, weights.profile);
  if (!profile.ok()) return ReportError(profile.status());
  auto nodes = ClusterNodesText(*cluster, weights.selector);
  if (!nodes.ok()) return ReportError(nodes.status());
  return PrintNodeWeights(*profile, *nodes, "the cluster's nodes",
                          weights.output == "json" ? Output::kJson : Output::kTable);
}

// ---- top ---------------------------------------------------------------------

struct TopFlags {
  std::string job;
  double interval_s = 2;
  bool once = false;
};

// The terminal's width: the window's, else $COLUMNS, else 80.
int TerminalWidth() {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    const int value = std::atoi(columns);
    if (value > 0 && value < 1000) return value;
  }
  return 80;
}

// Sleeps `seconds` in short steps; false when a stop signal came.
bool PauseTop(const StopSignals& stop, double seconds) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    if (stop.signal() != 0) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return stop.signal() == 0;
}

// The view of the job's status with the coordinator's live figures over it
// while it runs, or with the reason there are none.
TopView WithLiveFigures(LiveProgress& live, TopView view) {
  if (Finished(view)) return view;
  auto progress = live.Read(view.now);
  if (progress.ok()) return WithLive(std::move(view), *progress);
  view.live_note = progress.status().message();
  return view;
}

// The frame of one redraw, and what says where it came from.
void DrawTop(const TopView& view, bool live, double interval_s, TopTrail& trail,
             std::string& last_frame) {
  const std::string frame = RenderTop(view, TerminalWidth(), &trail);
  if (live) {
    const std::string source =
        view.source == TopSource::kLive ? ", live from the coordinator" : " from the job's status";
    // Home, clear, the frame, and what refreshes it.
    fmt::print("\x1b[H\x1b[2J{}\n{}", frame,
               Finished(view) ? "finished\n"
                              : fmt::format("every {:g} s{}; Ctrl-C quits\n", interval_s, source));
  } else if (frame != last_frame) {
    fmt::print("{}{}", last_frame.empty() ? "" : "\n", frame);
  }
  std::fflush(stdout);
  last_frame = frame;
}

int RunTop(const PluginFlags& flags, const TopFlags& top) {
  StopSignals stop;
  auto cluster = Connect(flags);
  if (!cluster.ok()) return ReportError(cluster.status());
  // The live view's requests give up sooner: a redraw does not wait long for it.
  auto quick = ClientOf(cluster->config, std::chrono::seconds(3));
  if (!quick.ok()) return ReportError(quick.status());
  LiveProgress live(**quick, cluster->ns, top.job);
  const bool redraw = isatty(STDOUT_FILENO) != 0 && !top.once;
  std::string last_frame;
  std::string trouble;
  TopTrail trail;  // no bar goes backwards from one redraw to the next
  while (true) {
    auto job = GetJob(*cluster, top.job);
    if (!job.ok() && (!redraw || job.status().code() != StatusCode::kUnavailable)) {
      if (redraw) fmt::print("\n");
      return ReportError(job.status());
    }
    if (job.ok()) {
      auto view = TopViewFromJob(*job, WallSeconds());
      if (!view.ok()) {
        return ReportError(Status(
            view.status().code(),
            fmt::format("WeightedJob {}/{}: {}", cluster->ns, top.job, view.status().message())));
      }
      const TopView shown = WithLiveFigures(live, std::move(view).value());
      DrawTop(shown, redraw, top.interval_s, trail, last_frame);
      trouble.clear();
      if (Finished(shown) || top.once) return kExitOk;
    } else if (job.status().message() != trouble) {
      trouble = job.status().message();
      fmt::print("\nretrying: {}\n", trouble);
      std::fflush(stdout);
    }
    if (!PauseTop(stop, top.interval_s)) return kExitOk;
  }
}

// ---- report ------------------------------------------------------------------

struct ReportFlags {
  std::string job;
  std::string output;  // "" = JOB.html
};

int RunReport(const PluginFlags& flags, const ReportFlags& report) {
  auto cluster = Connect(flags);
  if (!cluster.ok()) return ReportError(cluster.status());
  auto job = GetJob(*cluster, report.job);
  if (!job.ok()) return ReportError(job.status());
  auto html = RenderJobReport(*job);
  if (!html.ok()) return ReportError(html.status());
  if (report.output == "-") {
    fmt::print("{}", *html);
    std::fflush(stdout);
    return kExitOk;
  }
  const std::string path = report.output.empty() ? report.job + ".html" : report.output;
  if (Status written = WriteFile(path, *html); !written.ok()) return ReportError(written);
  fmt::print(stderr, "wrote {} (open it in a browser)\n", path);
  return kExitOk;
}

// ---- fit ---------------------------------------------------------------------

int RunFit(const PluginFlags& flags, const FitFlags& fit) {
  auto cluster = Connect(flags);
  if (!cluster.ok()) return ReportError(cluster.status());
  auto profile = LoadClusterProfile(*cluster, fit.profile);
  if (!profile.ok()) return ReportError(profile.status());
  auto text = ClusterNodesText(*cluster, fit.selector);
  if (!text.ok()) return ReportError(text.status());
  auto nodes = fuzzy::ParseNodes(*text, "the cluster's nodes");
  if (!nodes.ok()) return ReportError(nodes.status());
  auto speeds = ClusterHistorySpeeds(*cluster->client, fit, *nodes, WallSeconds());
  if (!speeds.ok()) return ReportError(speeds.status());
  return PrintFittedProfile(*profile, *nodes, *speeds, speeds->origin);
}

// ---- the command line ----------------------------------------------------------

constexpr const char* kPluginFooter = R"(
Each subcommand reads the cluster of the current kubeconfig context, as kubectl
does: --kubeconfig, else $KUBECONFIG, else ~/.kube/config, else the pod's
service account. Run `kubectl ballast SUBCOMMAND --help` for its flags.

Examples:
  kubectl ballast weights                       # every node's fuzzy weight
  kubectl ballast top primes-300000             # a running job, node by node
  kubectl ballast report primes-300000          # primes-300000.html of a finished job
  kubectl ballast fit --workload primes         # the profile's ranks fitted to measured speeds

Exit codes: 0 ok, 1 the cluster or the history failed or refused (the message
says what), 2 a bad flag or input, or a job, profile or context that does not
exist.)";

void AddClusterFlags(CLI::App& app, PluginFlags& flags) {
  app.add_option("--kubeconfig", flags.kubeconfig,
                 "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else the pod's service "
                 "account)")
      ->configurable(false);
  app.add_option("--context", flags.context, "kubeconfig context (default: current-context)");
  app.add_option("-n,--namespace", flags.ns, "namespace of the job (default: the context's)");
}

void RegisterPluginWeights(CLI::App& app, const std::shared_ptr<PluginFlags>& flags,
                           int* exit_code) {
  auto options = std::make_shared<WeightsFlags>();
  auto* cmd = app.add_subcommand(
      "weights",
      "The fuzzy weight of each node, from its labels and a WeightProfile of the cluster");
  cmd->add_option("-p,--profile", options->profile,
                  "the WeightProfile (kubectl get weightprofiles), or a profile file")
      ->capture_default_str();
  cmd->add_option("-l,--selector", options->selector,
                  "only the nodes this label selector selects, as kubectl's -l");
  cmd->add_option("-o,--output", options->output, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->footer(
      "\nThe same table as `ballast weights --nodes FILE`, from the live nodes: SCORE is the\n"
      "fuzzy score, RELATIVE the score over the lowest, WEIGHT it rounded as the profile says;\n"
      "each criterion column is its membership (the label's value), * where the node probe set\n"
      "the label. A missing or malformed label gets the criterion's default and a warning.\n\n"
      "Cluster flags (before or after the subcommand): --kubeconfig, --context, -n.\n\n"
      "Examples:\n"
      "  kubectl ballast weights\n"
      "  kubectl ballast weights -l ballast.io/pool=seed000 -o json");
  cmd->callback([flags, options, exit_code] { *exit_code = RunWeights(*flags, *options); });
}

void RegisterPluginTop(CLI::App& app, const std::shared_ptr<PluginFlags>& flags, int* exit_code) {
  auto options = std::make_shared<TopFlags>();
  auto* cmd = app.add_subcommand("top", "A live per-node view of a WeightedJob");
  cmd->add_option("JOB", options->job, "the WeightedJob's name")->required();
  cmd->add_option("--interval", options->interval_s, "seconds between refreshes")
      ->check(CLI::Range(0.2, 3600.0))
      ->capture_default_str();
  cmd->add_flag("--once", options->once, "print the view once and exit");
  cmd->footer(
      "\nOn a terminal it redraws every --interval until the job finishes (Ctrl-C quits);\n"
      "elsewhere, or with --once, it prints a view whenever it changes. While the job\n"
      "runs it reads the job's progress live from its coordinator, through the API\n"
      "server's service proxy (rights to get services/proxy of the coordinator's\n"
      "Service); else the WeightedJob's status, which the operator writes at steps of\n"
      "the job, saying why in one line (rights to get weightedjobs are all that needs).\n\n"
      "Columns: WEIGHT the node's prior, ITEMS/S its estimated speed, ITEMS what it has\n"
      "done, STEALS the tail steals it made; PROGRESS its items against its expected share\n"
      "(the job's items times its share of the summed speeds); ETA at its speed. A job of\n"
      "more than 100 nodes shows the 100 furthest from their predicted speed.\n\n"
      "Cluster flags (before or after the subcommand): --kubeconfig, --context, -n.\n\n"
      "Examples:\n"
      "  kubectl ballast top primes-300000\n"
      "  kubectl ballast top thumbnails -n photos --once");
  cmd->callback([flags, options, exit_code] { *exit_code = RunTop(*flags, *options); });
}

void RegisterPluginReport(CLI::App& app, const std::shared_ptr<PluginFlags>& flags,
                          int* exit_code) {
  auto options = std::make_shared<ReportFlags>();
  auto* cmd =
      app.add_subcommand("report", "The HTML report (Gantt chart, nodes) of a finished job");
  cmd->add_option("JOB", options->job, "the WeightedJob's name")->required();
  cmd->add_option("-o,--output", options->output,
                  "the file to write (default: JOB.html; - for stdout)");
  cmd->footer(
      "\nA finished job keeps per-node totals in its status, not the timeline of its leases:\n"
      "each node's busy time is drawn as its items over its estimated speed, from the start\n"
      "of the makespan. `ballast run --report` draws the full timeline of a local run.\n\n"
      "Cluster flags (before or after the subcommand): --kubeconfig, --context, -n.\n\n"
      "Examples:\n"
      "  kubectl ballast report primes-300000 && xdg-open primes-300000.html\n"
      "  kubectl ballast report thumbnails -n photos -o - > thumbnails.html");
  cmd->callback([flags, options, exit_code] { *exit_code = RunReport(*flags, *options); });
}

void RegisterPluginFit(CLI::App& app, const std::shared_ptr<PluginFlags>& flags, int* exit_code) {
  auto options = std::make_shared<FitFlags>();
  auto* cmd = app.add_subcommand(
      "fit", "Fit a WeightProfile's ranks to the speeds the cluster's history measured");
  cmd->add_option("-p,--profile", options->profile,
                  "the WeightProfile to fit (kubectl get weightprofiles), or a profile file")
      ->capture_default_str();
  cmd->add_option("-w,--workload", options->workload,
                  "the workload kind whose speeds to fit: primes, matmul, exec")
      ->capture_default_str();
  cmd->add_option("-l,--selector", options->selector, "only the nodes this label selector selects");
  cmd->add_option("--prometheus", options->prometheus,
                  "the Prometheus to ask, an http(s) URL this machine reaches (default: the "
                  "operator's --prometheus-url, through the API server's service proxy)");
  cmd->add_option("--history-configmap", options->history_configmap,
                  "NAMESPACE/NAME: the operator's store of speeds (default: the operator's "
                  "--history-configmap)");
  cmd->add_option("--window", options->window,
                  fmt::format("how far back Prometheus looks, seconds or a duration like 7d "
                              "(default: the operator's --prometheus-window, else {})",
                              FormatDuration(DefaultFitWindowSeconds())));
  cmd->add_option("--timeout", options->timeout_s, "seconds to wait for Prometheus, at most 60")
      ->capture_default_str();
  cmd->footer(
      "\nThe history is the one the operator starts each job from (docs/history.md): with\n"
      "--prometheus, that Prometheus; else the operator's own (the leading replica's pod,\n"
      "labelled ballast.io/coordinator=leader, says where): its Prometheus, reached through\n"
      "the API server's service proxy (rights to get services/proxy), or its ConfigMap of\n"
      "finished jobs' speeds. It prints the fitted WeightProfile, with each node's error\n"
      "before and after as comments: `kubectl apply -f` it to use it.\n\n"
      "Cluster flags (before or after the subcommand): --kubeconfig, --context, -n.\n\n"
      "Examples:\n"
      "  kubectl ballast fit --workload primes > fitted.yaml\n"
      "  kubectl ballast fit --prometheus http://localhost:9090 --window 30d");
  cmd->callback([flags, options, exit_code] { *exit_code = RunFit(*flags, *options); });
}

}  // namespace

bool IsKubectlPluginName(const char* argv0) {
  if (argv0 == nullptr) return false;
  return std::filesystem::path(argv0).filename() == "kubectl-ballast";
}

int RunKubectlPlugin(int argc, char** argv) {
  CLI::App app{
      "kubectl ballast: Ballast's weighted jobs in the live cluster — node weights, a job's\n"
      "per-node progress, its report, and profile ranks fitted to measured speeds.",
      "kubectl ballast"};
  app.require_subcommand(1);
  app.fallthrough();
  app.footer(kPluginFooter);
  app.set_version_flag("--version", "kubectl-ballast " + std::string(kVersion));
  auto flags = std::make_shared<PluginFlags>();
  AddClusterFlags(app, *flags);
  int exit_code = kExitOk;
  RegisterPluginWeights(app, flags, &exit_code);
  RegisterPluginTop(app, flags, &exit_code);
  RegisterPluginReport(app, flags, &exit_code);
  RegisterPluginFit(app, flags, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  return exit_code;
}

}  // namespace ballast::cli
