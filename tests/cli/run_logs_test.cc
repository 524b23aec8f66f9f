// The log folders `ballast run` makes for itself, and the pruning of old
// ones at a run's start (cli/run/run_logs.h): the decision over names, times and
// owners, then the adapter on a scratch directory.
#include "cli/run/run_logs.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace ballast::cli::run_logs_test {
namespace {

namespace fs = std::filesystem;
using std::chrono::hours;
using Time = std::chrono::system_clock::time_point;

// A process id that is not in use: a child's, once it is reaped.
pid_t DeadPid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

TEST(LogDirNameTest, LogDirOwnerReadsOnlyNamesThatLogDirNameMade) {
  EXPECT_EQ(LogDirOwner(LogDirName(4242, "primes-1b50de")), 4242);
  EXPECT_EQ(LogDirOwner(LogDirName(1, "a")), 1);
  for (const char* other :
       {"ballast-primes-1b50de",    // an older version's: no owner in the name
        "ballast-run-4242-AbCdEf",  // a worker's run directory (RemoveStaleRunDirs)
        "ballast-logs-", "ballast-logs-12", "ballast-logs-12-", "ballast-logs-x-a",
        "ballast-logs-0-a", "ballast-logs--1-a", "ballast-logs-99999999999999999999-a",
        "ballast-cli-items-12"}) {
    EXPECT_EQ(LogDirOwner(other), 0) << other;
  }
}

TEST(LogDirsToRemoveTest, KeepsTheMostRecentFinishedOnesAndEveryRunningOne) {
  const Time now = std::chrono::system_clock::now();
  const std::set<pid_t> running = {7, 8};
  auto runs = [&](pid_t pid) { return running.contains(pid); };
  const std::vector<LogDirEntry> dirs = {
      {LogDirName(1, "job-aaaaaa"), now - hours(50)},
      {LogDirName(2, "job-bbbbbb"), now - hours(40)},
      {LogDirName(3, "job-cccccc"), now - hours(30)},
      {LogDirName(4, "job-dddddd"), now - hours(20)},
      {LogDirName(7, "job-eeeeee"), now - hours(100)},  // its run still runs: oldest, kept
      {LogDirName(8, "job-ffffff"), now},
      {"ballast-job-123456", now - hours(1000)},  // an older version's
      {"my-logs", now - hours(1000)},
  };
  EXPECT_EQ(LogDirsToRemove(dirs, runs, 2),
            (std::vector<std::string>{LogDirName(1, "job-aaaaaa"), LogDirName(2, "job-bbbbbb")}));
  EXPECT_EQ(LogDirsToRemove(dirs, runs, 10), std::vector<std::string>{});
  EXPECT_EQ(LogDirsToRemove(dirs, runs, 0).size(), 4u);  // never a running one, nor another name
}

TEST(LogDirsToRemoveTest, EqualTimesKeepTheGreaterName) {
  const Time then = std::chrono::system_clock::now() - hours(1);
  const std::vector<LogDirEntry> dirs = {{LogDirName(2, "b"), then}, {LogDirName(1, "a"), then}};
  EXPECT_EQ(LogDirsToRemove(
                dirs, [](pid_t) { return false; }, 1),
            std::vector<std::string>{LogDirName(1, "a")});
}

class PruneLogDirsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    parent_ =
        fs::temp_directory_path() / ("ballast-prune-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(parent_);
    fs::create_directories(parent_);
  }
  void TearDown() override { fs::remove_all(parent_); }

  // A folder as a finished run `owner` made it, `age` ago, with a log.
  fs::path Finished(pid_t owner, const std::string& job, hours age) {
    const fs::path dir = parent_ / LogDirName(owner, job);
    fs::create_directory(dir);
    std::ofstream(dir / kLogDirMarker) << "test\n";
    std::ofstream(dir / "node.log") << "a log\n";
    fs::last_write_time(dir, fs::file_time_type::clock::now() - age);
    return dir;
  }

  fs::path parent_;
};

TEST_F(PruneLogDirsTest, RemovesOnlyOldFoldersARunMadeItself) {
  const pid_t dead = DeadPid();
  std::vector<fs::path> finished;
  for (int i = 0; i < 5; ++i) {
    finished.push_back(Finished(dead, "job-" + std::to_string(i), hours(10 * (5 - i))));
  }
  // Our own (this process runs), the oldest of all.
  const fs::path live = Finished(getpid(), "job-live", hours(1000));
  // A folder named like a run's but without the marker: what --logs may name.
  const fs::path named = parent_ / LogDirName(dead, "job-named");
  fs::create_directory(named);
  fs::last_write_time(named, fs::file_time_type::clock::now() - hours(1000));
  // A link named like a run's, to a folder with the marker.
  const fs::path target = Finished(dead, "job-target", hours(0));
  const fs::path link = parent_ / LogDirName(dead, "job-link");
  fs::create_directory_symlink(target, link);
  // An older version's folder.
  const fs::path older = parent_ / "ballast-job-abcdef";
  fs::create_directory(older);

  // Six finished folders with the marker (five and the link's target): the
  // two newest stay, the four oldest go.
  const std::vector<std::string> removed = PruneLogDirs(parent_.string(), 2);
  EXPECT_EQ(std::set<std::string>(removed.begin(), removed.end()),
            (std::set<std::string>{finished[0].string(), finished[1].string(), finished[2].string(),
                                   finished[3].string()}));
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(fs::exists(finished[i])) << finished[i];
  EXPECT_TRUE(fs::exists(finished[4] / "node.log"));
  EXPECT_TRUE(fs::exists(target / "node.log"));
  EXPECT_TRUE(fs::exists(live / "node.log"));
  EXPECT_TRUE(fs::exists(named));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::exists(older));
  EXPECT_TRUE(PruneLogDirs(parent_.string(), 2).empty());  // nothing more to do
}

TEST_F(PruneLogDirsTest, MakeLogDirMakesAFolderThatALaterPruneRecognises) {
  auto made = MakeLogDir(parent_.string(), "job-abcdef");
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_EQ(fs::path(*made).filename().string(), LogDirName(getpid(), "job-abcdef"));
  EXPECT_TRUE(fs::is_regular_file(fs::path(*made) / kLogDirMarker));
  EXPECT_FALSE(MakeLogDir(parent_.string(), "job-abcdef").ok());  // it exists
  // Kept while its run (this process) runs, even with nothing kept.
  EXPECT_TRUE(PruneLogDirs(parent_.string(), 0).empty());
  EXPECT_TRUE(fs::exists(*made));
}

TEST_F(PruneLogDirsTest, AMissingParentRemovesNothing) {
  EXPECT_TRUE(PruneLogDirs((parent_ / "missing").string(), 0).empty());
}

}  // namespace
}  // namespace ballast::cli::run_logs_test
