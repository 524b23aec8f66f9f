// ballast-worker: pulls leases of a job from the coordinator, computes them on
// the cores it is given, and reports. It only wires options, the logger, the
// metrics and the loop (worker_loop.h).
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

// After the standard headers: boost::asio, under pplx, needs <utility> first.
#include <pplx/threadpool.h>

#include "ballast/version.h"
#include "core/common/utf8.h"
#include "worker/bundle.h"
#include "worker/cpu_budget.h"
#include "worker/kernels/command_group.h"
#include "worker/kernels/kernel.h"
#include "worker/metrics.h"
#include "worker/probe/probe_command.h"
#include "worker/slice.h"
#include "worker/stop_signals.h"
#include "worker/token_file.h"
#include "worker/worker_loop.h"

namespace {

std::string EnvOr(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// Serves SIGINT and SIGTERM for its scope (StopSignalThread): the handler
// flags the loop's stop; the thread ends the exec commands running (their
// process groups get SIGTERM, then SIGKILL), whose items go back with the
// lease, and when the parent has died (`ballast run`, whose death sends
// SIGTERM: its coordinator is gone, so there is nobody to hand the lease back
// to) exits at once rather than at the end of the step being computed.
class StopSignals {
 public:
  explicit StopSignals(pid_t parent)
      : thread_(ballast::worker::WorkerLoop::RequestStop, [parent] { OnStop(parent); }) {}

 private:
  static void OnStop(pid_t parent) {
    spdlog::info("stop requested");
    ballast::kernels::StopExecCommands(std::chrono::seconds(2));
    if (getppid() != parent) {
      spdlog::info("parent gone, leaving at once parent={}", parent);
      std::fflush(nullptr);
      _exit(1);
    }
  }

  ballast::worker::StopSignalThread thread_;
};

// `ballast-worker bundle --to DIR` (worker/bundle.h). Returns the exit code.
int RunBundle(const std::string& dir) {
  const auto summary = ballast::worker::WriteBundle(dir);
  if (!summary.ok()) {
    std::fprintf(stderr, "ballast-worker bundle: %s\n", summary.status().message().c_str());
    return summary.status().code() == ballast::StatusCode::kInvalid ? 2 : 1;
  }
  std::printf("bundled %zu files, %.1f MB, into %s; run it as %s/%s --library-path %s/%s %s/%s\n",
              summary->entries.size(), static_cast<double>(summary->bytes) / 1e6, dir.c_str(),
              dir.c_str(), ballast::worker::kBundleLoader, dir.c_str(),
              ballast::worker::kBundleLibDir, dir.c_str(), ballast::worker::kBundleProgram);
  return 0;
}

// `ballast-worker slice` (worker/slice.h): prints the slice's result as one
// JSON line and writes it to `result_file` too when given (a pod's
// terminationMessagePath). Returns the exit code.
int RunSliceCommand(const ballast::worker::SliceRequest& request, const std::string& result_file) {
  const auto result = ballast::worker::RunSlice(request);
  if (!result.ok()) {
    std::fprintf(stderr, "ballast-worker slice: %s\n", result.status().message().c_str());
    return result.status().code() == ballast::StatusCode::kInvalid ? 2 : 1;
  }
  const std::string line = ballast::DumpJson(nlohmann::json{
      {"index", request.index}, {"count", request.count}, {"result", result->ToJson()}});
  std::printf("%s\n", line.c_str());
  if (!result_file.empty()) {
    std::FILE* out = std::fopen(result_file.c_str(), "w");
    if (out == nullptr || std::fputs(line.c_str(), out) < 0 || std::fclose(out) != 0) {
      std::fprintf(stderr, "ballast-worker slice: cannot write %s\n", result_file.c_str());
      return 1;
    }
  }
  return 0;
}
// The worker loop, from its options to the end of the job or a stop: returns
// the exit code. Its objects are all gone when it returns: the loop (its
// HTTP clients, the signal poll, joined) and the stop handling (joined).
int RunWorker(const ballast::worker::WorkerOptions& options, ballast::worker::Metrics* metrics,
              pid_t parent) {
  const StopSignals stop_signals(parent);
  // The loop makes one request at a time and the signal poll another: two
  // threads serve cpprestsdk's I/O (its default pool has 40).
  crossplat::threadpool::initialize_with_threads(2);
  ballast::worker::WorkerLoop loop(options, metrics);
  const ballast::Status status = loop.Run();
  if (!status.ok()) {
    spdlog::error("worker failed error=\"{}\"", status.message());
    return status.code() == ballast::StatusCode::kInvalid ? 2 : 1;
  }
  return 0;
}

// The worker loop's flags, from the environment first (as set in worker pods).
struct WorkerFlags {
  ballast::worker::WorkerOptions options;
  std::string metrics_listen;
  ballast::worker::MetricLabels metric_labels;
  bool verbose = false;
  std::string exec_cgroup;
  std::string token_file;
  CLI::Option* threads = nullptr;
};

WorkerFlags FlagsFromEnvironment() {
  WorkerFlags flags;
  ballast::worker::WorkerOptions& options = flags.options;
  options.coordinator = EnvOr("BALLAST_COORDINATOR", "");
  options.job = EnvOr("BALLAST_JOB", "");
  options.token = EnvOr("BALLAST_TOKEN", "");
  flags.token_file = EnvOr("BALLAST_TOKEN_FILE", "");
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  options.name = EnvOr("BALLAST_WORKER_NAME", EnvOr("NODE_NAME", host));
  ballast::worker::CpuBudget cpu = ballast::worker::ReadCpuBudget();
  const std::string node_cpu = EnvOr("BALLAST_NODE_CPU", "");
  cpu.Tighten(ballast::worker::ParseNodeCpu(node_cpu),
              fmt::format("its node declares {} CPU, BALLAST_NODE_CPU", node_cpu));
  options.threads = cpu.Threads();
  options.threads_from = cpu.ToString();
  flags.metrics_listen = EnvOr("BALLAST_METRICS_LISTEN", "");
  flags.metric_labels = {EnvOr("BALLAST_JOB_NAME", ""), EnvOr("BALLAST_NAMESPACE", ""), ""};
  flags.exec_cgroup = EnvOr("BALLAST_EXEC_CGROUP", "");
  return flags;
}

// A declarative table of the loop's flags.
void AddWorkerFlags(CLI::App& app, WorkerFlags& flags) {
  ballast::worker::WorkerOptions& options = flags.options;
  app.add_option("--coordinator", options.coordinator,
                 "coordinator URL, e.g. http://127.0.0.1:8080 [BALLAST_COORDINATOR]");
  app.add_option("--job", options.job, "the job's id [BALLAST_JOB]");
  app.add_option("--token", options.token,
                 "the job's token; prefer the environment [BALLAST_TOKEN]");
  app.add_option("--token-file", flags.token_file,
                 "read the job's token from this file instead, as worker pods do (the file of "
                 "a Secret volume) [BALLAST_TOKEN_FILE]");
  app.add_option("--name", options.name,
                 "this worker's name in the job, its node's name [BALLAST_WORKER_NAME, NODE_NAME]")
      ->capture_default_str();
  flags.threads =
      app.add_option("--threads", options.threads,
                     "compute threads, or exec commands at once, unless the job sets its "
                     "exec.concurrency (default: one per CPU this process may use: its cgroup's "
                     "CPU quota or its node's declared CPU [BALLAST_NODE_CPU] rounded up, else "
                     "the cores it may run on; here " +
                         options.threads_from + ")");
  flags.threads->capture_default_str()->check(CLI::Range(1u, 1024u));
  app.add_option("--speed", options.speed,
                 "emulate a slower node: fraction of one core, by a duty cycle (1 = off)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1.0));
  app.add_option("--step-seconds", options.step_seconds,
                 "compute between two looks at the coordinator's replies")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 10.0));
  app.add_option("--give-up-seconds", options.give_up_s,
                 "stop when the coordinator cannot be reached, or does not know the job, this "
                 "long")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  app.add_option("--metrics-listen", flags.metrics_listen,
                 "serve Prometheus /metrics on host:port (empty: off) [BALLAST_METRICS_LISTEN]");
  app.add_option("--job-name", flags.metric_labels.job,
                 "the job's name in the metrics' `weightedjob` label (default: --job) "
                 "[BALLAST_JOB_NAME]");
  app.add_option("--namespace", flags.metric_labels.ns,
                 "the job's namespace, the metrics' `job_namespace` label [BALLAST_NAMESPACE]");
  app.add_option("--exec-cgroup", flags.exec_cgroup,
                 "a cgroup v2 directory: each exec command runs in a cgroup of its own below it, "
                 "and what it leaves running is killed when it ends (`ballast run` sets it) "
                 "[BALLAST_EXEC_CGROUP]");
  app.add_flag("-v,--verbose", flags.verbose, "log debug messages");
}

// `ballast-worker bundle` and `ballast-worker slice`.
struct OtherCommands {
  CLI::App* bundle = nullptr;
  std::string bundle_dir;
  CLI::App* slice = nullptr;
  ballast::worker::SliceRequest slice_request;
  CLI::Option* slice_index = nullptr;
  std::string slice_result_file;
};

// A declarative table of the two commands' flags.
void AddOtherCommands(CLI::App& app, OtherCommands& commands) {
  commands.bundle = app.add_subcommand(
      "bundle",
      "copy this worker, its dynamic loader and every shared library it has mapped into DIR,\n"
      "to run as DIR/ld.so --library-path DIR/lib DIR/ballast-worker in another image of the\n"
      "same architecture (the exec workload in the user's image). DIR must be empty, missing\n"
      "or a previous bundle.");
  commands.bundle->add_option("--to", commands.bundle_dir, "the directory to write")->required();
  commands.slice = app.add_subcommand(
      "slice",
      "compute share INDEX of COUNT shares of a job's items (equal counts, or equal costs), with "
      "no coordinator, and\n"
      "print the result as JSON: what a pod of a Kubernetes Indexed Job does, for benchmarks\n"
      "that compare one with a WeightedJob (bench/realnodes-bench).\n"
      "  ballast-worker slice --spec '{\"workload\":{\"primes\":{\"limit\":300000}}}' --index 0 "
      "--count 3");
  commands.slice
      ->add_option("--spec", commands.slice_request.spec_json, "a WeightedJob's spec as JSON")
      ->required();
  commands.slice_index = commands.slice->add_option("--index", commands.slice_request.index,
                                                    "the share, from 0 [JOB_COMPLETION_INDEX]");
  commands.slice->add_option("--count", commands.slice_request.count, "how many shares")
      ->required()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  commands.slice
      ->add_option("--split", commands.slice_request.split,
                   "count: equal numbers of items; cost: equal shares of the job's known cost "
                   "(its cost model), as a user who knows the costs would cut the shares")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, ballast::worker::SliceSplit>{
              {"count", ballast::worker::SliceSplit::kCount},
              {"cost", ballast::worker::SliceSplit::kCost}},
          CLI::ignore_case))
      ->default_str("count");
  commands.slice->add_option("--result-file", commands.slice_result_file,
                             "also write the JSON there, e.g. /dev/termination-log");
}

// `ballast-worker slice`, its index from --index or JOB_COMPLETION_INDEX.
int RunSlice(OtherCommands& commands) {
  const std::string from_env = EnvOr("JOB_COMPLETION_INDEX", "");
  if (commands.slice_index->count() == 0 && !from_env.empty()) {
    const auto [end, error] = std::from_chars(from_env.data(), from_env.data() + from_env.size(),
                                              commands.slice_request.index);
    if (error != std::errc() || end != from_env.data() + from_env.size()) {
      std::fprintf(stderr, "ballast-worker slice: JOB_COMPLETION_INDEX=%s is not an index\n",
                   from_env.c_str());
      return 2;
    }
  }
  return RunSliceCommand(commands.slice_request, commands.slice_result_file);
}

// The worker loop with its logger and metrics: returns the exit code.
int RunWorkerCommand(WorkerFlags& flags, pid_t parent) {
  ballast::worker::WorkerOptions& options = flags.options;
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %l ballast-worker %v");
  spdlog::set_level(flags.verbose ? spdlog::level::debug : spdlog::level::info);
  if (!flags.token_file.empty()) {
    auto token = ballast::worker::ReadTokenFile(flags.token_file);
    if (!token.ok()) {
      spdlog::error("{}", token.status().message());
      return 2;
    }
    options.token = std::move(*token);
  }
  for (const auto& [value, what] :
       {std::pair{options.coordinator, "--coordinator"}, std::pair{options.job, "--job"},
        std::pair{options.token, "--token"}}) {
    if (value.empty()) {
      spdlog::error("missing {} (see --help)", what);
      return 2;
    }
  }
  if (flags.threads->count() > 0) options.threads_from = "--threads";
  if (options.speed < 1) {  // the emulated speed is a fraction of one core
    options.threads = 1;
    options.threads_from = "--speed below 1";
  }
  if (!ballast::kernels::SetCommandCgroupParent(flags.exec_cgroup)) {
    spdlog::error("--exec-cgroup {}: not a cgroup v2 group with cgroup.kill", flags.exec_cgroup);
    return 2;
  }

  if (flags.metric_labels.job.empty()) flags.metric_labels.job = options.job;
  flags.metric_labels.node = options.name;
  auto metrics = ballast::worker::Metrics::Create(flags.metrics_listen, flags.metric_labels);
  if (!metrics.ok()) {
    spdlog::error("{}", metrics.status().message());
    return 1;
  }
  if ((*metrics)->port() != 0) spdlog::info("metrics served port={}", (*metrics)->port());
  const int code = RunWorker(options, metrics->get(), parent);
  metrics->reset();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  const pid_t parent = getppid();
  CLI::App app{
      "ballast-worker computes a Ballast job's items: it asks the coordinator for a lease,\n"
      "computes it on all the threads it is given, reports the results, and repeats until\n"
      "the job is done. On SIGTERM it reports what it finished and hands back the rest.\n"
      "Flags fall back to the environment variables shown, as set in worker pods.",
      "ballast-worker"};
  app.set_version_flag("--version", "ballast-worker " + std::string(ballast::kVersion));
  WorkerFlags flags = FlagsFromEnvironment();
  AddWorkerFlags(app, flags);
  OtherCommands commands;
  AddOtherCommands(app, commands);
  ballast::worker::ProbeOptions probe_options;
  CLI::App* probe = ballast::worker::AddProbeCommand(app, &probe_options);
  CLI11_PARSE(app, argc, argv);
  if (*commands.bundle) return RunBundle(commands.bundle_dir);
  if (*probe) return ballast::worker::RunProbeCommand(probe_options);
  if (*commands.slice) return RunSlice(commands);

  const int code = RunWorkerCommand(flags, parent);
  // Leaves without running static destructors. cpprestsdk's I/O pool is a
  // static made in RunWorker, so at exit() the statics made after it are
  // destroyed first while its threads still run the completion handlers of
  // the requests just ended (an abandoned long poll among them), and the
  // pool is stopped only then: a teardown race in the library that nothing
  // here can order. Everything of ours is destroyed by now; only the output
  // is left to flush.
  spdlog::shutdown();
  std::fflush(nullptr);
  std::_Exit(code);
}
