#include "cli/local_runner.h"

#include <fmt/format.h>
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

#include "cli/cpu_limit.h"
#include "cli/run_cleanup.h"
#include "cli/run_containment.h"
#include "cli/run_guard.h"
#include "cli/run_logs.h"
#include "cli/run_orphans.h"
#include "cli/run_outcome.h"
#include "cli/worker_launch.h"
#include "coordinator/server.h"
#include "core/balance/efficiency.h"
#include "core/common/names.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;

// The `namespace` label of a local run's series (docs/metrics.md).
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

// One emulated node's worker process.
struct NodeProcess {
  const job::EmulatedNode* node = nullptr;
  std::string log;                  // its log's file name in the run's log folder
  std::unique_ptr<CpuLimit> limit;  // null: the worker's duty cycle
  std::string group;                // its group of the run's cgroups; empty without
  pid_t pid = -1;
  uint32_t restarts = 0;
  bool finished = false;         // exited for good
  bool joined = false;           // its worker is in the job (from the start, or since joinAt)
  bool drained = false;          // its leaveAt came: its worker was stopped, never restarted
  double joined_s = 0;           // when it joined, in seconds from the job's start
  std::optional<double> left_s;  // when it was drained
};

class Runner {
 public:
  explicit Runner(const LocalRunOptions& options) : options_(options) {}

  StatusOr<LocalRunOutcome> Run() {
    // The groups of earlier runs whose guard could not remove them (it was
    // killed with them).
    RemoveStaleGroups(RunGroupParents());
    BALLAST_RETURN_IF_ERROR(Prepare());
    // From here what the workers start stays this process's descendant,
    // wherever it moves itself (run_orphans.h).
    orphans_ = std::make_unique<RunOrphans>();
    if (containment_) {
      BALLAST_ASSIGN_OR_RETURN(guard_, RunGuard::Start(containment_->dir(), CpuLimitDirs()));
      orphans_->Keep(guard_->pid());
    }
    coordinator::ServerOptions server_options;
    server_options.port = options_.metrics_port;
    BALLAST_ASSIGN_OR_RETURN(server_, coordinator::Server::Start(server_options));
    BALLAST_RETURN_IF_ERROR(server_->AddJob(config_));
    started_ = Clock::now();
    Status status = Status::Ok();
    for (auto& process : processes_) {
      process.joined = !process.node->join_at;
      if (status.ok() && process.joined) status = Spawn(process);
    }
    if (status.ok()) status = Monitor();
    elapsed_s_ = std::chrono::duration<double>(Clock::now() - started_).count();
    StopAll();
    if (status.ok() && !stopped_ && options_.linger_s > 0) {
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
    Contain();
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
    const fs::path temp = fs::temp_directory_path(error);
    if (!error) PruneLogDirs(temp.string());
    log_dir_ = options_.log_dir;
    if (log_dir_.empty()) {
      if (error) {
        return Status::Unavailable(
            fmt::format("no temporary directory for the logs: {}", error.message()));
      }
      BALLAST_ASSIGN_OR_RETURN(log_dir_, MakeLogDir(temp.string(), config_.id));
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
    // How each node's speed is held, each way named once (a mixed cluster
    // may use several).
    std::vector<std::string> methods;
    auto note = [&methods](std::string method) {
      if (std::find(methods.begin(), methods.end(), method) == methods.end()) {
        methods.push_back(std::move(method));
      }
    };
    for (const auto& node : options_.cluster.nodes) {
      NodeProcess process;
      process.node = &node;
      process.log = NodeLogFileName(node.name);
      if (containment_) {
        // Bounded like the log's name: a cgroup is a directory.
        BALLAST_ASSIGN_OR_RETURN(process.group,
                                 containment_->AddNode(BoundedFileName(node.name, "", 200)));
      }
      LimitSpeed(process, note);
      config_.worker_cores[node.name] =
          WorkerCores(node.speed, process.limit != nullptr, std::thread::hardware_concurrency());
      processes_.push_back(std::move(process));
    }
    // The nodes' speeds are what the ideal time is computed from; the
    // output says when the machine cannot give them.
    std::vector<double> speeds;
    for (const auto& node : options_.cluster.nodes) speeds.push_back(node.speed);
    const std::string oversubscribed =
        OversubscriptionNote(speeds, std::thread::hardware_concurrency());
    if (!oversubscribed.empty()) note(oversubscribed);
    speed_method_ = fmt::format("{}", fmt::join(methods, "; "));
    // The job starts with the nodes there from the start; the others join
    // at their time (JoinAndDrain).
    for (size_t i = 0; i < priors_.size(); ++i) {
      if (!options_.cluster.nodes[i].join_at) config_.workers.push_back(priors_[i]);
    }
    return Status::Ok();
  }

  // The run's cgroups (run_containment.h), where this machine allows them;
  // otherwise notes why not, for the run's output.
  void Contain() {
    if (!options_.cgroups) {
      uncontained_ = "--no-cgroups";
      return;
    }
    auto containment =
        RunContainment::Create(OwnedGroupName(getpid(), BoundedFileName(config_.id, "", 200)));
    if (containment.ok()) {
      containment_ = std::move(containment).value();
    } else {
      uncontained_ = containment.status().message();
      spdlog::debug("no cgroups for the run reason=\"{}\"", uncontained_);
    }
  }

  // Holds the node's speed: nothing for a node of whole cores, a cgroup CPU
  // quota where one can be made, the worker's duty cycle otherwise.
  template <typename Note>
  void LimitSpeed(NodeProcess& process, Note& note) {
    const job::EmulatedNode& node = *process.node;
    // A node of whole cores runs that many threads, which is its speed
    // already: it needs no quota, and outside a quota its worker has its
    // first lease sooner (measured: 15 ms after the start, against 35-150
    // ms inside one with a quota and a raised CPU weight).
    if (node.speed == std::ceil(node.speed)) {
      note("nothing for nodes of whole cores (one worker thread per core)");
      return;
    }
    if (options_.cgroups) {
      auto limit = CpuLimit::Create(
          OwnedGroupName(getpid(), BoundedFileName(config_.id + "-" + node.name, "", 200)),
          node.speed, process.group);
      if (limit.ok()) {
        note((*limit)->description());
        process.limit = std::move(limit).value();
      } else {
        spdlog::debug("no cgroup for node={} reason=\"{}\"", node.name, limit.status().message());
      }
    }
    if (!process.limit) note("duty cycle in the worker (no cgroup CPU quota here)");
    // Held by a quota, or by its duty cycle below one core: it computes in
    // bursts, which the policy's split allows for.
    SetDuty(node.name, NodeDuty(node.speed, process.limit || node.speed < 1));
  }

  // The CPU quotas' groups, which the run's guard removes with the run's.
  std::vector<std::string> CpuLimitDirs() const {
    std::vector<std::string> dirs;
    for (const auto& process : processes_) {
      if (process.limit) dirs.push_back(process.limit->dir());
    }
    return dirs;
  }

  void SetDuty(const std::string& node, double duty) {
    for (auto& worker : priors_) {
      if (worker.name == node) worker.duty = duty;
    }
  }

  // Starts (or restarts) a node's worker: fork, join the node's cgroups,
  // exec. The worker is in its node's group of the run's cgroups (what it
  // leaves when it dies is killed by that group, ClearNode) or, without
  // them, leads a session of its own (KillSession); and gets SIGTERM when the
  // thread that started it ends, which is this process's end however it
  // comes (SIGKILL included): RunLocal's thread outlives every worker
  // otherwise.
  Status Spawn(NodeProcess& process) {
    const job::EmulatedNode& node = *process.node;
    WorkerLaunch launch;
    launch.binary = options_.worker_binary;
    launch.coordinator_url = server_->url();
    launch.job_id = config_.id;
    launch.node = node.name;
    launch.job_name = options_.job.name;
    launch.metric_namespace = kLocalNamespace;
    if (options_.metrics_port != 0) {
      const size_t index = static_cast<size_t>(&process - processes_.data());
      launch.metrics_listen = fmt::format("127.0.0.1:{}", options_.metrics_port + 1 + index);
    }
    launch.threads = WorkerThreads(node.speed);
    if (!process.limit && node.speed < 1) launch.duty_speed = node.speed;  // its duty cycle
    launch.exec_cgroup = process.group;
    launch.verbose = spdlog::should_log(spdlog::level::debug);  // into the worker's log
    // The node's CPU quota and its group of the run.
    const std::vector<std::string> procs =
        CgroupProcsFiles(process.limit ? process.limit->procs_file() : "", process.group);
    BALLAST_ASSIGN_OR_RETURN(
        process.pid, StartWorker(WorkerArgs(launch), WorkerEnvironment(config_.token, environ),
                                 procs, LogPath(process), node.name));
    spdlog::debug("worker started node={} pid={}", node.name, process.pid);
    return Status::Ok();
  }

  std::string LogPath(const NodeProcess& process) const {
    return (fs::path(log_dir_) / process.log).string();
  }

  std::set<pid_t> WorkerPids() const {
    std::set<pid_t> pids;
    for (const auto& process : processes_) {
      if (process.pid > 0) pids.insert(process.pid);
    }
    return pids;
  }

  std::map<std::string, pid_t> LivePids() const {
    std::map<std::string, pid_t> pids;
    for (const auto& process : processes_) {
      if (process.pid > 0) pids[process.node->name] = process.pid;
    }
    return pids;
  }

  // Reaps exited workers; a worker that dies before the job is done is lost
  // (its work goes to the others) and restarted while restarts remain.
  Status Reap(bool job_done) {
    for (auto& process : processes_) {
      if (process.pid <= 0) continue;
      int wstatus = 0;
      if (waitpid(process.pid, &wstatus, WNOHANG) != process.pid) continue;
      ClearLeftovers(process);  // an exec command's children that outlived it
      process.pid = -1;
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
      if (process.restarts < options_.job.backoff_limit) {
        ++process.restarts;
        spdlog::info("worker died, restarting node={} how=\"{}\" restart={}/{} log={}",
                     process.node->name, how, process.restarts, options_.job.backoff_limit,
                     LogPath(process));
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
    for (size_t i = 0; i < processes_.size(); ++i) {
      NodeProcess& process = processes_[i];
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
        if (process.pid > 0) kill(process.pid, SIGTERM);
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
      orphans_->ReapExited(WorkerPids());  // what commands left that has exited since
      if (options_.on_progress && view && !options_.on_progress(*view, LivePids())) {
        stopped_ = true;
        return Status::Ok();
      }
      const bool all_exited =
          std::all_of(processes_.begin(), processes_.end(), [](auto& p) { return p.pid <= 0; });
      if (done && (all_exited || Clock::now() - *done_at > std::chrono::seconds(5))) {
        return Status::Ok();
      }
      const bool to_join =
          std::any_of(processes_.begin(), processes_.end(), [](auto& p) { return !p.joined; });
      if (!done && all_exited && !to_join) {
        return Status(StatusCode::kTerminal,
                      fmt::format("every worker failed past its {} restarts; logs in {}",
                                  options_.job.backoff_limit, log_dir_));
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

  // What a worker that has exited left running: killed by its node's group,
  // or, without cgroups, by its session; and what is left in its CPU-quota
  // group where that is a group of its own (cgroup v1: a command run as root
  // may have moved itself out of the node's group alone; RunOrphans counts
  // those as escaped). Returns how many its group or session held.
  size_t ClearLeftovers(const NodeProcess& process) {
    const size_t killed = containment_ ? containment_->ClearNode(process.group)
                                       : static_cast<size_t>(KillSession(process.pid));
    if (process.limit && process.limit->dir() != process.group) {
      orphans_->KillInGroup(process.limit->dir());
    }
    return killed;
  }

  // SIGTERM to workers still running (they hand back their work and end
  // their exec commands), SIGKILL after two seconds; then reap them all, kill
  // what is left of the run (every process of its cgroups, or what stayed in
  // the workers' sessions), then what left those (RunOrphans: the run's
  // orphans and what is in its CPU-quota groups), remove the cgroups, say
  // what could not be, and release the guard. Each wait is bounded: what
  // cannot be killed is reported, not waited for.
  void StopAll() {
    const size_t killed = StopWorkers();
    ContainmentReport report;
    if (containment_) {
      report = containment_->KillAll(std::chrono::seconds(2));
    } else {
      report.where = uncontained_;
      report.killed = killed;
    }
    if (orphans_) {
      const RunOrphans::Sweep sweep =
          orphans_->KillEscaped(CpuLimitDirs(), std::chrono::seconds(2));
      report.escaped = sweep.killed;
      report.remaining += sweep.remaining;
    }
    for (auto& process : processes_) {
      if (!process.limit) continue;
      for (LeftGroup& left : RemoveGroups(process.limit->dir())) {
        report.groups_left.push_back(std::move(left));
      }
      process.limit.reset();
    }
    containment_report_ = std::move(report);
    if (guard_) guard_->Release();  // it need not wait for what could not be killed
    guard_.reset();
  }

  // The outcome's figures (RunOutcome) and what the supervision says of the run.
  // SIGTERM to the workers still running, SIGKILL to those that have not
  // ended two seconds later; reaps them all. Returns how many processes
  // their sessions held when the run has no cgroups (none otherwise: the
  // run's groups are emptied after).
  size_t StopWorkers() {
    for (auto& process : processes_) {
      if (process.pid > 0) kill(process.pid, SIGTERM);
    }
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    size_t killed = 0;
    for (auto& process : processes_) {
      while (process.pid > 0) {
        if (waitpid(process.pid, nullptr, WNOHANG) == process.pid) {
          if (!containment_) killed += ClearLeftovers(process);
          process.pid = -1;
        } else if (Clock::now() > deadline) {
          kill(process.pid, SIGKILL);
          waitpid(process.pid, nullptr, 0);
          if (!containment_) killed += ClearLeftovers(process);
          process.pid = -1;
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
    }
    return killed;
  }

  LocalRunOutcome Outcome() const {
    std::vector<NodeRecord> records;
    for (const NodeProcess& process : processes_) {
      records.push_back({*process.node, process.log, process.restarts, process.joined,
                         process.joined_s, process.left_s});
    }
    LocalRunOutcome out =
        RunOutcome(*server_->View(config_.id), weights_, config_.workload, records);
    out.speed_method = speed_method_;
    out.log_dir = log_dir_;
    out.stopped = stopped_;
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
  std::unique_ptr<RunContainment> containment_;  // null: sessions only (uncontained_ says why)
  std::string uncontained_;
  std::vector<NodeProcess> processes_;   // after containment_: their quotas go first
  std::unique_ptr<RunOrphans> orphans_;  // this process as the subreaper while the run lasts
  std::unique_ptr<RunGuard> guard_;      // after the others: released last
  ContainmentReport containment_report_;
  std::string log_dir_;
  std::string speed_method_;
  Clock::time_point started_;
  double elapsed_s_ = 0;  // from adding the job to the end of monitoring
  bool stopped_ = false;  // on_progress stopped the job
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
