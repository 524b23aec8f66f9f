// A served exec command's one process (command_server.h).
#include "worker/kernels/command_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "process/child_start.h"
#include "worker/kernels/running_commands.h"

namespace ballast::kernels {
namespace {

// The longest reply line read: "255\n" and room for a CR or spaces.
constexpr size_t kMaxReplyBytes = 16;
// How often a run waiting for its reply looks whether the command ended
// (something it started may hold descriptor 3 open past its end).
constexpr int kReplyPollMs = 100;
// How long a server whose input was closed may take to exit before its
// group is killed.
constexpr auto kExitGrace = std::chrono::seconds(1);

// The serving commands alive, by leader pid, whose CPU ChildrenCpuSeconds
// reads from /proc while they live.
struct LiveServers {
  std::mutex mutex;
  std::set<pid_t> leaders;
};

LiveServers& Live() {
  static LiveServers* live = new LiveServers;  // outlives every thread
  return *live;
}

// A live process's CPU seconds with those of the children it reaped (its
// /proc stat's utime, stime, cutime and cstime); 0 when it cannot be read.
double ProcessTreeSeconds(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t name_end = text.rfind(')');  // the command's name may hold spaces and parens
  if (name_end == std::string::npos) return 0;
  std::istringstream fields(text.substr(name_end + 1));
  std::string field;
  double ticks = 0;
  for (int number = 3; number <= 17 && fields >> field; ++number) {  // utime is field 14
    if (number >= 14) ticks += std::strtod(field.c_str(), nullptr);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Whether `pid`, our child, has ended (a zombie not yet reaped).
bool Ended(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

// Writes all of `line` to the pipe `fd`; false when the reader is gone
// (no SIGPIPE: it is blocked here and taken back).
bool WriteLine(int fd, std::string_view line) {
  sigset_t pipe_signal;
  sigset_t before;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &before);
  bool written = true;
  while (!line.empty()) {
    const ssize_t n = write(fd, line.data(), line.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      written = false;
      if (errno == EPIPE) {
        const timespec now{};
        sigtimedwait(&pipe_signal, nullptr, &now);
      }
      break;
    }
    line.remove_prefix(static_cast<size_t>(n));
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return written;
}

}  // namespace

double RusageSeconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  double total = 0;
  for (const timeval& t : {usage.ru_utime, usage.ru_stime}) {
    total += static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  }
  return total;
}

int ReplyExitCode(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  if (line.empty() || line.size() > 3) return -1;
  int code = 0;
  for (const char c : line) {
    if (c < '0' || c > '9') return -1;
    code = code * 10 + (c - '0');
  }
  return code <= 255 ? code : -1;
}

double ChildrenCpuSeconds() {
  std::lock_guard lock(Live().mutex);
  double total = RusageSeconds(RUSAGE_CHILDREN);
  for (const pid_t leader : Live().leaders) total += ProcessTreeSeconds(leader);
  return total;
}

ServerLauncher::ServerLauncher() : thread_([this] { Loop(); }) {}

ServerLauncher::~ServerLauncher() {
  {
    std::lock_guard lock(mutex_);
    ending_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

pid_t ServerLauncher::Run(std::function<pid_t()> start) {
  std::packaged_task<pid_t()> task(std::move(start));
  std::future<pid_t> started = task.get_future();
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_all();
  return started.get();
}

void ServerLauncher::Loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return ending_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // ending, nothing asked
    std::packaged_task<pid_t()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

std::unique_ptr<CommandServer> CommandServer::Start(const std::string& file,
                                                    std::vector<std::string> words,
                                                    std::vector<std::string> env, LogBudget* budget,
                                                    ServerLauncher& launcher, std::string* why) {
  int input[2];
  int reply[2];
  if (pipe2(input, O_CLOEXEC) != 0) {
    *why = "cannot make a pipe";
    return nullptr;
  }
  if (pipe2(reply, O_CLOEXEC) != 0) {
    close(input[0]);
    close(input[1]);
    *why = "cannot make a pipe";
    return nullptr;
  }
  env.push_back("BALLAST_REPLY_FD=" + std::to_string(process::kReplyFd));
  const std::vector<char*> argv = process::PointersTo(words);
  const std::vector<char*> envp = process::PointersTo(env);
  std::unique_ptr<CommandServer> server(new CommandServer(CommandGroup::Open(), budget));
  process::ChildSpec child;
  child.file = file.c_str();
  child.argv = argv.data();
  child.envp = envp.data();
  child.parent_death_signal = SIGKILL;  // when the launcher's thread ends, or the worker
  child.leads = process::ChildSpec::Leads::kProcessGroup;
  child.cgroup_procs_fd = server->group_.procs_fd();
  child.default_signals = true;
  child.output = server->output_.write_fd();
  child.input = input[0];
  child.reply = reply[1];
  child.share_memory = true;
  pid_t leader = -1;
  {
    // Listed before the child can run, so that its CPU is never missed.
    std::lock_guard lock(Live().mutex);
    leader = launcher.Run([&child] { return process::StartChild(child); });
    if (leader > 0) Live().leaders.insert(leader);
  }
  close(input[0]);
  close(reply[1]);
  if (leader < 0) {
    close(input[1]);
    close(reply[0]);
    *why = "cannot start a process";
    return nullptr;
  }
  setpgid(leader, leader);  // the child does too: whichever comes first, no kill misses it
  server->output_.Start();
  server->leader_ = leader;
  server->input_fd_ = input[1];
  server->reply_fd_ = reply[0];
  return server;
}

CommandServer::~CommandServer() {
  if (input_fd_ >= 0) close(input_fd_);  // the end of its input: it exits
  if (alive()) {
    const auto deadline = std::chrono::steady_clock::now() + kExitGrace;
    while (!Ended(leader_) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    End();
  }
  if (reply_fd_ >= 0) close(reply_fd_);
  output_.Finish();
}

int CommandServer::End() {
  kill(-leader_, SIGKILL);
  std::lock_guard lock(Live().mutex);
  const int status = group_.Wait(leader_);  // reaps it, and kills what it left
  Live().leaders.erase(leader_);
  leader_ = -1;
  return status;
}

std::optional<std::string> CommandServer::ReadReply() {
  std::string line;
  while (line.size() <= kMaxReplyBytes) {
    pollfd ready{reply_fd_, POLLIN, 0};
    const int polled = poll(&ready, 1, kReplyPollMs);
    if (polled < 0 && errno != EINTR) return std::nullopt;
    if (polled <= 0) {
      if (Ended(leader_)) return std::nullopt;
      continue;
    }
    char c = 0;
    const ssize_t n = read(reply_fd_, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // it closed descriptor 3: it ended
    if (c == '\n') return line;
    line.push_back(c);
  }
  return line;  // too long: not an exit code
}

bool CommandServer::Ready() {
  if (!alive()) return false;
  pollfd answer{reply_fd_, POLLIN, 0};
  const bool ended = Ended(leader_);
  if (!ended && poll(&answer, 1, 0) == 0) return true;
  spdlog::info("a served command {} between runs; it is ended and another started",
               ended ? "ended" : "answered more than it was asked");
  End();
  return false;
}

std::pair<int, std::string> CommandServer::Serve(const std::string& request) {
  if (!alive()) return {1, ""};
  output_.TakeKept();  // what it wrote between runs is no run's
  const pid_t group = leader_;
  AddRunningCommand(group);
  const bool sent = WriteLine(input_fd_, request + "\n");
  const std::optional<std::string> reply = sent ? ReadReply() : std::nullopt;
  int code = reply ? ReplyExitCode(*reply) : -1;
  pollfd more{reply_fd_, POLLIN, 0};
  const bool extra = code >= 0 && poll(&more, 1, 0) > 0 && (more.revents & POLLIN) != 0;
  std::string said;
  if (code < 0 || extra) {
    const int status = End();  // no answer, a wrong one, or more than one
    said = output_.TakeKept();
    if (reply) {
      said += (said.empty() ? "" : "\n") + std::string("ballast-worker: the command answered ") +
              (extra ? "more than one line" : "\"" + *reply + "\", not an exit code 0-255") +
              " on descriptor 3; it was ended";
    }
    code = !reply && status != 0 ? status : 1;
  } else {
    said = output_.TakeKept();
  }
  const bool stopped = RemoveRunningCommand(group);
  return {stopped ? kStopped : code, std::move(said)};
}

}  // namespace ballast::kernels
