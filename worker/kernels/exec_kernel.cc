// The exec kernel: the user's command in a child process, once per range or
// once per item.
//
// Environment contract (docs/workloads.md): the child gets this process's
// environment plus BALLAST_START and BALLAST_END, the half-open range of items
// it is to compute, and with perItem BALLAST_ITEM, its one item (then START =
// ITEM and END = ITEM + 1, so a command sees the same values however the job
// was split). When the job lists its items by value, BALLAST_ITEMS_FILE names
// a file holding the values of the range, one a line, and with perItem
// BALLAST_VALUE is the one item's value. When the job declares a result
// (exec.result), BALLAST_RESULT_FILE names the file the command writes its
// JSON object to; a run that exits 0 without a valid one fails with the
// reason, and is not retried (its work is done; its report is what is wrong).
// Both files live in a directory of the run's own, removed after it (run_files.h). The child's
// stdout and stderr both go to this process's stderr, unchanged (through OutputTail, which keeps
// their end for a failed item's record), so a worker's own stdout stays free. Exit 0 is success; a
// single item's run that fails is retried up to `retries` more times and then recorded in the
// Result with its exit code (128 + signal when killed, 127 when it could not start) and the end of
// its output. A range of several items that failed is not retried whole but halved at once until
// the items that fail alone are found (Narrow), so that one bad item among thousands counts as one
// failed item, as one index of a Job would. A command that has failed every run on this worker, 128
// of them, is taken to fail for every item: from then on, for the whole job, nothing it fails is
// run again (run_budget.h). A run whose result file names its failed items (failedItems,
// user_result.h) settles the rest: only those items run again, alone. The child starts with no
// signal blocked and SIGTERM, SIGINT, SIGPIPE and the like at their defaults, whatever the worker
// does with them.
//
// The command dies with its worker: the child leads a process group of its
// own, in a cgroup of its own where the worker has one (command_group.h), and
// has SIGKILL as its parent-death signal, so that a worker killed with
// SIGKILL takes it along; StopExecCommands ends the groups of a worker that
// stops (running_commands.h), and a range whose command was ended so is not
// a result: Compute returns Unavailable and the worker hands the range back.
// When the command exits, whatever it left running is killed
// (CommandGroup::Wait). The child shares the worker's memory until it execs
// rather than copying it (process/child_start.h says why and how).
//
// With `serve`, the command is started once per worker thread and serves
// runs one after another: each run's variables go to it as a line of JSON
// on its stdin rather than in its environment, and its exit code comes back
// on descriptor 3 (command_server.h). Retries, halving and named failures
// are the same: each run is a line. A command that ended or answered wrongly
// fails that run and is started again for the next.
//
// Thread-safety: Compute may run concurrently; it reads `environ`, so nothing
// in the process may call setenv while a kernel runs. StopExecCommands may run
// from any thread.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "process/child_start.h"
#include "worker/kernels/command_group.h"
#include "worker/kernels/command_server.h"
#include "worker/kernels/factories.h"
#include "worker/kernels/output_tail.h"
#include "worker/kernels/run_budget.h"
#include "worker/kernels/run_files.h"
#include "worker/kernels/running_commands.h"

extern char** environ;

namespace ballast::kernels {
namespace {

using workload::Result;
using workload::WorkloadSpec;

// What RunOnce returns for a command ended by StopExecCommands.
constexpr int kStopped = -1;

// What a run is told; never inherited from the worker's own environment.
constexpr std::array<std::string_view, 6> kRunVariables = {
    "BALLAST_START", "BALLAST_END",        "BALLAST_ITEM",
    "BALLAST_VALUE", "BALLAST_ITEMS_FILE", "BALLAST_RESULT_FILE"};

// This process's environment without any of kRunVariables of its own.
std::vector<std::string> InheritedEnvironment() {
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    const bool ours =
        std::any_of(kRunVariables.begin(), kRunVariables.end(), [&](std::string_view name) {
          return text.starts_with(name) && text.size() > name.size() && text[name.size()] == '=';
        });
    if (ours) continue;
    env.emplace_back(text);
  }
  return env;
}

class ExecKernel : public Kernel {
 public:
  explicit ExecKernel(const WorkloadSpec& spec)
      : spec_(spec), launcher_(spec.exec.serve ? std::make_unique<ServerLauncher>() : nullptr) {}

  StatusOr<Result> Compute(balance::Range items) override {
    BALLAST_RETURN_IF_ERROR(CheckRange(spec_, items));
    Result total = Result::Empty(workload::WorkloadKind::kExec);
    if (items.empty()) return total;
    if (!spec_.exec.per_item) {
      // A range of several items is not retried whole: a failure is halved
      // at once (Narrow), which costs a transient failure what a retry would
      // (both halves once) and a bad item far less (the items before it are
      // not run again and again).
      const uint32_t retries = items.size() == 1 ? spec_.exec.retries : 0;
      BALLAST_ASSIGN_OR_RETURN(Result part, RunWithRetries(items, /*per_item=*/false, retries));
      const workload::ExecFailure* failed = CommandFailure(part);
      if (failed == nullptr || items.size() == 1 || failed->exit_code == 127) return part;
      int budget = kMaxNarrowingRuns;
      return Narrow(items, *failed, &budget);
    }
    for (uint64_t item = items.begin; item < items.end; ++item) {
      BALLAST_ASSIGN_OR_RETURN(
          Result part, RunWithRetries({item, item + 1}, /*per_item=*/true, spec_.exec.retries));
      BALLAST_RETURN_IF_ERROR(total.Merge(part));
    }
    return total;
  }

 private:
  // The runs a failed range may spend finding the items that fail alone, per
  // step. One failing item among 2^30 takes 2 runs a halving and its own
  // attempts: about 63. A command that fails for every item is bounded for
  // the whole job by run_budget_ instead.
  static constexpr int kMaxNarrowingRuns = 128;

  // The failure of `result` when its command exited non-zero and said
  // nothing of its items (not a refused result file, which is not the items'
  // fault, nor items its result file named failed, which are settled); else
  // nullptr.
  static const workload::ExecFailure* CommandFailure(const Result& result) {
    const auto& failures = result.exec().failures;
    if (failures.empty() || failures.front().exit_code == 0 || !failures.front().error.empty()) {
      return nullptr;
    }
    return &failures.front();
  }

  // `items`' command failed all its attempts as `failed` says: finds the items
  // that fail alone, as a Job's indexes would. Each half of several items runs
  // once and is halved again when it fails; a single item gets the job's
  // retries. Once `budget` runs are spent, what is left unsplit is reported
  // failed whole, as `failed` says. Unavailable when StopExecCommands came.
  StatusOr<Result> Narrow(balance::Range items, const workload::ExecFailure& failed,
                          int* budget) const {
    Result total = Result::Empty(workload::WorkloadKind::kExec);
    const uint64_t middle = items.begin + items.size() / 2;
    for (const balance::Range half :
         {balance::Range{items.begin, middle}, balance::Range{middle, items.end}}) {
      const uint32_t retries = half.size() == 1 ? spec_.exec.retries : 0;
      if (*budget < static_cast<int>(retries) + 1 || !run_budget_.MayRepeat(retries + 1)) {
        BALLAST_RETURN_IF_ERROR(total.Merge(
            Result::ExecFailed(half, failed.exit_code, failed.attempts, "", failed.output)));
        continue;
      }
      *budget -= static_cast<int>(retries) + 1;
      BALLAST_ASSIGN_OR_RETURN(Result part, RunWithRetries(half, /*per_item=*/false, retries));
      if (const workload::ExecFailure* again = CommandFailure(part);
          again != nullptr && half.size() > 1) {
        const workload::ExecFailure carried{half, again->exit_code, again->attempts, "",
                                            again->output};
        BALLAST_ASSIGN_OR_RETURN(part, Narrow(half, carried, budget));
      }
      BALLAST_RETURN_IF_ERROR(total.Merge(part));
    }
    return total;
  }

  // The Result of one run of the command, retried `retries` times on
  // failure; Unavailable when StopExecCommands ended it.
  StatusOr<Result> RunWithRetries(balance::Range items, bool per_item, uint32_t retries) const {
    BALLAST_ASSIGN_OR_RETURN(std::unique_ptr<RunFiles> files, RunFiles::Make(spec_, items));
    std::vector<std::string> run;  // the run's variables, NAME=value (kRunVariables)
    run.push_back("BALLAST_START=" + std::to_string(items.begin));
    run.push_back("BALLAST_END=" + std::to_string(items.end));
    if (per_item) run.push_back("BALLAST_ITEM=" + std::to_string(items.begin));
    if (per_item && spec_.item_values != nullptr) {
      run.push_back("BALLAST_VALUE=" + (*spec_.item_values)[items.begin]);
    }
    files->AddEnvironment(&run);
    int code = 0;
    std::string output;  // the end of what the last attempt wrote
    std::string error;   // what the last attempt's result file said of its one item
    uint32_t attempts = 0;
    while (attempts <= retries) {
      if (attempts > 0 && !run_budget_.MayRepeat()) break;  // it fails for every item
      ++attempts;
      files->ClearResult();
      std::tie(code, output) = spec_.exec.serve ? RunServed(run) : RunOnce(run);
      if (code == kStopped) {
        return Status::Unavailable(
            fmt::format("stopped: the command for items {} was ended", items.ToString()));
      }
      auto back = files->TakeResult(spec_.exec.result, items, code);
      run_budget_.Note(code == 0 || (back.ok() && !back->failed.empty()));
      // A run that names its failed items settles the others, whatever it
      // exited with (a tool that failed for some items often exits 1).
      if (back.ok() && !back->failed.empty()) {
        if (items.size() > 1) {
          return SettleNamedFailures(items, per_item, attempts, std::move(back).value(), code,
                                     output);
        }
        error = back->failed.front().second.empty() ? std::string(kNamedFailed)
                                                    : back->failed.front().second;
        continue;  // its one item failed: its next attempt
      }
      error.clear();
      if (code != 0) continue;
      if (!back.ok()) {
        return Result::ExecFailed(items, 0, attempts, back.status().message(), std::move(output));
      }
      return Result::ExecHandedBack(items.size(), std::move(back->fields));
    }
    return Result::ExecFailed(items, code, attempts, std::move(error), std::move(output));
  }

  static constexpr std::string_view kNamedFailed = "its result file names it failed";

  // A run of the several `items` that exited `code` after `attempts` and
  // named some of them failed in its result file (`back`): the others
  // succeed with the fields it handed back, and each named item runs alone
  // for the attempts the job's retries leave it, so that a bad item costs
  // only its own attempts. Unavailable when StopExecCommands came.
  StatusOr<Result> SettleNamedFailures(balance::Range items, bool per_item, uint32_t attempts,
                                       workload::HandedBack back, int code,
                                       const std::string& output) const {
    Result total =
        Result::ExecHandedBack(items.size() - back.failed.size(), std::move(back.fields));
    for (auto& [item, said] : back.failed) {
      const balance::Range one{item, item + 1};
      std::string error = said.empty() ? std::string(kNamedFailed) : std::move(said);
      Result settled = Result::ExecFailed(one, code, attempts, error, output);
      if (attempts <= spec_.exec.retries) {
        BALLAST_ASSIGN_OR_RETURN(settled,
                                 RunWithRetries(one, per_item, spec_.exec.retries - attempts));
        if (!settled.exec().failures.empty()) {
          const workload::ExecFailure& again = settled.exec().failures.front();
          settled = Result::ExecFailed(one, again.exit_code, again.attempts + attempts, again.error,
                                       again.output);
        }
      }
      BALLAST_RETURN_IF_ERROR(total.Merge(settled));
    }
    return total;
  }

  // Runs the command once with the run's variables `run` in its
  // environment; returns its exit status as a shell would report it, or
  // kStopped when StopExecCommands ended it (or came before it), and the end
  // of what it wrote (OutputTail).
  std::pair<int, std::string> RunOnce(const std::vector<std::string>& run) const {
    std::vector<std::string> env = InheritedEnvironment();
    env.insert(env.end(), run.begin(), run.end());
    const std::vector<char*> envp = process::PointersTo(env);
    std::vector<std::string> words = spec_.exec.command;
    const std::vector<char*> argv = process::PointersTo(words);
    const std::string file = process::ResolveCommand(words.front());
    if (file.empty()) return {127, "command not found: " + words.front()};

    if (CommandsStopping()) return {kStopped, ""};
    CommandGroup group = CommandGroup::Open();
    OutputTail output(&log_budget_);
    process::ChildSpec child;
    child.file = file.c_str();
    child.argv = argv.data();
    child.envp = envp.data();
    child.parent_death_signal = SIGKILL;  // a worker killed with SIGKILL takes it along
    child.leads = process::ChildSpec::Leads::kProcessGroup;
    child.cgroup_procs_fd = group.procs_fd();
    child.default_signals = true;  // whatever the worker does with them
    child.output = output.write_fd();
    child.share_memory = true;  // no fork's copy of the worker's pages
    const pid_t leader = process::StartChild(child);
    if (leader < 0) return {127, "cannot start a process"};
    output.Start();
    setpgid(leader, leader);  // the child does too: whichever comes first, no kill misses it
    AddRunningCommand(leader);
    const int code = group.Wait(leader);  // and kills what the command left running
    std::string said = output.Finish();
    return {RemoveRunningCommand(leader) ? kStopped : code, std::move(said)};
  }

  // A run of a served command (command_server.h): the run's variables `run`
  // as a line of JSON to an idle server of this kernel's, or to one started
  // for it; what RunOnce returns. A server that ended is not kept.
  std::pair<int, std::string> RunServed(const std::vector<std::string>& run) const {
    if (CommandsStopping()) return {kStopped, ""};
    std::unique_ptr<CommandServer> server;
    {
      std::lock_guard lock(servers_mutex_);
      if (!idle_servers_.empty()) {
        server = std::move(idle_servers_.back());
        idle_servers_.pop_back();
      }
    }
    if (server != nullptr && !server->Ready()) server.reset();
    if (server == nullptr) {
      const std::string file = process::ResolveCommand(spec_.exec.command.front());
      if (file.empty()) return {127, "command not found: " + spec_.exec.command.front()};
      std::string why;
      server = CommandServer::Start(file, spec_.exec.command, InheritedEnvironment(), &log_budget_,
                                    *launcher_, &why);
      if (server == nullptr) return {127, why};
    }
    nlohmann::json request = nlohmann::json::object();
    for (const std::string& variable : run) {
      const size_t equals = variable.find('=');
      request[variable.substr(0, equals)] = variable.substr(equals + 1);
    }
    auto [code, said] =
        server->Serve(request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (server->alive()) {
      std::lock_guard lock(servers_mutex_);
      idle_servers_.push_back(std::move(server));
    }
    return {code == CommandServer::kStopped ? kStopped : code, std::move(said)};
  }

  WorkloadSpec spec_;
  // The failed runs the job's steps on this worker may still repeat
  // (run_budget.h): a command that fails for every item stops being retried
  // and narrowed once it has failed that many runs.
  mutable RunBudget run_budget_;
  // What the job's runs on this worker may log together (output_tail.h).
  mutable LogBudget log_budget_;
  // Served commands (spec_.exec.serve only): the thread that starts them,
  // and those idle between runs, ended before it (declared after it; and
  // after log_budget_, which their output takes from).
  std::unique_ptr<ServerLauncher> launcher_;
  mutable std::mutex servers_mutex_;
  mutable std::vector<std::unique_ptr<CommandServer>> idle_servers_;
};

}  // namespace

std::unique_ptr<Kernel> MakeExecKernel(const WorkloadSpec& spec) {
  RemoveStaleRunDirs(RunDirParent());
  return std::make_unique<ExecKernel>(spec);
}

}  // namespace ballast::kernels
