#include "cli/run/node_processes.h"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "cli/run/local_runner.h"
#include "cli/run/run_cleanup.h"
#include "core/common/names.h"

namespace ballast::cli {

using Clock = std::chrono::steady_clock;

NodeProcesses::NodeProcesses(bool cgroups, const std::string& run_id, std::string log_dir)
    : cgroups_(cgroups), run_id_(run_id), log_dir_(std::move(log_dir)) {
  Contain(run_id);
}

void NodeProcesses::Contain(const std::string& run_id) {
  if (!cgroups_) {
    uncontained_ = "--no-cgroups";
    return;
  }
  auto containment =
      RunContainment::Create(OwnedGroupName(getpid(), BoundedFileName(run_id, "", 200)));
  if (containment.ok()) {
    containment_ = std::move(containment).value();
  } else {
    uncontained_ = containment.status().message();
    spdlog::debug("no cgroups for the run reason=\"{}\"", uncontained_);
  }
}

StatusOr<NodeHold> NodeProcesses::Add(const job::EmulatedNode& node) {
  NodeProcess process;
  process.node = &node;
  process.log = NodeLogFileName(node.name);
  if (containment_) {
    // Bounded like the log's name: a cgroup is a directory.
    BALLAST_ASSIGN_OR_RETURN(process.group,
                             containment_->AddNode(BoundedFileName(node.name, "", 200)));
  }
  NodeHold hold;
  hold.duty = LimitSpeed(process);
  hold.cores =
      WorkerCores(node.speed, process.limit != nullptr, std::thread::hardware_concurrency());
  processes_.push_back(std::move(process));
  return hold;
}

std::optional<double> NodeProcesses::LimitSpeed(NodeProcess& process) {
  const job::EmulatedNode& node = *process.node;
  // A node of whole cores runs that many threads, which is its speed
  // already: it needs no quota, and outside a quota its worker has its
  // first lease sooner (measured: 15 ms after the start, against 35-150
  // ms inside one with a quota and a raised CPU weight).
  if (node.speed == std::ceil(node.speed)) {
    Note("nothing for nodes of whole cores (one worker thread per core)");
    return std::nullopt;
  }
  if (cgroups_) {
    auto limit = CpuLimit::Create(
        OwnedGroupName(getpid(), BoundedFileName(run_id_ + "-" + node.name, "", 200)), node.speed,
        process.group);
    if (limit.ok()) {
      Note((*limit)->description());
      process.limit = std::move(limit).value();
    } else {
      spdlog::debug("no cgroup for node={} reason=\"{}\"", node.name, limit.status().message());
    }
  }
  if (!process.limit) Note("duty cycle in the worker (no cgroup CPU quota here)");
  // Held by a quota, or by its duty cycle below one core: it computes in
  // bursts, which the policy's split allows for.
  return NodeDuty(node.speed, process.limit || node.speed < 1);
}

void NodeProcesses::Note(std::string method) {
  if (std::find(methods_.begin(), methods_.end(), method) == methods_.end()) {
    methods_.push_back(std::move(method));
  }
}

std::string NodeProcesses::SpeedMethod() const {
  // The nodes' speeds are what the ideal time is computed from; the output
  // says when the machine cannot give them.
  std::vector<double> speeds;
  for (const auto& process : processes_) speeds.push_back(process.node->speed);
  std::vector<std::string> methods = methods_;
  const std::string oversubscribed =
      OversubscriptionNote(speeds, std::thread::hardware_concurrency());
  if (!oversubscribed.empty() &&
      std::find(methods.begin(), methods.end(), oversubscribed) == methods.end()) {
    methods.push_back(oversubscribed);
  }
  return fmt::format("{}", fmt::join(methods, "; "));
}

Status NodeProcesses::Hold() {
  orphans_ = std::make_unique<RunOrphans>();
  if (containment_) {
    BALLAST_ASSIGN_OR_RETURN(guard_, RunGuard::Start(containment_->dir(), CpuLimitDirs()));
    orphans_->Keep(guard_->pid());
  }
  return Status::Ok();
}

std::vector<std::string> NodeProcesses::CpuLimitDirs() const {
  std::vector<std::string> dirs;
  for (const auto& process : processes_) {
    if (process.limit) dirs.push_back(process.limit->dir());
  }
  return dirs;
}

// The worker is in its node's group of the run's cgroups (what it leaves when
// it dies is killed by that group, ClearNode) or, without them, leads a
// session of its own (KillSession); and gets SIGTERM when the thread that
// started it ends, which is this process's end however it comes (SIGKILL
// included): RunLocal's thread outlives every worker otherwise.
Status NodeProcesses::Spawn(NodeProcess& process, WorkerLaunch launch,
                            const std::vector<std::string>& environment) {
  const job::EmulatedNode& node = *process.node;
  launch.node = node.name;
  launch.threads = WorkerThreads(node.speed);
  if (!process.limit && node.speed < 1) launch.duty_speed = node.speed;  // its duty cycle
  launch.exec_cgroup = process.group;
  // The node's CPU quota and its group of the run.
  const std::vector<std::string> procs =
      CgroupProcsFiles(process.limit ? process.limit->procs_file() : "", process.group);
  BALLAST_ASSIGN_OR_RETURN(process.pid, StartWorker(WorkerArgs(launch), environment, procs,
                                                    LogPath(process), node.name));
  spdlog::debug("worker started node={} pid={}", node.name, process.pid);
  return Status::Ok();
}

std::vector<WorkerExit> NodeProcesses::Reap() {
  std::vector<WorkerExit> exits;
  for (auto& process : processes_) {
    if (process.pid <= 0) continue;
    int wstatus = 0;
    if (waitpid(process.pid, &wstatus, WNOHANG) != process.pid) continue;
    ClearLeftovers(process);  // an exec command's children that outlived it
    process.pid = -1;
    exits.push_back({&process, wstatus});
  }
  return exits;
}

void NodeProcesses::ReapOrphans() { orphans_->ReapExited(WorkerPids()); }

void NodeProcesses::Stop(const NodeProcess& process) {
  if (process.pid > 0) kill(process.pid, SIGTERM);
}

// What a worker that has exited left running: killed by its node's group,
// or, without cgroups, by its session; and what is left in its CPU-quota
// group where that is a group of its own (cgroup v1: a command run as root
// may have moved itself out of the node's group alone; RunOrphans counts
// those as escaped). Returns how many its group or session held.
size_t NodeProcesses::ClearLeftovers(const NodeProcess& process) {
  const size_t killed = containment_ ? containment_->ClearNode(process.group)
                                     : static_cast<size_t>(KillSession(process.pid));
  if (process.limit && process.limit->dir() != process.group && orphans_) {
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
ContainmentReport NodeProcesses::StopAll() {
  const size_t killed = StopWorkers();
  ContainmentReport report;
  if (containment_) {
    report = containment_->KillAll(std::chrono::seconds(2));
  } else {
    report.where = uncontained_;
    report.killed = killed;
  }
  if (orphans_) {
    const RunOrphans::Sweep sweep = orphans_->KillEscaped(CpuLimitDirs(), std::chrono::seconds(2));
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
  if (guard_) guard_->Release();  // it need not wait for what could not be killed
  guard_.reset();
  return report;
}

// SIGTERM to the workers still running, SIGKILL to those that have not
// ended two seconds later; reaps them all. Returns how many processes
// their sessions held when the run has no cgroups (none otherwise: the
// run's groups are emptied after).
size_t NodeProcesses::StopWorkers() {
  for (const auto& process : processes_) Stop(process);
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

std::string NodeProcesses::LogPath(const NodeProcess& process) const {
  return (std::filesystem::path(log_dir_) / process.log).string();
}

std::set<pid_t> NodeProcesses::WorkerPids() const {
  std::set<pid_t> pids;
  for (const auto& process : processes_) {
    if (process.pid > 0) pids.insert(process.pid);
  }
  return pids;
}

std::map<std::string, pid_t> NodeProcesses::LivePids() const {
  std::map<std::string, pid_t> pids;
  for (const auto& process : processes_) {
    if (process.pid > 0) pids[process.node->name] = process.pid;
  }
  return pids;
}

bool NodeProcesses::AllExited() const {
  return std::all_of(processes_.begin(), processes_.end(), [](auto& p) { return p.pid <= 0; });
}

}  // namespace ballast::cli
