// Starting another program (process/child_start.h): each step a ChildSpec
// asks for happens in the child, started by a fork or by a clone that
// shares memory until exec, and a child that cannot do one exits 127.
#include "process/child_start.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace ballast::process {
namespace {

// The exit code of `pid` as a shell reports it (128 + the signal when killed).
int WaitExit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// What a child started as `spec` (with `script` run by sh) wrote and how it
// exited; its output through a pipe.
struct Ran {
  int code = -1;
  std::string output;
};

class ChildStartTest : public ::testing::TestWithParam<bool> {
 protected:
  std::error_code error_;

  // Runs `sh -c script` as `spec` says, with its output read here.
  Ran Run(const std::string& script, ChildSpec spec = {}) const {
    std::vector<std::string> words = {"/bin/sh", "-c", script};
    const std::vector<char*> argv = PointersTo(words);
    int pipe_fds[2];
    EXPECT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
    spec.file = argv[0];
    spec.argv = argv.data();
    spec.envp = environ;
    spec.output = pipe_fds[1];
    spec.share_memory = GetParam();
    const pid_t pid = StartChild(spec);
    close(pipe_fds[1]);
    Ran ran;
    char buffer[4096];
    for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0;)
      ran.output.append(buffer, n);
    close(pipe_fds[0]);
    EXPECT_GT(pid, 0);
    if (pid > 0) ran.code = WaitExit(pid);
    return ran;
  }
};

// Fields 5 and 6 of /proc/self/stat as the shell sees them: its process
// group and session, and its own pid, "pid pgrp session".
constexpr const char* kIds =
    "read -r pid _ _ _ pgrp session _ < /proc/self/stat; "
    "echo \"$$ $pgrp $session\"";

TEST_P(ChildStartTest, BothOutputsGoWhereTheSpecSays) {
  const Ran ran = Run("echo out; echo err >&2; exit 3");
  EXPECT_EQ(ran.code, 3);
  EXPECT_EQ(ran.output, "out\nerr\n");
}

TEST_P(ChildStartTest, AProgramThatCannotBeExecutedExits127) {
  std::vector<std::string> words = {"/nonexistent/program"};
  const std::vector<char*> argv = PointersTo(words);
  ChildSpec spec;
  spec.file = argv[0];
  spec.argv = argv.data();
  spec.envp = environ;
  spec.share_memory = GetParam();
  const pid_t pid = StartChild(spec);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(WaitExit(pid), 127);
}

TEST_P(ChildStartTest, LeadsWhatItIsAskedTo) {
  // `sh -c` execs a lone simple command; a compound one keeps the shell.
  ChildSpec spec;
  spec.leads = ChildSpec::Leads::kNothing;
  std::istringstream plain(Run(kIds, spec).output);
  pid_t pid = 0, group = 0, session = 0;
  plain >> pid >> group >> session;
  EXPECT_EQ(group, getpgrp());
  EXPECT_EQ(session, getsid(0));

  spec.leads = ChildSpec::Leads::kProcessGroup;
  std::istringstream own_group(Run(kIds, spec).output);
  own_group >> pid >> group >> session;
  EXPECT_EQ(group, pid);
  EXPECT_EQ(session, getsid(0));

  spec.leads = ChildSpec::Leads::kSession;
  std::istringstream own_session(Run(kIds, spec).output);
  own_session >> pid >> group >> session;
  EXPECT_EQ(group, pid);
  EXPECT_EQ(session, pid);
}

TEST_P(ChildStartTest, ACgroupItCannotJoinKeepsItFromStarting) {
  const char* const files[] = {"/nonexistent/cgroup.procs", nullptr};
  ChildSpec spec;
  spec.cgroup_procs_files = files;
  const Ran ran = Run("echo started", spec);
  EXPECT_EQ(ran.code, 127);
  EXPECT_EQ(ran.output, "");
}

TEST_P(ChildStartTest, DefaultSignalsUndoesAnIgnoredSigpipe) {
  struct sigaction ignore {};
  struct sigaction before {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &before);
  // SigIgn's mask, bit SIGPIPE - 1 (13 - 1 = 12: 0x1000).
  const std::string script =
      "mask=$(sed -n 's/^SigIgn:\\t//p' /proc/self/status); "
      "[ $(( 0x$mask & 0x1000 )) -ne 0 ] && echo ignored || echo default";
  ChildSpec spec;
  EXPECT_EQ(Run(script, spec).output, "ignored\n");
  spec.default_signals = true;
  EXPECT_EQ(Run(script, spec).output, "default\n");
  sigaction(SIGPIPE, &before, nullptr);
}

TEST_P(ChildStartTest, CloseOtherFdsClosesWhatItWouldInherit) {
  const int null = open("/dev/null", O_RDONLY);
  const int inherited = dup2(null, 57);  // no O_CLOEXEC: inherited
  close(null);
  ASSERT_EQ(inherited, 57);
  const std::string script = "[ -e /proc/self/fd/57 ] && echo open || echo closed";
  ChildSpec spec;
  EXPECT_EQ(Run(script, spec).output, "open\n");
  spec.close_other_fds = true;
  EXPECT_EQ(Run(script, spec).output, "closed\n");
  close(inherited);
}

// A served command's pipes (exec.serve): its stdin is `input`, `reply` its
// descriptor 3, whatever numbers they had here, and close_other_fds spares 3.
TEST_P(ChildStartTest, InputIsItsStdinAndReplyItsDescriptor3) {
  int input[2];
  int reply[2];
  ASSERT_EQ(pipe2(input, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(reply, O_CLOEXEC), 0);
  ASSERT_EQ(write(input[1], "line\n", 5), 5);
  close(input[1]);
  ChildSpec spec;
  spec.input = input[0];
  spec.reply = reply[1];
  spec.close_other_fds = true;
  const Ran ran = Run("read -r got; echo \"$got\" >&3; echo done", spec);
  close(input[0]);
  close(reply[1]);
  char buffer[16] = {};
  const ssize_t n = read(reply[0], buffer, sizeof(buffer) - 1);
  close(reply[0]);
  EXPECT_EQ(ran.output, "done\n");
  EXPECT_EQ(n, 5);
  EXPECT_STREQ(buffer, "line\n");
}

TEST_P(ChildStartTest, ItDiesWithTheThreadThatStartedIt) {
  std::vector<std::string> words = {"/bin/sleep", "30"};
  const std::vector<char*> argv = PointersTo(words);
  ChildSpec spec;
  spec.file = argv[0];
  spec.argv = argv.data();
  spec.envp = environ;
  spec.parent_death_signal = SIGKILL;
  spec.share_memory = GetParam();
  pid_t pid = -1;
  std::thread([&] {
    pid = StartChild(spec);
    // A forked child asks for the signal after it starts: the thread stays
    // until the child has exec'd (and so asked), as a starter that lives on
    // would. A clone's starter waits for the exec anyway.
    const std::string exe = "/proc/" + std::to_string(pid) + "/exe";
    for (int i = 0; i < 5000 && std::filesystem::read_symlink(exe, error_).filename() != "sleep";
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }).join();
  ASSERT_GT(pid, 0);
  EXPECT_EQ(WaitExit(pid), 128 + SIGKILL);
}

INSTANTIATE_TEST_SUITE_P(ForkAndClone, ChildStartTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Clone" : "Fork"; });

TEST(ResolveCommandTest, FindsAProgramInPathAndLeavesAPathAlone) {
  const std::string sh = ResolveCommand("sh");
  EXPECT_TRUE(sh.ends_with("/sh")) << sh;
  EXPECT_EQ(access(sh.c_str(), X_OK), 0);
  EXPECT_EQ(ResolveCommand("ballast-no-such-command"), "");
  EXPECT_EQ(ResolveCommand("./relative/tool"), "./relative/tool");
}

}  // namespace
}  // namespace ballast::process
