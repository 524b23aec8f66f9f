// `ballast run` end to end on this machine: a real coordinator and real
// ballast-worker processes, killed and stopped mid-run.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/run/local_runner.h"
#include "core/balance/efficiency.h"
#include "tests/support/marked_line.h"
#include "tests/support/policy_spec.h"
#include "tests/support/primes_workload.h"
#include "tests/support/shell_command.h"
#include "worker/kernels/reference.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;

constexpr double kForever = std::numeric_limits<double>::infinity();

// A primes job by trial division (seed 000's algorithm) below `limit`.
job::JobSpec PrimesJob(uint64_t limit, const std::string& policy = "adaptive") {
  job::JobSpec job;
  job.name = "test-primes";
  job.workload = testing::PrimesWorkload(limit);
  job.policy = testing_support::PolicyNamed(policy);
  job.lease_seconds = 10;
  return job;
}

LocalRunOptions Options(job::JobSpec job) {
  auto cluster = DefaultCluster();
  EXPECT_TRUE(cluster.ok());
  auto profile = fuzzy::BuiltinProfile("raspberry-pi");
  EXPECT_TRUE(profile.ok());
  return {std::move(job), *cluster, *profile, BALLAST_WORKER_BINARY, true, "", nullptr};
}

workload::Result Reference(const workload::WorkloadSpec& spec) {
  auto reference = kernels::ReferenceResult(spec);
  EXPECT_TRUE(reference.ok());
  return *reference;
}

// Sends `signal` once to `node`'s worker when a fifth of the items are done.
auto SignalAtAFifth(const std::string& node, int signal, bool* sent) {
  return [node, signal, sent](const coordinator::JobView& view,
                              const std::map<std::string, pid_t>& pids) {
    if (!*sent && view.completed * 5 >= view.items && pids.count(node) > 0) {
      kill(pids.at(node), signal);
      *sent = true;
    }
    return true;
  };
}

// Sends `signal` once to `node`'s worker a second into the job, while it
// computes its share (`weighted` workers report only at the end of a lease,
// so the items done say nothing about where they are).
auto SignalAfterASecond(const std::string& node, int signal, bool* sent) {
  auto start = std::make_shared<std::optional<std::chrono::steady_clock::time_point>>();
  return [node, signal, sent, start](const coordinator::JobView&,
                                     const std::map<std::string, pid_t>& pids) {
    const auto now = std::chrono::steady_clock::now();
    if (!*start) *start = now;
    if (!*sent && now - **start >= std::chrono::seconds(1) && pids.count(node) > 0) {
      kill(pids.at(node), signal);
      *sent = true;
    }
    return true;
  };
}

TEST(LocalRunTest, DefaultClusterGivesTheExactResult) {
  auto outcome = RunLocal(Options(PrimesJob(100000)));
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->view.result.primes().count, 9592u);  // pi(10^5)
  EXPECT_EQ(outcome->view.result, Reference(PrimesJob(100000).workload));
  EXPECT_EQ(outcome->view.completed, outcome->view.items);
  ASSERT_EQ(outcome->nodes.size(), 3u);
  EXPECT_EQ(outcome->nodes[0].weight, 5);
  EXPECT_EQ(outcome->nodes[2].weight, 1);
  EXPECT_GT(outcome->ideal_s, 0);
  EXPECT_LE(outcome->ideal_s, outcome->makespan_s * 1.05);
}

// `run` reports the one definition of the headline figure
// (balance/efficiency.h): recomputed from the outcome's own raw fields — the
// workers' CPU seconds less those spent on completions another worker had
// handed in first, the nodes' emulated cores, the coordinator's makespan —
// it is the same number.
TEST(LocalRunTest, ReportedEfficiencyIsTheSharedDefinitionOfItsOwnFigures) {
  const LocalRunOptions options = Options(PrimesJob(50000));
  auto outcome = RunLocal(options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  double work = 0;
  for (const auto& worker : outcome->view.workers) work += worker.cpu_s - worker.dropped_cpu_s;
  double speeds = 0;
  for (const auto& node : options.cluster.nodes) speeds += node.speed;
  EXPECT_DOUBLE_EQ(outcome->work_s, work);
  EXPECT_DOUBLE_EQ(outcome->total_speed, speeds);
  EXPECT_DOUBLE_EQ(outcome->makespan_s, outcome->view.finished_at);
  EXPECT_DOUBLE_EQ(outcome->ideal_s, balance::IdealSeconds(work, speeds));
  EXPECT_DOUBLE_EQ(outcome->efficiency,
                   balance::Efficiency(balance::IdealSeconds(work, speeds), outcome->makespan_s));
  EXPECT_GT(outcome->efficiency, 0);
}

TEST(LocalRunTest, WithoutCgroupsTheWorkersDutyCycleEmulatesTheSpeeds) {
  LocalRunOptions options = Options(PrimesJob(100000));
  options.cgroups = false;
  auto outcome = RunLocal(options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_NE(outcome->speed_method.find("duty cycle"), std::string::npos) << outcome->speed_method;
  EXPECT_EQ(outcome->view.result, Reference(PrimesJob(100000).workload));
}

// Regression: on a cluster whose nodes are emulated in different ways, the
// summary named only the last node's way.
TEST(LocalRunTest, AMixedClusterNamesEveryWayItsSpeedsAreHeld) {
  LocalRunOptions options = Options(PrimesJob(50000));
  options.cgroups = false;
  options.cluster.nodes[0].speed = 1;  // whole cores: no emulation at all
  auto outcome = RunLocal(options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_NE(outcome->speed_method.find("whole cores"), std::string::npos) << outcome->speed_method;
  EXPECT_NE(outcome->speed_method.find("duty cycle"), std::string::npos) << outcome->speed_method;
  EXPECT_EQ(outcome->view.result, Reference(PrimesJob(50000).workload));
}

TEST(LocalRunTest, AWorkerKilledMidRunLosesNothing) {
  job::JobSpec job = PrimesJob(200000);
  job.backoff_limit = 0;  // no restart: the others finish its work
  LocalRunOptions options = Options(job);
  bool killed = false;
  options.on_progress = SignalAtAFifth("pi4b-worker", SIGKILL, &killed);
  auto outcome = RunLocal(options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_TRUE(killed);
  EXPECT_EQ(outcome->view.result, Reference(job.workload));
  EXPECT_EQ(outcome->view.completed, outcome->view.items);
  EXPECT_EQ(outcome->view.workers[1].lost, 1u);
  uint64_t items = 0;
  for (const auto& node : outcome->nodes) items += node.items;
  EXPECT_EQ(items, outcome->view.items);  // nothing counted twice
}

TEST(LocalRunTest, AKilledWorkerIsRestartedWithinBackoffLimit) {
  job::JobSpec job = PrimesJob(200000);
  job.backoff_limit = 2;
  LocalRunOptions options = Options(job);
  bool killed = false;
  options.on_progress = SignalAtAFifth("pi4b-master", SIGKILL, &killed);
  auto outcome = RunLocal(options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_TRUE(killed);
  EXPECT_EQ(outcome->view.result, Reference(job.workload));
  EXPECT_EQ(outcome->nodes[0].restarts, 1u);
}

TEST(LocalRunTest, SigtermHandsBackTheRestOfTheLease) {
  job::JobSpec job = PrimesJob(200000, "weighted");
  job.backoff_limit = 0;
  LocalRunOptions options = Options(job);
  const fs::path logs =
      fs::temp_directory_path() / ("ballast-sigterm-test-" + std::to_string(getpid()));
  fs::remove_all(logs);
  options.log_dir = logs.string();
  bool stopped = false;
  options.on_progress = SignalAfterASecond("pi4b-master", SIGTERM, &stopped);
  auto outcome = RunLocal(options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_TRUE(stopped);
  EXPECT_EQ(outcome->view.result, Reference(job.workload));
  // It left cleanly (not lost by the runner) and gave its work back itself.
  EXPECT_EQ(outcome->view.workers[0].lost, 0u);
  EXPECT_EQ(outcome->nodes[0].restarts, 0u);
  std::ifstream log(logs / "pi4b-master.log");
  const std::string text((std::istreambuf_iterator<char>(log)), {});
  EXPECT_NE(text.find("stopped on request"), std::string::npos) << text;
  fs::remove_all(logs);
}

// A node plugged in mid-job joins it: its worker is added to the running job
// and given work, the result is exact, and the limit counts its capacity
// only from when it joined.
TEST(LocalRunTest, ANodeJoiningMidJobComputesAndTheLimitCountsItFromItsJoin) {
  job::JobSpec job = PrimesJob(300000);
  LocalRunOptions options = Options(job);
  options.cluster.nodes[1].join_at = 2;  // pi4b-worker
  auto outcome = RunLocal(options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->view.result, Reference(job.workload));
  const NodeOutcome& joined = outcome->nodes[1];
  ASSERT_EQ(joined.name, "pi4b-worker");
  ASSERT_TRUE(joined.joined_s.has_value());
  EXPECT_GE(*joined.joined_s, 2);
  EXPECT_LT(*joined.joined_s, 3);  // the runner looks every tenth of a second
  EXPECT_GT(joined.items, 0u);
  EXPECT_FALSE(outcome->nodes[0].joined_s.has_value());
  // The same spans IdealSecondsOver is given, from the outcome's own figures.
  const double at = *joined.joined_s;
  EXPECT_DOUBLE_EQ(
      outcome->ideal_s,
      balance::IdealSecondsOver(outcome->work_s,
                                {{0, kForever, 0.5}, {at, kForever, 0.5}, {0, kForever, 0.1}}));
  EXPECT_GT(outcome->ideal_s, balance::IdealSeconds(outcome->work_s, 1.1));
  uint64_t items = 0;
  for (const auto& node : outcome->nodes) items += node.items;
  EXPECT_EQ(items, outcome->view.items);  // nothing counted twice
}

// A node drained mid-job: its worker is stopped, hands back the rest of its
// lease itself (it is not lost, not restarted), and the others finish it.
TEST(LocalRunTest, ADrainedNodesWorkerHandsBackItsLeaseAndIsNotRestarted) {
  job::JobSpec job = PrimesJob(300000);
  job.backoff_limit = 3;
  LocalRunOptions options = Options(job);
  options.cluster.nodes[0].leave_at = 1;  // pi4b-master
  auto outcome = RunLocal(options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->view.result, Reference(job.workload));
  const NodeOutcome& drained = outcome->nodes[0];
  ASSERT_TRUE(drained.left_s.has_value());
  EXPECT_GE(*drained.left_s, 1);
  EXPECT_EQ(drained.restarts, 0u);
  EXPECT_EQ(outcome->view.workers[0].lost, 0u);  // it left on its own
  // It held 5/11 of the job's cost by weight and computed about a second
  // of it; the others computed the rest of its share.
  double cost = 0;
  for (const auto& worker : outcome->view.workers) cost += worker.cost;
  EXPECT_LT(outcome->view.workers[0].cost, 0.2 * cost);
  EXPECT_LE(drained.busy_s, *drained.left_s + 0.5);
}

// Runs `ballast run` on a job text and a cluster text; returns exit code and stderr.
std::pair<int, std::string> RunCli(const std::string& job, const std::string& cluster) {
  // One directory per test: ctest runs the tests of this file in parallel.
  const fs::path dir =
      fs::temp_directory_path() /
      ("ballast-cli-" +
       std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  fs::create_directories(dir);
  std::ofstream(dir / "job.yaml") << job;
  std::ofstream(dir / "cluster.yaml") << cluster;
  const std::string command = std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() +
                              " --cluster " + (dir / "cluster.yaml").string() + " 2>&1 >/dev/null";
  return testing::RunShellCommand(command);
}

const char kGoodJob[] = "workload:\n  primes: {limit: 1000}\n";
const char kGoodCluster[] = "nodes:\n  - {name: a, speed: 0.5}\n";

TEST(LocalRunCliTest, BadJobFilesNameTheLine) {
  for (const std::string job : {
           "workload:\n  primes: {limit: 1000}\npolicy: fastest   # <-\n",
           "workload:\n  primes: {limit: 1000}\nleaseSeconds: -4   # <-\n",
           "workload:\n  primes: {limit: 1000}\ncolour: blue   # <-\n",
           "workload:\n  primes: {limit: 0}   # <-\n",
       }) {
    const auto [code, err] = RunCli(job, kGoodCluster);
    EXPECT_EQ(code, 2) << job;
    EXPECT_NE(err.find("job.yaml:" + std::to_string(testing::MarkedLine(job))), std::string::npos)
        << job << "\n"
        << err;
  }
}

TEST(LocalRunCliTest, BadClusterFilesNameTheLine) {
  for (const std::string cluster : {
           "nodes:\n  - {name: a, speed: 0}   # <-\n",
           "nodes:\n  - {name: a, speed: 0.5}\n  - {name: a, speed: 0.5}   # <-\n",
           "nodes:\n  - {name: a, speed: 0.5, cores: 4}   # <-\n",
           "nodes: []   # <-\n",
           "nodes:\n  - {name: a, speed: 0.5}\n  - {name: b, speed: 0.5, joinAt: -1}   # <-\n",
           "nodes:\n  - {name: a, speed: 0.5, joinAt: 5, leaveAt: 5}   # <-\n",
           "nodes:   # <-\n  - {name: a, speed: 0.5, joinAt: 5}\n",
       }) {
    const auto [code, err] = RunCli(kGoodJob, cluster);
    EXPECT_EQ(code, 2) << cluster;
    EXPECT_NE(err.find("cluster.yaml:" + std::to_string(testing::MarkedLine(cluster))),
              std::string::npos)
        << cluster << "\n"
        << err;
  }
}

// A user's job as the docs write it: items listed by value with their costs in
// a file beside the job, a command that reads its range's values and hands
// back a result, one item that fails. The result is exact, the failed item is
// named by its value, and the fields are merged once per item.
TEST(LocalRunCliTest, ItemsFromAFileWithAResultRunToTheExactFields) {
  const fs::path dir =
      fs::temp_directory_path() / ("ballast-cli-items-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string list;
  uint64_t bytes = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string value = i == 17 ? "bad file.txt" : "photo-" + std::to_string(i) + ".jpg";
    list += std::to_string(100 + 37 * i) + "\t" + value + "\n";
    if (i != 17) bytes += value.size();
  }
  std::ofstream(dir / "photos.txt") << list;
  // Per run: the sum of the values' lengths, and the longest value; a run
  // holding "bad file.txt" fails, and every item is run alone after it.
  std::ofstream(dir / "job.yaml") << R"(workload:
  exec:
    command:
      - sh
      - -c
      - |
        n=0; longest=0
        while IFS= read -r v; do
          case "$v" in bad*) exit 3;; esac
          n=$((n + ${#v})); [ ${#v} -gt $longest ] && longest=${#v}
        done < "$BALLAST_ITEMS_FILE"
        echo "{\"chars\": $n, \"longest\": $longest, \"runs\": [$BALLAST_START]}" > "$BALLAST_RESULT_FILE"
    perItem: true
    retries: 1
    result:
      merge: {chars: sum, longest: max, runs: list}
      listLimit: 5
itemsFrom: {file: photos.txt, format: cost-value}
policy: adaptive
failurePolicy: {maxFailedItems: 1}
)";
  std::ofstream(dir / "cluster.yaml")
      << "nodes:\n  - {name: a, speed: 1}\n  - {name: b, speed: 0.5}\n";
  const std::string command = std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() +
                              " --cluster " + (dir / "cluster.yaml").string() +
                              " --no-cgroups -o json 2>/dev/null";
  const auto [code, out] = testing::RunShellCommand(command);
  ASSERT_EQ(code, 0) << out;
  const auto json = nlohmann::json::parse(out.substr(out.find('{')), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out;
  const auto& exec = json.at("result").at("exec");
  EXPECT_EQ(exec.at("succeeded"), 39);
  EXPECT_EQ(exec.at("fields").at("chars").at("sum"), bytes);
  EXPECT_EQ(exec.at("fields").at("longest").at("max"), 12);  // "photo-10.jpg"
  EXPECT_EQ(exec.at("fields").at("runs").at("count"), 39);
  EXPECT_EQ(exec.at("fields").at("runs").at("list"),
            nlohmann::json::parse("[[0,0,0],[1,0,1],[2,0,2],[3,0,3],[4,0,4]]"));
  EXPECT_EQ(json.at("failed_values"), nlohmann::json::array({"bad file.txt"}));
  EXPECT_NE(json.at("summary").get<std::string>().find("(bad file.txt) exit 3 after 2 attempts"),
            std::string::npos)
      << json.at("summary");
  // Without the policy (it tolerates none by default) the same run fails,
  // after every other item ran.
  std::string strict;
  {
    std::ifstream in(dir / "job.yaml");
    strict.assign(std::istreambuf_iterator<char>(in), {});
  }
  strict.erase(strict.find("failurePolicy:"));
  std::ofstream(dir / "job.yaml") << strict;
  const auto [strict_code, err] = testing::RunShellCommand(
      std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() + " --cluster " +
      (dir / "cluster.yaml").string() + " --no-cgroups -o json 2>&1 >/dev/null");
  EXPECT_EQ(strict_code, 1) << err;
  EXPECT_NE(err.find("ballast: the job failed (FailedItems): 1 of 40 items failed all attempts; "
                     "the other 39 finished and their merged result is printed above (set "
                     "failurePolicy.maxFailedItems to tolerate failed items): bad file.txt"),
            std::string::npos)
      << err;
  fs::remove_all(dir);
}

// Regression (issue 61): `ballast run` did not keep failurePolicy as
// docs/crds.md says: with maxFailedItems: 0, 60 of 60 failing items ran
// anyway. The run stops where the operator fails the job, at the first
// failed item (TooManyFailedItems), and says so; what was not computed is
// not run.
TEST(LocalRunCliTest, MaxFailedItemsZeroStopsTheRunAtTheFirstFailedItem) {
  const fs::path dir = fs::temp_directory_path() / "ballast-run-max-failed-zero";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "job.yaml")
      << "workload:\n  exec:\n    command: [sh, -c, 'echo run >> \"$0/runs\"; "
         "sleep 0.2; exit 3', "
      << dir.string()
      << "]\n    perItem: true\n    retries: 0\nitems: 60\n"
         "failurePolicy: {maxFailedItems: 0}\n";
  std::ofstream(dir / "cluster.yaml")
      << "nodes:\n  - {name: a, speed: 1}\n  - {name: b, speed: 1}\n";
  const auto [code, out] = testing::RunShellCommand(
      "timeout 120 " + std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() +
      " --cluster " + (dir / "cluster.yaml").string() + " --no-cgroups -o json 2>" +
      (dir / "err").string());
  std::string err;
  {
    std::ifstream in(dir / "err");
    err.assign(std::istreambuf_iterator<char>(in), {});
  }
  EXPECT_EQ(code, 1) << out << err;
  const auto json = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out;
  EXPECT_EQ(json["failure"]["reason"], "TooManyFailedItems") << out;
  EXPECT_NE(err.find("ballast: the job failed (TooManyFailedItems): "), std::string::npos) << err;
  EXPECT_NE(err.find("more than failurePolicy.maxFailedItems (0): item "), std::string::npos)
      << err;
  EXPECT_NE(err.find("; the job was stopped there, "), std::string::npos) << err;
  size_t runs = 0;
  {
    std::ifstream in(dir / "runs");
    for (std::string line; std::getline(in, line);) ++runs;
  }
  EXPECT_GE(runs, 1u);
  EXPECT_LT(runs, 60u) << "the rest is not computed";
  fs::remove_all(dir);
}

// One item worth most of the job: no schedule ends before it has run on the
// node that runs one fastest, so that is the limit, and `run` says which
// bound it is (balance::PhysicalLimit).
TEST(LocalRunCliTest, AJobOfOneLargeItemIsJudgedAgainstThatItem) {
  const fs::path dir =
      fs::temp_directory_path() / ("ballast-cli-large-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "job.yaml") << R"(workload:
  exec:
    command: [sh, -c, 'i=0; while [ $i -lt "$BALLAST_VALUE" ]; do i=$((i + 1)); done']
    perItem: true
itemsFrom:
  list: [{value: "20000", cost: 1}, {value: "20000", cost: 1}, {value: "400000", cost: 20}]
)";
  std::ofstream(dir / "cluster.yaml")
      << "nodes:\n  - {name: a, speed: 1}\n  - {name: b, speed: 1}\n";
  const auto [code, out] = testing::RunShellCommand(
      std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() + " --cluster " +
      (dir / "cluster.yaml").string() + " --no-cgroups -o json 2>/dev/null");
  ASSERT_EQ(code, 0) << out;
  const auto json = nlohmann::json::parse(out.substr(out.find('{')), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out;
  const double work = json.at("work_s").get<double>();
  // The nodes that joined before the job ended: both, unless a loaded
  // machine started b's worker after a had run every item.
  const double cores = json.at("total_speed").get<double>();
  ASSERT_TRUE(cores == 1 || cores == 2) << out;
  // The large item's share of the work by declared cost, on one core, is
  // later than the work over both nodes' cores; with one node, the work is.
  const double item_bound = work * 20 / 22;
  EXPECT_EQ(json.at("ideal_bound"), cores == 2 ? "largest item" : "work") << out;
  EXPECT_NEAR(json.at("ideal_s").get<double>(), std::max(item_bound, work / cores), 1e-6) << out;
  fs::remove_all(dir);
}

TEST(LocalRunCliTest, AnItemsFileWithABadLineNamesItsLine) {
  const fs::path dir =
      fs::temp_directory_path() / ("ballast-cli-items-bad-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "list.txt") << "10 a\n20 b\nc\n";
  std::ofstream(dir / "job.yaml") << "workload: {exec: {command: [sh, -c, exit]}}\nitemsFrom: "
                                     "{file: list.txt, format: cost-value}\n";
  const auto [code, err] = testing::RunShellCommand(
      std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() + " 2>&1 >/dev/null");
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("list.txt:3: expected \"<cost> <value>\""), std::string::npos) << err;
  std::ofstream(dir / "job.yaml")
      << "workload: {exec: {command: [sh, -c, exit]}}\nitemsFrom: {configMap: {name: l, key: k}}\n";
  const auto [code2, err2] = testing::RunShellCommand(
      std::string(BALLAST_BINARY) + " run " + (dir / "job.yaml").string() + " 2>&1 >/dev/null");
  EXPECT_EQ(code2, 2) << err2;
  EXPECT_NE(
      err2.find("a ConfigMap is read on Kubernetes; for ballast run give spec.itemsFrom.file"),
      std::string::npos)
      << err2;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ballast::cli
