// Tests of a local run's worker command line, environment and cgroup files
// (cli/run/worker_launch.h), and of starting a worker process: its log.
#include "cli/run/worker_launch.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ballast::cli {
namespace {

WorkerLaunch Plain() {
  WorkerLaunch launch;
  launch.binary = "/bin/ballast-worker";
  launch.coordinator_url = "http://127.0.0.1:4000";
  launch.job_id = "job-ab12cd";
  launch.node = "pi3b";
  launch.job_name = "job";
  launch.metric_namespace = "local";
  return launch;
}

TEST(WorkerLaunchTest, TheCommandLineNamesTheJobAndTheNode) {
  EXPECT_EQ(
      WorkerArgs(Plain()),
      (std::vector<std::string>{"/bin/ballast-worker", "--coordinator", "http://127.0.0.1:4000",
                                "--job", "job-ab12cd", "--name", "pi3b", "--job-name", "job",
                                "--namespace", "local", "--threads", "1"}));
}

TEST(WorkerLaunchTest, OptionalFlagsComeInTheirOrderWhenSet) {
  WorkerLaunch launch = Plain();
  launch.metrics_listen = "127.0.0.1:9101";
  launch.threads = 2;
  launch.duty_speed = 0.1;
  launch.exec_cgroup = "/sys/fs/cgroup/run/pi3b";
  launch.verbose = true;
  const std::vector<std::string> args = WorkerArgs(launch);
  const std::vector<std::string> tail(args.begin() + 11, args.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"--metrics-listen", "127.0.0.1:9101", "--threads", "2",
                                            "--speed", "0.1", "--exec-cgroup",
                                            "/sys/fs/cgroup/run/pi3b", "-v"}));
}

TEST(WorkerLaunchTest, TheTokenReplacesAnyInheritedOne) {
  const char* environment[] = {"PATH=/bin", "BALLAST_TOKEN=old", "HOME=/root", nullptr};
  EXPECT_EQ(WorkerEnvironment("new", environment),
            (std::vector<std::string>{"BALLAST_TOKEN=new", "PATH=/bin", "HOME=/root"}));
}

TEST(WorkerLaunchTest, AWorkerJoinsItsQuotaAndItsNodesGroupOnceEach) {
  EXPECT_TRUE(CgroupProcsFiles("", "").empty());
  EXPECT_EQ(CgroupProcsFiles("/q/cgroup.procs", ""), (std::vector<std::string>{"/q/cgroup.procs"}));
  EXPECT_EQ(CgroupProcsFiles("", "/g"), (std::vector<std::string>{"/g/cgroup.procs"}));
  EXPECT_EQ(CgroupProcsFiles("/q/cgroup.procs", "/g"),
            (std::vector<std::string>{"/q/cgroup.procs", "/g/cgroup.procs"}));
  // cgroup v2: the quota set on the node's group itself.
  EXPECT_EQ(CgroupProcsFiles("/g/cgroup.procs", "/g"),
            (std::vector<std::string>{"/g/cgroup.procs"}));
}

TEST(WorkerLaunchTest, AStartedProcessWritesToItsLogAndSeesItsEnvironment) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("worker-launch-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string log = (dir / "node.log").string();
  const auto pid = StartWorker({"/bin/sh", "-c", "echo out $BALLAST_TOKEN; echo err >&2"},
                               {"BALLAST_TOKEN=t0k"}, {}, log, "node");
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  int status = 0;
  ASSERT_EQ(waitpid(*pid, &status, 0), *pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "out t0k\nerr\n");
  std::filesystem::remove_all(dir);
}

TEST(WorkerLaunchTest, ALogThatCannotBeCreatedIsNamed) {
  const auto pid = StartWorker({"/bin/true"}, {}, {}, "/nonexistent-dir/x.log", "pi3b");
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(pid.status().message().find("node pi3b: /nonexistent-dir/x.log"), std::string::npos);
}

}  // namespace
}  // namespace ballast::cli
