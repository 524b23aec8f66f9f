// Decide (operator/controller/decide.h) with nodes that cannot carry a
// worker: an architecture the operator has no worker for
// (--worker-architectures), per-architecture images and resources, a worker
// pod whose image cannot start (given up after worker_start_timeout, its
// share to the others), and a worker that cannot reach the coordinator.
#include <gtest/gtest.h>

#include "operator/controller/decide_internal.h"
#include "tests/operator/controller/decide_world.h"

namespace ballast::controller {
namespace {

using namespace decide_test;  // NOLINT: the world of every test here

constexpr milliseconds kStartTimeout{5000};

// seed 000's boards: the Pi 3B is arm, the Pi 4Bs arm64.
World ArmWorld() {
  World world;
  world.options.worker_start_timeout = kStartTimeout;
  EXPECT_EQ(NodeArchitecture(api::ReadNode(world.nodes[0])), "arm");
  EXPECT_EQ(NodeArchitecture(api::ReadNode(world.nodes[1])), "arm64");
  return world;
}

// A Pending pod whose worker container waits with `reason`.
json WaitingPod(const std::string& node, const std::string& uid, const std::string& reason) {
  json pod = Pod(node, "Pending", uid);
  pod["status"]["containerStatuses"] =
      json::array({{{"name", "worker"},
                    {"image", "ballast-worker:0.1.0"},
                    {"state",
                     {{"waiting",
                       {{"reason", reason},
                        {"message",
                         "Container image \"ballast-worker:0.1.0\" is not present with pull "
                         "policy of Never"}}}}}}});
  return pod;
}

std::vector<std::string> LostWorkers(const Decision& decision) {
  std::vector<std::string> nodes;
  for (const auto& lost : ActionsOf<WorkerLost>(decision)) nodes.push_back(lost.node);
  return nodes;
}

const RecordEvent* EventWith(const Decision& decision, const std::string& reason) {
  for (const auto& action : decision.actions) {
    const auto* event = std::get_if<RecordEvent>(&action);
    if (event && api::ReasonName(event->reason) == reason) return event;
  }
  return nullptr;
}

TEST(DecideFaultsTest, ANodeOfAnArchitectureNotListedGetsNoWorkerAndStatusSaysWhy) {
  World world = ArmWorld();
  world.options.architectures.allowed = {"arm64", "amd64"};
  const Decision decision = world.Pass();
  const auto registered = ActionsOf<RegisterJob>(decision);
  ASSERT_EQ(registered.size(), 1u);
  ASSERT_EQ(registered[0].config.workers.size(), 2u);
  EXPECT_EQ(registered[0].config.workers[0].name, "pi4b-master");
  EXPECT_EQ(registered[0].config.workers[1].name, "pi4b-worker");
  const json excluded = S(decision)["excludedNodes"];
  ASSERT_EQ(excluded.size(), 1u) << excluded;
  EXPECT_EQ(excluded[0]["name"], "pi3b-worker");
  EXPECT_EQ(excluded[0]["reason"], "ArchitectureNotSupported");
  EXPECT_EQ(excluded[0]["message"],
            "node pi3b-worker: architecture arm is not in --worker-architectures (amd64, arm64): "
            "no worker image for it");
  const RecordEvent* event = EventWith(decision, "ArchitectureNotSupported");
  ASSERT_NE(event, nullptr);
  EXPECT_TRUE(event->warning);
  // The other nodes carry the job: pods for them only, and the status keeps
  // saying which node has none.
  world.view = View(0);
  world.view->workers.erase(world.view->workers.begin());
  const Decision pods = world.Pass();
  const auto created = ActionsOf<CreateObjects>(pods);
  ASSERT_EQ(created.size(), 1u);
  ASSERT_EQ(created[0].pods.size(), 2u);
  for (const auto& pod : created[0].pods) {
    EXPECT_NE(pod["spec"].dump().find("pi4b-"), std::string::npos);
  }
  EXPECT_EQ(S(pods)["excludedNodes"], excluded);
}

// The nodes skipped for their architecture are announced once: the status
// that names them is what a restarted operator reads back.
TEST(DecideFaultsTest, ArchitectureExclusionsAreNotAnnouncedAgainAfterARestart) {
  World world = ArmWorld();
  world.options.architectures.allowed = {"arm64", "amd64"};
  const Decision decision = world.Pass();
  ASSERT_NE(EventWith(decision, "ArchitectureNotSupported"), nullptr);
  world.memory = MemoryFromStatus(decision.status);
  world.view.reset();
  const Decision again = world.Pass();
  ASSERT_EQ(ActionsOf<RegisterJob>(again).size(), 1u);
  EXPECT_EQ(EventWith(again, "ArchitectureNotSupported"), nullptr);
  EXPECT_EQ(S(again)["excludedNodes"], S(decision)["excludedNodes"]);
}

// While no node can run a worker the status goes out at once with the
// nodes it excluded, so that the next look does not announce them again.
TEST(DecideFaultsTest, AJobWaitingForNodesAnnouncesItsArchitectureExclusionsOnce) {
  World world = ArmWorld();
  world.options.architectures.allowed = {"amd64"};
  world.Pass();
  world.steady += milliseconds(10);  // well within the status interval
  const Decision again = world.Pass();
  EXPECT_EQ(EventWith(again, "ArchitectureNotSupported"), nullptr);
}

TEST(DecideFaultsTest, WhenEveryNodeIsOfAnotherArchitectureTheJobWaitsNamingThem) {
  World world = ArmWorld();
  world.options.architectures.allowed = {"amd64"};
  const Decision decision = world.Pass();
  EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty());
  EXPECT_EQ(S(decision)["phase"], "Pending");
  EXPECT_EQ(ConditionReason(S(decision), "Ready"), "NoEligibleNodes");
  EXPECT_EQ(S(decision)["excludedNodes"].size(), 3u);
  const std::string message = S(decision)["conditions"][0]["message"];
  EXPECT_NE(message.find("node pi3b-worker: architecture arm is not in --worker-architectures "
                         "(amd64)"),
            std::string::npos)
      << message;
}

TEST(DecideFaultsTest, WorkerPodsTakeTheirArchitecturesImageAndResourcesUnlessTheJobSetsThem) {
  World world = ArmWorld();
  world.options.architectures.images = {{"arm", "worker-armv7:1"}};
  world.options.architectures.resources = {
      {"arm", {{"requests", {{"cpu", "100m"}}}, {"limits", {{"memory", "256Mi"}}}}}};
  world.Pass();
  world.view = View(0);
  const auto created = ActionsOf<CreateObjects>(world.Pass());
  ASSERT_EQ(created.size(), 1u);
  std::map<std::string, json> containers;
  for (const auto& pod : created[0].pods) {
    containers[pod["metadata"]["name"]] = pod["spec"]["containers"][0];
  }
  EXPECT_EQ(containers["p-pi3b-worker"]["image"], "worker-armv7:1");
  EXPECT_EQ(containers["p-pi3b-worker"]["resources"]["limits"]["memory"], "256Mi");
  EXPECT_EQ(containers["p-pi4b-worker"]["image"], std::string(kDefaultWorkerImage));
  EXPECT_FALSE(containers["p-pi4b-worker"].contains("resources"));

  World own = ArmWorld();
  own.options.architectures = world.options.architectures;
  own.job["spec"]["worker"] = {{"image", "mine:2"}, {"resources", {{"limits", {{"cpu", "1"}}}}}};
  own.Pass();
  own.view = View(0);
  const auto mine = ActionsOf<CreateObjects>(own.Pass());
  ASSERT_EQ(mine.size(), 1u);
  for (const auto& pod : mine[0].pods) {
    EXPECT_EQ(pod["spec"]["containers"][0]["image"], "mine:2");
    EXPECT_EQ(pod["spec"]["containers"][0]["resources"], (json{{"limits", {{"cpu", "1"}}}}));
  }
}

TEST(DecideFaultsTest, AnImageThatCannotStartIsGivenUpAfterTheBoundAndTheOthersCarryTheJob) {
  World world = Running();
  world.options.worker_start_timeout = kStartTimeout;
  world.pods[0] = WaitingPod(kNodes[0], "stuck-uid", "ErrImageNeverPull");
  const Decision first = world.Pass();
  EXPECT_TRUE(LostWorkers(first).empty());
  EXPECT_TRUE(ActionsOf<DeletePod>(first).empty());
  const RecordEvent* blocked = EventWith(first, "WorkerStartBlocked");
  ASSERT_NE(blocked, nullptr) << "said as soon as the kubelet says it";
  EXPECT_EQ(blocked->message.rfind("node pi3b-worker: the worker cannot start: the image "
                                   "ballast-worker:0.1.0 is not on the node and imagePullPolicy "
                                   "is Never (container worker",
                                   0),
            0u)
      << blocked->message;
  EXPECT_LE(first.requeue_after.value_or(milliseconds::max()), kStartTimeout + milliseconds(1));

  world.steady += kStartTimeout - milliseconds(1);
  EXPECT_TRUE(LostWorkers(world.Pass()).empty()) << "not before the bound";

  world.steady += milliseconds(1);
  const Decision given_up = world.Pass();
  EXPECT_EQ(LostWorkers(given_up), std::vector<std::string>{"pi3b-worker"});
  const auto deleted = ActionsOf<DeletePod>(given_up);
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0].uid, "stuck-uid");
  const RecordEvent* event = EventWith(given_up, "WorkerCannotStart");
  ASSERT_NE(event, nullptr);
  EXPECT_NE(event->message.find("node pi3b-worker: the worker could not start for 5 s: the image "
                                "ballast-worker:0.1.0 is not on the node and imagePullPolicy is "
                                "Never (container worker (ballast-worker:0.1.0): Container image"),
            std::string::npos)
      << event->message;
  const json excluded = S(given_up)["excludedNodes"];
  ASSERT_EQ(excluded.size(), 1u);
  EXPECT_EQ(excluded[0]["name"], "pi3b-worker");
  EXPECT_EQ(excluded[0]["reason"], "ErrImageNeverPull");
  EXPECT_EQ(excluded[0]["cause"],
            "the image ballast-worker:0.1.0 is not on the node and imagePullPolicy is Never");
  EXPECT_EQ(S(given_up)["phase"], "Running") << "the other workers carry on";

  // The pod is gone: no new one for that node, and the job finishes.
  world.pods.erase(world.pods.begin());
  const Decision after = world.Pass();
  EXPECT_TRUE(ActionsOf<CreateObjects>(after).empty());
  EXPECT_TRUE(LostWorkers(after).empty()) << "lost once";
  world.view = View(2000, true);
  EXPECT_EQ(S(world.Pass())["phase"], "Succeeded");
}

std::string ConditionMessage(const json& status, const std::string& type) {
  for (const auto& condition : status.value("conditions", json::array())) {
    if (condition["type"] == type) return condition["message"];
  }
  return "";
}

// What keeps a worker from starting is in the status's note (the NOTE
// column) and the Ready condition from the pass the kubelet says it, with
// the time left before the node is given up; gone once the pod starts.
TEST(DecideFaultsTest, WhatKeepsAWorkerFromStartingIsInTheNoteAndReadyConditionAtOnce) {
  World world = Running();
  world.options.worker_start_timeout = kStartTimeout;
  world.pods[0] = WaitingPod(kNodes[0], "stuck-uid", "ErrImageNeverPull");
  const std::string note =
      "node pi3b-worker: the image ballast-worker:0.1.0 is not on the node and "
      "imagePullPolicy is Never; given up in 5 s";
  json status = S(world.Pass());
  EXPECT_EQ(status["note"], note);
  EXPECT_NE(ConditionMessage(status, "Ready").find(note), std::string::npos)
      << ConditionMessage(status, "Ready");
  world.steady += milliseconds(3000);
  EXPECT_EQ(S(world.Pass())["note"],
            "node pi3b-worker: the image ballast-worker:0.1.0 is not on the node and "
            "imagePullPolicy is Never; given up in 2 s");
  world.pods[0] = Pod(kNodes[0], "Running", "stuck-uid");
  status = S(world.Pass());
  EXPECT_FALSE(status.contains("note")) << status["note"];
  EXPECT_EQ(ConditionMessage(status, "Ready"), "3 of 3 workers running");
}

// spec.workerStartTimeoutSeconds bounds the wait for the job alone, over
// the operator's --worker-start-timeout.
TEST(DecideFaultsTest, TheJobsWorkerStartTimeoutOverridesTheOperators) {
  World world = Running();
  world.options.worker_start_timeout = std::chrono::minutes(10);
  world.job["spec"]["workerStartTimeoutSeconds"] = 2;
  world.pods[0] = WaitingPod(kNodes[0], "stuck-uid", "ErrImageNeverPull");
  const Decision first = world.Pass();
  EXPECT_NE(S(first)["note"].get<std::string>().find("given up in 2 s"), std::string::npos);
  const RecordEvent* blocked = EventWith(first, "WorkerStartBlocked");
  ASSERT_NE(blocked, nullptr);
  EXPECT_NE(blocked->message.find("given up after 2 s"), std::string::npos) << blocked->message;
  world.steady += milliseconds(2000);
  EXPECT_EQ(LostWorkers(world.Pass()), std::vector<std::string>{"pi3b-worker"});
}

// An exec job in the user's image on boards of two runtimes: where the node
// reports containerd 2.x and a 1.36+ kubelet, its pod mounts the worker's
// bundle as an image volume; elsewhere an init container copies it. When an
// image-volume pod cannot be created, it is deleted at once and the node's
// next pod copies the bundle: no worker lost, no node given up.
TEST(DecideFaultsTest, AnImageVolumeTheRuntimeRefusesFallsBackToTheInitContainer) {
  World world;
  world.options.worker_start_timeout = kStartTimeout;
  world.job["spec"]["workload"] = {
      {"exec", {{"command", {"sh", "-c", "true"}}, {"image", "debian:12"}}}};
  world.job["spec"]["items"] = 40;
  for (size_t i = 0; i < world.nodes.size(); ++i) {
    world.nodes[i]["status"]["nodeInfo"] = {
        {"containerRuntimeVersion", i == 2 ? "containerd://1.6.20~ds1" : "containerd://2.4.2"},
        {"kubeletVersion", "v1.37.2"}};
  }
  world.Pass();  // registers
  world.view = View(0);
  const auto created = ActionsOf<CreateObjects>(world.Pass());
  ASSERT_EQ(created.size(), 1u);
  std::map<std::string, json> pods;
  for (const json& pod : created[0].pods) pods[pod["metadata"]["labels"]["ballast.io/node"]] = pod;
  ASSERT_EQ(pods.size(), 3u);
  const auto bundle = [](const json& pod) {
    return pod["metadata"]["annotations"]["ballast.io/worker-bundle"].get<std::string>();
  };
  EXPECT_EQ(bundle(pods[kNodes[0]]), "image-volume");
  EXPECT_EQ(bundle(pods[kNodes[1]]), "image-volume");
  EXPECT_EQ(bundle(pods[kNodes[2]]), "init-container");
  EXPECT_FALSE(pods[kNodes[0]]["spec"].contains("initContainers"));
  EXPECT_EQ(pods[kNodes[2]]["spec"]["initContainers"][0]["name"], "ballast-bundle");

  json refused = WaitingPod(kNodes[0], "iv-uid", "CreateContainerError");
  refused["metadata"]["annotations"] = {{"ballast.io/worker-bundle", "image-volume"}};
  world.pods = {refused, Pod(kNodes[1], "Running", "uid-1"), Pod(kNodes[2], "Running", "uid-2")};
  const Decision fallback = world.Pass();
  EXPECT_TRUE(LostWorkers(fallback).empty());
  const auto deleted = ActionsOf<DeletePod>(fallback);
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0].uid, "iv-uid");
  const RecordEvent* event = EventWith(fallback, "WorkerBundleFallback");
  ASSERT_NE(event, nullptr);
  EXPECT_EQ(event->message.rfind("node pi3b-worker: the worker's bundle as an image volume did "
                                 "not start (container worker",
                                 0),
            0u)
      << event->message;
  EXPECT_EQ(EventWith(fallback, "WorkerStartBlocked"), nullptr);

  // The pod is gone: the node's next one copies the bundle.
  world.pods.erase(world.pods.begin());
  const auto again = ActionsOf<CreateObjects>(world.Pass());
  ASSERT_EQ(again.size(), 1u);
  ASSERT_EQ(again[0].pods.size(), 1u);
  EXPECT_EQ(bundle(again[0].pods[0]), "init-container");
  EXPECT_EQ(again[0].pods[0]["spec"]["initContainers"][0]["name"], "ballast-bundle");

  // Should that one fail too, it is an ordinary start trouble: given up
  // after the bound, as any other.
  json copied = WaitingPod(kNodes[0], "ic-uid", "CreateContainerError");
  copied["metadata"]["annotations"] = {{"ballast.io/worker-bundle", "init-container"}};
  world.pods.insert(world.pods.begin(), copied);
  const Decision blocked = world.Pass();
  EXPECT_TRUE(ActionsOf<DeletePod>(blocked).empty());
  EXPECT_NE(EventWith(blocked, "WorkerStartBlocked"), nullptr);
  world.steady += kStartTimeout;
  EXPECT_EQ(LostWorkers(world.Pass()), std::vector<std::string>{"pi3b-worker"});
}

// Other start troubles of an image-volume pod (an image that cannot be
// pulled) are not the runtime's: they wait for the bound as any other.
TEST(DecideFaultsTest, AnImageVolumePodWaitingForItsImageIsNotSentToTheInitContainer) {
  World world = Running();
  world.options.worker_start_timeout = kStartTimeout;
  json pod = WaitingPod(kNodes[0], "iv-uid", "ErrImageNeverPull");
  pod["metadata"]["annotations"] = {{"ballast.io/worker-bundle", "image-volume"}};
  world.pods[0] = pod;
  const Decision decision = world.Pass();
  EXPECT_TRUE(ActionsOf<DeletePod>(decision).empty());
  EXPECT_EQ(EventWith(decision, "WorkerBundleFallback"), nullptr);
  EXPECT_NE(EventWith(decision, "WorkerStartBlocked"), nullptr);
}

TEST(DecideFaultsTest, ATransientImageTroubleThatClearsIsNotGivenUp) {
  World world = Running();
  world.options.worker_start_timeout = kStartTimeout;
  world.pods[0] = WaitingPod(kNodes[0], "slow-uid", "ImagePullBackOff");
  world.Pass();
  world.steady += kStartTimeout / 2;
  world.pods[0] = Pod(kNodes[0], "Running", "slow-uid");
  world.Pass();
  world.steady += kStartTimeout;
  const Decision decision = world.Pass();
  EXPECT_TRUE(LostWorkers(decision).empty());
  EXPECT_FALSE(S(decision).contains("excludedNodes"));
}

TEST(DecideFaultsTest, WhenEveryNodesImageCannotStartTheJobFails) {
  World world = Running();
  world.options.worker_start_timeout = kStartTimeout;
  for (size_t i = 0; i < kNodes.size(); ++i) {
    world.pods[i] = WaitingPod(kNodes[i], "uid-" + std::to_string(i), "InvalidImageName");
  }
  world.Pass();
  world.steady += kStartTimeout;
  const Decision decision = world.Pass();
  EXPECT_EQ(LostWorkers(decision).size(), 3u);
  EXPECT_EQ(S(decision)["phase"], "Failed");
  EXPECT_EQ(ConditionReason(S(decision), "Failed"), "NoWorkerCanStart");
  std::string failed;
  const json status = S(decision);
  for (const auto& c : status["conditions"]) {
    if (c["type"] == "Failed") failed = c["message"];
  }
  EXPECT_EQ(failed,
            "no node could start the job's worker: the image name ballast-worker:0.1.0 is not "
            "valid (pi3b-worker, pi4b-master, pi4b-worker)");
}

// The kubelet's words for what a container lacks become what the user must
// fix, naming it.
TEST(DecideFaultsTest, WhatKeepsAWorkerFromStartingIsNamed) {
  struct Case {
    std::string reason, message, expected;
  };
  const std::vector<Case> cases = {
      {"CreateContainerConfigError", "secret \"s3-creds\" not found",
       "the Secret s3-creds does not exist"},
      {"CreateContainerConfigError", "configmap \"job-items\" not found",
       "the ConfigMap job-items does not exist"},
      {"CreateContainerConfigError", "couldn't find key token in Secret batch/s3-creds",
       "the Secret batch/s3-creds has no key token"},
      {"CreateContainerConfigError", "couldn't find key list in ConfigMap batch/job-items",
       "the ConfigMap batch/job-items has no key list"},
      {"ErrImagePull", "failed to pull and unpack image", "the image me/w:1 cannot be pulled"},
      {"ImagePullBackOff", "Back-off pulling image \"me/w:1\"",
       "the image me/w:1 cannot be pulled"},
      {"InvalidImageName", "", "the image name me/w:1 is not valid"},
      {"PreStartHookError", "hook failed", "the container cannot be created (PreStartHookError)"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(decide::NameStartTrouble(c.reason, c.message, "me/w:1"), c.expected) << c.message;
  }
}

TEST(DecideFaultsTest, GivenUpNodesStayExcludedAfterARestartUntilSuspendAndResume) {
  World world = Running();
  world.options.worker_start_timeout = kStartTimeout;
  world.pods[0] = WaitingPod(kNodes[0], "stuck-uid", "ErrImagePull");
  world.Pass();
  world.steady += kStartTimeout;
  const Decision given_up = world.Pass();
  world.pods.erase(world.pods.begin());

  // A new operator: memory from status only, the coordinator empty.
  world.memory = JobMemory{};
  world.memory.written.status = given_up.status;
  world.view.reset();
  const auto registered = ActionsOf<RegisterJob>(world.Pass());
  ASSERT_EQ(registered.size(), 1u);
  ASSERT_EQ(registered[0].config.workers.size(), 2u) << "pi3b-worker stays given up";
  EXPECT_EQ(registered[0].config.workers[0].name, "pi4b-master");

  world.job["spec"]["suspend"] = true;
  world.view = View(0);
  world.pods.clear();
  const Decision suspended = world.Pass();
  EXPECT_FALSE(S(suspended).contains("excludedNodes"));
  world.job["spec"]["suspend"] = false;
  world.view.reset();
  const auto resumed = ActionsOf<RegisterJob>(world.Pass());
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(resumed[0].config.workers.size(), 3u) << "resuming tries every node again";
}

TEST(DecideFaultsTest, AStoppingOperatorHandsTheNewestCheckpointOverWhateverThePacing) {
  World world = Running();
  world.view = View(600);
  world.steady += milliseconds(10);  // well within the status interval
  EXPECT_TRUE(ActionsOf<WriteStatus>(world.Pass()).empty()) << "paced";
  world.view = View(900);
  world.steady += milliseconds(10);
  world.flush_status = true;
  const auto written = ActionsOf<WriteStatus>(world.Pass());
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0].status.completed_items, 900u);
  EXPECT_TRUE(written[0].status.checkpoint.has_value());
}

TEST(DecideFaultsTest, AWorkerRunningWithoutReachingTheCoordinatorGetsOneEvent) {
  World world = Running();
  world.options.worker_start_timeout = kStartTimeout;
  world.options.pods.coordinator_url = "http://ballast-coordinator.ballast.svc:8080";
  world.pods[1]["status"]["containerStatuses"] = json::array(
      {{{"name", "worker"}, {"state", {{"running", {{"startedAt", Rfc3339(world.wall)}}}}}}});
  world.wall += 4;
  EXPECT_EQ(EventWith(world.Pass(), "CoordinatorUnreachable"), nullptr) << "not before the bound";
  world.wall += 2;
  const Decision decision = world.Pass();
  const RecordEvent* event = EventWith(decision, "CoordinatorUnreachable");
  ASSERT_NE(event, nullptr);
  EXPECT_EQ(event->message,
            "node pi4b-master: the worker of pod p-pi4b-master has run 6 s without reaching the "
            "coordinator at http://ballast-coordinator.ballast.svc:8080; its log says why "
            "(kubectl logs p-pi4b-master)");
  world.wall += 10;
  EXPECT_EQ(EventWith(world.Pass(), "CoordinatorUnreachable"), nullptr) << "once per node";

  // Workers running before the session started (the operator restarted)
  // are given the bound from the session's start.
  World restarted = Running();
  restarted.options.worker_start_timeout = kStartTimeout;
  restarted.pods[1]["status"]["containerStatuses"] =
      json::array({{{"name", "worker"},
                    {"state", {{"running", {{"startedAt", Rfc3339(restarted.wall - 600)}}}}}}});
  restarted.wall += 4;
  EXPECT_EQ(EventWith(restarted.Pass(), "CoordinatorUnreachable"), nullptr)
      << "the pod is old, the session young";
  restarted.wall += 2;
  EXPECT_NE(EventWith(restarted.Pass(), "CoordinatorUnreachable"), nullptr);

  // A worker that has reported gets none.
  World reached = Running();
  reached.options.worker_start_timeout = kStartTimeout;
  reached.view->workers[1].contacted = true;
  reached.pods[1]["status"]["containerStatuses"] = world.pods[1]["status"]["containerStatuses"];
  reached.wall += 60;
  EXPECT_EQ(EventWith(reached.Pass(), "CoordinatorUnreachable"), nullptr);
}

TEST(DecideFaultsTest, AWorkerThatFailedSayingItCannotReachTheCoordinatorIsNamedInAnEvent) {
  World world = Running();
  world.options.pods.coordinator_url = "http://c.invalid:8080";
  json failed = Pod(kNodes[2], "Failed", "gone-uid");
  failed["status"]["containerStatuses"] = json::array(
      {{{"name", "worker"},
        {"state",
         {{"terminated",
           {{"exitCode", 1},
            {"message",
             std::string(400, '.') +
                 "\nworker failed error=\"cannot reach the coordinator at http://c.invalid:8080 "
                 "for 60 s: DNS lookup of 'c.invalid' failed: Name or service not known\""}}}}}}});
  world.pods[2] = failed;
  const Decision decision = world.Pass();
  const RecordEvent* event = EventWith(decision, "CoordinatorUnreachable");
  ASSERT_NE(event, nullptr);
  EXPECT_EQ(
      event->message,
      "node pi4b-worker: the worker cannot reach the coordinator at http://c.invalid:8080 "
      "for 60 s: DNS lookup of 'c.invalid' failed: Name or service not known (coordinator URL "
      "http://c.invalid:8080)");
  const RecordEvent* failure = EventWith(decision, "WorkerFailed");
  ASSERT_NE(failure, nullptr);
  EXPECT_NE(failure->message.find("DNS lookup of 'c.invalid' failed"), std::string::npos)
      << "the end of a long message is kept: " << failure->message;
}

}  // namespace
}  // namespace ballast::controller
