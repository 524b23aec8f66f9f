// Tests of the exec kernel: the command runs with the range (or item) in its
// environment, a failure is retried and then reported with its exit code, and
// the merged result does not depend on how the items were split.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/worker/kernels/scratch_dir.h"
#include "tests/worker/kernels/split_helpers.h"
#include "worker/kernels/factories.h"
#include "worker/kernels/kernel.h"
#include "worker/kernels/output_tail.h"
#include "worker/kernels/run_budget.h"

namespace ballast::kernels {
namespace {

using workload::ExecFailure;
using workload::Result;
using workload::WorkloadKind;
using workload::WorkloadSpec;

class ExecKernelTest : public testing::ScratchDirTest {
 protected:
  WorkloadSpec Exec(const std::string& script, uint64_t items, bool per_item = false,
                    uint32_t retries = 2) const {
    WorkloadSpec spec;
    spec.kind = WorkloadKind::kExec;
    spec.exec.command = {"sh", "-c", script, "sh", dir_.string()};
    spec.exec.per_item = per_item;
    spec.exec.retries = retries;
    spec.items = items;
    return spec;
  }

  Result Run(const WorkloadSpec& spec, balance::Range items) const {
    auto kernel = MakeKernel(spec);
    EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
    auto result = (*kernel)->Compute(items);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : Result::Empty(WorkloadKind::kExec);
  }

  // Run, with this process's stderr (where the commands' output goes)
  // written to `name` in the scratch directory meanwhile.
  Result RunLoggingTo(const WorkloadSpec& spec, balance::Range items, const std::string& name) {
    const int saved = dup(STDERR_FILENO);
    const int file = open((dir_ / name).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(file, STDERR_FILENO);
    Result result = Run(spec, items);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(file);
    return result;
  }

  // The lines the commands appended to `name` in the scratch directory.
  std::multiset<std::string> Lines(const std::string& name) const {
    const std::vector<std::string> lines = LinesOf(name);
    return {lines.begin(), lines.end()};
  }
};

TEST_F(ExecKernelTest, ARangeRunsOnceWithItsBoundsInTheEnvironment) {
  const WorkloadSpec spec =
      Exec(R"(echo "$BALLAST_START $BALLAST_END ${BALLAST_ITEM-none}" >> "$1/runs")", 10);
  EXPECT_EQ(Run(spec, {2, 7}), Result::ExecSucceeded(5));
  EXPECT_EQ(Lines("runs"), (std::multiset<std::string>{"2 7 none"}));
}

TEST_F(ExecKernelTest, PerItemRunsOncePerItem) {
  const WorkloadSpec spec =
      Exec(R"(echo "$BALLAST_ITEM $BALLAST_START $BALLAST_END" >> "$1/runs")", 10, true);
  EXPECT_EQ(Run(spec, {3, 6}), Result::ExecSucceeded(3));
  EXPECT_EQ(Lines("runs"), (std::multiset<std::string>{"3 3 4", "4 4 5", "5 5 6"}));
}

TEST_F(ExecKernelTest, TheWorkersOwnBallastVariablesAreNotPassedOn) {
  setenv("BALLAST_ITEM", "99", 1);
  const WorkloadSpec spec = Exec(R"(echo "${BALLAST_ITEM-none}" >> "$1/runs")", 4);
  Run(spec, {0, 4});
  unsetenv("BALLAST_ITEM");
  EXPECT_EQ(Lines("runs"), (std::multiset<std::string>{"none"}));
}

TEST_F(ExecKernelTest, AFailureIsRetriedThenReportedWithItsExitCode) {
  const WorkloadSpec spec = Exec(R"(echo try >> "$1/tries"; exit 3)", 10, false, 2);
  EXPECT_EQ(Run(spec, {4, 5}), Result::ExecFailed({4, 5}, 3, 3));
  EXPECT_EQ(Lines("tries").size(), 3u);
}

// One bad item in a range fails the range's run; the range is not retried
// whole but halved at once until the item is found, so the others count as
// succeeded, as a Job's indexes, and the items before the bad one are not
// run again and again.
TEST_F(ExecKernelTest, ARangeThatFailsIsNarrowedToTheItemThatFailsAlone) {
  const WorkloadSpec spec = Exec(
      R"(echo "$BALLAST_START $BALLAST_END" >> "$1/runs"
         [ "$BALLAST_START" -le 700 ] && [ "$BALLAST_END" -gt 700 ] && exit 4; exit 0)",
      1000, false, 2);
  const Result result = Run(spec, {0, 1000});
  EXPECT_EQ(result.exec().succeeded, 999u);
  EXPECT_EQ(result.exec().failures, (std::vector<ExecFailure>{{{700, 701}, 4, 3, "", ""}}));
  // 1 run of the range, 2 runs a halving (10 of them), 3 of the item.
  EXPECT_EQ(Lines("runs").size(), 1u + 2 * 9 + 1 + 3);
  // Two bad items, far apart, are both found.
  const WorkloadSpec two = Exec(R"(for i in 3 998; do
         [ "$BALLAST_START" -le $i ] && [ "$BALLAST_END" -gt $i ] && exit 5; done; exit 0)",
                                1000, false, 0);
  EXPECT_EQ(Run(two, {0, 1000}).exec().failures,
            (std::vector<ExecFailure>{{{3, 4}, 5, 1, "", ""}, {{998, 999}, 5, 1, "", ""}}));
}

// A command that fails for every item is not run once per item: the
// narrowing stops after its runs, the rest reported failed whole.
TEST_F(ExecKernelTest, ACommandFailingForEveryItemStopsNarrowingAfterItsRuns) {
  const WorkloadSpec spec = Exec(R"(echo try >> "$1/tries"; exit 3)", 100000, false, 2);
  const Result result = Run(spec, {0, 100000});
  EXPECT_EQ(result.exec().succeeded, 0u);
  uint64_t failed = 0;
  for (const ExecFailure& failure : result.exec().failures) {
    EXPECT_EQ(failure.exit_code, 3);
    failed += failure.items.size();
  }
  EXPECT_EQ(failed, 100000u);
  EXPECT_LE(Lines("tries").size(), 1u + 128u);
  // A command that cannot start is not narrowed at all.
  WorkloadSpec missing = Exec("", 10, false, 1);
  missing.exec.command = {"ballast-no-such-command-here"};
  EXPECT_EQ(
      Run(missing, {0, 10}),
      Result::ExecFailed({0, 10}, 127, 1, "", "command not found: ballast-no-such-command-here"));
}

// Regression (issue 61): Narrow's 128 runs were a budget per step, so a
// command failing for every item still ran some 40 times a step of ten items
// (the step, its halvings, each item's three attempts), for every step of
// the job. The bound is for the whole job: once the command has failed 128
// runs on this worker and never succeeded, each step runs once.
TEST_F(ExecKernelTest, ACommandFailingForEveryItemIsBoundedForTheWholeJobNotPerStep) {
  const WorkloadSpec spec = Exec(R"(echo try >> "$1/tries"; exit 3)", 1000, false, 2);
  auto kernel = MakeKernel(spec);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  uint64_t failed = 0;
  for (uint64_t begin = 0; begin < 1000; begin += 10) {  // 100 steps
    auto result = (*kernel)->Compute({begin, begin + 10});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->exec().succeeded, 0u);
    for (const ExecFailure& failure : result->exec().failures) failed += failure.items.size();
  }
  EXPECT_EQ(failed, 1000u) << "every item is recorded failed";
  EXPECT_LE(Lines("tries").size(), RunBudget::kMaxFruitlessRuns + 100u);
}

// A command that works for most items keeps narrowing past that bound: each
// step's one bad item is found alone, however many steps there are.
TEST_F(ExecKernelTest, ACommandThatWorksForSomeItemsIsNarrowedInEveryStep) {
  const WorkloadSpec spec = Exec(R"(echo try >> "$1/tries"
         i=$BALLAST_START; while [ "$i" -lt "$BALLAST_END" ]; do
           [ $((i % 10)) -eq 3 ] && exit 4; i=$((i + 1)); done; exit 0)",
                                 600, false, 0);
  auto kernel = MakeKernel(spec);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  std::vector<ExecFailure> failures;
  for (uint64_t begin = 0; begin < 600; begin += 10) {  // 60 steps, one bad item each
    auto result = (*kernel)->Compute({begin, begin + 10});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->exec().succeeded, 9u) << begin;
    for (const ExecFailure& failure : result->exec().failures) failures.push_back(failure);
  }
  ASSERT_EQ(failures.size(), 60u);
  for (const ExecFailure& failure : failures) EXPECT_EQ(failure.items.size(), 1u);
  EXPECT_GT(Lines("tries").size(), RunBudget::kMaxFruitlessRuns) << "the bound was lifted";
}

TEST_F(ExecKernelTest, ASecondAttemptThatSucceedsCountsAsSuccess) {
  // Fails the first time (no marker yet), succeeds the second.
  const WorkloadSpec spec =
      Exec(R"(if [ -e "$1/marker" ]; then exit 0; fi; touch "$1/marker"; exit 1)", 5, false, 1);
  EXPECT_EQ(Run(spec, {0, 5}), Result::ExecSucceeded(5));
}

TEST_F(ExecKernelTest, PerItemFailuresAreReportedPerItemAndJoined) {
  // Items 2, 3 and 6 fail with exit code 10 + item % 2.
  const WorkloadSpec spec =
      Exec(R"(case $BALLAST_ITEM in 2|3|6) exit $((10 + BALLAST_ITEM % 2));; esac)", 8, true, 0);
  const Result result = Run(spec, {0, 8});
  EXPECT_EQ(result.exec().succeeded, 5u);
  EXPECT_EQ(result.exec().failures,
            (std::vector<ExecFailure>{
                {{2, 3}, 10, 1, "", ""}, {{3, 4}, 11, 1, "", ""}, {{6, 7}, 10, 1, "", ""}}));
  // The same items, split and threaded differently, give the same result.
  std::mt19937_64 random(testing::PrintedSeed("PerItemFailuresAreReportedPerItemAndJoined"));
  auto kernel = MakeKernel(spec);
  ASSERT_TRUE(kernel.ok());
  EXPECT_EQ(
      testing::ComputeAll(**kernel, WorkloadKind::kExec, testing::RandomSplit(8, 3, random), 2),
      result);
}

TEST_F(ExecKernelTest, ACommandThatCannotStartOrIsKilledIsReported) {
  WorkloadSpec missing = Exec("", 2, false, 1);
  missing.exec.command = {"ballast-no-such-command-here"};
  EXPECT_EQ(Run(missing, {0, 1}), Result::ExecFailed({0, 1}, 127, 2, "",
                                                     "command not found: "
                                                     "ballast-no-such-command-here"));
  const WorkloadSpec killed = Exec("kill -9 $$", 2, false, 0);
  EXPECT_EQ(Run(killed, {0, 1}), Result::ExecFailed({0, 1}, 128 + 9, 1));
}

TEST_F(ExecKernelTest, TheChildDoesNotInheritBlockedOrIgnoredSignals) {
  // A worker may block SIGTERM in its threads and ignore SIGPIPE; the command
  // must still start with nothing blocked or ignored. awk is run directly (a
  // shell would reset its own mask) and reads its masks from /proc.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &term, &previous);
  auto old_pipe = signal(SIGPIPE, SIG_IGN);
  WorkloadSpec spec = Exec("", 1, false, 0);
  // Bit 14 of SigBlk is SIGTERM (15), bit 12 of SigIgn SIGPIPE (13): both in
  // the fourth hex digit from the right.
  spec.exec.command = {"awk", R"(
      function digit(mask) { return index("0123456789abcdef", substr(mask, length(mask) - 3, 1)) - 1 }
      /^SigBlk:/ && int(digit($2) / 4) % 2 == 1 { bad = 1 }
      /^SigIgn:/ && digit($2) % 2 == 1 { bad = 1 }
      END { exit bad })",
                       "/proc/self/status"};
  const Result result = Run(spec, {0, 1});
  signal(SIGPIPE, old_pipe);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  EXPECT_EQ(result, Result::ExecSucceeded(1));
}

// --- items by value and results (docs/workloads.md) ---------------------------

WorkloadSpec Listed(WorkloadSpec spec, std::vector<std::string> values) {
  EXPECT_TRUE(workload::AttachItems(&spec, {std::move(values), {}}, "list").ok());
  return spec;
}

TEST_F(ExecKernelTest, ARangeReadsItsValuesFromTheItemsFile) {
  const WorkloadSpec spec = Listed(
      Exec(
          R"sh(while read -r v; do echo "$BALLAST_START:$v" >> "$1/runs"; done < "$BALLAST_ITEMS_FILE")sh",
          0),
      {"a.jpg", "b c.jpg", "d.jpg", "e.jpg"});
  EXPECT_EQ(Run(spec, {1, 3}), Result::ExecSucceeded(2));
  EXPECT_EQ(Lines("runs"), (std::multiset<std::string>{"1:b c.jpg", "1:d.jpg"}));
}

TEST_F(ExecKernelTest, PerItemSeesItsValueAndTheRunsFilesAreRemoved) {
  const WorkloadSpec spec = Listed(
      Exec(R"sh(echo "$BALLAST_ITEM=$BALLAST_VALUE $(cat "$BALLAST_ITEMS_FILE")" >> "$1/runs"; )sh"
           R"sh(echo "$BALLAST_ITEMS_FILE" >> "$1/files")sh",
           0, true),
      {"x", "y", "z"});
  EXPECT_EQ(Run(spec, {0, 3}), Result::ExecSucceeded(3));
  EXPECT_EQ(Lines("runs"), (std::multiset<std::string>{"0=x x", "1=y y", "2=z z"}));
  for (const std::string& file : Lines("files")) {
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(file).parent_path())) << file;
  }
}

TEST_F(ExecKernelTest, WithoutAListOrAResultNoFileIsNamed) {
  const WorkloadSpec spec = Exec(
      R"sh(echo "${BALLAST_ITEMS_FILE-none} ${BALLAST_RESULT_FILE-none} ${BALLAST_VALUE-none}" >> "$1/runs")sh",
      4, true);
  Run(spec, {0, 1});
  EXPECT_EQ(Lines("runs"), (std::multiset<std::string>{"none none none"}));
}

TEST_F(ExecKernelTest, AResultFileIsReadMergedAndKeptWhole) {
  WorkloadSpec spec = Exec(
      R"sh(echo "{\"n\": $((BALLAST_END - BALLAST_START)), \"first\": [$BALLAST_START]}" > "$BALLAST_RESULT_FILE")sh",
      10);
  spec.exec.result.merge = {{"n", workload::MergeRule::kSum},
                            {"first", workload::MergeRule::kList}};
  spec.exec.result.keep_dir = (dir_ / "kept").string();
  const Result result = Run(spec, {2, 7});
  EXPECT_EQ(result.exec().succeeded, 5u);
  EXPECT_EQ(result.exec().fields.at("n").sum, 5);
  ASSERT_EQ(result.exec().fields.at("first").kept.size(), 1u);
  EXPECT_EQ(result.exec().fields.at("first").kept[0].json, "2");
  std::ifstream kept(dir_ / "kept" / "2-7.json");
  std::stringstream text;
  text << kept.rdbuf();
  EXPECT_EQ(text.str(), "{\"n\": 5, \"first\": [2]}\n");
}

TEST_F(ExecKernelTest, ARunWithoutAValidResultFailsWithTheReasonAndIsNotRetried) {
  struct Case {
    std::string script;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"true", "exited 0 but wrote no result"},
      {R"sh(echo '{"m": 1}' > "$BALLAST_RESULT_FILE")sh", "result file: m: a field the job's"},
      {R"sh(echo '{"n": "1"}' > "$BALLAST_RESULT_FILE")sh", "result file: n: expected an integer"},
      {R"sh(head -c 70000 /dev/zero | tr '\0' ' ' > "$BALLAST_RESULT_FILE")sh",
       "more than the job's result.maxBytes 65536"},
  };
  for (const Case& c : cases) {
    WorkloadSpec spec = Exec(std::string(R"sh(echo try >> "$1/tries"; )sh") + c.script, 10);
    spec.exec.result.merge = {{"n", workload::MergeRule::kSum}};
    std::filesystem::remove(dir_ / "tries");
    const Result result = Run(spec, {0, 4});
    ASSERT_EQ(result.exec().failures.size(), 1u) << c.script;
    const ExecFailure& failure = result.exec().failures[0];
    EXPECT_EQ(failure.items, (balance::Range{0, 4}));
    EXPECT_EQ(failure.exit_code, 0);
    EXPECT_EQ(failure.attempts, 1u);
    EXPECT_NE(failure.error.find(c.expected), std::string::npos) << failure.error;
    EXPECT_EQ(Lines("tries").size(), 1u) << c.script;
  }
}

TEST_F(ExecKernelTest, AResultLeftByAFailedAttemptIsNotTaken) {
  // The first attempt writes a result and fails; the second exits 0 without one.
  WorkloadSpec spec = Exec(
      R"sh(if [ -e "$1/tried" ]; then exit 0; fi; touch "$1/tried"; echo '{"n": 9}' > "$BALLAST_RESULT_FILE"; exit 1)sh",
      10);
  spec.exec.result.merge = {{"n", workload::MergeRule::kSum}};
  const Result result = Run(spec, {0, 1});
  ASSERT_EQ(result.exec().failures.size(), 1u);
  EXPECT_NE(result.exec().failures[0].error.find("wrote no result"), std::string::npos);
  EXPECT_EQ(result.exec().failures[0].attempts, 2u);
}

// What a failed command wrote is kept in its record (its end, from a line's
// start), and still reaches the worker's stderr unchanged.
TEST_F(ExecKernelTest, AFailedRunsOutputIsKeptInItsRecordAndPassedOn) {
  const WorkloadSpec spec = Exec(
      R"(echo "reading photo-$BALLAST_ITEM.jpg"; echo "convert: corrupt JPEG data" >&2; exit 3)",
      10, true, 0);
  const Result result = RunLoggingTo(spec, {4, 5}, "stderr");
  ASSERT_EQ(result.exec().failures.size(), 1u);
  EXPECT_EQ(result.exec().failures[0].output, "reading photo-4.jpg\nconvert: corrupt JPEG data");
  EXPECT_EQ(workload::LastOutputLine(result.exec().failures[0]), "convert: corrupt JPEG data");
  EXPECT_EQ(Lines("stderr"),
            (std::multiset<std::string>{"reading photo-4.jpg", "convert: corrupt JPEG data"}));
  // A long output keeps its end, from a line's start, within the bound.
  const WorkloadSpec chatty = Exec(
      R"(i=0; while [ $i -lt 500 ]; do echo "line $i"; i=$((i+1)); done; exit 2)", 10, true, 0);
  const std::string kept = Run(chatty, {0, 1}).exec().failures.at(0).output;
  EXPECT_LE(kept.size(), workload::kMaxFailureOutputBytes);
  EXPECT_EQ(kept.substr(0, 5), "line ") << kept;
  EXPECT_EQ(kept.substr(kept.size() - 8), "line 499") << kept;
}

// A command's output reaches the worker's log up to 4 MiB a run; the rest is
// counted and said in one line, not logged (issue 46: 300 MB of output made a
// 300 MB log). Its end is still kept with a failed item.
TEST_F(ExecKernelTest, ARunLogsAtMostItsShareOfOutputAndSaysWhatItDropped) {
  const WorkloadSpec spec =
      Exec(R"(head -c 6291456 /dev/zero | tr '\0' 'x'; echo; echo "the end"; exit 1)", 10, true, 0);
  const Result result = RunLoggingTo(spec, {0, 1}, "stderr");
  const std::filesystem::path err = dir_ / "stderr";
  const auto logged = std::filesystem::file_size(err);
  EXPECT_LE(logged, (size_t{4} << 20) + 300) << "4 MiB and the line saying what was dropped";
  EXPECT_GE(logged, size_t{4} << 20);
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("ballast-worker: the command wrote 2097161 bytes more than the 4 MiB"),
            std::string::npos)
      << text.str().substr(text.str().size() - 300);
  ASSERT_EQ(result.exec().failures.size(), 1u);
  EXPECT_EQ(workload::LastOutputLine(result.exec().failures[0]), "the end");
}

// Regression (issue 61): the 4 MiB a run may log was per run, so 1,000
// items of a chatty command wrote 4 GB of log. The job's runs on a worker
// share LogBudget::kMaxBytes (64 MiB): 640 items of 128 KiB each (80 MiB)
// log 64 MiB and one line saying the rest was not logged; every item is
// still computed.
TEST_F(ExecKernelTest, AChattyCommandLogsAtMostTheWorkersBudgetForTheWholeJob) {
  constexpr uint64_t kItems = 640;
  const WorkloadSpec spec = Exec(R"(head -c 131072 /dev/zero | tr '\0' 'y'; echo)", kItems, true);
  const Result result = RunLoggingTo(spec, {0, kItems}, "stderr");
  EXPECT_TRUE(result.exec().failures.empty());
  EXPECT_EQ(result.exec().succeeded, kItems);
  const auto logged = std::filesystem::file_size(dir_ / "stderr");
  EXPECT_GE(logged, LogBudget::kMaxBytes);
  EXPECT_LE(logged, LogBudget::kMaxBytes + 300) << "64 MiB and the line saying the rest was cut";
  std::ifstream in(dir_ / "stderr");
  std::stringstream text;
  text << in.rdbuf();
  const std::string note =
      "ballast-worker: the job's commands have logged 64 MiB on this worker, the most they may; "
      "from here their output is not logged (a failed item still keeps its last lines)";
  const size_t said = text.str().find(note);
  EXPECT_NE(said, std::string::npos) << text.str().substr(text.str().size() - 300);
  EXPECT_EQ(text.str().find(note, said + 1), std::string::npos) << "said once";
}

// The budget's arithmetic: what is left, then nothing; the spent budget is
// said once, by the first run that dropped output for it.
TEST(LogBudgetTest, GrantsWhatIsLeftThenNothingAndIsSaidOnce) {
  LogBudget budget(100);
  EXPECT_EQ(budget.Take(60), 60u);
  EXPECT_EQ(budget.Take(60), 40u);
  EXPECT_EQ(budget.Take(1), 0u);
  EXPECT_FALSE(budget.NoteDropped(0));
  EXPECT_TRUE(budget.NoteDropped(20));
  EXPECT_FALSE(budget.NoteDropped(20));
}

// A worker killed before it removed its runs' directories leaves them in
// TMPDIR; the next worker removes those of workers that are gone, and no one
// else's (issue 46).
TEST_F(ExecKernelTest, RunDirectoriesOfWorkersThatAreGoneAreRemoved) {
  const std::filesystem::path tmp = dir_ / "tmp";
  std::filesystem::create_directories(tmp);
  // A pid no process has: a child that has exited and been reaped.
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  for (const std::string& name : {"ballast-run-" + std::to_string(gone) + "-abc123",
                                  "ballast-run-" + std::to_string(getpid()) + "-def456",
                                  std::string("ballast-run-x-1"), std::string("other")}) {
    std::filesystem::create_directories(tmp / name);
    std::ofstream(tmp / name / "items") << "a\n";
  }
  EXPECT_EQ(RemoveStaleRunDirs(tmp.string()), 1u);
  EXPECT_FALSE(std::filesystem::exists(tmp / ("ballast-run-" + std::to_string(gone) + "-abc123")));
  EXPECT_TRUE(
      std::filesystem::exists(tmp / ("ballast-run-" + std::to_string(getpid()) + "-def456")))
      << "a live worker's";
  EXPECT_TRUE(std::filesystem::exists(tmp / "ballast-run-x-1"));
  EXPECT_TRUE(std::filesystem::exists(tmp / "other"));
}

// Regression (issue 61): a worker removed every TMPDIR/ballast-run-<gone pid>-*
// tree, another user's too, and whatever a link of that name led to. Only
// a directory of this user's own is removed; a link is never followed.
TEST_F(ExecKernelTest, RunDirectoriesOfOtherUsersAndLinksAreNeverRemoved) {
  const std::filesystem::path tmp = dir_ / "tmp";
  std::filesystem::create_directories(tmp / "precious");
  std::ofstream(tmp / "precious" / "data") << "keep\n";
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  const std::string stale = "ballast-run-" + std::to_string(gone);
  std::filesystem::create_directory_symlink(tmp / "precious", tmp / (stale + "-link"));
  std::filesystem::create_directories(tmp / (stale + "-theirs"));
  std::ofstream(tmp / (stale + "-theirs") / "items") << "a\n";
  const bool root = geteuid() == 0;
  if (root) {
    ASSERT_EQ(chown((tmp / (stale + "-theirs")).c_str(), 65534, 65534), 0);
  }
  std::filesystem::create_directories(tmp / (stale + "-mine"));
  EXPECT_EQ(RemoveStaleRunDirs(tmp.string()), root ? 1u : 2u);
  EXPECT_FALSE(std::filesystem::exists(tmp / (stale + "-mine")));
  EXPECT_TRUE(std::filesystem::is_symlink(tmp / (stale + "-link"))) << "the link stays";
  EXPECT_TRUE(std::filesystem::exists(tmp / "precious" / "data")) << "and what it leads to";
  if (root) {
    EXPECT_TRUE(std::filesystem::exists(tmp / (stale + "-theirs") / "items"));
  }
}

// A process the command leaves running that escapes its group (a session of
// its own) with the output's pipe open does not hold the run: the record is
// taken soon after the command exits.
TEST_F(ExecKernelTest, AProcessThatEscapesWithTheOutputDoesNotHoldTheRun) {
  const WorkloadSpec spec = Exec(R"(setsid sleep 3 & echo started; exit 1)", 10, true, 0);
  const auto start = std::chrono::steady_clock::now();
  const Result result = Run(spec, {0, 1});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2500));
  ASSERT_EQ(result.exec().failures.size(), 1u);
  EXPECT_EQ(result.exec().failures[0].output, "started");
}

// A run that names its failed items in its result file settles the others:
// only the named item runs again, alone, for the attempts the job's retries
// leave it; the range is not halved.
TEST_F(ExecKernelTest, ItemsARunNamesFailedCostOnlyTheirOwnAttempts) {
  WorkloadSpec spec = Exec(R"sh(echo "$BALLAST_START $BALLAST_END" >> "$1/runs"
      n=0; bad=""; i=$BALLAST_START
      while [ $i -lt $BALLAST_END ]; do
        if [ $i = 7 ]; then bad='{"item": 7, "error": "photo-7.jpg: corrupt"}'; else n=$((n+1)); fi
        i=$((i+1))
      done
      echo "{\"n\": $n, \"failedItems\": [$bad]}" > "$BALLAST_RESULT_FILE"
      [ -z "$bad" ])sh",
                           10, false, 2);
  spec.exec.result.merge = {{"n", workload::MergeRule::kSum}};
  const Result result = Run(spec, {0, 10});
  EXPECT_EQ(result.exec().succeeded, 9u) << result.ToJson().dump();
  EXPECT_EQ(result.exec().fields.at("n").sum, 9);
  ASSERT_EQ(result.exec().failures.size(), 1u);
  const ExecFailure& failure = result.exec().failures[0];
  EXPECT_EQ(failure.items, (balance::Range{7, 8}));
  EXPECT_EQ(failure.attempts, 3u) << "the range's run and two of its own";
  EXPECT_EQ(failure.error, "photo-7.jpg: corrupt");
  EXPECT_EQ(Lines("runs"), (std::multiset<std::string>{"0 10", "7 8", "7 8"}));
  // An item that succeeds when run again counts as succeeded.
  WorkloadSpec flaky = Exec(R"sh(n=$((BALLAST_END - BALLAST_START))
      if [ "$BALLAST_END" -gt 3 ] && [ "$BALLAST_START" -le 3 ] && [ ! -e "$1/once" ]; then
        touch "$1/once"; echo "{\"n\": $((n-1)), \"failedItems\": [3]}" > "$BALLAST_RESULT_FILE"
        exit 1
      fi
      echo "{\"n\": $n}" > "$BALLAST_RESULT_FILE")sh",
                            10, false, 1);
  flaky.exec.result.merge = {{"n", workload::MergeRule::kSum}};
  const Result healed = Run(flaky, {0, 10});
  EXPECT_EQ(healed.exec().succeeded, 10u);
  EXPECT_TRUE(healed.exec().failures.empty());
  EXPECT_EQ(healed.exec().fields.at("n").sum, 10);
}

// A command that leaves something other than a regular file where its result
// goes (a FIFO, which would block the worker's open forever while its
// heartbeat kept the lease; a link, which would be followed) fails its run at
// once, saying what it found. Regression guard for issue 46's mkfifo hang.
TEST_F(ExecKernelTest, AResultFileThatIsNotARegularFileFailsTheRunAtOnce) {
  struct Case {
    std::string script;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {R"sh(rm -f "$BALLAST_RESULT_FILE"; mkfifo "$BALLAST_RESULT_FILE")sh",
       "the file BALLAST_RESULT_FILE names is a FIFO, not a regular file"},
      {R"sh(echo '{"n": 1}' > "$1/elsewhere"; ln -s "$1/elsewhere" "$BALLAST_RESULT_FILE")sh",
       "the file BALLAST_RESULT_FILE names is a symbolic link, not a file"},
      {R"sh(mkdir "$BALLAST_RESULT_FILE")sh",
       "the file BALLAST_RESULT_FILE names is a directory, not a regular file"},
  };
  for (const Case& c : cases) {
    WorkloadSpec spec = Exec(c.script, 10, true, 2);
    spec.exec.result.merge = {{"n", workload::MergeRule::kSum}};
    const auto start = std::chrono::steady_clock::now();
    const Result result = Run(spec, {3, 4});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << c.script;
    ASSERT_EQ(result.exec().failures.size(), 1u) << c.script;
    EXPECT_EQ(result.exec().failures[0].error, c.expected) << c.script;
    EXPECT_EQ(result.exec().failures[0].attempts, 1u) << "its report is what is wrong";
  }
  // A FIFO planted where keepDir's copy is written first is refused too.
  WorkloadSpec keep = Exec(R"sh(echo '{"n": 1}' > "$BALLAST_RESULT_FILE")sh", 10, true, 0);
  keep.exec.result.merge = {{"n", workload::MergeRule::kSum}};
  keep.exec.result.keep_dir = (dir_ / "kept").string();
  std::filesystem::create_directories(dir_ / "kept");
  const std::string part = (dir_ / "kept" / ("5-6.json.part-" + std::to_string(getpid()))).string();
  ASSERT_EQ(mkfifo(part.c_str(), 0600), 0);
  const Result kept = Run(keep, {5, 6});
  ASSERT_EQ(kept.exec().failures.size(), 1u);
  EXPECT_NE(kept.exec().failures[0].error.find("cannot write"), std::string::npos)
      << kept.exec().failures[0].error;
}

}  // namespace
}  // namespace ballast::kernels
