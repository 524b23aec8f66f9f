// Support of the operator's end-to-end tests (operator_e2e_test.cc): the
// WeightedJob and the other resources they read, the `ballast operator`
// process of a test with its log, and the fixture OperatorTest — a client of
// the e2e control plane ($BALLAST_TESTENV_DIR/kubeconfig), a namespace of the
// test's own with the CRDs installed, an operator started for it, bounded
// waits that print the job's status, Events and the operator's log tail, and
// the node readiness helpers.
//
// Thread-safety: used from the test's thread (a test may share the client
// with a thread of its own).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/kube/client.h"
#include "net/kube/http_client.h"
#include "net/kube/kubeconfig.h"
#include "tests/support/free_port.h"
#include "tests/support/primes_workload.h"
#include "tests/support/proc_file.h"
#include "worker/kernels/reference.h"

namespace ballast::operator_e2e {

namespace fs = std::filesystem;
using kube::ResourceRef;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

inline const ResourceRef kJobs = {"ballast.io", "v1alpha1", "weightedjobs", true, "", ""};
inline const ResourceRef kPods = {"", "v1", "pods", true, "", ""};
inline const ResourceRef kSecrets = {"", "v1", "secrets", true, "", ""};
inline const ResourceRef kEvents = {"", "v1", "events", true, "", ""};
inline const ResourceRef kNodes = {"", "v1", "nodes", false, "", ""};
inline const ResourceRef kProfiles = {"ballast.io", "v1alpha1", "weightprofiles", false, "", ""};

// Seed 000's boards and their weights under the raspberry-pi profile.
inline const std::map<std::string, double> kSeed000Weights = {
    {"pi4b-0", 5}, {"pi4b-1", 5}, {"pi3b-0", 1}};

// Job sizes: primes by trial division below the limit. 200000 is about 3 s
// of one host core (17984 primes); 300000 about 6.5 s, so that a test can
// act while the job runs on the boards' 1.2 host cores.
constexpr uint64_t kSmallLimit = 200000;
constexpr uint64_t kMidRunLimit = 300000;

inline std::string TestenvDir() {
  const char* dir = std::getenv("BALLAST_TESTENV_DIR");
  return dir ? dir : "";
}

// Removes a directory a job's commands write into. An endgame copy that lost
// may still run when the job says Succeeded, until its worker's next
// heartbeat or its pod's deletion stops it, and write into the directory
// while it is removed ("Directory not empty"); once the directory is gone
// its writes fail. Retried for up to 10 s.
inline void RemoveCommandOutputs(const fs::path& dir) {
  std::error_code error;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::remove_all(dir, error);
    if (!error) return;
    std::this_thread::sleep_for(milliseconds(100));
  }
  ADD_FAILURE() << "cannot remove " << dir << ": " << error.message();
}

inline std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) {
    return std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '-';
  });
  return text;
}

// The last `lines` lines of a file ("" when it cannot be read).
inline std::string Tail(const fs::path& path, size_t lines) {
  std::ifstream in(path);
  std::deque<std::string> kept;
  std::string line;
  while (std::getline(in, line)) {
    kept.push_back(line);
    if (kept.size() > lines) kept.pop_front();
  }
  std::string text;
  for (const auto& l : kept) text += l + "\n";
  return text;
}

// Runs `command` with the control plane's env file sourced (kubectl on PATH,
// KUBECONFIG); returns the exit code and the combined output.
inline std::pair<int, std::string> Shell(const std::string& command) {
  const std::string full = ". \"$BALLAST_TESTENV_DIR/env\" && { " + command + " ; } 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

using testing_support::FreePort;

// PIDs of the worker processes of coordinator job `job_id` (on `node`, or on
// any node when empty; of every job whose id starts with `job_id` when
// `prefix`), found by their environment.
inline std::vector<pid_t> WorkerPids(const std::string& job_id, const std::string& node = "",
                                     bool prefix = false) {
  std::vector<pid_t> pids;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const std::string environ = testing::ReadProcFile(entry.path() / "environ");
    std::set<std::string> vars;
    std::stringstream split(environ);
    std::string var;
    bool job = false;
    while (std::getline(split, var, '\0')) {
      vars.insert(var);
      job |= prefix ? var.rfind("BALLAST_JOB=" + job_id, 0) == 0 : var == "BALLAST_JOB=" + job_id;
    }
    if (!job) continue;
    if (!node.empty() && !vars.count("BALLAST_WORKER_NAME=" + node)) continue;
    pids.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return pids;
}

// GET `path` from 127.0.0.1:`port`: the status code and the body; {0, ""}
// when nothing answers.
inline std::pair<int, std::string> HttpGet(uint16_t port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return {0, ""};
  }
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  if (write(fd, request.data(), request.size()) < 0) {
    close(fd);
    return {0, ""};
  }
  std::string answer;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) answer.append(buffer, n);
  close(fd);
  if (answer.rfind("HTTP/1.1 ", 0) != 0) return {0, answer};
  const auto body = answer.find("\r\n\r\n");
  return {std::atoi(answer.c_str() + 9), body == std::string::npos ? "" : answer.substr(body + 4)};
}

// A primes job by trial division on seed 000's boards.
inline json PrimesJob(const std::string& name, uint64_t limit) {
  return {{"apiVersion", "ballast.io/v1alpha1"},
          {"kind", "WeightedJob"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"workload", {{"primes", {{"limit", limit}, {"method", "trial"}}}}},
            {"policy", "adaptive"},
            {"profile", "raspberry-pi"},
            {"leaseSeconds", 10},
            {"nodeSelector", {{"ballast.io/pool", "seed000"}}}}}};
}

// The reference result of the primes below `limit`, as status.result shows it.
inline json ReferenceResult(uint64_t limit) {
  auto result = kernels::ReferenceResult(testing::PrimesWorkload(limit));
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? result->ToJson() : json();
}

inline json StatusOf(const json& job) { return job.value("status", json::object()); }
inline std::string PhaseOf(const json& job) { return StatusOf(job).value("phase", ""); }
inline uint64_t CompletedOf(const json& job) {
  return StatusOf(job).value("completedItems", uint64_t{0});
}

inline json ConditionOf(const json& job, const std::string& type) {
  for (const auto& c : StatusOf(job).value("conditions", json::array())) {
    if (c.value("type", "") == type) return c;
  }
  return json::object();
}

// Items in the checkpoint's completed ranges.
inline uint64_t CheckpointItems(const json& job) {
  uint64_t items = 0;
  for (const auto& range :
       StatusOf(job).value("/checkpoint/completed"_json_pointer, json::array())) {
    items += range[1].get<uint64_t>() - range[0].get<uint64_t>();
  }
  return items;
}

inline bool Deleting(const json& object) {
  return object["metadata"].contains("deletionTimestamp");
}

// The `ballast operator` process of a test: its output appended to one log.
class OperatorProcess {
 public:
  // `env`: NAME=VALUE entries added to the test's environment.
  OperatorProcess(std::vector<std::string> args, fs::path log, std::vector<std::string> env = {})
      : args_(std::move(args)), log_(std::move(log)), env_(std::move(env)) {}
  ~OperatorProcess() { Stop(); }

  // Starts the process; false (with a test failure) when fork fails.
  bool Start() {
    {
      std::ofstream marker(log_, std::ios::app);
      marker << "=== test: starting ballast";
      for (const auto& arg : args_) marker << " " << arg;
      marker << "\n";
    }
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(BALLAST_BINARY));
    for (auto& arg : args_) argv.push_back(arg.data());
    argv.push_back(nullptr);
    // Built before fork: the child may only make async-signal-safe calls.
    std::vector<char*> envp;
    for (char** var = environ; *var; ++var) envp.push_back(*var);
    for (auto& var : env_) envp.push_back(var.data());
    envp.push_back(nullptr);
    const std::string log = log_.string();
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) {
      ADD_FAILURE() << "fork failed";
      return false;
    }
    if (pid_ == 0) {
      // Only async-signal-safe calls until exec. Die with the test.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
      }
      execve(BALLAST_BINARY, argv.data(), envp.data());
      _exit(127);
    }
    return true;
  }

  // Whether the process still runs (reaps it when it ended).
  bool Running() {
    if (pid_ <= 0) return false;
    int status = 0;
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == 0) return true;
    exit_status_ = status;
    pid_ = -1;
    return false;
  }

  // Sends `signal` and waits (up to `timeout`, then SIGKILL) until it exits.
  void Kill(int signal, milliseconds timeout = seconds(15)) {
    if (pid_ <= 0) return;
    kill(pid_, signal);
    const auto deadline = Clock::now() + timeout;
    while (Running()) {
      if (Clock::now() > deadline) {
        kill(pid_, SIGKILL);
        int status = 0;
        waitpid(pid_, &status, 0);
        exit_status_ = status;
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
  }
  void Stop() { Kill(SIGTERM); }

  std::string ExitDescription() const {
    if (WIFEXITED(exit_status_)) return "exit code " + std::to_string(WEXITSTATUS(exit_status_));
    if (WIFSIGNALED(exit_status_)) return "signal " + std::to_string(WTERMSIG(exit_status_));
    return "unknown exit";
  }

 private:
  std::vector<std::string> args_;
  fs::path log_;
  std::vector<std::string> env_;
  pid_t pid_ = -1;
  int exit_status_ = 0;
};

class OperatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = TestenvDir();
    ASSERT_FALSE(dir.empty()) << "BALLAST_TESTENV_DIR is unset: run through ctest -L e2e, or "
                                 "scripts/testenv-up and point BALLAST_TESTENV_DIR at it";
    auto config = kube::LoadKubeconfig(dir + "/kubeconfig");
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    auto client = kube::HttpKubeClient::Create(*config);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(*client);

    test_name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::random_device random;
    ns_ = "op-" + Lower(test_name_).substr(0, 40) + "-" + std::to_string(random() % 1000000);
    auto created = client_->Create(
        kube::Namespaces(),
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}});
    ASSERT_TRUE(created.ok()) << created.status().ToString();

    work_dir_ = fs::temp_directory_path() / "ballast-operator-e2e" / ns_;
    fs::create_directories(work_dir_);
    log_ = work_dir_ / "operator.log";

    ASSERT_NO_FATAL_FAILURE(InstallCrds());
    port_ = FreePort();
    ASSERT_NE(port_, 0);
    ASSERT_TRUE(StartOperator());
  }

  void TearDown() override {
    if (operator_) operator_->Stop();
    if (HasFailure()) PrintDiagnostics();
    for (const auto& node : touched_nodes_) RestoreNodeReady(node);
    if (client_ && !ns_.empty()) {
      (void)client_->Delete(kube::Namespaces().Named(ns_));
      // The node agent stops the workers as their pods go; the next test
      // should not share the boards with them.
      const bool gone = Poll(
          [&] { return WorkerPids(ns_ + ".", "", true).empty() && NoPodsLeft(); }, seconds(60));
      if (!gone) std::cout << "note: worker pods of " << ns_ << " still there after 60 s\n";
    }
    if (!HasFailure()) fs::remove_all(work_dir_);
  }

  // ---- the world ------------------------------------------------------

  // The CRDs and the raspberry-pi profile, applied (idempotent; other tests
  // apply them too, so a lost create race is retried) and Established.
  void InstallCrds() {
    const std::string source = BALLAST_SOURCE_DIR;
    const std::string crds = "kubectl apply -f '" + source +
                             "/crds/ballast.io_weightedjobs.yaml' -f '" + source +
                             "/crds/ballast.io_weightprofiles.yaml'";
    ApplyWithRetries(crds);
    // kubectl wait fails at once, instead of waiting, while a new CRD has no
    // status yet (kubernetes/kubernetes#66439); the WeightedJob CRD, large
    // with its pod template, gets one a few hundred milliseconds after it is
    // created.
    std::pair<int, std::string> waited;
    for (int attempt = 0; attempt < 50; ++attempt) {
      waited = Shell(
          "kubectl wait --for condition=Established --timeout=60s "
          "crd/weightedjobs.ballast.io crd/weightprofiles.ballast.io");
      if (waited.second.find("status.conditions accessor error") == std::string::npos) break;
      std::this_thread::sleep_for(milliseconds(200));
    }
    ASSERT_EQ(waited.first, 0) << "the CRDs are not Established: " << waited.second;
    ApplyWithRetries("kubectl apply -f '" + source + "/crds/profiles/'");
    ASSERT_TRUE(
        Poll([&] { return client_->Get(kProfiles.Named("raspberry-pi")).ok(); }, seconds(30)));
    ASSERT_TRUE(Poll([&] { return client_->List(kJobs.In(ns_)).ok(); }, seconds(30)))
        << "WeightedJobs are not served";
  }

  void ApplyWithRetries(const std::string& command) {
    std::string output;
    for (int attempt = 0; attempt < 10; ++attempt) {
      auto [code, out] = Shell(command);
      if (code == 0) return;
      output = out;
      std::this_thread::sleep_for(seconds(1));
    }
    FAIL() << command << " fails: " << output;
  }

  std::vector<std::string> OperatorArgs() const {
    return {"operator", "--kubeconfig", TestenvDir() + "/kubeconfig", "--namespace", ns_,
            "--coordinator-listen", "127.0.0.1:" + std::to_string(port_), "--worker-image",
            "ballast-worker:test", "--status-interval", "0.5", "--progress-interval", "0.5",
            "--identity", Lower(test_name_),
            // The test's own history store: no test's jobs weigh another's.
            "--history-configmap", ns_ + "/history"};
  }

  // An operator of this test, not started, that competes for the leader
  // Lease in the test's namespace as `identity`, with `extra` flags and
  // `env` added.
  std::unique_ptr<OperatorProcess> Replica(const std::string& identity,
                                           const std::vector<std::string>& extra = {},
                                           std::vector<std::string> env = {}) const {
    std::vector<std::string> args = OperatorArgs();
    *(std::find(args.begin(), args.end(), "--identity") + 1) = identity;
    args.insert(args.end(), {"--leader-elect", "--lease-namespace", ns_});
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<OperatorProcess>(args, log_, std::move(env));
  }

  bool StartOperator() {
    operator_ = std::make_unique<OperatorProcess>(OperatorArgs(), log_);
    return operator_->Start();
  }

  // Restarts the fixture's operator with `extra` flags.
  void RestartWith(const std::vector<std::string>& extra) {
    operator_->Stop();
    std::vector<std::string> args = OperatorArgs();
    args.insert(args.end(), extra.begin(), extra.end());
    operator_ = std::make_unique<OperatorProcess>(args, log_);
    ASSERT_TRUE(operator_->Start());
  }

  // Polls `done` every 50 ms for up to `timeout`.
  static bool Poll(const std::function<bool()>& done, milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!done()) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(milliseconds(50));
    }
    return true;
  }

  bool NoPodsLeft() {
    auto pods = client_->List(kPods.In(ns_));
    return pods.ok() && pods->items.empty();
  }

  std::optional<json> GetJob(const std::string& name) {
    auto job = client_->Get(kJobs.In(ns_).Named(name));
    if (!job.ok()) return std::nullopt;
    return *job;
  }

  json CreateJob(const json& job) {
    auto created = client_->Create(kJobs.In(ns_), job);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : json();
  }

  // The job once `done` holds for it, or nullopt after `timeout` (a test
  // failure naming `what`, with the job's status and the operator's log), or
  // at once when the operator process died.
  std::optional<json> WaitForJob(const std::string& name,
                                 const std::function<bool(const json&)>& done, milliseconds timeout,
                                 const std::string& what) {
    const auto start = Clock::now();
    std::optional<json> job;
    while (true) {
      job = GetJob(name);
      if (job && done(*job)) return job;
      if (operator_ && !operator_->Running()) {
        ADD_FAILURE() << "the operator exited (" << operator_->ExitDescription()
                      << ") while waiting for " << what << "\n"
                      << Describe(name);
        return std::nullopt;
      }
      if (Clock::now() - start > timeout) {
        ADD_FAILURE() << "timed out after " << std::chrono::duration_cast<seconds>(timeout).count()
                      << " s waiting for " << what << "\n"
                      << Describe(name);
        return std::nullopt;
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
  }

  std::optional<json> WaitSucceeded(const std::string& name, milliseconds timeout = seconds(180)) {
    return WaitForJob(
        name, [](const json& job) { return PhaseOf(job) == "Succeeded"; }, timeout,
        "job " + name + " to succeed");
  }

  // Running, with some items finished and more to go, and every worker pod
  // of the job Running.
  std::optional<json> WaitMidRun(const std::string& name) {
    return WaitForJob(
        name,
        [&](const json& job) {
          const json status = StatusOf(job);
          if (status.value("phase", "") != "Running") return false;
          const uint64_t completed = CompletedOf(job);
          if (completed == 0 || completed >= status.value("items", uint64_t{0})) return false;
          return RunningPods(name) == kSeed000Weights.size();
        },
        seconds(90), "job " + name + " to run on every node with items finished");
  }

  // Running, with a checkpoint in status and items still to go.
  std::optional<json> WaitCheckpointed(const std::string& name) {
    return WaitForJob(
        name,
        [](const json& job) {
          return PhaseOf(job) == "Running" && CompletedOf(job) > 0 && CheckpointItems(job) > 0 &&
                 CompletedOf(job) < StatusOf(job).value("items", uint64_t{0});
        },
        seconds(90), "job " + name + " to run with a checkpoint in status");
  }

  std::vector<json> JobPods(const std::string& job) {
    kube::ListOptions options;
    options.label_selector = "ballast.io/job=" + job;
    auto pods = client_->List(kPods.In(ns_), options);
    return pods.ok() ? pods->items : std::vector<json>{};
  }

  size_t RunningPods(const std::string& job) {
    size_t running = 0;
    for (const auto& pod : JobPods(job)) {
      running += pod.value("/status/phase"_json_pointer, "") == "Running" && !Deleting(pod);
    }
    return running;
  }

  // ---- holding a job mid-run --------------------------------------------

  // Worker processes the test stopped (SIGSTOP), let go on (SIGCONT) by
  // Release or at the end of the scope, whatever the test's outcome.
  class HeldWorkers {
   public:
    explicit HeldWorkers(std::vector<pid_t> pids) : pids_(std::move(pids)) {}
    HeldWorkers(const HeldWorkers&) = delete;
    HeldWorkers& operator=(const HeldWorkers&) = delete;
    ~HeldWorkers() { Release(); }
    void Release() {
      for (const pid_t pid : pids_) kill(pid, SIGCONT);
      pids_.clear();
    }

   private:
    std::vector<pid_t> pids_;
  };

  // `job` with a lease long enough to be held (HoldWorkers): a held worker
  // is silent, and a worker silent for its job's leaseSeconds is lost.
  static json HeldJob(json job) {
    job["spec"]["leaseSeconds"] = 120;
    return job;
  }

  // Holds job `name` where it is, so that it cannot end while the test acts
  // on it mid-run: the worker processes on each of seed 000's boards (or on
  // `nodes`) stopped. A job held on every board stops only by what the test
  // does to it (Stopping), however short it is; release it then.
  HeldWorkers HoldWorkers(const std::string& name, std::vector<std::string> nodes = {}) {
    if (nodes.empty()) {
      for (const auto& [node, weight] : kSeed000Weights) nodes.push_back(node);
    }
    std::vector<pid_t> held;
    for (const auto& node : nodes) {
      std::vector<pid_t> pids;
      EXPECT_TRUE(Poll(
          [&] {
            pids = WorkerPids(JobId(name), node);
            return !pids.empty();
          },
          seconds(30)))
          << "no worker of " << name << " on " << node;
      for (const pid_t pid : pids) {
        if (kill(pid, SIGSTOP) == 0) held.push_back(pid);
      }
    }
    return HeldWorkers(std::move(held));
  }

  // Whether job `name` is being stopped: no longer Running, or its worker
  // pods being deleted or gone.
  bool Stopping(const std::string& name) {
    auto job = GetJob(name);
    if (!job || PhaseOf(*job) != "Running") return true;
    const auto pods = JobPods(name);
    return pods.empty() ||
           std::any_of(pods.begin(), pods.end(), [](const json& pod) { return Deleting(pod); });
  }

  std::vector<json> JobEvents(const std::string& job) {
    kube::ListOptions options;
    options.field_selector = "involvedObject.name=" + job;
    auto events = client_->List(kEvents.In(ns_), options);
    return events.ok() ? events->items : std::vector<json>{};
  }

  // Whether the worker pod of `job` on `node` whose uid was `uid` goes
  // (deleted, being deleted, or replaced by a new one) within 30 s.
  bool PodGoesWithin30s(const std::string& job, const std::string& node, const std::string& uid) {
    return Poll(
        [&] {
          auto now = client_->Get(kPods.In(ns_).Named(job + "-" + node));
          return !now.ok() || Deleting(*now) || (*now)["metadata"]["uid"] != uid;
        },
        seconds(30));
  }

  // The first Event of `job` with `reason`, or nullopt.
  std::optional<json> FindEvent(const std::string& job, const std::string& reason) {
    for (const auto& event : JobEvents(job)) {
      if (event.value("reason", "") == reason) return event;
    }
    return std::nullopt;
  }

  // Waits (Events are posted best effort, a moment after the transition).
  std::optional<json> WaitEvent(const std::string& job, const std::string& reason,
                                milliseconds timeout = seconds(20)) {
    std::optional<json> event;
    const bool found = Poll(
        [&] {
          event = FindEvent(job, reason);
          return event.has_value();
        },
        timeout);
    if (!found) ADD_FAILURE() << "no Event with reason " << reason << "\n" << Describe(job);
    return event;
  }

  std::string JobId(const std::string& job) const { return ns_ + "." + job; }

  // The job's status, its Events, the operator's log tail: for failures.
  std::string Describe(const std::string& name) {
    std::ostringstream out;
    auto job = GetJob(name);
    out << "--- job " << ns_ << "/" << name << " status:\n"
        << (job ? StatusOf(*job).dump(2) : std::string("(job not found)")) << "\n";
    out << "--- pods:\n";
    for (const auto& pod : JobPods(name)) {
      out << "  " << pod["metadata"].value("name", "") << " "
          << pod.value("/status/phase"_json_pointer, "") << (Deleting(pod) ? " (deleting)" : "")
          << " node=" << pod.value("/spec/nodeName"_json_pointer, "") << "\n";
    }
    out << "--- events:\n";
    for (const auto& event : JobEvents(name)) {
      out << "  " << event.value("type", "") << " " << event.value("reason", "") << ": "
          << event.value("message", "") << "\n";
    }
    out << "--- operator log (" << log_.string() << "), last lines:\n" << Tail(log_, 60);
    return out.str();
  }

  // The operator's log and the worker pods' logs, at the end of a failed test.
  void PrintDiagnostics() {
    std::cout << "--- operator log " << log_.string() << ", last 200 lines:\n" << Tail(log_, 200);
    std::error_code error;
    const fs::path pods = fs::path(TestenvDir()) / "agent" / "pods";
    for (const auto& entry : fs::directory_iterator(pods, error)) {
      if (entry.path().filename().string().rfind(ns_ + "_", 0) != 0) continue;
      for (const auto& file : fs::directory_iterator(entry.path(), error)) {
        if (file.path().extension() != ".log") continue;
        std::cout << "--- " << file.path().string() << ", last 30 lines:\n"
                  << Tail(file.path(), 30);
      }
    }
  }

  // ---- nodes ----------------------------------------------------------

  // Sets `node`'s Ready condition through the status subresource, as the
  // kubelet (here the node agent) does.
  void SetNodeReady(const std::string& node, bool ready, const std::string& reason,
                    const std::string& message) {
    const Status written = kube::RetryOnConflict([&]() -> Status {
      auto object = client_->Get(kNodes.Named(node));
      if (!object.ok()) return object.status();
      json conditions = object->value("/status/conditions"_json_pointer, json::array());
      const std::string now = RfcNow();
      for (auto& condition : conditions) {
        if (condition.value("type", "") != "Ready") continue;
        condition["status"] = ready ? "True" : "False";
        condition["reason"] = reason;
        condition["message"] = message;
        condition["lastHeartbeatTime"] = now;
        condition["lastTransitionTime"] = now;
      }
      // A merge patch replaces the whole list: every condition is in it;
      // the resourceVersion makes it conditional on what we read.
      auto patched = client_->PatchStatus(
          kNodes.Named(node),
          {{"metadata", {{"resourceVersion", kube::ResourceVersionOf(*object)}}},
           {"status", {{"conditions", conditions}}}});
      return patched.status();
    });
    ASSERT_TRUE(written.ok()) << written.ToString();
  }

  static std::string RfcNow() {
    const std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return text;
  }

  bool NodeReady(const std::string& node) {
    auto object = client_->Get(kNodes.Named(node));
    if (!object.ok()) return false;
    for (const auto& c : object->value("/status/conditions"_json_pointer, json::array())) {
      if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
    }
    return false;
  }

  bool NodeReadyAndUntainted(const std::string& node) {
    auto object = client_->Get(kNodes.Named(node));
    if (!object.ok()) return false;
    bool ready = false;
    for (const auto& c : object->value("/status/conditions"_json_pointer, json::array())) {
      if (c.value("type", "") == "Ready") ready = c.value("status", "") == "True";
    }
    for (const auto& taint : object->value("/spec/taints"_json_pointer, json::array())) {
      const std::string key = taint.value("key", "");
      if (key == "node.kubernetes.io/not-ready" || key == "node.kubernetes.io/unreachable") {
        return false;
      }
    }
    return ready;
  }

  // Leaves `node` as the test found it: Ready (as the node agent would
  // within a minute) and without the node lifecycle controller's taints.
  void RestoreNodeReady(const std::string& node) {
    if (!NodeReady(node)) {
      SetNodeReady(node, true, "KubeletReady", "ballast-node-agent is posting ready status");
    }
    EXPECT_TRUE(Poll([&] { return NodeReadyAndUntainted(node); }, seconds(90)))
        << "node " << node << " is not Ready and untainted 90 s after the test";
  }

  // ---- checks -----------------------------------------------------------

  // Succeeded with the Complete condition, every item finished once, and
  // the result equal to the reference's.
  void ExpectCompleteAndExact(const json& job, uint64_t limit) {
    const json status = StatusOf(job);
    EXPECT_EQ(status.value("phase", ""), "Succeeded");
    const json complete = ConditionOf(job, "Complete");
    EXPECT_EQ(complete.value("status", ""), "True") << complete.dump();
    EXPECT_EQ(complete.value("reason", ""), "AllItemsFinished") << complete.dump();
    EXPECT_EQ(status.value("items", uint64_t{0}), limit / 2);
    EXPECT_EQ(status.value("completedItems", uint64_t{0}), limit / 2);
    EXPECT_EQ(status.value("result", json()), ReferenceResult(limit)) << status.dump(2);
    EXPECT_FALSE(status.contains("checkpoint")) << "a finished job keeps no checkpoint";
  }

  std::unique_ptr<kube::HttpKubeClient> client_;
  std::string test_name_;
  std::string ns_;
  fs::path work_dir_;
  fs::path log_;
  uint16_t port_ = 0;
  std::unique_ptr<OperatorProcess> operator_;
  std::set<std::string> touched_nodes_;
};

}  // namespace ballast::operator_e2e
