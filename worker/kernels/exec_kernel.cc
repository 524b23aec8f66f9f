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
// Both files live in a directory of the run's own, removed after it. The child's stdout and stderr
// both go to this process's stderr, unchanged (through OutputTail, which keeps their end for a
// failed item's record), so a worker's own stdout stays free. Exit 0 is success; a single item's
// run that fails is retried up to `retries` more times and then recorded in the Result with its
// exit code (128 + signal when killed, 127 when it could not start) and the end of its output. A
// range of several items that failed is not retried whole but halved at once until the items
// that fail alone are found (Narrow), so that one bad item among thousands counts as one failed
// item, as one index of a Job would. A command that has failed every run on this worker, 128 of
// them, is taken to fail for every item: from then on, for the whole job, nothing it fails is run
// again (run_budget.h). A run whose result file names its failed items
// (failedItems, user_result.h) settles the rest: only those items run again, alone. The child
// starts with no signal blocked and SIGTERM, SIGINT, SIGPIPE and the like at their defaults,
// whatever the worker does with them.
//
// The command dies with its worker: the child leads a process group of its
// own, in a cgroup of its own where the worker has one (command_group.h), and
// has SIGKILL as its parent-death signal, so that a worker killed with
// SIGKILL takes it along; StopExecCommands ends the groups of a worker that
// stops, and a range whose command was ended so is not a result: Compute
// returns Unavailable and the worker hands the range back. When the command
// exits, whatever it left running is killed (CommandGroup::Wait).
//
// Thread-safety: Compute may run concurrently; it reads `environ`, so nothing
// in the process may call setenv while a kernel runs. StopExecCommands may run
// from any thread.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "worker/kernels/command_group.h"
#include "worker/kernels/factories.h"
#include "worker/kernels/output_tail.h"
#include "worker/kernels/run_budget.h"

extern char** environ;

namespace ballast::kernels {
namespace {

using workload::Result;
using workload::WorkloadSpec;

// The directories of the runs' files: TMPDIR/ballast-run-<worker pid>-XXXXXX.
constexpr std::string_view kRunDirPrefix = "ballast-run-";

std::string RunDirParent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// What RunOnce returns for a command ended by StopExecCommands.
constexpr int kStopped = -1;

// The process groups of the commands running, process-wide, so that a worker
// that stops can end them all.
struct RunningCommands {
  std::mutex mutex;
  std::set<pid_t> groups;
  bool stopping = false;
};

RunningCommands& Running() {
  static RunningCommands* running = new RunningCommands;  // outlives every thread
  return *running;
}

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

// The file `command` names, searched in PATH when it has no slash (as execvp
// does, but before the child starts: the search allocates). Empty when none is found.
std::string ResolveCommand(const std::string& command) {
  if (command.empty() || command.find('/') != std::string::npos) return command;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + command;
    struct stat info {};
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

// What the child between clone (or fork) and exec needs, all of it made
// before: it may only make async-signal-safe calls.
struct ChildStart {
  pid_t parent;
  const CommandGroup* group;
  int output;  // where its stdout and stderr go (OutputTail); -1: this process's stderr
  const char* file;
  char* const* argv;
  char* const* envp;
};

// In the child, between clone and exec: async-signal-safe calls only, and
// no write to memory but its own stack (it shares this process's memory).
// Every signal this process catches is set to its default before any is
// unblocked, so no handler of the worker runs in the child; the usual
// stop signals and SIGPIPE are set to their defaults even when ignored.
[[noreturn]] void ExecChild(const ChildStart& start) {
  if (!start.group->JoinInChild()) _exit(127);  // outside its cgroup, what it starts could escape
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != start.parent) _exit(127);  // the worker died before prctl
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  for (int signal = 1; signal < NSIG; ++signal) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) != 0) continue;  // SIGKILL's peers, libc's own
    const bool caught = current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN;
    const bool stop = signal == SIGHUP || signal == SIGINT || signal == SIGQUIT ||
                      signal == SIGPIPE || signal == SIGTERM || signal == SIGUSR1 ||
                      signal == SIGUSR2 || signal == SIGCHLD;
    if (caught || stop) sigaction(signal, &defaults, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (start.output >= 0) {
    dup2(start.output, STDOUT_FILENO);
    dup2(start.output, STDERR_FILENO);
  } else {
    dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  execve(start.file, start.argv, start.envp);
  _exit(127);
}

#if defined(__has_feature)  // clang
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define BALLAST_EXEC_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__) || defined(BALLAST_EXEC_SANITIZED)
constexpr bool kSanitized = true;  // their interceptors must not run in a child sharing memory
#else
constexpr bool kSanitized = false;
#endif

// The child's own stack while it shares this process's memory.
constexpr size_t kChildStackBytes = 64 * 1024;

int ChildMain(void* start) { ExecChild(*static_cast<const ChildStart*>(start)); }

// Starts the child that execs `start.file`. The child shares this process's
// memory until it execs (clone with CLONE_VM | CLONE_VFORK, as posix_spawn
// does; this thread waits meanwhile): a fork would copy the page tables of
// the worker, its threads' stacks and heaps, and every page the worker
// writes after it would fault once to be copied or made writable again,
// which on a small board's CPU quota is a share of each range's time. Every
// signal is blocked across the clone, so none reaches a handler in the child
// before ExecChild resets it. Under a sanitizer, a plain fork. Returns the
// child's pid, or -1.
pid_t StartChild(const ChildStart& start) {
  if constexpr (kSanitized) {
    const pid_t child = fork();
    if (child == 0) ExecChild(start);
    return child;
  }
  std::vector<std::byte> stack(kChildStackBytes);  // new's alignment suits a stack's top
  sigset_t all;
  sigset_t before;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  const pid_t child = clone(ChildMain, stack.data() + stack.size(),
                            CLONE_VM | CLONE_VFORK | SIGCHLD, const_cast<ChildStart*>(&start));
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return child;
}

// The files one run of the command shares with it (its items' values in, its
// result out), in a directory of its own under TMPDIR, removed with this.
class RunFiles {
 public:
  static StatusOr<std::unique_ptr<RunFiles>> Make(const WorkloadSpec& spec, balance::Range items) {
    const bool values = spec.item_values != nullptr;
    const bool result = !spec.exec.result.merge.empty();
    auto files = std::unique_ptr<RunFiles>(new RunFiles);
    if (!values && !result) return files;
    // Named after this worker, so that a worker killed before it removed
    // its runs' directories has them removed by the next (RemoveStaleRunDirs).
    std::string pattern = fmt::format("{}/{}{}-XXXXXX", RunDirParent(), kRunDirPrefix, getpid());
    if (mkdtemp(pattern.data()) == nullptr) {
      return Status::Unavailable(fmt::format("cannot make a directory for the run in {}: {}",
                                             pattern, std::strerror(errno)));
    }
    files->dir_ = pattern;
    if (values) {
      files->items_file_ = files->dir_ + "/items";
      BALLAST_RETURN_IF_ERROR(WriteFile(
          files->items_file_, workload::ItemLines(*spec.item_values, items.begin, items.end)));
    }
    if (result) files->result_file_ = files->dir_ + "/result.json";
    return files;
  }
  ~RunFiles() {
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }

  // The variables naming the files, for the child's environment.
  void AddEnvironment(std::vector<std::string>* env) const {
    if (!items_file_.empty()) env->push_back("BALLAST_ITEMS_FILE=" + items_file_);
    if (!result_file_.empty()) env->push_back("BALLAST_RESULT_FILE=" + result_file_);
  }
  // Before each attempt: no result left from the one before.
  void ClearResult() const {
    if (!result_file_.empty()) unlink(result_file_.c_str());
  }
  // After a run: what it handed back (nothing when the job declares no
  // result), or Invalid saying why it cannot be taken.
  // A file is kept (keepDir) when the run exited 0 or named failed items.
  StatusOr<workload::HandedBack> TakeResult(const workload::ResultSpec& spec, balance::Range items,
                                            int code) const {
    if (result_file_.empty()) return workload::HandedBack{};
    auto read = ReadRegularFile(result_file_, spec.max_bytes + 1);
    if (read.status().code() == StatusCode::kNotFound) {
      return Status::Invalid("exited 0 but wrote no result to the file BALLAST_RESULT_FILE names");
    }
    BALLAST_ASSIGN_OR_RETURN(const std::string text, std::move(read));
    BALLAST_ASSIGN_OR_RETURN(workload::HandedBack back,
                             workload::ReadResultFile(text, spec, items, "result file"));
    if (!spec.keep_dir.empty() && (code == 0 || !back.failed.empty())) {
      BALLAST_RETURN_IF_ERROR(Keep(text, spec.keep_dir, items));
    }
    return back;
  }

 private:
  RunFiles() = default;

  // "a FIFO", "a directory", ... for a file that is not a regular one.
  static const char* KindOf(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    return "not a regular file";
  }

  // The first `max` bytes of the regular file `path`. The command may have
  // put anything there: a symbolic link is not followed and a FIFO or device
  // is not opened for long (O_NONBLOCK), so nothing it does makes the worker
  // wait. NotFound when there is no file; Invalid naming what is there
  // instead of a regular file.
  static StatusOr<std::string> ReadRegularFile(const std::string& path, size_t max) {
    const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return Status::NotFound(path);
      if (errno == ELOOP) {
        return Status::Invalid("the file BALLAST_RESULT_FILE names is a symbolic link, not a file");
      }
      return Status::Invalid(
          fmt::format("cannot read the file BALLAST_RESULT_FILE names: {}", std::strerror(errno)));
    }
    struct stat info {};
    std::string text;
    const bool stated = fstat(fd, &info) == 0;
    if (!stated || !S_ISREG(info.st_mode)) {
      const std::string kind = stated ? KindOf(info.st_mode) : "unreadable";
      close(fd);
      return Status::Invalid(
          fmt::format("the file BALLAST_RESULT_FILE names is {}, not a regular file", kind));
    }
    text.resize(max);
    size_t got = 0;
    while (got < max) {
      const ssize_t n = read(fd, text.data() + got, max - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    close(fd);
    text.resize(got);
    return text;
  }

  // Writes `text` to `path`, a new or regular file; a link or a FIFO the
  // command left there is refused at once rather than followed or waited on.
  static Status WriteFile(const std::string& path, const std::string& text) {
    const int fd = open(path.c_str(),
                        O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    struct stat info {};
    if (fd < 0 || fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
      const int saved = errno;
      if (fd >= 0) close(fd);
      return Status::Unavailable(fmt::format(
          "cannot write {}: {}", path, fd >= 0 ? "not a regular file" : std::strerror(saved)));
    }
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    const int saved = errno;
    if (close(fd) != 0 || done < text.size()) {
      return Status::Unavailable(fmt::format("cannot write {}: {}", path, std::strerror(saved)));
    }
    return Status::Ok();
  }

  // Copies the run's result to `<keep_dir>/<begin>-<end>.json`, whole or not
  // at all (written beside it, then renamed).
  static Status Keep(const std::string& text, const std::string& keep_dir, balance::Range items) {
    std::error_code error;
    std::filesystem::create_directories(keep_dir, error);
    const std::string name = fmt::format("{}/{}-{}.json", keep_dir, items.begin, items.end);
    const std::string part = fmt::format("{}.part-{}", name, getpid());
    BALLAST_RETURN_IF_ERROR(WriteFile(part, text));
    if (std::rename(part.c_str(), name.c_str()) != 0) {
      const int saved = errno;
      unlink(part.c_str());
      return Status::Invalid(
          fmt::format("cannot keep the result in {}: {}", name, std::strerror(saved)));
    }
    return Status::Ok();
  }

  std::string dir_;
  std::string items_file_;
  std::string result_file_;
};

class ExecKernel : public Kernel {
 public:
  explicit ExecKernel(const WorkloadSpec& spec) : spec_(spec) {}

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
    std::vector<std::string> env = InheritedEnvironment();
    env.push_back("BALLAST_START=" + std::to_string(items.begin));
    env.push_back("BALLAST_END=" + std::to_string(items.end));
    if (per_item) env.push_back("BALLAST_ITEM=" + std::to_string(items.begin));
    if (per_item && spec_.item_values != nullptr) {
      env.push_back("BALLAST_VALUE=" + (*spec_.item_values)[items.begin]);
    }
    files->AddEnvironment(&env);
    int code = 0;
    std::string output;  // the end of what the last attempt wrote
    std::string error;   // what the last attempt's result file said of its one item
    uint32_t attempts = 0;
    while (attempts <= retries) {
      if (attempts > 0 && !run_budget_.MayRepeat()) break;  // it fails for every item
      ++attempts;
      files->ClearResult();
      std::tie(code, output) = RunOnce(env);
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

  // Runs the command once with `env`; returns its exit status as a shell would report
  // it, or kStopped when StopExecCommands ended it (or came before it), and
  // the end of what it wrote (OutputTail).
  std::pair<int, std::string> RunOnce(std::vector<std::string> env) const {
    std::vector<char*> envp;
    for (std::string& entry : env) envp.push_back(entry.data());
    envp.push_back(nullptr);
    std::vector<std::string> words = spec_.exec.command;
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    const std::string file = ResolveCommand(words.front());
    if (file.empty()) return {127, "command not found: " + words.front()};

    RunningCommands& running = Running();
    if (std::lock_guard lock(running.mutex); running.stopping) return {kStopped, ""};
    CommandGroup group = CommandGroup::Open();
    OutputTail output;
    const pid_t child =
        StartChild({getpid(), &group, output.write_fd(), file.c_str(), argv.data(), envp.data()});
    if (child < 0) return {127, "cannot start a process"};
    output.Start();
    setpgid(child, child);  // the child does too: whichever comes first, no kill misses it
    {
      std::lock_guard lock(running.mutex);
      running.groups.insert(child);
      if (running.stopping) kill(-child, SIGTERM);  // a stop came while it started
    }
    const int code = group.Wait(child);  // and kills what the command left running
    std::string said = output.Finish();
    std::lock_guard lock(running.mutex);
    running.groups.erase(child);
    return {running.stopping ? kStopped : code, std::move(said)};
  }

  WorkloadSpec spec_;
  // The failed runs the job's steps on this worker may still repeat
  // (run_budget.h): a command that fails for every item stops being retried
  // and narrowed once it has failed that many runs.
  mutable RunBudget run_budget_;
};

// Waits until no command runs, at most `patience`. Returns true when none
// does.
bool WaitForNoCommand(std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (true) {
    {
      std::lock_guard lock(Running().mutex);
      if (Running().groups.empty()) return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

size_t RemoveStaleRunDirs(const std::string& parent) {
  std::error_code error;
  size_t removed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(parent, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kRunDirPrefix)) continue;
    // ballast-run-<pid>-XXXXXX: the worker <pid> made it.
    const std::string_view rest = std::string_view(name).substr(kRunDirPrefix.size());
    pid_t pid = 0;
    const auto [end, parsed] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    if (parsed != std::errc() || end == rest.data() || *end != '-' || pid <= 0) continue;
    // A worker still running keeps its own; one gone left these behind.
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;
    // Only a directory of this user's own, not a symbolic link: /tmp is
    // shared, and another user's tree (or a link to one) named so is theirs.
    struct stat info {};
    if (lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_uid != geteuid()) {
      continue;
    }
    std::error_code ignored;
    if (std::filesystem::remove_all(entry.path(), ignored) > 0) ++removed;
  }
  return removed;
}

std::unique_ptr<Kernel> MakeExecKernel(const WorkloadSpec& spec) {
  RemoveStaleRunDirs(RunDirParent());
  return std::make_unique<ExecKernel>(spec);
}

void StopExecCommands(std::chrono::milliseconds grace) {
  RunningCommands& running = Running();
  {
    std::lock_guard lock(running.mutex);
    running.stopping = true;
    for (pid_t group : running.groups) kill(-group, SIGTERM);
  }
  if (WaitForNoCommand(grace)) return;
  {
    std::lock_guard lock(running.mutex);
    for (pid_t group : running.groups) kill(-group, SIGKILL);
  }
  WaitForNoCommand(std::chrono::seconds(1));
}

}  // namespace ballast::kernels
