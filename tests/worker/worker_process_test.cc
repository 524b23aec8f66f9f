// ballast-worker as a process against a real coordinator: its Prometheus
// metrics, how it refuses to run with a wrong token, and how it carries on
// when the coordinator restarts mid-job.
#include <cpprest/http_client.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <thread>
#include <utility>

#include "coordinator/server.h"
#include "support/primes_workload.h"

namespace ballast::worker {
namespace {

using Clock = std::chrono::steady_clock;

coordinator::JobConfig PrimesJob(uint64_t limit) {
  coordinator::JobConfig config;
  config.id = "metrics-job";
  config.token = "right-token";
  config.workload = testing::PrimesWorkload(limit);
  config.policy = {"selfsched", "", {{"chunk", "2000"}}};
  config.workers = {{"w0", 1.0}};
  return config;
}

// Starts ballast-worker with `args` after the coordinator flags; stderr to `log`.
pid_t StartWorker(const coordinator::Server& server, const std::string& token,
                  const std::vector<std::string>& extra, const std::string& log) {
  std::vector<std::string> args = {BALLAST_WORKER_BINARY,
                                   "--coordinator",
                                   server.url(),
                                   "--job",
                                   "metrics-job",
                                   "--name",
                                   "w0",
                                   "--token",
                                   token};
  args.insert(args.end(), extra.begin(), extra.end());
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    freopen(log.c_str(), "w", stderr);
    freopen(log.c_str(), "a", stdout);
    // Not the coordinator's listening socket: held by the worker, it would
    // keep the port after the Server is gone (nobody accepting).
    close_range(3, ~0U, 0);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int WaitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// SIGKILLs and reaps a worker that a failed assertion left running.
struct KillOnExit {
  pid_t pid;
  ~KillOnExit() {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
};

// WaitExit, but SIGKILLs the worker after `timeout` and returns -1.
int WaitExitWithin(pid_t pid, std::chrono::seconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::string Fetch(const std::string& url) {
  try {
    web::http::client::http_client client(url);
    return client.request(web::http::methods::GET, "/metrics").get().extract_string(true).get();
  } catch (const std::exception&) {
    return "";
  }
}

double Sample(const std::string& metrics, const std::string& name) {
  const size_t at = metrics.find("\n" + name);
  if (at == std::string::npos) return -1;
  const size_t space = metrics.find(' ', metrics.find('}', at));
  return std::stod(metrics.substr(space + 1));
}

// The value of one series, e.g. `counter{reason="x"}`; 0 when absent.
double Series(const std::string& metrics, const std::string& series) {
  const size_t at = metrics.find("\n" + series + " ");
  if (at == std::string::npos) return 0;
  return std::stod(metrics.substr(at + series.size() + 2));
}

TEST(WorkerProcessTest, ServesValidPrometheusMetricsWhileComputing) {
  auto server = coordinator::Server::Start({});
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE((*server)->AddJob(PrimesJob(150000)).ok());
  const int port = 20000 + getpid() % 20000;
  const pid_t pid = StartWorker(
      **server, "right-token",
      {"--threads", "1", "--metrics-listen", "127.0.0.1:" + std::to_string(port)}, "/dev/null");
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  std::string metrics;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline) {
    metrics = Fetch(url);
    if (Sample(metrics, "ballast_worker_items_completed_total") > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (const char* name :
       {"ballast_worker_items_completed_total", "ballast_worker_item_seconds_bucket",
        "ballast_worker_busy_seconds_total", "ballast_worker_idle_seconds_total",
        "ballast_worker_leases_total", "ballast_worker_reports_total"}) {
    EXPECT_NE(metrics.find(name), std::string::npos) << name << "\n" << metrics;
  }
  EXPECT_GT(Sample(metrics, "ballast_worker_items_completed_total"), 0);
  EXPECT_GT(Sample(metrics, "ballast_worker_leases_total"), 0);
  // Prometheus's own checker accepts the exposition.
  const std::string file = ::testing::TempDir() + "worker-metrics.txt";
  std::ofstream(file) << metrics;
  const int check = std::system(("promtool check metrics < " + file + " > /dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(check), 0) << "promtool check metrics failed on:\n" << metrics;

  EXPECT_EQ(WaitExit(pid), 0);
  EXPECT_TRUE((*server)->View("metrics-job")->done);
}

TEST(WorkerProcessTest, AWrongTokenStopsTheWorkerWithAClearError) {
  auto server = coordinator::Server::Start({});
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE((*server)->AddJob(PrimesJob(1000)).ok());
  const std::string log = ::testing::TempDir() + "wrong-token.log";
  const pid_t pid = StartWorker(**server, "wrong-token", {}, log);
  EXPECT_EQ(WaitExit(pid), 2);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("refused"), std::string::npos) << text;
  EXPECT_NE(text.find("403"), std::string::npos) << text;
  EXPECT_EQ((*server)->View("metrics-job")->workers[0].reports, 0u);
}

TEST(WorkerProcessTest, ComputesExactlyOnTwoThreadsAndReportsCpuSeconds) {
  auto server = coordinator::Server::Start({});
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE((*server)->AddJob(PrimesJob(150000)).ok());
  const pid_t pid = StartWorker(**server, "right-token", {"--threads", "2"}, "/dev/null");
  EXPECT_EQ(WaitExit(pid), 0);
  const auto view = (*server)->View("metrics-job");
  ASSERT_TRUE(view->done);
  EXPECT_EQ(view->result.primes().count, 13848u);  // pi(150000)
  EXPECT_GT(view->workers[0].cpu_s, 0);
  EXPECT_GT(view->workers[0].busy_s, 0);
}

// Regression: when the operator, which hosts the coordinator, restarted
// mid-job, its workers exited non-zero and their pods failed: first on 404
// while the job was not added again yet, then on 400 for the lease that the
// new coordinator had never granted.
TEST(WorkerProcessTest, CarriesOnWhenTheCoordinatorRestartsOnTheSamePort) {
  coordinator::JobConfig config = PrimesJob(150000);
  // Heartbeats every 0.5 s, so the worker reports while the job is unknown.
  config.lease_seconds = 1.5;
  auto first = coordinator::Server::Start({});
  ASSERT_TRUE(first.ok());
  const uint16_t port = (*first)->port();
  ASSERT_TRUE((*first)->AddJob(config).ok());
  const std::string log = ::testing::TempDir() + "coordinator-restart.log";
  KillOnExit worker{StartWorker(**first, "right-token", {"--threads", "1", "--speed", "0.5"}, log)};

  // Part of the job is done when the operator's process goes away.
  const uint64_t items = config.workload.items;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while ((*first)->View("metrics-job")->completed < items / 5 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::optional<coordinator::Checkpoint> checkpoint = (*first)->TakeCheckpoint("metrics-job");
  ASSERT_GE(checkpoint->completed.size(), items / 5);
  ASSERT_LT(checkpoint->completed.size(), items);
  first->reset();

  // The new process listens on the same port at once, and adds the job
  // again from the checkpoint a second later.
  coordinator::ServerOptions options;
  options.port = port;
  auto second = coordinator::Server::Start(options);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  config.resume = checkpoint;
  ASSERT_TRUE((*second)->AddJob(config).ok());

  EXPECT_EQ(WaitExitWithin(std::exchange(worker.pid, 0), std::chrono::seconds(120)), 0)
      << ReadFile(log);
  const auto view = (*second)->View("metrics-job");
  ASSERT_TRUE(view->done);
  EXPECT_EQ(view->result.primes().count, 13848u);  // pi(150000)
  EXPECT_EQ(view->completed, items);
  EXPECT_EQ(view->workers[0].items + checkpoint->completed.size(), items);
  // It was told the job was unknown, and that its lease was stale.
  const std::string metrics = Fetch((*second)->url());
  EXPECT_GE(Series(metrics, "ballast_coordinator_refused_total{reason=\"unknown_job\"}"), 1)
      << metrics;
  EXPECT_GE(Series(metrics, "ballast_coordinator_refused_total{reason=\"stale\"}"), 1) << metrics;
  EXPECT_NE(ReadFile(log).find("lease dropped"), std::string::npos) << ReadFile(log);
}

}  // namespace
}  // namespace ballast::worker
