// The typed views Decide reads (operator/api/kube_views.h): realistic
// objects read field by field, and fields of the wrong type read as absent
// without throwing.
#include "operator/api/kube_views.h"

#include <gtest/gtest.h>

namespace ballast::api {
namespace {

using nlohmann::json;

// A worker pod whose bundle init container failed while the worker waited.
json FailedPod() {
  return json::parse(R"({
    "metadata": {
      "name": "primes-pi4b-0", "namespace": "lab", "uid": "pod-1",
      "deletionTimestamp": "2027-01-15T08:00:00Z",
      "labels": {"ballast.io/job": "primes", "ballast.io/node": "pi4b-0"},
      "ownerReferences": [{"kind": "WeightedJob", "name": "primes", "uid": "job-1"}]
    },
    "status": {
      "phase": "Failed", "reason": "Evicted",
      "initContainerStatuses": [{"name": "bundle", "image": "ballast-worker:0.1.0",
        "state": {"terminated": {"exitCode": 2, "message": "/ballast is not empty"}}}],
      "containerStatuses": [{"name": "worker", "image": "python:3.12",
        "state": {"waiting": {"reason": "PodInitializing", "message": "wait"}}}]
    }
  })");
}

json ReadyNode() {
  return json::parse(R"({
    "metadata": {
      "name": "pi4b-0",
      "labels": {"kubernetes.io/arch": "arm64", "ballast.io/pool": "seed000"},
      "annotations": {"ballast.io/emulated-speed": "0.5"}
    },
    "spec": {"unschedulable": true,
             "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
    "status": {
      "capacity": {"cpu": "4", "memory": "8Gi"},
      "conditions": [{"type": "MemoryPressure", "status": "True"},
                     {"type": "Ready", "status": "True"}]
    }
  })");
}

TEST(KubeViewsTest, APodIsReadFieldByField) {
  const PodView pod = ReadPod(FailedPod());
  EXPECT_EQ(pod.meta.name, "primes-pi4b-0");
  EXPECT_EQ(pod.meta.ns, "lab");
  EXPECT_EQ(pod.meta.uid, "pod-1");
  EXPECT_TRUE(pod.meta.deleting);
  EXPECT_EQ(pod.meta.labels.at("ballast.io/node"), "pi4b-0");
  EXPECT_TRUE(pod.meta.OwnedBy("job-1"));
  EXPECT_FALSE(pod.meta.OwnedBy("job-2"));
  EXPECT_EQ(pod.phase, PodPhase::kFailed);
  EXPECT_EQ(pod.reason, "Evicted");
  ASSERT_EQ(pod.init_containers.size(), 1u);
  const ContainerView& bundle = pod.init_containers[0];
  EXPECT_EQ(bundle.name, "bundle");
  EXPECT_EQ(bundle.image, "ballast-worker:0.1.0");
  ASSERT_TRUE(bundle.terminated);
  EXPECT_EQ(bundle.terminated->exit_code, 2);
  EXPECT_EQ(bundle.terminated->message, "/ballast is not empty");
  ASSERT_EQ(pod.containers.size(), 1u);
  const ContainerView& worker = pod.containers[0];
  EXPECT_EQ(worker.waiting_reason, "PodInitializing");
  EXPECT_EQ(worker.waiting_message, "wait");
  EXPECT_FALSE(worker.terminated);
  EXPECT_EQ(worker.started_at, "");
}

TEST(KubeViewsTest, ARunningContainerHasItsStartTime) {
  const PodView pod = ReadPod(json::parse(R"({"status": {"phase": "Running",
      "containerStatuses": [{"name": "worker",
        "state": {"running": {"startedAt": "2027-01-15T08:00:00Z"}}}]}})"));
  EXPECT_EQ(pod.phase, PodPhase::kRunning);
  ASSERT_EQ(pod.containers.size(), 1u);
  EXPECT_EQ(pod.containers[0].started_at, "2027-01-15T08:00:00Z");
  EXPECT_FALSE(pod.meta.deleting);
}

// What status.timing reads of the first reporter's pod: when it was
// scheduled, its sandbox made, its worker container started (running or
// since ended); conditions not True give no time.
TEST(KubeViewsTest, APodsMomentsAreReadFromItsConditionsAndContainers) {
  const PodView pod = ReadPod(json::parse(R"({
      "metadata": {"creationTimestamp": "2027-01-15T07:59:58Z"},
      "status": {"phase": "Succeeded",
        "conditions": [
          {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2027-01-15T07:59:59Z"},
          {"type": "PodReadyToStartContainers", "status": "False",
           "lastTransitionTime": "2027-01-15T08:00:09Z"},
          {"type": "Ready", "status": "True", "lastTransitionTime": "2027-01-15T08:00:05Z"}],
        "containerStatuses": [{"name": "worker", "state": {"terminated": {"exitCode": 0,
          "startedAt": "2027-01-15T08:00:03Z"}}}]}})"));
  EXPECT_EQ(pod.meta.creation_timestamp, "2027-01-15T07:59:58Z");
  EXPECT_EQ(pod.scheduled_at, "2027-01-15T07:59:59Z");
  EXPECT_EQ(pod.sandbox_ready_at, "") << "not True";
  ASSERT_EQ(pod.containers.size(), 1u);
  EXPECT_EQ(pod.containers[0].terminated->started_at, "2027-01-15T08:00:03Z");
}

TEST(KubeViewsTest, EveryPodPhaseHasItsValueAndAnyOtherIsUnknown) {
  const std::pair<json, PodPhase> cases[] = {
      {"Pending", PodPhase::kPending},     {"Running", PodPhase::kRunning},
      {"Succeeded", PodPhase::kSucceeded}, {"Failed", PodPhase::kFailed},
      {"Unknown", PodPhase::kUnknown},     {"running", PodPhase::kUnknown},
      {nullptr, PodPhase::kUnknown}};
  for (const auto& [phase, expected] : cases) {
    EXPECT_EQ(ReadPod({{"status", {{"phase", phase}}}}).phase, expected) << phase.dump();
  }
  EXPECT_EQ(ReadPod(json::object()).phase, PodPhase::kUnknown);
}

TEST(KubeViewsTest, ANodeIsReadFieldByField) {
  const NodeView node = ReadNode(ReadyNode());
  EXPECT_EQ(node.meta.name, "pi4b-0");
  EXPECT_EQ(node.meta.labels.at("kubernetes.io/arch"), "arm64");
  EXPECT_EQ(node.meta.annotations.at("ballast.io/emulated-speed"), "0.5");
  EXPECT_TRUE(node.ready);
  EXPECT_TRUE(node.unschedulable);
  EXPECT_EQ(node.taints, (std::vector<Taint>{{"dedicated", "gpu", "NoSchedule"}}));
  EXPECT_EQ(node.cpu_cores, 4.0);
}

TEST(KubeViewsTest, ANodeIsReadyOnlyWhenItsReadyConditionIsTrue) {
  for (const char* status : {"False", "Unknown", "true"}) {
    json node = ReadyNode();
    node["status"]["conditions"][1]["status"] = status;
    EXPECT_FALSE(ReadNode(node).ready) << status;
  }
  json without = ReadyNode();
  without["status"]["conditions"].erase(1);
  EXPECT_FALSE(ReadNode(without).ready);
  EXPECT_FALSE(ReadNode(json{{"metadata", {{"name", "x"}}}}).ready);
}

// status.conditions is read once: Ready and the probe's BallastBoard*
// conditions both come from the one list (probe::ReadNodeConditions), the
// first of each type counting.
TEST(KubeViewsTest, ANodesReadyAndBoardConditionsComeFromOneReadOfItsConditions) {
  json node = ReadyNode();
  node["status"]["conditions"] = json::parse(R"([
    "Ready",
    {"type": "BallastBoardThrottled", "status": "True", "reason": "ThrottledNow",
     "message": "get_throttled 0x4", "lastTransitionTime": "2027-01-15T08:00:00Z"},
    {"type": "MemoryPressure", "status": "False"},
    {"type": "Ready", "status": "True"},
    {"type": "Ready", "status": "False"},
    {"type": "BallastBoardThrottled", "status": "False", "reason": "NotThrottled"},
    {"type": "BallastBoardUnderVoltage", "status": "False", "reason": "SupplyOk", "message": 3}
  ])");
  const std::vector<probe::BoardCondition> all = probe::ReadNodeConditions(node);
  ASSERT_EQ(all.size(), 6u) << "every object, the string left out";
  EXPECT_EQ(all[2].type, "Ready");
  EXPECT_EQ(all[5].message, "") << "not a string";
  const NodeView view = ReadNode(node);
  EXPECT_TRUE(view.ready) << "the first Ready counts";
  EXPECT_EQ(view.board_conditions, (std::vector<probe::BoardCondition>{
                                       {"BallastBoardThrottled", "True", "ThrottledNow",
                                        "get_throttled 0x4", "2027-01-15T08:00:00Z"},
                                       {"BallastBoardUnderVoltage", "False", "SupplyOk", "", ""}}));
  EXPECT_EQ(view.board_conditions, probe::ReadBoardConditions(node));
  EXPECT_EQ(view.board_conditions, probe::BoardConditionsAmong(all));
}

TEST(KubeViewsTest, AJobsMetadataAndGenerationAreRead) {
  const JobView job = ReadJob(json::parse(R"({
    "metadata": {"name": "primes", "namespace": "lab", "uid": "job-1", "generation": 3},
    "spec": {"workload": {"primes": {"limit": "not a number"}}}
  })"));
  EXPECT_EQ(job.meta.name, "primes");
  EXPECT_EQ(job.meta.ns, "lab");
  EXPECT_EQ(job.meta.uid, "job-1");
  EXPECT_EQ(job.generation, 3);
}

TEST(KubeViewsTest, FieldsOfTheWrongTypeReadAsAbsentWithoutThrowing) {
  const json pod = json::parse(R"({
    "metadata": {"name": 5, "namespace": ["lab"], "uid": {}, "deletionTimestamp": 0,
                 "labels": {"ballast.io/job": "primes", "ballast.io/node": 7},
                 "annotations": "x",
                 "ownerReferences": [3, {"uid": 4}, {"uid": "job-1"}]},
    "status": {"phase": 3, "reason": false,
               "initContainerStatuses": "x",
               "containerStatuses": [1, {"name": 5, "image": null,
                 "state": {"waiting": "ErrImagePull",
                           "terminated": {"exitCode": "3", "message": 7},
                           "running": {"startedAt": 1800000000}}}]}
  })");
  PodView view;
  ASSERT_NO_THROW(view = ReadPod(pod));
  EXPECT_EQ(view.meta.name, "");
  EXPECT_EQ(view.meta.ns, "");
  EXPECT_EQ(view.meta.uid, "");
  EXPECT_FALSE(view.meta.deleting);
  EXPECT_EQ(view.meta.labels, (std::map<std::string, std::string>{{"ballast.io/job", "primes"}}));
  EXPECT_TRUE(view.meta.annotations.empty());
  EXPECT_EQ(view.meta.owner_uids, (std::vector<std::string>{"", "job-1"}));
  EXPECT_EQ(view.phase, PodPhase::kUnknown);
  EXPECT_EQ(view.reason, "");
  EXPECT_TRUE(view.init_containers.empty());
  ASSERT_EQ(view.containers.size(), 1u);
  const ContainerView& container = view.containers[0];
  EXPECT_EQ(container.name, "");
  EXPECT_EQ(container.image, "");
  EXPECT_EQ(container.waiting_reason, "");
  ASSERT_TRUE(container.terminated) << "state.terminated is an object";
  EXPECT_FALSE(container.terminated->exit_code);
  EXPECT_EQ(container.terminated->message, "");
  EXPECT_EQ(container.started_at, "");

  const json node = json::parse(R"({
    "metadata": {"name": 5, "labels": [1, 2]},
    "spec": {"unschedulable": "yes", "taints": [{"key": 1, "effect": "NoSchedule"}, "x"]},
    "status": {"conditions": "x", "capacity": {"cpu": []}}
  })");
  NodeView node_view;
  ASSERT_NO_THROW(node_view = ReadNode(node));
  EXPECT_EQ(node_view.meta.name, "");
  EXPECT_TRUE(node_view.meta.labels.empty());
  EXPECT_FALSE(node_view.ready);
  EXPECT_FALSE(node_view.unschedulable);
  EXPECT_EQ(node_view.taints, (std::vector<Taint>{{"", "", "NoSchedule"}}));
  EXPECT_FALSE(node_view.cpu_cores);
  json listed = node;
  listed["status"]["conditions"] = json::array({"Ready", {{"type", "Ready"}, {"status", true}}});
  EXPECT_FALSE(ReadNode(listed).ready);

  const json job = {{"metadata", {{"generation", "2"}, {"name", nullptr}}}, {"spec", "x"}};
  JobView job_view;
  ASSERT_NO_THROW(job_view = ReadJob(job));
  EXPECT_EQ(job_view.generation, 0);
  EXPECT_EQ(job_view.meta.name, "");
}

TEST(KubeViewsTest, AnObjectThatIsNotAnObjectReadsAsEmpty) {
  for (const json& object : {json(nullptr), json("pod"), json::array({1}), json(3)}) {
    EXPECT_EQ(ReadPod(object), PodView{}) << object.dump();
    EXPECT_EQ(ReadNode(object), NodeView{}) << object.dump();
    EXPECT_EQ(ReadJob(object), JobView{}) << object.dump();
  }
}

TEST(CpuCores, ReadsMillicoresAndDecimalsAndRefusesTheRest) {
  EXPECT_EQ(CpuCores("500m"), 0.5);
  EXPECT_EQ(CpuCores("2"), 2.0);
  EXPECT_EQ(CpuCores("1.5"), 1.5);
  EXPECT_EQ(CpuCores(".25"), 0.25);
  EXPECT_EQ(CpuCores(json(0.3)), 0.3);
  for (const json& bad : {json("0"), json("0m"), json("-1"), json("1Gi"), json("1e3"), json("m"),
                          json(""), json("1.5.2"), json(std::string(40, '1')), json(-2.0),
                          json(nullptr), json::object(), json(true)}) {
    EXPECT_FALSE(CpuCores(bad)) << bad.dump();
  }
}

}  // namespace
}  // namespace ballast::api
