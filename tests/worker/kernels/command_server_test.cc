// Tests of served exec commands (exec.serve, command_server.h): one process
// per worker thread does the runs, each given as a line of JSON on its stdin
// and answered with an exit code on descriptor 3; retries, halving and result
// files work as for a command run once per range; a command that ends or
// answers wrongly fails that run and is started again; its CPU counts while
// it lives.
#include "worker/kernels/command_server.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/worker/kernels/scratch_dir.h"
#include "tests/worker/kernels/split_helpers.h"
#include "worker/kernels/factories.h"
#include "worker/kernels/kernel.h"

namespace ballast::kernels {
namespace {

using workload::ExecFailure;
using workload::Result;
using workload::WorkloadKind;
using workload::WorkloadSpec;

// A served command's loop: it records its start (and that it was given no
// run's variables), then for each line sets $s and $e to the run's bounds
// and $f to its result file, and runs `body`, which answers on descriptor 3.
std::string Serving(const std::string& body) {
  return R"(v() { x=${line#*"\"$1\":\""}; case $x in "$line") ;; *) printf %s "${x%%\"*}";; esac; }
echo "$$ ${BALLAST_START-none} $BALLAST_REPLY_FD" >> "$1/starts"
while IFS= read -r line; do
  s=$(v BALLAST_START); e=$(v BALLAST_END); f=$(v BALLAST_RESULT_FILE)
  echo "$$ $s $e" >> "$1/runs"
)" + body +
         "\ndone\n";
}

class ServedExecTest : public testing::ScratchDirTest {
 protected:
  WorkloadSpec Served(const std::string& body, uint64_t items, uint32_t retries = 0) const {
    WorkloadSpec spec;
    spec.kind = WorkloadKind::kExec;
    spec.exec.command = {"sh", "-c", Serving(body), "sh", dir_.string()};
    spec.exec.serve = true;
    spec.exec.retries = retries;
    spec.items = items;
    return spec;
  }

  std::vector<std::string> Lines(const std::string& name) const { return LinesOf(name); }

  // Whether `name` appeared in the scratch directory within five seconds.
  bool WaitFor(const std::string& name) const {
    for (int i = 0; i < 500 && !std::filesystem::exists(dir_ / name); ++i) usleep(10 * 1000);
    return std::filesystem::exists(dir_ / name);
  }
};

TEST_F(ServedExecTest, EveryRunGoesToOneProcessAsALineOfItsVariables) {
  auto kernel = MakeKernel(Served("echo 0 >&3", 10));
  ASSERT_TRUE(kernel.ok());
  EXPECT_EQ(*(*kernel)->Compute({0, 3}), Result::ExecSucceeded(3));
  EXPECT_EQ(*(*kernel)->Compute({3, 5}), Result::ExecSucceeded(2));
  EXPECT_EQ(*(*kernel)->Compute({7, 10}), Result::ExecSucceeded(3));
  const std::vector<std::string> starts = Lines("starts");
  ASSERT_EQ(starts.size(), 1u);
  const std::string pid = starts[0].substr(0, starts[0].find(' '));
  EXPECT_EQ(starts[0], pid + " none 3") << "no run's variable in its environment; fd 3 named";
  EXPECT_EQ(Lines("runs"), (std::vector<std::string>{pid + " 0 3", pid + " 3 5", pid + " 7 10"}));
}

TEST_F(ServedExecTest, ACommandThatEndsInARunFailsItWithItsExitAndIsStartedAgain) {
  auto kernel = MakeKernel(Served(R"([ "$s" = 4 ] && exit 5; echo 0 >&3)", 10, /*retries=*/1));
  ASSERT_TRUE(kernel.ok());
  EXPECT_EQ(*(*kernel)->Compute({3, 4}), Result::ExecSucceeded(1));
  EXPECT_EQ(*(*kernel)->Compute({4, 5}), Result::ExecFailed({4, 5}, 5, 2));
  EXPECT_EQ(*(*kernel)->Compute({5, 6}), Result::ExecSucceeded(1));
  // One for [3, 4), one for each attempt at [4, 5), and the one that did [5, 6).
  EXPECT_EQ(Lines("starts").size(), 3u);
}

TEST_F(ServedExecTest, AnAnswerThatIsNotAnExitCodeFailsTheRunAndSaysWhatCame) {
  auto kernel =
      MakeKernel(Served(R"(echo "working on $s"; [ "$s" = 1 ] && echo done >&3; echo 0 >&3)", 4));
  ASSERT_TRUE(kernel.ok());
  const Result failed = *(*kernel)->Compute({1, 2});
  ASSERT_EQ(failed.exec().failures.size(), 1u);
  EXPECT_EQ(failed.exec().failures[0].items, (balance::Range{1, 2}));
  EXPECT_EQ(failed.exec().failures[0].exit_code, 1);
  EXPECT_EQ(failed.exec().failures[0].output,
            "working on 1\nballast-worker: the command answered \"done\", not an exit code 0-255 "
            "on descriptor 3; it was ended");
  EXPECT_EQ(*(*kernel)->Compute({2, 3}), Result::ExecSucceeded(1)) << "a new one serves";
  EXPECT_EQ(Lines("starts").size(), 2u);
  // Two answers to one run at once: the run is not taken, the command is ended.
  auto twice = MakeKernel(Served(R"(printf '0\n0\n' >&3)", 4));
  ASSERT_TRUE(twice.ok());
  const Result doubled = *(*twice)->Compute({0, 1});
  ASSERT_EQ(doubled.exec().failures.size(), 1u);
  EXPECT_NE(doubled.exec().failures[0].output.find("more than one line"), std::string::npos);
}

// An answer no run asked for (late, past the run's own) or an exit between
// runs puts the command out of step: it is ended and another does the next
// run, which is not taken for answered.
TEST_F(ServedExecTest, ACommandOutOfStepBetweenRunsIsReplacedBeforeTheNext) {
  auto kernel = MakeKernel(Served(R"(echo 0 >&3
[ "$s" = 0 ] && { sleep 0.1; echo 0 >&3; echo "$$" > "$1/late"; }
[ "$s" = 2 ] && { echo "$$" > "$1/exits"; exit 0; })",
                                  6));
  ASSERT_TRUE(kernel.ok());
  EXPECT_EQ(*(*kernel)->Compute({0, 1}), Result::ExecSucceeded(1));
  ASSERT_TRUE(WaitFor("late"));  // its second answer was written
  EXPECT_EQ(*(*kernel)->Compute({1, 2}), Result::ExecSucceeded(1));
  EXPECT_EQ(*(*kernel)->Compute({2, 3}), Result::ExecSucceeded(1));
  ASSERT_TRUE(WaitFor("exits"));
  siginfo_t ended{};  // it is this process's child: wait for its end, leave it unreaped
  waitid(P_PID, static_cast<id_t>(std::stoi(Lines("exits").at(0))), &ended, WEXITED | WNOWAIT);
  EXPECT_EQ(*(*kernel)->Compute({3, 4}), Result::ExecSucceeded(1));
  EXPECT_EQ(Lines("starts").size(), 3u);
  EXPECT_EQ(Lines("runs").size(), 4u) << "each run done once";
}

TEST_F(ServedExecTest, ARangeThatFailsIsNarrowedAndTheCommandServesOn) {
  auto kernel = MakeKernel(Served(
      R"(if [ "$s" -le 700 ] && [ "$e" -gt 700 ]; then echo 4 >&3; else echo 0 >&3; fi)", 1000,
      /*retries=*/2));
  ASSERT_TRUE(kernel.ok());
  const Result result = *(*kernel)->Compute({0, 1000});
  EXPECT_EQ(result.exec().succeeded, 999u);
  EXPECT_EQ(result.exec().failures, (std::vector<ExecFailure>{{{700, 701}, 4, 3, "", ""}}));
  EXPECT_EQ(Lines("runs").size(), 1u + 2 * 9 + 1 + 3);
  EXPECT_EQ(Lines("starts").size(), 1u);
}

TEST_F(ServedExecTest, AResultFileIsHandedBackAndSplitsDoNotChangeTheResult) {
  WorkloadSpec spec =
      Served(R"(echo "{\"n\": $((e - s)), \"sum\": $(( (s + e - 1) * (e - s) / 2 ))}" > "$f"
echo 0 >&3)",
             200);
  spec.exec.result.merge = {{"n", workload::MergeRule::kSum}, {"sum", workload::MergeRule::kSum}};
  auto kernel = MakeKernel(spec);
  ASSERT_TRUE(kernel.ok());
  std::mt19937_64 random(7);
  // Two threads at once: each takes an idle command or starts its own.
  const Result result =
      testing::ComputeAll(**kernel, WorkloadKind::kExec, testing::RandomSplit(200, 17, random), 2);
  EXPECT_EQ(result.exec().succeeded, 200u);
  EXPECT_EQ(result.exec().fields.at("n").sum, 200);
  EXPECT_EQ(result.exec().fields.at("sum").sum, 199 * 200 / 2);
  EXPECT_GE(Lines("starts").size(), 1u);
  EXPECT_LE(Lines("starts").size(), 2u) << "one command per thread";
}

// The worker's reports carry its commands' CPU: a served command's counts
// while it lives, before it is reaped.
TEST_F(ServedExecTest, ItsCpuCountsWhileItLives) {
  auto kernel =
      MakeKernel(Served(R"(i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo 0 >&3)", 4));
  ASSERT_TRUE(kernel.ok());
  const double before = ChildrenCpuSeconds();
  EXPECT_EQ(*(*kernel)->Compute({0, 1}), Result::ExecSucceeded(1));
  const double spent = ChildrenCpuSeconds() - before;
  EXPECT_GT(spent, 0.05) << "its loop's CPU, its process still alive";
  kernel->reset();  // the command ends and is reaped: its CPU is not lost nor counted twice
  const double after = ChildrenCpuSeconds() - before;
  EXPECT_GE(after, spent - 0.02);
  EXPECT_LT(after, 2 * spent + 0.05);
}

TEST(ReplyExitCodeTest, TakesOneExitCodeAndNothingElse) {
  for (const auto& [line, code] :
       std::vector<std::pair<std::string, int>>{{"0", 0},
                                                {"1", 1},
                                                {"255", 255},
                                                {" 3 ", 3},
                                                {"42\r", 42},
                                                {"007", 7},
                                                {"", -1},
                                                {" ", -1},
                                                {"256", -1},
                                                {"-1", -1},
                                                {"1000", -1},
                                                {"0x1", -1},
                                                {"ok", -1},
                                                {"1 2", -1},
                                                {std::string("1\0", 2), -1},
                                                {"+1", -1}}) {
    EXPECT_EQ(ReplyExitCode(line), code) << "\"" << line << "\"";
  }
  // Whatever bytes come, the answer is an exit code or -1, and it is one
  // exactly when the line is digits (with spaces and a CR around) of 0-255.
  std::mt19937_64 random(5);
  for (int i = 0; i < 20000; ++i) {
    std::string line(random() % 6, ' ');
    for (char& c : line) c = static_cast<char>(i % 2 ? "0123456789 \r"[random() % 12] : random());
    const int code = ReplyExitCode(line);
    std::string bare = line;
    while (!bare.empty() && (bare.back() == ' ' || bare.back() == '\r')) bare.pop_back();
    bare.erase(0, bare.find_first_not_of(' ') == std::string::npos ? bare.size()
                                                                   : bare.find_first_not_of(' '));
    const bool digits = !bare.empty() && bare.size() <= 3 &&
                        bare.find_first_not_of("0123456789") == std::string::npos;
    EXPECT_EQ(code, digits && std::stoi(bare) <= 255 ? std::stoi(bare) : -1)
        << "\"" << line << "\"";
  }
}

TEST_F(ServedExecTest, ACommandThatCannotStartFailsItsRunsWith127) {
  WorkloadSpec spec = Served("echo 0 >&3", 4);
  spec.exec.command = {"ballast-no-such-command"};
  auto kernel = MakeKernel(spec);
  ASSERT_TRUE(kernel.ok());
  const Result result = *(*kernel)->Compute({0, 2});
  ASSERT_EQ(result.exec().failures.size(), 1u);
  EXPECT_EQ(result.exec().failures[0].exit_code, 127);
}

}  // namespace
}  // namespace ballast::kernels
