#include "cli/run/local_runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "cli/run/node_processes.h"
#include "cli/run/run_cleanup.h"
#include "cli/run/run_containment.h"
#include "cli/run/run_guard.h"
#include "cli/run/run_logs.h"
#include "cli/run/run_orphans.h"
#include "cli/run/run_outcome.h"
#include "cli/run/worker_launch.h"
#include "coordinator/server.h"
#include "core/balance/efficiency.h"
#include "core/common/names.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;

// The `job_namespace` label of a local run's series (docs/metrics.md).
constexpr char kLocalNamespace[] = "local";
using Clock = std::chrono::steady_clock;

constexpr const char kBuiltinCluster[] = {
#include "cli/builtin_cluster.inc"
};

std::string RandomHex(size_t bytes) {
  std::random_device device;
  std::string out;
  for (size_t i = 0; i < bytes; ++i) out += fmt::format("{:02x}", device() & 0xff);
  return out;
}

class Runner {
 public:
  explicit Runner(const LocalRunOptions& options) : options_(options) {}

  StatusOr<LocalRunOutcome> Run() {
    // The groups of earlier runs whose guard could not remove them (it was
    // killed with them).
    RemoveStaleGroups(RunGroupParents());
    BALLAST_RETURN_IF_ERROR(Prepare());
    BALLAST_RETURN_IF_ERROR(nodes_->Hold());
    coordinator::ServerOptions server_options;
    server_options.port = options_.metrics_port;
    BALLAST_ASSIGN_OR_RETURN(server_, coordinator::Server::Start(server_options));
    BALLAST_RETURN_IF_ERROR(server_->AddJob(config_));
    started_ = Clock::now();
    Status status = Status::Ok();
    for (auto& process : nodes_->processes()) {
      process.joined = !process.node->join_at;
      if (status.ok() && process.joined) status = Spawn(process);
    }
    if (status.ok()) status = Monitor();
    elapsed_s_ = std::chrono::duration<double>(Clock::now() - started_).count();
    containment_report_ = nodes_->StopAll();
    if (status.ok() && !stopped_ && !failed_items_stopped_ && options_.linger_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(options_.linger_s));
    }
    if (!status.ok()) return status;
    return Outcome();
  }

 private:
  // Everything the run needs before its coordinator starts: the job's
  // config and priors, the log folder, the run's cgroups and each node's
  // process, its speed held.
  Status Prepare() {
    if (options_.cluster.nodes.empty()) return Status::Invalid("the cluster has no nodes");
    BALLAST_ASSIGN_OR_RETURN(weights_, ClusterWeights(options_.profile, options_.cluster));
    Configure();
    BALLAST_RETURN_IF_ERROR(PrepareLogDir());
    if (access(options_.worker_binary.c_str(), X_OK) != 0) {
      return Status::Unavailable(fmt::format(
          "worker binary {} is not executable (build it: scripts/build)", options_.worker_binary));
    }
    return PrepareNodes();
  }

  // The job's config, and each node's prior: the fuzzy weight, or the one
  // options_.priors names it with.
  void Configure() {
    config_.id = fmt::format("{}-{}", options_.job.name, RandomHex(3));
    config_.token = RandomHex(16);
    config_.workload = options_.job.workload;
    config_.policy = options_.job.policy;
    config_.lease_seconds = options_.job.lease_seconds;
    config_.verify.fraction = options_.job.verify_fraction;  // the server draws the seed
    config_.metric_name = options_.job.name;
    config_.metric_namespace = kLocalNamespace;
    for (const auto& weight : weights_.nodes) {
      const auto prior =
          std::find_if(options_.priors.begin(), options_.priors.end(),
                       [&](const balance::WorkerPrior& p) { return p.name == weight.name; });
      priors_.push_back(prior != options_.priors.end()
                            ? *prior
                            : balance::WorkerPrior{weight.name, weight.weight});
    }
  }

  // The log folders earlier runs made for themselves, past the last few
  // (run_logs.h); then this run's, unless --logs names one.
  Status PrepareLogDir() {
    std::error_code error;
    const std::string temp = TemporaryDirectory();
    const bool temp_usable = fs::is_directory(temp, error);
    if (temp_usable) PruneLogDirs(temp);
    log_dir_ = options_.log_dir;
    if (log_dir_.empty()) {
      if (!temp_usable) {
        return Status::Unavailable(fmt::format(
            "no temporary directory for the logs: {} is not a directory (TMPDIR)", temp));
      }
      BALLAST_ASSIGN_OR_RETURN(log_dir_, MakeLogDir(temp, config_.id));
      return Status::Ok();
    }
    error.clear();
    fs::create_directories(log_dir_, error);
    if (error) {
      return Status::Unavailable(fmt::format("cannot create {}: {}", log_dir_, error.message()));
    }
    return Status::Ok();
  }

  // Each node's process: its group of the run's cgroups, its speed held,
  // the cores its worker is bounded by; and the job's first workers.
  Status PrepareNodes() {
    nodes_ = std::make_unique<NodeProcesses>(options_.cgroups, config_.id, log_dir_);
    for (size_t i = 0; i < options_.cluster.nodes.size(); ++i) {
      const job::EmulatedNode& node = options_.cluster.nodes[i];
      BALLAST_ASSIGN_OR_RETURN(const NodeHold hold, nodes_->Add(node));
      config_.worker_cores[node.name] = hold.cores;
      if (hold.duty) priors_[i].duty = *hold.duty;
    }
    speed_method_ = nodes_->SpeedMethod();
    // The job starts with the nodes there from the start; the others join
    // at their time (JoinAndDrain).
    for (size_t i = 0; i < priors_.size(); ++i) {
      if (!options_.cluster.nodes[i].join_at) config_.workers.push_back(priors_[i]);
    }
    return Status::Ok();
  }

  // Starts (or restarts) a node's worker (node_processes.h).
  Status Spawn(NodeProcess& process) {
    WorkerLaunch launch;
    launch.binary = options_.worker_binary;
    launch.coordinator_url = server_->url();
    launch.job_id = config_.id;
    launch.job_name = options_.job.name;
    launch.metric_namespace = kLocalNamespace;
    if (options_.metrics_port != 0) {
      const size_t index = static_cast<size_t>(&process - nodes_->processes().data());
      launch.metrics_listen = fmt::format("127.0.0.1:{}", options_.metrics_port + 1 + index);
    }
    launch.verbose = spdlog::should_log(spdlog::level::debug);  // into the worker's log
    return nodes_->Spawn(process, launch, WorkerEnvironment(config_.token, environ));
  }

  // Reaps exited workers; a worker that dies before the job is done is lost
  // (its work goes to the others) and restarted while restarts remain.
  Status Reap(bool job_done) {
    for (const auto& [exited, wstatus] : nodes_->Reap()) {
      NodeProcess& process = *exited;
      const bool clean = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
      if (job_done || clean) {
        process.finished = true;
        continue;
      }
      if (process.drained) {
        // Stopped on purpose; one that died before it handed its lease back
        // is declared lost, so that its lease moves at once all the same.
        (void)server_->WorkerLost(config_.id, process.node->name);
        process.finished = true;
        continue;
      }
      const std::string how = WIFSIGNALED(wstatus)
                                  ? fmt::format("killed by signal {}", WTERMSIG(wstatus))
                                  : fmt::format("exit code {}", WEXITSTATUS(wstatus));
      (void)server_->WorkerLost(config_.id, process.node->name);
      process.last_exit = how;
      if (process.restarts < options_.job.backoff_limit) {
        ++process.restarts;
        spdlog::info("worker died, restarting node={} how=\"{}\" restart={}/{} log={}",
                     process.node->name, how, process.restarts, options_.job.backoff_limit,
                     nodes_->LogPath(process));
        BALLAST_RETURN_IF_ERROR(Spawn(process));
      } else {
        spdlog::info("worker died, no restarts left node={} how=\"{}\"", process.node->name, how);
        process.finished = true;
      }
    }
    return Status::Ok();
  }

  // Nodes whose joinAt has come join the running job: the coordinator takes
  // their worker in, then it starts. Nodes whose leaveAt has come are
  // drained, as `kubectl drain` evicts a pod: their worker gets SIGTERM,
  // hands in what it finished and the rest of its lease, and exits.
  Status JoinAndDrain(double elapsed) {
    for (size_t i = 0; i < nodes_->processes().size(); ++i) {
      NodeProcess& process = nodes_->processes()[i];
      const job::EmulatedNode& node = *process.node;
      if (!process.joined && node.join_at && *node.join_at <= elapsed) {
        BALLAST_RETURN_IF_ERROR(
            server_->AddWorker(config_.id, priors_[i], config_.worker_cores.at(node.name)));
        process.joined = true;
        process.joined_s = elapsed;
        spdlog::info("node joined the job node={} at_s={:.3f}", node.name, elapsed);
        BALLAST_RETURN_IF_ERROR(Spawn(process));
      }
      if (process.joined && !process.drained && node.leave_at && *node.leave_at <= elapsed) {
        process.drained = true;
        process.left_s = elapsed;
        spdlog::info("node drained node={} at_s={:.3f}", node.name, elapsed);
        NodeProcesses::Stop(process);
      }
    }
    return Status::Ok();
  }

  Status Monitor() {
    const auto start = Clock::now();
    std::optional<Clock::time_point> done_at;
    while (true) {
      const auto view = server_->View(config_.id);
      const bool done = view && view->done;
      if (done && !done_at) done_at = Clock::now();
      if (!done) {
        BALLAST_RETURN_IF_ERROR(
            JoinAndDrain(std::chrono::duration<double>(Clock::now() - started_).count()));
      }
      BALLAST_RETURN_IF_ERROR(Reap(done));
      nodes_->ReapOrphans();  // what commands left that has exited since
      if (options_.on_progress && view && !options_.on_progress(*view, nodes_->LivePids())) {
        stopped_ = true;
        return Status::Ok();
      }
      if (view && !done && PastFailurePolicy(*view, options_.job)) {
        failed_items_stopped_ = true;
        return Status::Ok();
      }
      const bool all_exited = nodes_->AllExited();
      if (done && (all_exited || Clock::now() - *done_at > std::chrono::seconds(5))) {
        return Status::Ok();
      }
      const bool to_join = std::any_of(nodes_->processes().begin(), nodes_->processes().end(),
                                       [](auto& p) { return !p.joined; });
      if (!done && all_exited && !to_join) {
        return Status(StatusCode::kTerminal,
                      fmt::format("every worker failed past its {} restarts: {}; logs in {}",
                                  options_.job.backoff_limit, WorkerCauses(), log_dir_));
      }
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      if (options_.job.active_deadline_s && elapsed > *options_.job.active_deadline_s) {
        return Status(StatusCode::kTerminal,
                      fmt::format("the job ran longer than activeDeadlineSeconds ({:g} s)",
                                  *options_.job.active_deadline_s));
      }
      if (done) {
        server_->WaitFinished(config_.id, std::chrono::milliseconds(20));
      } else {
        // A tenth of a second: how late a node may join or be drained.
        server_->WaitFinished(config_.id, std::chrono::milliseconds(100));
      }
    }
  }

  // Why the workers died, from each one's last exit and the last error its
  // log holds (LastLogError), nodes of one cause together: "a, b (exit code
  // 1): cannot serve metrics on 127.0.0.1:9101: ...". At most 3 causes.
  std::string WorkerCauses() const {
    std::vector<std::pair<std::string, std::vector<std::string>>> causes;
    for (const NodeProcess& process : nodes_->processes()) {
      if (!process.joined) continue;
      std::string what = LastLogError(nodes_->LogPath(process));
      what = fmt::format("({}): {}", process.last_exit.empty() ? "exited" : process.last_exit,
                         what.empty() ? "its log says nothing" : what);
      auto same = std::find_if(causes.begin(), causes.end(),
                               [&](const auto& cause) { return cause.first == what; });
      if (same == causes.end()) {
        causes.emplace_back(what, std::vector<std::string>{});
        same = causes.end() - 1;
      }
      same->second.push_back(process.node->name);
    }
    std::vector<std::string> parts;
    for (size_t i = 0; i < causes.size() && i < 3; ++i) {
      parts.push_back(fmt::format("{} {}", fmt::join(causes[i].second, ", "), causes[i].first));
    }
    if (causes.size() > 3) parts.push_back(fmt::format("and {} more", causes.size() - 3));
    return fmt::format("{}", fmt::join(parts, "; "));
  }

  LocalRunOutcome Outcome() const {
    std::vector<NodeRecord> records;
    for (const NodeProcess& process : nodes_->processes()) {
      records.push_back({*process.node, process.log, process.restarts, process.joined,
                         process.joined_s, process.left_s});
    }
    LocalRunOutcome out =
        RunOutcome(*server_->View(config_.id), weights_, config_.workload, records);
    out.speed_method = speed_method_;
    out.log_dir = log_dir_;
    out.stopped = stopped_;
    out.failed_items_stopped = failed_items_stopped_;
    out.elapsed_s = elapsed_s_;
    out.containment = containment_report_;
    return out;
  }

  const LocalRunOptions& options_;
  fuzzy::WeightResult weights_;
  coordinator::JobConfig config_;
  // One per node, in node order: config_.workers holds those there from the
  // start, the others are added when they join.
  std::vector<balance::WorkerPrior> priors_;
  std::unique_ptr<coordinator::Server> server_;
  std::unique_ptr<NodeProcesses> nodes_;  // the workers and what holds them
  ContainmentReport containment_report_;
  std::string log_dir_;
  std::string speed_method_;
  Clock::time_point started_;
  double elapsed_s_ = 0;               // from adding the job to the end of monitoring
  bool stopped_ = false;               // on_progress stopped the job
  bool failed_items_stopped_ = false;  // past failurePolicy.maxFailedItems
};

}  // namespace

StatusOr<LocalRunOutcome> RunLocal(const LocalRunOptions& options) {
  auto outcome = Runner(options).Run();
  if (outcome.ok() && !outcome->view.verification.failure.empty()) {
    return Status(StatusCode::kTerminal, outcome->view.verification.failure);
  }
  return outcome;
}

StatusOr<fuzzy::WeightResult> ClusterWeights(const fuzzy::Profile& profile,
                                             const job::ClusterSpec& cluster) {
  std::vector<fuzzy::NodeFacts> facts;
  for (const auto& node : cluster.nodes) facts.push_back({node.name, node.labels});
  return fuzzy::ComputeWeights(profile, facts);
}

StatusOr<job::ClusterSpec> DefaultCluster() {
  return job::ParseCluster(kBuiltinCluster, "examples/clusters/seed000.yaml (built in)");
}

std::string NodeLogFileName(const std::string& node) { return BoundedFileName(node, ".log"); }

std::string DefaultWorkerBinary() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return (self.parent_path() / "ballast-worker").string();
}

}  // namespace ballast::cli
