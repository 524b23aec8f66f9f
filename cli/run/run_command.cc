// ballast run JOB.yaml [--cluster CLUSTER.yaml] [-o table|json] [--report FILE.html]
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/health_report.h"
#include "cli/run/local_runner.h"
#include "cli/run/run_history.h"
#include "cli/run/run_outcome.h"
#include "cli/run/run_report.h"
#include "cli/scenario_loader.h"
#include "cli/stop_signals.h"
#include "core/common/utf8.h"
#include "core/health/energy.h"

namespace ballast::cli {
namespace {

struct RunFlags {
  std::string job;
  std::string cluster;
  std::string output = "table";
  std::string report;
  std::string policy;
  std::string worker = DefaultWorkerBinary();
  std::string logs;
  std::string history;
  bool no_cgroups = false;
  bool verbose = false;
  uint16_t metrics_port = 0;
  double linger_s = 0;
};

// What a run stopped by `signal` did: the items finished of the total, the
// result of those items, the time. Returns the exit code, 128 + signal.
int ReportStopped(const LocalRunOutcome& outcome, int signal, bool table) {
  const char* name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal";
  const auto& view = outcome.view;
  if (table) {
    fmt::print(
        "stopped by {} after {:.1f} s: {} of {} items finished ({:.1f} %); {}\npartial result "
        "(the finished items only): {}\n",
        name, outcome.elapsed_s, view.completed, view.items,
        view.items > 0 ? 100.0 * view.completed / view.items : 0.0,
        DescribeContainment(outcome.containment), EscapeControls(view.result.Summary()));
  } else {
    const nlohmann::json out = {{"stopped_by", name},
                                {"elapsed_s", outcome.elapsed_s},
                                {"items", view.items},
                                {"completed", view.completed},
                                {"result", view.result.ToJson()},
                                {"processes", ContainmentJson(outcome.containment)},
                                {"exit_code", 128 + signal}};
    fmt::print("{}\n", DumpJson(out, 2));
  }
  return 128 + signal;
}

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// With --history: the priors from the file (printed in the table), put into
// `options`; the file as read, to merge the run into. Returns the error of
// a file that cannot be read or parsed.
StatusOr<history::SpeedStore> ApplyHistory(const RunFlags& flags, const LoadedJob& loaded,
                                           bool table, LocalRunOptions& options) {
  BALLAST_ASSIGN_OR_RETURN(history::SpeedStore store, LoadHistory(flags.history));
  BALLAST_ASSIGN_OR_RETURN(fuzzy::WeightResult weights,
                           ClusterWeights(loaded.profile, loaded.cluster));
  const auto now = static_cast<double>(UnixNow());
  // Samples dated in the future (history::DropFutureSamples) are left out of
  // the prior and of the file written at the end, and named.
  const history::DroppedSamples dropped = history::DropFutureSamples(store, now);
  if (dropped.count > 0) {
    fmt::print(stderr, "ballast: warning: --history {}: {}\n", flags.history,
               history::DescribeDropped(dropped));
  }
  for (const fuzzy::NodePrior& prior : RunPriors(weights, store, loaded.history_key, now)) {
    options.priors.push_back({prior.node, prior.value, prior.credibility});
    if (table) fmt::print("prior {:<18} {}\n", prior.node, DescribePrior(prior));
  }
  return store;
}

// The job and its cluster as the flags say; with the table, its first lines
// (the job, each node's weight). Invalid when --metrics-port leaves the
// cluster's workers (PORT+1 to PORT+N) no ports below 65536.
StatusOr<LoadedJob> LoadForRun(const RunFlags& flags, bool table) {
  BALLAST_ASSIGN_OR_RETURN(LoadedJob loaded, LoadJob(flags.job, flags.cluster));
  const size_t nodes = loaded.cluster.nodes.size();
  if (flags.metrics_port != 0 && flags.metrics_port + nodes > 65535) {
    return Status::Invalid(fmt::format(
        "--metrics-port {}: the {} nodes' workers serve /metrics on ports {} to {}, past 65535",
        flags.metrics_port, nodes, flags.metrics_port + 1, flags.metrics_port + nodes));
  }
  if (!flags.policy.empty()) {
    BALLAST_ASSIGN_OR_RETURN(loaded.job.policy, PolicyByName(flags.policy));
  }
  // A power label the energy estimate cannot use is ignored: said, as a
  // label the weights default is (docs/history.md, "Energy per job").
  for (const job::EmulatedNode& node : loaded.cluster.nodes) {
    for (const std::string& problem : health::PowerLabelProblems(node.labels)) {
      fmt::print(stderr, "ballast: warning: node {}: {}\n", node.name, problem);
    }
  }
  if (table) {
    fmt::print("job {}: {} items of {}, policy {}, profile {}\n", loaded.job.name,
               loaded.job.workload.items, workload::WorkloadKindName(loaded.job.workload.kind),
               loaded.job.policy.display(), loaded.profile.name);
    BALLAST_ASSIGN_OR_RETURN(const fuzzy::WeightResult weights,
                             ClusterWeights(loaded.profile, loaded.cluster));
    PrintWeights(loaded.cluster, weights);
    std::fflush(stdout);
  }
  return loaded;
}

// The output files the flags name (--history, --report): Invalid naming the
// flag and what is wrong when one cannot be written (CheckWritable), so that
// a run is refused before it starts rather than its result lost at its end.
Status CheckOutputs(const RunFlags& flags) {
  if (!flags.history.empty()) BALLAST_RETURN_IF_ERROR(CheckWritable(flags.history, "--history"));
  if (!flags.report.empty()) BALLAST_RETURN_IF_ERROR(CheckWritable(flags.report, "--report"));
  return Status::Ok();
}

// What a finished run gives beside its result: each node judged against its
// baseline in the history (none without --history), and its energy.
struct RunFindings {
  double now = 0;
  std::vector<health::NodeDeviation> deviations;
  health::JobEnergy energy;
  std::optional<controller::FailedItemsFailure> failure;  // RunFailure
};

// An output file that could not be written: its flag and the error.
struct LostOutput {
  std::string flag;
  Status error;
  std::string Message() const { return fmt::format("{}: {}", flag, error.message()); }
};

// Writes the output files: the run learned into --history, the --report.
// Returns each that could not be written.
std::vector<LostOutput> WriteOutputs(const RunFlags& flags, const LoadedJob& loaded,
                                     const history::SpeedStore& history,
                                     const LocalRunOutcome& outcome, const RunFindings& findings) {
  std::vector<LostOutput> lost;
  // A run its failure policy stopped measured only its start: not learned,
  // as a job that failed is not recorded by the operator.
  if (!flags.history.empty() && !outcome.failed_items_stopped) {
    history::LeftOut left_out;
    const Status saved = SaveHistory(
        flags.history,
        Learn(history, loaded.history_key, outcome, findings.now, findings.deviations), &left_out);
    if (!saved.ok()) lost.push_back({"--history", saved});
    // A file grown past the store's bytes (by hand, or by an earlier
    // version) loses its stalest entries: said, never silently.
    if (saved.ok() && left_out.entries > 0) {
      fmt::print(stderr, "ballast: warning: --history {}: {}\n", flags.history,
                 history::DescribeLeftOut(left_out, history::StoreLimits{}));
    }
  }
  if (!flags.report.empty()) {
    const Status written =
        WriteFile(flags.report, RenderRunReport(loaded.job, outcome, findings.energy));
    if (!written.ok()) lost.push_back({"--report", written});
  }
  return lost;
}

// The outcome as the table or JSON; `lost`, the outputs not written, in the
// JSON as "output_errors".
void PrintOutcome(const RunFlags& flags, const LoadedJob& loaded, const LocalRunOutcome& outcome,
                  const RunFindings& findings, const std::vector<LostOutput>& lost, bool table) {
  if (table) {
    PrintRunTable(loaded.job, outcome);
    PrintRunHealth(findings.energy, findings.deviations);
    const bool report_lost = std::any_of(lost.begin(), lost.end(),
                                         [](const LostOutput& o) { return o.flag == "--report"; });
    if (!flags.report.empty() && !report_lost) {
      fmt::print("report written to {}\n", flags.report);
    }
    return;
  }
  nlohmann::json out = RunJson(loaded.job, outcome);
  out["energy"] = EnergyJson(findings.energy);
  if (!flags.history.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const health::NodeDeviation& d : findings.deviations) {
      list.push_back(DeviationJson(d));
      list.back()["name"] = d.node;
    }
    out["deviations"] = std::move(list);
  }
  if (findings.failure) {
    out["failure"] = {{"reason", api::ReasonName(findings.failure->reason)},
                      {"message", findings.failure->message}};
  }
  if (!lost.empty()) {
    out["output_errors"] = nlohmann::json::array();
    for (const LostOutput& output : lost) out["output_errors"].push_back(output.Message());
  }
  fmt::print("{}\n", DumpJson(out, 2));
}

// The failure policy's verdict (RunFailure, as the operator's): a job it
// failed is named with the operator's reason and message on stderr (its
// result above still says what the other items did). Returns kExitFailure
// then, else kExitOk.
int FailureVerdict(const RunFindings& findings) {
  if (!findings.failure) return kExitOk;
  fmt::print(stderr, "ballast: the job failed ({}): {}\n",
             api::ReasonName(findings.failure->reason), EscapeControls(findings.failure->message));
  return kExitFailure;
}

// A finished run: its output files written, then its result printed, then
// what could not be written (the result is never lost for an output), then
// the failure policy's verdict. Returns the exit code: the verdict's, else
// kExitOutputLost when an output was not written.
int FinishRun(const RunFlags& flags, const LoadedJob& loaded, const history::SpeedStore& history,
              const LocalRunOutcome& outcome, bool table) {
  RunFindings findings;
  findings.now = static_cast<double>(UnixNow());
  if (!flags.history.empty()) {
    findings.deviations = JudgeRun(history, loaded.history_key, outcome, findings.now);
  }
  findings.energy = RunEnergy(loaded.cluster, outcome);
  findings.failure = RunFailure(loaded.job, outcome);
  const std::vector<LostOutput> lost = WriteOutputs(flags, loaded, history, outcome, findings);
  PrintOutcome(flags, loaded, outcome, findings, lost, table);
  std::fflush(stdout);
  for (const LostOutput& output : lost) {
    fmt::print(stderr, "ballast: {} (the run finished; its result is printed above)\n",
               output.Message());
  }
  const int verdict = FailureVerdict(findings);
  return verdict != kExitOk || lost.empty() ? verdict : kExitOutputLost;
}

// A run that failed before its result (a bad file or flag, every worker
// failed, past activeDeadlineSeconds, a port that cannot be served):
// ReportError's line on stderr, and with -o json a document on stdout
// saying so, so that a program reading it learns the failure and its cause
// rather than nothing. Returns ReportError's exit code.
int ReportRunError(const Status& error, bool table) {
  const int code = ReportError(error);
  if (!table) {
    const nlohmann::json out = {{"failure",
                                 {{"reason", code == kExitBadInput ? "BadInput" : "RunFailed"},
                                  {"message", EscapeControls(error.message())}}},
                                {"exit_code", code}};
    fmt::print("{}\n", DumpJson(out, 2));
  }
  return code;
}

int Run(const RunFlags& flags) {
  // The embedded coordinator's and runner's logs: restarts and refusals are
  // info; the run's own output says what a user needs.
  spdlog::set_level(flags.verbose ? spdlog::level::debug : spdlog::level::warn);
  const bool table = flags.output == "table";
  if (Status writable = CheckOutputs(flags); !writable.ok()) {
    return ReportRunError(writable, table);
  }
  auto loaded = LoadForRun(flags, table);
  if (!loaded.ok()) return ReportRunError(loaded.status(), table);
  ProgressPrinter progress(stderr);
  // From here SIGINT and SIGTERM stop the job cleanly (the workers stopped,
  // what is left of the run killed, the cgroups removed) instead of ending
  // the process.
  StopSignals stop;
  LocalRunOptions options{loaded->job,
                          loaded->cluster,
                          loaded->profile,
                          flags.worker,
                          !flags.no_cgroups,
                          flags.logs,
                          [&](const coordinator::JobView& view, const auto&) {
                            progress.Update(view);
                            return stop.signal() == 0;
                          },
                          flags.metrics_port,
                          flags.linger_s};
  history::SpeedStore history;
  if (!flags.history.empty()) {
    auto applied = ApplyHistory(flags, *loaded, table, options);
    if (!applied.ok()) return ReportRunError(applied.status(), table);
    history = std::move(*applied);
    if (table) std::fflush(stdout);
  }
  auto outcome = RunLocal(options);
  progress.Finish();
  if (!outcome.ok()) return ReportRunError(outcome.status(), table);
  if (outcome->stopped) return ReportStopped(*outcome, stop.signal(), table);
  return FinishRun(flags, *loaded, history, *outcome, table);
}

}  // namespace

void RegisterRun(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* run = app.add_subcommand(
      "run",
      "Run a job on this machine: an embedded coordinator and one ballast-worker process per\n"
      "emulated node, each slowed to its node's speed. Prints the weights, a live progress\n"
      "line, then a per-node table and the result. SIGINT (Ctrl-C) or SIGTERM stops the job:\n"
      "the workers are stopped, what was done is printed, and the exit code is 130 or 143.\n"
      "  ballast run examples/jobs/primes-300000.yaml\n"
      "  ballast run examples/jobs/matmul-4096.yaml --cluster examples/clusters/pi-mixed.yaml "
      "--report run.html");
  run->footer(
      "Exit codes: 0 the job finished (failed items within its failurePolicy), 1 the job failed,\n"
      "2 bad input before anything ran (a file, a flag, an output file that cannot be written),\n"
      "3 the job finished and its result is printed, but --history or --report could not be\n"
      "written, 130/143 stopped by SIGINT/SIGTERM (docs/local-mode.md, \"Exit codes\").");
  run->add_option("job", flags->job, "job file (a WeightedJob or its spec)")
      ->required()
      ->check(CLI::ExistingFile);
  run->add_option("--cluster", flags->cluster,
                  "emulated nodes (default: seed 000's two Pi 4B and one Pi 3B)")
      ->check(CLI::ExistingFile);
  run->add_option("-o,--output", flags->output, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  run->add_option("--report", flags->report, "write an HTML report (Gantt chart, node table)");
  run->add_option("--policy", flags->policy, "override the job's policy (its default options)");
  run->add_option("--worker", flags->worker, "the ballast-worker binary")->capture_default_str();
  run->add_option("--history", flags->history,
                  "history file: earlier runs' measured speeds are this run's prior, and this "
                  "run's are merged in (created when missing; docs/history.md)");
  run->add_option("--logs", flags->logs,
                  "directory for the workers' logs (default: a new one in the temporary directory; "
                  "a run keeps the last 10 of those and removes older ones)");
  run->add_flag("--no-cgroups", flags->no_cgroups,
                "make no cgroups: emulate speeds with the workers' duty cycle, and stop what the "
                "commands start by session and process group, and at the run's end as its "
                "orphans (a process that starts its own session outlives its command; the "
                "output says what was found)");
  run->add_option("--metrics-port", flags->metrics_port,
                  "serve Prometheus /metrics: the coordinator on 127.0.0.1:PORT, the i-th node's "
                  "worker on PORT+1+i (default 0: the coordinator on a free port, workers none)");
  run->add_option("--linger", flags->linger_s,
                  "seconds to keep the coordinator's /metrics up after the job finished")
      ->check(CLI::Range(0.0, 3600.0));
  run->add_flag("-v,--verbose", flags->verbose,
                "log debug messages (the workers' too, in their logs)");
  run->callback([flags, exit_code] { *exit_code = Run(*flags); });
}

}  // namespace ballast::cli
