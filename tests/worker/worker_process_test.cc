// ballast-worker as a process against a real coordinator: its Prometheus
// metrics, how it refuses to run with a wrong token, and how it carries on
// when the coordinator restarts mid-job.
#include <cpprest/http_client.h>
#include <cpprest/http_listener.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "coordinator/server.h"
#include "core/protocol/messages.h"
#include "tests/support/free_port.h"
#include "tests/support/policy_spec.h"
#include "tests/support/primes_workload.h"

namespace ballast::worker {
namespace {

using Clock = std::chrono::steady_clock;

coordinator::JobConfig PrimesJob(uint64_t limit) {
  coordinator::JobConfig config;
  config.id = "metrics-job";
  config.token = "right-token";
  config.workload = testing::PrimesWorkload(limit);
  config.policy = {balance::SelfSchedOptions{2000}, ""};
  config.workers = {{"w0", 1.0}};
  return config;
}

// Starts ballast-worker `name` with `args` after the coordinator flags; stderr to `log`.
pid_t StartWorker(const std::string& url, const std::string& token,
                  const std::vector<std::string>& extra, const std::string& log,
                  const std::string& name = "w0") {
  std::vector<std::string> args = {BALLAST_WORKER_BINARY,
                                   "--coordinator",
                                   url,
                                   "--job",
                                   "metrics-job",
                                   "--name",
                                   name,
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
  const uint16_t port = testing_support::FreePort();
  ASSERT_NE(port, 0);
  const pid_t pid =
      StartWorker((*server)->url(), "right-token",
                  {"--threads", "1", "--metrics-listen", "127.0.0.1:" + std::to_string(port),
                   "--job-name", "primes", "--namespace", "lab"},
                  "/dev/null");
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
  // The job is named by weightedjob and job_namespace, never by the labels a
  // scrape sets itself, job and namespace (docs/metrics.md, "Labels").
  EXPECT_NE(metrics.find(R"(ballast_worker_leases_total{job_namespace="lab",node="w0",)"
                         R"(weightedjob="primes",workload="primes"})"),
            std::string::npos)
      << metrics;
  EXPECT_EQ(metrics.find("{job="), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find(",job="), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("{namespace="), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find(",namespace="), std::string::npos) << metrics;
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
  const pid_t pid = StartWorker((*server)->url(), "wrong-token", {}, log);
  EXPECT_EQ(WaitExit(pid), 2);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("refused"), std::string::npos) << text;
  EXPECT_NE(text.find("403"), std::string::npos) << text;
  EXPECT_EQ((*server)->View("metrics-job")->workers[0].reports, 0u);
}

// Worker pods get the token as a file of a Secret volume (BALLAST_TOKEN_FILE,
// worker/token_file.h); the file's token is the one used.
TEST(WorkerProcessTest, TakesTheTokenFromItsFile) {
  auto server = coordinator::Server::Start({});
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE((*server)->AddJob(PrimesJob(1000)).ok());
  const std::string file = ::testing::TempDir() + "worker-token";
  std::ofstream(file) << "right-token\n";
  const pid_t pid = StartWorker((*server)->url(), "wrong-token", {"--token-file", file},
                                ::testing::TempDir() + "token-file.log");
  EXPECT_EQ(WaitExit(pid), 0);
  EXPECT_TRUE((*server)->View("metrics-job")->done);
}

TEST(WorkerProcessTest, AnUnreadableTokenFileStopsTheWorkerNamingIt) {
  auto server = coordinator::Server::Start({});
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE((*server)->AddJob(PrimesJob(1000)).ok());
  const std::string file = ::testing::TempDir() + "absent-token";
  const std::string log = ::testing::TempDir() + "absent-token.log";
  const pid_t pid = StartWorker((*server)->url(), "right-token", {"--token-file", file}, log);
  EXPECT_EQ(WaitExit(pid), 2);
  EXPECT_NE(ReadFile(log).find("the token file " + file + ": no such file"), std::string::npos)
      << ReadFile(log);
  EXPECT_EQ((*server)->View("metrics-job")->workers[0].reports, 0u);
}

TEST(WorkerProcessTest, ComputesExactlyOnTwoThreadsAndReportsCpuSeconds) {
  auto server = coordinator::Server::Start({});
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE((*server)->AddJob(PrimesJob(150000)).ok());
  const pid_t pid = StartWorker((*server)->url(), "right-token", {"--threads", "2"}, "/dev/null");
  EXPECT_EQ(WaitExit(pid), 0);
  const auto view = (*server)->View("metrics-job");
  ASSERT_TRUE(view->done);
  EXPECT_EQ(view->result.primes().count, 13848u);  // pi(150000)
  EXPECT_GT(view->workers[0].cpu_s, 0);
  EXPECT_GT(view->workers[0].busy_s, 0);
}

// Regression: a worker whose idle report the coordinator held ("wait" until
// there is work, up to its 10 s wait timeout) exited on SIGTERM only when the
// report came back. Now it abandons the held report at once, hands in its
// last report as leaving, and exits.
TEST(WorkerProcessTest, StopsAtOnceOnSigtermWhileItsIdleReportIsHeld) {
  coordinator::JobConfig config = PrimesJob(20000);
  // `weighted` gives w0 half the job and holds the other half for a worker
  // that never comes: once w0 has finished its half, its ask waits.
  config.policy = {balance::WeightedOptions{}, ""};
  config.workers = {{"w0", 1.0}, {"absent", 1.0}};
  coordinator::ServerOptions options;
  options.wait_timeout_s = 30;
  auto server = coordinator::Server::Start(options);
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE((*server)->AddJob(config).ok());
  const std::string log = ::testing::TempDir() + "sigterm-held.log";
  KillOnExit worker{StartWorker((*server)->url(), "right-token", {}, log)};
  // Its half is done when its items stop growing for 300 ms (its ask is
  // held by then).
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  uint64_t items = 0;
  while (Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const uint64_t now_items = (*server)->View("metrics-job")->workers[0].items;
    if (now_items > 0 && now_items == items) break;
    items = now_items;
  }
  ASSERT_GT(items, 0u) << ReadFile(log);
  ASSERT_LT(items, config.workload.items);
  const uint64_t reports = (*server)->View("metrics-job")->workers[0].reports;
  const auto stopped = Clock::now();
  kill(worker.pid, SIGTERM);
  EXPECT_EQ(WaitExitWithin(worker.pid, std::chrono::seconds(20)), 0) << ReadFile(log);
  worker.pid = 0;
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - stopped).count(), 3.0);
  EXPECT_NE(ReadFile(log).find("stopped on request"), std::string::npos) << ReadFile(log);
  // The leaving report reached the coordinator.
  EXPECT_GT((*server)->View("metrics-job")->workers[0].reports, reports);
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
  KillOnExit worker{
      StartWorker((*first)->url(), "right-token", {"--threads", "1", "--speed", "0.5"}, log)};

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

// A coordinator that answers the worker's first progress report late (after
// `delay`), with what `late` returns, to see what the worker does meanwhile. It leases the
// whole job to the first ask and says done to the next idle report; every
// report is kept. (The real coordinator cannot be told to answer late; the
// worker's side of the race is what these tests pin down.)
class LateCoordinator {
 public:
  using Late = std::function<protocol::ReplyMessage(const protocol::ReportMessage&)>;
  // What a signal poll answers, given the reports so far: nullopt holds the
  // poll (answered "not signalled" after 200 ms).
  using Signal = std::function<std::optional<protocol::SignalMessage>(
      const std::vector<protocol::ReportMessage>&)>;

  LateCoordinator(coordinator::JobConfig config, Late late,
                  std::chrono::milliseconds delay = std::chrono::milliseconds(300),
                  Signal signal = nullptr)
      : config_(std::move(config)),
        late_(std::move(late)),
        delay_(delay),
        signal_(std::move(signal)) {
    // cpprest's listener cannot be asked for the port it bound, so it is
    // given one the kernel just found free, again if another process took it.
    for (int attempt = 0; !listener_ && attempt < 20; ++attempt) {
      auto listener = std::make_unique<web::http::experimental::listener::http_listener>(
          "http://127.0.0.1:" + std::to_string(testing_support::FreePort()));
      listener->support([this](web::http::http_request request) { Handle(request); });
      try {
        listener->open().wait();
        listener_ = std::move(listener);
      } catch (const std::exception& error) {
        std::cerr << "LateCoordinator: " << error.what() << ", trying another port\n";
      }
    }
    if (!listener_) throw std::runtime_error("LateCoordinator: no loopback port to listen on");
  }
  ~LateCoordinator() { listener_->close().wait(); }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(listener_->uri().port()); }
  // How often the worker is asked to report while a step computes (10 s).
  void set_heartbeat(double seconds) { heartbeat_s_ = seconds; }
  // The progress cadence its leases and replies ask (0.02 s).
  void set_report_every(double seconds) { report_every_s_ = seconds; }
  // The leases its idle reports get, one each in order, then done (one
  // lease of every item).
  void set_leases(std::vector<balance::Range> leases) {
    std::lock_guard lock(mu_);
    leases_ = std::move(leases);
  }

  std::vector<protocol::ReportMessage> reports() {
    std::lock_guard lock(mu_);
    return reports_;
  }

 private:
  void Handle(web::http::http_request request) {
    const std::string path = request.relative_uri().path();
    if (path.find("/signal") != std::string::npos) {
      for (int held = 0; held < 20; ++held) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (!signal_) continue;
        if (auto signal = signal_(reports())) {
          Reply(request, protocol::ToJson(*signal));
          return;
        }
      }
      Reply(request, nlohmann::json{{"signalled", false}});
    } else if (request.method() == web::http::methods::GET) {
      Reply(request, protocol::ToJson(protocol::JobDescription{config_.id, config_.workload}));
    } else {
      auto report =
          protocol::ParseReport(nlohmann::json::parse(request.extract_string(true).get()));
      ASSERT_TRUE(report.ok()) << report.status().ToString();
      size_t progress = 0;
      std::optional<balance::Range> next_lease;
      {
        std::lock_guard lock(mu_);
        reports_.push_back(*report);
        for (const auto& seen : reports_) progress += seen.idle ? 0 : 1;
        if (report->idle && leased_ < leases_.size()) next_lease = leases_[leased_++];
      }
      protocol::ReplyMessage reply;
      reply.session = "late";
      reply.heartbeat_s = heartbeat_s_;
      if (report->idle) {
        reply.kind = next_lease ? balance::Reply::Kind::kLease : balance::Reply::Kind::kDone;
        reply.lease = next_lease.value_or(balance::Range{});
        reply.report_every_s = report_every_s_;
      } else if (progress == 1) {
        std::this_thread::sleep_for(delay_);
        reply = late_(*report);
      } else {
        reply.kind = balance::Reply::Kind::kContinue;
        reply.lease = {0, config_.workload.items};
        reply.report_every_s = report_every_s_;
      }
      Reply(request, protocol::ToJson(reply));
    }
  }

  static void Reply(const web::http::http_request& request, const nlohmann::json& body) {
    request.reply(web::http::status_codes::OK, body.dump(), "application/json").wait();
  }

  coordinator::JobConfig config_;
  Late late_;
  std::chrono::milliseconds delay_;
  Signal signal_;
  std::vector<balance::Range> leases_{{0, config_.workload.items}};
  size_t leased_ = 0;  // of leases_
  std::atomic<double> heartbeat_s_{10};
  std::atomic<double> report_every_s_{0.02};
  std::mutex mu_;
  std::vector<protocol::ReportMessage> reports_;
  std::unique_ptr<web::http::experimental::listener::http_listener> listener_;
};

// The ranges a worker reported finished, in order.
std::vector<balance::Range> Completed(const std::vector<protocol::ReportMessage>& reports) {
  std::vector<balance::Range> ranges;
  for (const auto& report : reports) {
    for (const auto& completion : report.completed) ranges.push_back(completion.range);
  }
  return ranges;
}

// What each report handed in, its adjacent ranges joined (a report hands in
// a lease's steps in several ranges: worker/report_ranges.h).
std::vector<balance::Range> CompletedSpans(const std::vector<protocol::ReportMessage>& reports) {
  std::vector<balance::Range> spans;
  for (const auto& report : reports) {
    const size_t first = spans.size();
    for (const auto& completion : report.completed) {
      if (spans.size() > first && spans.back().end == completion.range.begin) {
        spans.back().end = completion.range.end;
      } else {
        spans.push_back(completion.range);
      }
    }
  }
  return spans;
}

// A progress report's round trip does not stop the computing: while the
// reply is on its way the worker goes on, and when the reply shrinks its
// lease below where it got to, it stops there and reports those items too.
TEST(WorkerProcessTest, ComputesOnWhileAReportIsAnsweredAndReportsPastAShrunkEnd) {
  uint64_t cut = 0;
  LateCoordinator coordinator(PrimesJob(150000), [&cut](const protocol::ReportMessage& report) {
    cut = report.position + 1;
    return protocol::ReplyMessage{balance::Reply::Kind::kContinue, {0, cut}, 0.02, 10, "late"};
  });
  const std::string log = ::testing::TempDir() + "late-shrink.log";
  KillOnExit worker{StartWorker(coordinator.url(), "right-token",
                                {"--threads", "1", "--step-seconds", "0.005"}, log)};
  ASSERT_EQ(WaitExitWithin(std::exchange(worker.pid, 0), std::chrono::seconds(60)), 0)
      << ReadFile(log);

  const auto reports = coordinator.reports();
  const auto ranges = Completed(reports);
  ASSERT_GE(ranges.size(), 2u);
  // Contiguous from 0, each item once.
  EXPECT_EQ(ranges.front().begin, 0u);
  for (size_t i = 1; i < ranges.size(); ++i) EXPECT_EQ(ranges[i].begin, ranges[i - 1].end);
  // 300 ms of steps of 5 ms went on past the cut.
  EXPECT_GT(ranges.back().end, cut + 1) << "cut at " << cut;
  EXPECT_TRUE(reports.back().idle);
  EXPECT_EQ(reports.back().position, ranges.back().end);
  // Those steps are handed in as several ranges, so that the coordinator can
  // take those before a cut when someone else handed in those after it.
  EXPECT_GE(reports.back().completed.size(), 3u);
}

// An exec job of 100 items of 50 ms each (`sleep 0.05`), one command per item.
coordinator::JobConfig SleepJob() {
  coordinator::JobConfig config = PrimesJob(1000);
  config.workload = {};
  config.workload.kind = workload::WorkloadKind::kExec;
  config.workload.items = 100;
  config.workload.exec.command = {"sleep", "0.05"};
  config.workload.exec.per_item = true;
  config.workload.exec.retries = 0;
  return config;
}

// The reports of a worker that runs `sleep 1` over items 0 to 2, one command
// a run (its runs: item 0, then items 1 and 2), asked to report every
// `report_every_s` and at least every `heartbeat_s`; `log` names its log.
// Its idle reports get `leases` in order (by default one of all three).
std::vector<protocol::ReportMessage> ReportsOfTwoSleepRuns(
    double report_every_s, double heartbeat_s, const std::string& log,
    std::vector<balance::Range> leases = {{0, 3}}) {
  coordinator::JobConfig config = SleepJob();
  config.workload.items = 3;
  config.workload.exec.per_item = false;
  config.workload.exec.command = {"sleep", "1"};
  const balance::Range last = leases.back();
  LateCoordinator coordinator(
      config,
      [=](const protocol::ReportMessage&) {
        return protocol::ReplyMessage{balance::Reply::Kind::kContinue, last, report_every_s,
                                      heartbeat_s, "late"};
      },
      std::chrono::milliseconds(0));
  coordinator.set_heartbeat(heartbeat_s);
  coordinator.set_report_every(report_every_s);
  coordinator.set_leases(std::move(leases));
  const std::string path = ::testing::TempDir() + log;
  KillOnExit worker{StartWorker(coordinator.url(), "right-token", {"--threads", "1"}, path)};
  EXPECT_EQ(WaitExitWithin(std::exchange(worker.pid, 0), std::chrono::seconds(60)), 0)
      << ReadFile(path);
  return coordinator.reports();
}

// A worker that runs one command for several items (an exec job without
// perItem) names the run's end in every report while it runs (runningEnd),
// so that the coordinator cuts its lease no nearer: the run's result is its
// whole, and a cut inside it would have it dropped once another worker hands
// in an item past the cut. The second run holds two items (a worker tries
// runs of two while it learns its command's start: worker/step_size.h).
TEST(WorkerProcessTest, NamesTheEndOfARunOfSeveralItemsWhileItRuns) {
  const auto reports = ReportsOfTwoSleepRuns(0.02, 0.2, "running-end.log");
  EXPECT_EQ(CompletedSpans(reports).back().end, 3u);
  size_t during_first = 0, during_second = 0;
  for (const auto& report : reports) {
    if (report.idle) continue;
    if (report.position == 0) {
      ++during_first;
      EXPECT_EQ(report.running_end, 0u) << "a run of one item can stop nowhere inside";
    } else if (report.position == 1 && report.running_end == 3) {
      ++during_second;
    } else {
      EXPECT_EQ(report.running_end, 0u) << "position " << report.position;
    }
  }
  EXPECT_GE(during_first, 2u) << "heartbeats while the first run's second passes";
  EXPECT_GE(during_second, 2u) << "the run of items 1 and 2, named while it runs";
}

// What a worker finished before a run of several items begins goes out as
// the run begins, although neither the cadence (10 s) nor the heartbeat
// (10 s) asks yet: held until the run's end, its wait would count at the
// coordinator as the worker's overhead of starting its lease.
TEST(WorkerProcessTest, ReportsWhatItFinishedBeforeARunOfSeveralItemsBegins) {
  const auto reports = ReportsOfTwoSleepRuns(10, 10, "report-before-run.log");
  const auto first = std::find_if(reports.begin(), reports.end(),
                                  [](const protocol::ReportMessage& r) { return !r.idle; });
  ASSERT_NE(first, reports.end()) << "no report before the lease's end";
  EXPECT_EQ(Completed({*first}), (std::vector<balance::Range>{{0, 1}}));
  EXPECT_EQ(first->position, 1u);
  EXPECT_EQ(first->running_end, 3u) << "sent as the run of items 1 and 2 begins";
  EXPECT_EQ(CompletedSpans(reports).back().end, 3u);
}

// The first run of a lease that holds several items is named as it begins,
// although nothing of the lease is finished yet and neither the cadence nor
// the heartbeat (10 s each) asks: a coordinator that did not know it could
// cut the lease inside it, and the run's whole result would be lost once
// another worker handed in an item past the cut. Two leases: item 0, then
// items 1 and 2, run as one command (`sleep 1`).
TEST(WorkerProcessTest, NamesTheFirstRunOfALeaseAsItBegins) {
  const auto reports = ReportsOfTwoSleepRuns(10, 10, "first-run-named.log", {{0, 1}, {1, 3}});
  // Idle reports ask for the first lease, hand in item 0 and ask for the
  // second, then hand in items 1 and 2; between the last two, the run named.
  std::vector<size_t> idle;
  for (size_t i = 0; i < reports.size(); ++i) {
    if (reports[i].idle) idle.push_back(i);
  }
  ASSERT_EQ(idle.size(), 3u);
  EXPECT_EQ(Completed({reports[idle[1]]}), (std::vector<balance::Range>{{0, 1}}));
  EXPECT_EQ(Completed({reports[idle[2]]}), (std::vector<balance::Range>{{1, 3}}));
  ASSERT_GT(idle[2] - idle[1], 1u) << "no report while the lease's first run went on";
  const protocol::ReportMessage& named = reports[idle[1] + 1];
  EXPECT_EQ(named.running_end, 3u);
  EXPECT_EQ(named.position, 1u);
  EXPECT_TRUE(Completed({named}).empty()) << "nothing of the lease finished yet";
}

// An item that takes longer than the lease (an exec command of minutes, here
// 2.5 s beside a lease of 1.5 s) keeps its lease: the worker reports that it
// is alive while the step computes, so the item runs once, on the worker
// that leased it, and its seconds are counted whole. Before, the worker went
// silent for the whole step, lost its lease after 1.5 s, and the second
// worker ran the same items again.
TEST(WorkerProcessTest, AStepLongerThanTheLeaseKeepsItsLease) {
  const std::string runs = ::testing::TempDir() + "long-step-runs.txt";
  std::remove(runs.c_str());
  coordinator::JobConfig config = SleepJob();
  config.workload.items = 2;
  config.workload.exec.command = {"sh", "-c", "echo \"$BALLAST_START\" >> \"$0\"; sleep 2.5", runs};
  config.policy = {balance::SelfSchedOptions{1}, ""};
  config.workers = {{"w0", 1.0}, {"w1", 1.0}};
  config.lease_seconds = 1.5;
  auto server = coordinator::Server::Start({});
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE((*server)->AddJob(config).ok());
  const std::string log0 = ::testing::TempDir() + "long-step-w0.log";
  const std::string log1 = ::testing::TempDir() + "long-step-w1.log";
  KillOnExit w0{StartWorker((*server)->url(), "right-token", {}, log0, "w0")};
  KillOnExit w1{StartWorker((*server)->url(), "right-token", {}, log1, "w1")};
  EXPECT_EQ(WaitExitWithin(std::exchange(w0.pid, 0), std::chrono::seconds(60)), 0)
      << ReadFile(log0);
  EXPECT_EQ(WaitExitWithin(std::exchange(w1.pid, 0), std::chrono::seconds(60)), 0)
      << ReadFile(log1);
  const auto view = (*server)->View("metrics-job");
  ASSERT_TRUE(view->done);
  EXPECT_EQ(view->result.exec().succeeded, 2u);
  // Each item's command ran once.
  std::istringstream lines(ReadFile(runs));
  std::vector<std::string> started;
  for (std::string line; std::getline(lines, line);) started.push_back(line);
  std::sort(started.begin(), started.end());
  EXPECT_EQ(started, (std::vector<std::string>{"0", "1"}));
  for (const auto& worker : view->workers) {
    EXPECT_EQ(worker.lost, 0u) << worker.name;
    EXPECT_EQ(worker.items, 1u) << worker.name;
    // Its heartbeats reached the coordinator while the item ran.
    EXPECT_GE(worker.reports, 3u) << worker.name;
    // The 2.5 s were counted whole, not cut to the time since a heartbeat.
    EXPECT_GT(worker.busy_s, 2.4) << worker.name;
    EXPECT_EQ(worker.dropped_busy_s, 0) << worker.name;
  }
}

// The test as a second worker `t`, over the coordinator's HTTP API: posts
// `report` and returns the reply.
protocol::ReplyMessage PostAs(const std::string& url, const protocol::ReportMessage& report) {
  web::http::client::http_client client(url);
  web::http::http_request request(web::http::methods::POST);
  request.set_request_uri("/v1/jobs/metrics-job/report");
  request.headers().add("Authorization", "Bearer right-token");
  request.set_body(protocol::ToJson(report).dump(), "application/json");
  const auto response = client.request(request).get();
  const auto reply =
      protocol::ParseReply(nlohmann::json::parse(response.extract_string(true).get()));
  EXPECT_TRUE(reply.ok()) << reply.status().ToString();
  return reply.ok() ? *reply : protocol::ReplyMessage{};
}

// Issue 42: in the endgame an idle worker runs a copy of the last worker's
// items (an exec backup); when the copy is handed in first, the job is done,
// and the worker still running the other copy's command ends it at once
// (its next heartbeat's reply says so) instead of running it to its end.
TEST(WorkerProcessTest, AFinishedJobEndsTheCommandsOfAStepStillRunning) {
  coordinator::JobConfig config = SleepJob();
  config.workload.items = 100;
  config.workload.exec.per_item = false;
  config.workload.exec.command = {"sleep", "60"};
  config.policy =
      testing_support::PolicyNamed("adaptive", {{"slowStart", "off"}, {"rebalance", "off"}});
  config.workers = {{"w0", 1.0}, {"t", 10.0}};
  config.lease_seconds = 2;
  auto server = coordinator::Server::Start({});
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE((*server)->AddJob(config).ok());
  const std::string log = ::testing::TempDir() + "done-ends-commands.log";
  KillOnExit w0{StartWorker((*server)->url(), "right-token", {}, log, "w0")};
  // w0 holds its lease and runs its first step's command.
  ASSERT_TRUE([&] {
    for (int i = 0; i < 500; ++i) {
      const auto view = (*server)->View("metrics-job");
      if (view && view->workers[0].holds_lease && view->workers[0].contacted) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }()) << ReadFile(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  protocol::ReportMessage ask;
  ask.worker = "t";
  ask.idle = true;
  const protocol::ReplyMessage mine = PostAs((*server)->url(), ask);
  ASSERT_EQ(mine.kind, balance::Reply::Kind::kLease);
  // t finishes its share, then the copy of w0's rest it is given.
  protocol::ReplyMessage reply = mine;
  for (int i = 0; i < 4 && reply.kind == balance::Reply::Kind::kLease; ++i) {
    protocol::ReportMessage done = ask;
    done.completed.push_back(
        {reply.lease, workload::Result::ExecSucceeded(reply.lease.size()).ToJson()});
    done.position = reply.lease.end;
    done.calc_seconds = 0.01 * static_cast<double>(reply.lease.size());
    reply = PostAs((*server)->url(), done);
  }
  ASSERT_EQ(reply.kind, balance::Reply::Kind::kDone) << ReadFile(log);
  const auto view = (*server)->View("metrics-job");
  ASSERT_TRUE(view->done);
  EXPECT_EQ(view->policy.backups, 1u);
  EXPECT_EQ(view->result.exec().succeeded, 100u);
  // w0's `sleep 60` is ended: it leaves within a few heartbeats, exit code 0.
  const auto start = Clock::now();
  EXPECT_EQ(WaitExitWithin(std::exchange(w0.pid, 0), std::chrono::seconds(20)), 0) << ReadFile(log);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 20);
  EXPECT_NE(ReadFile(log).find("job done while a step runs; ending its commands"),
            std::string::npos)
      << ReadFile(log);
}

// A reply that cuts the lease ahead of the worker while it computes a step
// stops the step at the cut: the items past it are the thief's, and a step
// that crossed the cut would be dropped whole once the thief handed them in.
// Items of 50 ms: the first report goes at item 1, and steps double (2, 4,
// 8 items), so the reply 500 ms later comes during the step [7, 15), at
// about item 11; it cuts the lease at item 13.
TEST(WorkerProcessTest, AStepStopsAtACutThatArrivesWhileItComputes) {
  const coordinator::JobConfig config = SleepJob();
  uint64_t cut = 0;
  LateCoordinator coordinator(
      config,
      [&cut](const protocol::ReportMessage& report) {
        cut = report.position + 12;
        return protocol::ReplyMessage{balance::Reply::Kind::kContinue, {0, cut}, 0.02, 10, "late"};
      },
      std::chrono::milliseconds(500));
  const std::string log = ::testing::TempDir() + "cut-mid-step.log";
  KillOnExit worker{StartWorker(coordinator.url(), "right-token",
                                {"--threads", "1", "--step-seconds", "2"}, log)};
  ASSERT_EQ(WaitExitWithin(std::exchange(worker.pid, 0), std::chrono::seconds(60)), 0)
      << ReadFile(log);

  const auto reports = coordinator.reports();
  const auto spans = CompletedSpans(reports);
  ASSERT_FALSE(spans.empty());
  EXPECT_EQ(spans.front().begin, 0u);
  for (size_t i = 1; i < spans.size(); ++i) EXPECT_EQ(spans[i].begin, spans[i - 1].end);
  EXPECT_EQ(spans.back().end, cut) << "the step went on past the cut";
  EXPECT_TRUE(reports.back().idle);
  EXPECT_EQ(reports.back().position, cut);
}

// A signal that carries the lease as a steal cut it stops the step being
// computed at the cut on receipt, though no reply has told the worker of the
// cut (every reply lets the lease run to its end). Items of 50 ms, steps of
// up to 2 s doubling from one item; the signal comes 400 ms after the first
// report, during the step [7, 15), and cuts the lease 12 items after that
// report's position, at item 13.
TEST(WorkerProcessTest, AStepStopsAtTheCutASignalCarries) {
  const coordinator::JobConfig config = SleepJob();
  std::atomic<uint64_t> cut{0};
  std::optional<std::chrono::steady_clock::time_point> first;  // of the first progress report
  LateCoordinator coordinator(
      config,
      [](const protocol::ReportMessage&) {
        return protocol::ReplyMessage{balance::Reply::Kind::kContinue, {0, 100}, 0.02, 10, "late"};
      },
      std::chrono::milliseconds(0),
      [&](const std::vector<protocol::ReportMessage>& reports)
          -> std::optional<protocol::SignalMessage> {
        // Polls come one at a time: no two calls overlap.
        auto progress = std::find_if(reports.begin(), reports.end(),
                                     [](const auto& report) { return !report.idle; });
        if (progress == reports.end() || cut != 0) return std::nullopt;
        const auto now = std::chrono::steady_clock::now();
        if (!first) first = now;
        if (now - *first < std::chrono::milliseconds(400)) return std::nullopt;
        cut = progress->position + 12;
        return protocol::SignalMessage{true, false, balance::Range{0, cut}};
      });
  const std::string log = ::testing::TempDir() + "signal-cut.log";
  KillOnExit worker{StartWorker(coordinator.url(), "right-token",
                                {"--threads", "1", "--step-seconds", "2"}, log)};
  ASSERT_EQ(WaitExitWithin(std::exchange(worker.pid, 0), std::chrono::seconds(60)), 0)
      << ReadFile(log);

  ASSERT_NE(cut, 0u) << "no signal was sent";
  const auto reports = coordinator.reports();
  const auto spans = CompletedSpans(reports);
  ASSERT_FALSE(spans.empty());
  EXPECT_EQ(spans.front().begin, 0u);
  for (size_t i = 1; i < spans.size(); ++i) EXPECT_EQ(spans[i].begin, spans[i - 1].end);
  EXPECT_EQ(spans.back().end, cut) << "the worker went on past the cut";
  EXPECT_TRUE(reports.back().idle);
  EXPECT_EQ(reports.back().position, cut.load());
}

// When the late reply is a new lease (the coordinator took the old one as
// ended at the reported position), what the worker finished of the old one
// meanwhile goes with its next report, beside the new lease's progress.
TEST(WorkerProcessTest, ReportsTheOldLeasesRestWhenALateReplyBringsANewLease) {
  const coordinator::JobConfig config = PrimesJob(150000);
  const uint64_t items = config.workload.items;
  uint64_t reported = 0;
  LateCoordinator coordinator(config, [&](const protocol::ReportMessage& report) {
    reported = report.position;
    return protocol::ReplyMessage{
        balance::Reply::Kind::kLease, {items - 10, items}, 0.02, 10, "late"};
  });
  const std::string log = ::testing::TempDir() + "late-lease.log";
  KillOnExit worker{StartWorker(coordinator.url(), "right-token",
                                {"--threads", "1", "--step-seconds", "0.005"}, log)};
  ASSERT_EQ(WaitExitWithin(std::exchange(worker.pid, 0), std::chrono::seconds(60)), 0)
      << ReadFile(log);

  const auto ranges = CompletedSpans(coordinator.reports());
  ASSERT_GE(ranges.size(), 3u);
  EXPECT_EQ(ranges[0], (balance::Range{0, reported}));
  EXPECT_EQ(ranges[1].begin, reported);
  EXPECT_GT(ranges[1].end, reported + 1);  // computed while the reply was late
  EXPECT_LT(ranges[1].end, items - 10);
  EXPECT_EQ(ranges.back().end, items);
  uint64_t new_lease = 0;
  for (size_t i = 2; i < ranges.size(); ++i) {
    EXPECT_GE(ranges[i].begin, items - 10);
    new_lease += ranges[i].size();
  }
  EXPECT_EQ(new_lease, 10u);
}

}  // namespace
}  // namespace ballast::worker
