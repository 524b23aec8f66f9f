// The operator against the real control plane when nodes cannot carry a
// worker (docs/operator.md, "What the operator does with a job"): a node of an
// architecture with no worker image, a worker image the node cannot start
// (the node agent reports ErrImagePull for an image it has no mapping for,
// as a kubelet without a registry would), a coordinator the workers cannot
// reach, and probes that fail when the watches cannot work.
//
// seed 000's boards: pi4b-0 and pi4b-1 are arm64, pi3b-0 is arm.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "tests/operator/e2e/operator_e2e_support.h"

namespace ballast::operator_e2e {
namespace {

class OperatorFaultsTest : public OperatorTest {
 protected:
  json ExcludedNodes(const json& job) {
    return StatusOf(job).value("excludedNodes", json::array());
  }

  // The log of `job`'s worker container on `node`, as the node agent wrote it.
  std::string WorkerLog(const std::string& job, const std::string& node) {
    std::error_code error;
    const fs::path pods = fs::path(TestenvDir()) / "agent" / "pods";
    const std::string prefix = ns_ + "_" + job + "-" + node + "_";
    for (const auto& entry : fs::directory_iterator(pods, error)) {
      if (entry.path().filename().string().rfind(prefix, 0) != 0) continue;
      std::ifstream in(entry.path() / "worker.log");
      return std::string((std::istreambuf_iterator<char>(in)), {});
    }
    return "";
  }
};

TEST_F(OperatorFaultsTest, NodesOfAnArchitectureWithNoWorkerAreNamedAndTheOthersFinishExactly) {
  ASSERT_NO_FATAL_FAILURE(RestartWith({"--worker-architectures", "amd64,arm64"}));
  const std::string name = "primes";
  ASSERT_FALSE(CreateJob(PrimesJob(name, kSmallLimit)).is_null());
  auto job = WaitSucceeded(name);
  ASSERT_TRUE(job);
  ExpectCompleteAndExact(*job, kSmallLimit);
  const json excluded = ExcludedNodes(*job);
  ASSERT_EQ(excluded.size(), 1u) << excluded;
  EXPECT_EQ(excluded[0].value("name", ""), "pi3b-0");
  EXPECT_EQ(excluded[0].value("reason", ""), "ArchitectureNotSupported");
  EXPECT_EQ(excluded[0].value("message", ""),
            "node pi3b-0: architecture arm is not in --worker-architectures (amd64, arm64): no "
            "worker image for it");
  std::set<std::string> nodes;
  for (const auto& row : StatusOf(*job).value("nodes", json::array())) {
    nodes.insert(row.value("name", ""));
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"pi4b-0", "pi4b-1"}));
  for (const auto& pod : JobPods(name)) {
    EXPECT_NE(pod.value("/spec/nodeName"_json_pointer, ""), "pi3b-0");
  }
  auto event = WaitEvent(name, "ArchitectureNotSupported");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->value("type", ""), "Warning");
}

TEST_F(OperatorFaultsTest, AWorkerImageTheNodeCannotStartIsGivenUpAndTheJobStaysExact) {
  // pi3b-0's worker gets an image the node has not got; the pods of the
  // others the worker image, with their per-architecture resources.
  ASSERT_NO_FATAL_FAILURE(RestartWith(
      {"--worker-image-for", "arm=registry.invalid/no-such-worker:1", "--worker-resources-for",
       "arm64=requests.cpu=10m,limits.memory=512Mi", "--worker-start-timeout", "3"}));
  const std::string name = "primes";
  ASSERT_FALSE(CreateJob(PrimesJob(name, kSmallLimit)).is_null());
  auto waiting = WaitForJob(
      name,
      [&](const json&) {
        for (const auto& pod : JobPods(name)) {
          const json statuses = pod.value("/status/containerStatuses"_json_pointer, json::array());
          if (!statuses.empty() &&
              statuses[0].value("/state/waiting/reason"_json_pointer, "") == "ErrImagePull") {
            return true;
          }
        }
        return false;
      },
      seconds(60), "pi3b-0's worker pod to wait with ErrImagePull");
  ASSERT_TRUE(waiting);
  for (const auto& pod : JobPods(name)) {
    const json container = pod["spec"]["containers"][0];
    if (pod.value("/spec/nodeName"_json_pointer, "") == "pi3b-0") {
      EXPECT_EQ(container.value("image", ""), "registry.invalid/no-such-worker:1");
    } else {
      EXPECT_EQ(container.value("/resources/limits/memory"_json_pointer, ""), "512Mi");
    }
  }
  auto job = WaitSucceeded(name);
  ASSERT_TRUE(job);
  ExpectCompleteAndExact(*job, kSmallLimit);
  const json excluded = ExcludedNodes(*job);
  ASSERT_EQ(excluded.size(), 1u) << excluded;
  EXPECT_EQ(excluded[0].value("name", ""), "pi3b-0");
  EXPECT_EQ(excluded[0].value("reason", ""), "ErrImagePull");
  auto event = WaitEvent(name, "WorkerCannotStart");
  ASSERT_TRUE(event);
  const std::string message = event->value("message", "");
  EXPECT_NE(message.find("node pi3b-0: the worker could not start for 3 s: the image "
                         "registry.invalid/no-such-worker:1 cannot be pulled (container worker "
                         "(registry.invalid/no-such-worker:1): failed to pull image"),
            std::string::npos)
      << message;
  auto blocked = WaitEvent(name, "WorkerStartBlocked");
  ASSERT_TRUE(blocked) << "said before the node is given up";
  EXPECT_NE(blocked->value("message", "")
                .find("node pi3b-0: the worker cannot start: the image "
                      "registry.invalid/no-such-worker:1 cannot be "
                      "pulled"),
            std::string::npos)
      << blocked->dump();
  EXPECT_EQ(StatusOf(*job).value("failedPods", -1), 0) << "a given-up node is not a failure";
  EXPECT_TRUE(Poll(
      [&] {
        for (const auto& pod : JobPods(name)) {
          if (pod.value("/spec/nodeName"_json_pointer, "") == "pi3b-0") return false;
        }
        return true;
      },
      seconds(30)))
      << "pi3b-0's pod was not deleted";
}

TEST_F(OperatorFaultsTest, WorkersThatCannotReachTheCoordinatorSaySoAndTheJobHasAnEvent) {
  // The coordinator listens on port_, but the workers are sent to a port
  // nobody listens on (held, so no other test takes it meanwhile).
  const int held = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(held, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  getsockname(held, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  ASSERT_NO_FATAL_FAILURE(RestartWith({"--coordinator-url", url, "--worker-start-timeout", "3"}));
  const std::string name = "primes";
  ASSERT_FALSE(CreateJob(PrimesJob(name, kSmallLimit)).is_null());
  auto event = WaitEvent(name, "CoordinatorUnreachable", seconds(60));
  ASSERT_TRUE(event);
  const std::string message = event->value("message", "");
  EXPECT_NE(message.find("without reaching the coordinator at " + url), std::string::npos)
      << message;
  EXPECT_NE(message.find("kubectl logs primes-"), std::string::npos) << message;
  const std::string node = message.substr(5, message.find(':') - 5);  // "node X: ..."
  std::string log;
  EXPECT_TRUE(Poll(
      [&] {
        log = WorkerLog(name, node);
        return log.find("cannot reach the coordinator, retrying url=" + url) != std::string::npos;
      },
      seconds(10)))
      << "worker log of " << node << ":\n"
      << log;
  EXPECT_NE(log.find("cause=\"connection to 127.0.0.1:" + std::to_string(ntohs(address.sin_port)) +
                     " refused"),
            std::string::npos)
      << log;
  (void)client_->Delete(kJobs.In(ns_).Named(name));
  close(held);
}

TEST_F(OperatorFaultsTest, ProbesFailWhenTheWatchesCannotWork) {
  // The restricted identity may not list anything: every informer fails.
  const uint16_t health = FreePort();
  operator_->Stop();
  std::vector<std::string> args = OperatorArgs();
  args[2] = TestenvDir() + "/kubeconfig-restricted";  // --kubeconfig
  args.insert(args.end(), {"--health-listen", "127.0.0.1:" + std::to_string(health),
                           "--health-stall-seconds", "2"});
  operator_ = std::make_unique<OperatorProcess>(args, log_);
  ASSERT_TRUE(operator_->Start());
  std::pair<int, std::string> ready;
  EXPECT_TRUE(Poll(
      [&] {
        ready = HttpGet(health, "/readyz");
        return ready.first != 0;
      },
      seconds(10)));
  EXPECT_EQ(ready.first, 503);
  EXPECT_EQ(ready.second.rfind("informer caches not synced yet: ", 0), 0u) << ready.second;
  std::pair<int, std::string> live;
  EXPECT_TRUE(Poll(
      [&] {
        live = HttpGet(health, "/healthz");
        return live.first == 503;
      },
      seconds(20)))
      << live.first << " " << live.second;
  // Which informer crosses the bound first depends on their start order.
  EXPECT_TRUE(std::regex_search(
      live.second,
      std::regex("^stalled longer than 2 s: the (weightedjobs|pods|nodes|weightprofiles) "
                 "informer has failed for [0-9]+ s \\(last error: ")))
      << live.second;
  EXPECT_NE(live.second.find("forbidden"), std::string::npos) << live.second;
  // SIGTERM while the caches cannot sync ends it at once, not after the
  // 60 s sync timeout.
  const auto stop_sent = Clock::now();
  operator_->Stop();
  EXPECT_LT(Clock::now() - stop_sent, seconds(5)) << operator_->ExitDescription();
  EXPECT_EQ(operator_->ExitDescription(), "exit code 0");
}

}  // namespace
}  // namespace ballast::operator_e2e
