// Decide for a job queued in Kueue (operator/controller/kueue.h,
// decide_kueue.cc): held until admitted, placed on the admitted flavors,
// stopped with its checkpoint when evicted and resumed exactly, its
// Workload's reclaimable pods and Finished condition. And the builders of
// kueue.h (the readers of Kueue's objects: tests/operator/api/
// kueue_views_test.cc). Pure: no API server, no Kueue.
#include <gtest/gtest.h>

#include "operator/controller/kueue.h"
#include "tests/operator/controller/decide_world.h"

namespace ballast::controller::decide_test {
namespace {

constexpr char kWorkload[] = "weightedjob-p-job-u";

// The Workload as the API server holds it: `count` workers, the conditions
// given (type -> status, reason, message), admitted to `flavor` when given.
json WorkloadJson(int count, const std::map<std::string, api::KueueCondition>& conditions,
                  const std::string& flavor = "", int reclaimable = 0,
                  const std::string& version = "1") {
  json object = {{"metadata",
                  {{"name", kWorkload},
                   {"namespace", "ns"},
                   {"uid", "wl-uid"},
                   {"resourceVersion", version},
                   {"generation", 1},
                   {"ownerReferences", json::array({{{"uid", "job-uid"}}})}}},
                 {"spec", {{"podSets", json::array({{{"name", "workers"}, {"count", count}}})}}},
                 {"status", json::object()}};
  json list = json::array();
  for (const auto& [type, c] : conditions) {
    list.push_back({{"type", type},
                    {"status", c.status ? "True" : "False"},
                    {"reason", c.reason},
                    {"message", c.message},
                    {"lastTransitionTime", "2027-01-15T08:00:00Z"}});
  }
  object["status"]["conditions"] = list;
  if (!flavor.empty()) {
    object["status"]["admission"] = {
        {"clusterQueue", "cq"},
        {"podSetAssignments",
         json::array({{{"name", "workers"}, {"flavors", {{"cpu", flavor}, {"memory", flavor}}}}})}};
  }
  if (reclaimable > 0) {
    object["status"]["reclaimablePods"] =
        json::array({{{"name", "workers"}, {"count", reclaimable}}});
  }
  return object;
}

std::map<std::string, api::KueueCondition> AdmittedConditions() {
  return {{"QuotaReserved", {true, "QuotaReserved", "Quota reserved in ClusterQueue cq"}},
          {"Admitted", {true, "Admitted", "The workload is admitted"}}};
}

// A world whose job is labelled into LocalQueue q.
World Queued() {
  World world;
  world.job["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", "q"}};
  world.queue = QueueInput{};
  world.queue->queue = "q";
  return world;
}

// Admits the queued world's Workload (of `count`) to flavor `flavor`.
void Admit(World& world, int count, const api::FlavorView& flavor, int reclaimable = 0,
           const std::string& version = "2") {
  world.queue->workload = api::ReadWorkload(
      WorkloadJson(count, AdmittedConditions(), flavor.name, reclaimable, version));
  world.queue->flavors = {flavor};
}

// A queued job admitted to a flavor without node labels, whose pods run.
World QueuedRunning() {
  World world = Queued();
  world.Pass();  // asks for the Workload
  Admit(world, 3, api::FlavorView{"default", {}, json::array()});
  world.Pass();  // registers
  world.view = View(0);
  world.Pass();  // creates the pods
  for (size_t i = 0; i < kNodes.size(); ++i) {
    world.pods.push_back(Pod(kNodes[i], "Running", "pod-uid-" + std::to_string(i)));
  }
  world.Pass();
  return world;
}

TEST(DecideKueueTest, ALabelledJobGetsAWorkloadAndWaitsWithNoPodsNamingTheQueue) {
  World world = Queued();
  Decision decision = world.Pass();
  const auto created = ActionsOf<CreateWorkload>(decision);
  ASSERT_EQ(created.size(), 1u);
  const json& workload = created[0].workload;
  EXPECT_EQ(workload["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(workload["metadata"]["name"], kWorkload);
  EXPECT_EQ(workload["metadata"]["labels"]["ballast.io/job"], "p");
  EXPECT_EQ(workload["metadata"]["ownerReferences"][0]["uid"], "job-uid");
  EXPECT_EQ(workload["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(workload["spec"]["queueName"], "q");
  EXPECT_EQ(workload["spec"]["podSets"][0]["name"], "workers");
  EXPECT_EQ(workload["spec"]["podSets"][0]["count"], 3) << "one worker per node it would use";
  EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty());
  EXPECT_TRUE(ActionsOf<CreateObjects>(decision).empty());
  EXPECT_EQ(S(decision)["phase"], "Pending");
  EXPECT_EQ(ConditionReason(S(decision), "Admitted"), "WaitingForQueue");
  EXPECT_EQ(ConditionReason(S(decision), "Ready"), "WaitingForQueue");
  EXPECT_NE(decision.status.conditions.back().message.find("LocalQueue q"), std::string::npos);
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"WaitingForQueue"});
  EXPECT_FALSE(ActionsOf<WriteStatus>(decision).empty()) << "why it waits goes out at once";
  // Until the cache shows it: asked again (AlreadyExists), announced once
  // (the Executor says it was asked for).
  world.writes.workload_requested = true;
  decision = world.Pass();
  EXPECT_EQ(ActionsOf<CreateWorkload>(decision).size(), 1u);
  EXPECT_TRUE(Events(decision).empty());
}

// Issue 61, probing Kueue's Workload by hand: an admission naming a flavor
// no ResourceFlavor is (written by hand, or not in the cache) placed the
// job on none of its labels, so it ran on every node, outside the quota it
// was admitted to. It waits, naming the flavor, and starts once the flavor
// is known; an admission naming no flavor at all (a pod set requesting no
// resources) places nothing and runs.
TEST(DecideKueueTest, AnAdmissionToAFlavorNoResourceFlavorIsHoldsTheJobInsteadOfRunningAnywhere) {
  World world = Queued();
  world.nodes[1]["metadata"]["labels"]["pool"] = "fast";
  world.Pass();
  world.queue->workload = api::ReadWorkload(WorkloadJson(3, AdmittedConditions(), "ghost"));
  world.queue->flavors.clear();
  Decision decision = world.Pass();
  EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty());
  EXPECT_TRUE(ActionsOf<CreateObjects>(decision).empty());
  EXPECT_EQ(S(decision)["phase"], "Pending");
  EXPECT_EQ(ConditionReason(S(decision), "Admitted"), "WaitingForQueue");
  std::string message;
  for (const auto& c : decision.status.conditions) {
    if (c.type == api::ConditionType::kAdmitted) message = c.message;
  }
  EXPECT_EQ(message, std::string("Kueue admitted Workload ") + kWorkload +
                         " to flavor ghost, which no ResourceFlavor of the cluster is: the nodes "
                         "it stands for are not known, so the job does not start (it would run "
                         "on any node)");
  // The flavor appears: the job starts on its nodes alone.
  world.queue->flavors = {api::FlavorView{"ghost", {{"pool", "fast"}}, json::array()}};
  decision = world.Pass();
  const auto registered = ActionsOf<RegisterJob>(decision);
  ASSERT_EQ(registered.size(), 1u);
  ASSERT_EQ(registered[0].config.workers.size(), 1u);
  EXPECT_EQ(registered[0].config.workers[0].name, "pi4b-master");

  // No flavor named at all: nothing to place on; every node runs.
  World bare = Queued();
  bare.Pass();
  bare.queue->workload = api::ReadWorkload(WorkloadJson(3, AdmittedConditions()));
  const auto all = ActionsOf<RegisterJob>(bare.Pass());
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].config.workers.size(), 3u);
}

// Issue 61, probing Kueue's Workload by hand: a Workload of the job's
// Workload's name whose owner reference was edited away (or one made by
// hand) held the job "waiting for Kueue to admit" it, while Kueue had
// admitted it long ago. The job says whose it is not and waits for it to go;
// then it makes its own.
TEST(DecideKueueTest, AWorkloadOfTheJobsNameThatIsNotItsOwnIsNamedNotWaitedOnInSilence) {
  World world = Queued();
  world.Pass();
  json foreign = WorkloadJson(3, AdmittedConditions(), "default");
  foreign["metadata"]["ownerReferences"] = json::array();
  world.queue->workload = api::ReadWorkload(foreign);
  world.queue->flavors = {api::FlavorView{"default", {}, json::array()}};
  Decision decision = world.Pass();
  EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty());
  EXPECT_TRUE(ActionsOf<CreateWorkload>(decision).empty());
  std::string message;
  for (const auto& c : decision.status.conditions) {
    if (c.type == api::ConditionType::kAdmitted) message = c.message;
  }
  EXPECT_EQ(message, std::string("Workload ") + kWorkload +
                         " is not this job's (its owner references do not name the job: made or "
                         "edited by hand?); the job makes its own once it is deleted");
  world.queue->workload.reset();
  EXPECT_EQ(ActionsOf<CreateWorkload>(world.Pass()).size(), 1u);
}

TEST(DecideKueueTest, AWorkloadNotAdmittedHoldsTheJobWithKueuesReason) {
  World world = Queued();
  world.Pass();
  world.queue->workload = api::ReadWorkload(WorkloadJson(
      3, {{"QuotaReserved", {false, "Pending", "insufficient quota for cpu in flavor default"}}}));
  const Decision decision = world.Pass();
  EXPECT_TRUE(ActionsOf<CreateWorkload>(decision).empty());
  EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty());
  EXPECT_EQ(S(decision)["phase"], "Pending");
  std::string message;
  for (const auto& c : decision.status.conditions) {
    if (c.type == api::ConditionType::kAdmitted) message = c.message;
  }
  EXPECT_NE(message.find("insufficient quota for cpu"), std::string::npos) << message;
  EXPECT_NE(message.find(kWorkload), std::string::npos) << message;
}

TEST(DecideKueueTest, AdmittedJobStartsOnTheFlavorsNodesAndGivesTheRestBack) {
  World world = Queued();
  world.nodes[1]["metadata"]["labels"]["pool"] = "fast";
  world.nodes[2]["metadata"]["labels"]["pool"] = "fast";
  world.Pass();
  Admit(world, 3,
        api::FlavorView{"fast",
                        {{"pool", "fast"}},
                        json::array({{{"key", "dedicated"}, {"operator", "Exists"}}})});
  Decision decision = world.Pass();
  const auto registered = ActionsOf<RegisterJob>(decision);
  ASSERT_EQ(registered.size(), 1u);
  std::vector<std::string> nodes;
  for (const auto& worker : registered[0].config.workers) nodes.push_back(worker.name);
  EXPECT_EQ(nodes, (std::vector<std::string>{"pi4b-master", "pi4b-worker"}));
  EXPECT_EQ(ConditionReason(S(decision), "Admitted"), "Admitted");
  EXPECT_EQ(EventReasons(decision), (std::vector<std::string>{"Admitted", "Started"}));

  world.view = View(0);
  decision = world.Pass();
  const auto created = ActionsOf<CreateObjects>(decision);
  ASSERT_EQ(created.size(), 1u);
  ASSERT_EQ(created[0].pods.size(), 2u);
  for (const json& pod : created[0].pods) {
    EXPECT_EQ(pod["spec"]["nodeSelector"]["pool"], "fast");
    EXPECT_EQ(pod["spec"]["tolerations"][0]["key"], "dedicated");
  }
  // Admitted for three, it runs two: one pod's quota goes back at once.
  const auto patches = ActionsOf<PatchWorkload>(decision);
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0].name, kWorkload);
  EXPECT_EQ(patches[0].patch["status"]["reclaimablePods"],
            json::parse(R"([{"name":"workers","count":1}])"));
  EXPECT_EQ(patches[0].patch["metadata"]["resourceVersion"], "2");
  // Not again while the cache shows the Workload it was made against.
  EXPECT_TRUE(ActionsOf<PatchWorkload>(world.Pass()).empty());
  // Nor once the count is there.
  Admit(world, 3, world.queue->flavors[0], 1, "3");
  EXPECT_TRUE(ActionsOf<PatchWorkload>(world.Pass()).empty());
}

TEST(DecideKueueTest, EvictionStopsTheJobKeepsItsCheckpointHandsTheQuotaBackAndResumesExactly) {
  World world = QueuedRunning();
  world.view = View(900);
  world.checkpoint = coordinator::Checkpoint{};
  world.checkpoint->completed.Add({0, 900});
  auto conditions = AdmittedConditions();
  conditions["Evicted"] = {true, "Preempted", "Preempted to accommodate a workload (UID: x)"};
  world.queue->workload = api::ReadWorkload(WorkloadJson(3, conditions, "default", 0, "5"));
  Decision decision = world.Pass();
  EXPECT_EQ(ActionsOf<DeletePod>(decision).size(), 3u);
  EXPECT_TRUE(ActionsOf<RemoveJob>(decision).empty()) << "workers hand back leases first";
  EXPECT_TRUE(ActionsOf<PatchWorkload>(decision).empty()) << "the quota while pods run";

  world.pods.clear();
  decision = world.Pass();
  EXPECT_EQ(ActionsOf<RemoveJob>(decision).size(), 1u);
  EXPECT_FALSE(ActionsOf<WriteStatus>(decision).empty()) << "the checkpoint goes out at once";
  EXPECT_EQ(ConditionReason(S(decision), "Suspended"), "Evicted");
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"Evicted"});
  EXPECT_TRUE(S(decision).contains("checkpoint"));
  EXPECT_EQ(S(decision)["completedItems"], 900);
  EXPECT_EQ(S(decision)["phase"], "Suspended");
  const auto patches = ActionsOf<PatchWorkload>(decision);
  ASSERT_EQ(patches.size(), 1u);
  const json& status = patches[0].patch["status"];
  EXPECT_TRUE(status.contains("admission") && status["admission"].is_null());
  std::map<std::string, std::string> set;
  for (const auto& c : status["conditions"]) set[c["type"]] = c["status"];
  EXPECT_EQ(set["QuotaReserved"], "False");
  EXPECT_EQ(set["Admitted"], "False");
  EXPECT_EQ(set["Requeued"], "True");
  EXPECT_EQ(set["Evicted"], "True") << "Kueue's own conditions stay";
  EXPECT_EQ(patches[0].patch["metadata"]["resourceVersion"], "5");
  EXPECT_TRUE(ActionsOf<PatchWorkload>(world.Pass()).empty()) << "on its way";

  // Kueue queues it again: held, Suspended, until it is admitted.
  world.view.reset();
  world.queue->workload = api::ReadWorkload(WorkloadJson(
      3, {{"QuotaReserved", {false, "Pending", "waiting"}}, {"Evicted", conditions["Evicted"]}}, "",
      0, "6"));
  decision = world.Pass();
  EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty());
  EXPECT_EQ(S(decision)["phase"], "Suspended");

  Admit(world, 3, api::FlavorView{"default", {}, json::array()}, 0, "7");
  decision = world.Pass();
  const auto registered = ActionsOf<RegisterJob>(decision);
  ASSERT_EQ(registered.size(), 1u);
  ASSERT_TRUE(registered[0].config.resume);
  EXPECT_EQ(registered[0].config.resume->completed.size(), 900u) << "resumed from the checkpoint";
  EXPECT_EQ(EventReasons(decision), (std::vector<std::string>{"Admitted", "Resumed"}));
}

// spec.suspend on a queued job gives its quota back: its Workload is
// deactivated once the job stopped, and activated again when it resumes.
TEST(DecideKueueTest, ASuspendedJobDeactivatesItsWorkloadAndResumesWhenAdmittedAgain) {
  World world = QueuedRunning();
  world.view = View(600);
  world.checkpoint = coordinator::Checkpoint{};
  world.checkpoint->completed.Add({0, 600});
  world.job["spec"]["suspend"] = true;
  world.job["metadata"]["generation"] = 2;
  Decision decision = world.Pass();
  EXPECT_TRUE(ActionsOf<PatchWorkload>(decision).empty()) << "not while the workers leave";
  world.pods.clear();
  decision = world.Pass();
  ASSERT_EQ(S(decision)["phase"], "Suspended");
  auto patches = ActionsOf<PatchWorkload>(decision);
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_FALSE(patches[0].status);
  EXPECT_EQ(patches[0].patch["spec"]["active"], false);
  EXPECT_EQ(ConditionReason(S(decision), "Admitted"), "SuspendedByUser");
  EXPECT_EQ(ConditionReason(api::StatusToJson(world.memory.written.status), "Admitted"),
            "SuspendedByUser")
      << "handed to the writer";

  // Kueue evicts it (Deactivated): its admission is handed back, not requeued.
  json object = WorkloadJson(3,
                             {{"QuotaReserved", {true, "QuotaReserved", "reserved"}},
                              {"Admitted", {true, "Admitted", "admitted"}},
                              {"Evicted", {true, "Deactivated", "The workload is deactivated"}}},
                             "default", 0, "8");
  object["spec"]["active"] = false;
  world.view.reset();
  world.queue->workload = api::ReadWorkload(object);
  patches = ActionsOf<PatchWorkload>(world.Pass());
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_TRUE(patches[0].status);
  EXPECT_TRUE(patches[0].patch["status"]["admission"].is_null());
  for (const auto& c : patches[0].patch["status"]["conditions"]) {
    if (c["type"] == "Requeued") {
      EXPECT_EQ(c["status"], "False");
    }
  }

  // Resumed: activated, held until Kueue admits it again, then from the checkpoint.
  world.job["spec"]["suspend"] = false;
  world.job["metadata"]["generation"] = 3;
  object["metadata"]["resourceVersion"] = "9";
  object["status"].erase("admission");
  object["status"]["conditions"] = json::array();
  world.queue->workload = api::ReadWorkload(object);
  decision = world.Pass();
  patches = ActionsOf<PatchWorkload>(decision);
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0].patch["spec"]["active"], true);
  EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty());
  Admit(world, 3, api::FlavorView{"default", {}, json::array()}, 0, "10");
  const auto registered = ActionsOf<RegisterJob>(world.Pass());
  ASSERT_EQ(registered.size(), 1u);
  ASSERT_TRUE(registered[0].config.resume);
  EXPECT_EQ(registered[0].config.resume->completed.size(), 600u);
}

// Issue 61, probing Kueue's Workload: Kueue deactivates a Workload itself
// (its requeuing limit, a maximum execution time, an admission check: the
// Evicted reason DeactivatedDueTo<cause>). The operator activated it again
// at once, undoing Kueue's decision, and read the running job as Pending
// while its workers computed. The job now stops as when evicted, keeping
// its checkpoint, and then waits, saying why, until someone activates the
// Workload; then it resumes from the checkpoint.
TEST(DecideKueueTest, AWorkloadKueueDeactivatedStopsTheJobAndStaysInactive) {
  World world = QueuedRunning();
  world.view = View(900);
  world.checkpoint = coordinator::Checkpoint{};
  world.checkpoint->completed.Add({0, 900});
  auto conditions = AdmittedConditions();
  conditions["Evicted"] = {true, "DeactivatedDueToMaximumExecutionTimeExceeded",
                           "The workload is deactivated due to exceeding the maximum execution "
                           "time"};
  json object = WorkloadJson(3, conditions, "default", 0, "5");
  object["spec"]["active"] = false;
  world.queue->workload = api::ReadWorkload(object);
  Decision decision = world.Pass();
  EXPECT_EQ(ActionsOf<DeletePod>(decision).size(), 3u) << "stopped as when evicted";
  EXPECT_TRUE(ActionsOf<PatchWorkload>(decision).empty());
  world.pods.clear();
  decision = world.Pass();
  EXPECT_EQ(ActionsOf<RemoveJob>(decision).size(), 1u);
  EXPECT_EQ(S(decision)["phase"], "Suspended");
  EXPECT_EQ(S(decision)["completedItems"], 900);
  world.view.reset();
  object["status"].erase("admission");
  object["status"]["conditions"] = json::array(
      {{{"type", "Evicted"},
        {"status", "True"},
        {"reason", "DeactivatedDueToMaximumExecutionTimeExceeded"},
        {"message", "The workload is deactivated due to exceeding the maximum execution time"},
        {"lastTransitionTime", "2027-01-15T08:00:00Z"}}});
  object["metadata"]["resourceVersion"] = "6";
  world.queue->workload = api::ReadWorkload(object);
  for (int pass = 0; pass < 2; ++pass) {
    decision = world.Pass();
    for (const auto& patch : ActionsOf<PatchWorkload>(decision)) {
      EXPECT_FALSE(patch.patch.contains("spec")) << "not activated again: " << patch.patch.dump();
    }
    EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty());
    EXPECT_EQ(S(decision)["phase"], "Suspended");
  }
  std::string message;
  for (const auto& c : decision.status.conditions) {
    if (c.type == api::ConditionType::kAdmitted) message = c.message;
  }
  EXPECT_EQ(message, std::string("Kueue deactivated Workload ") + kWorkload +
                         " (DeactivatedDueToMaximumExecutionTimeExceeded: The workload is "
                         "deactivated due to exceeding the maximum execution time); the job "
                         "waits until its spec.active is true again");
  // Activated by someone and admitted again: resumed from the checkpoint.
  Admit(world, 3, api::FlavorView{"default", {}, json::array()}, 0, "7");
  const auto registered = ActionsOf<RegisterJob>(world.Pass());
  ASSERT_EQ(registered.size(), 1u);
  ASSERT_TRUE(registered[0].config.resume);
  EXPECT_EQ(registered[0].config.resume->completed.size(), 900u);
}

// A Workload deactivated by hand under a running job (Evicted: Deactivated,
// no cause of Kueue's): the job stops first, its checkpoint kept, instead
// of reading Pending while its workers compute; then the Workload, the
// job's, is activated again and the job queued.
TEST(DecideKueueTest, AWorkloadDeactivatedByHandMidJobStopsTheJobThenIsActivatedAgain) {
  World world = QueuedRunning();
  world.view = View(900);
  world.checkpoint = coordinator::Checkpoint{};
  world.checkpoint->completed.Add({0, 900});
  json object = WorkloadJson(3, AdmittedConditions(), "default", 0, "5");
  object["spec"]["active"] = false;
  world.queue->workload = api::ReadWorkload(object);
  Decision decision = world.Pass();
  EXPECT_EQ(ActionsOf<DeletePod>(decision).size(), 3u);
  EXPECT_NE(S(decision)["phase"], "Pending") << "its workers still compute";
  EXPECT_TRUE(ActionsOf<PatchWorkload>(decision).empty());
  world.pods.clear();
  decision = world.Pass();
  EXPECT_EQ(ActionsOf<RemoveJob>(decision).size(), 1u);
  EXPECT_EQ(S(decision)["phase"], "Suspended");
  world.view.reset();
  object["status"].erase("admission");
  object["status"]["conditions"] = json::array();
  object["metadata"]["resourceVersion"] = "6";
  world.queue->workload = api::ReadWorkload(object);
  const auto patches = ActionsOf<PatchWorkload>(world.Pass());
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0].patch["spec"]["active"], true);
}

TEST(DecideKueueTest, AFinishedJobDeclaresItsWorkloadFinished) {
  World world = QueuedRunning();
  world.view = View(2000, /*done=*/true);
  const Decision decision = world.Pass();
  ASSERT_EQ(S(decision)["phase"], "Succeeded");
  const auto patches = ActionsOf<PatchWorkload>(decision);
  ASSERT_EQ(patches.size(), 1u);
  bool finished = false;
  for (const auto& c : patches[0].patch["status"]["conditions"]) {
    finished |= c["type"] == "Finished" && c["status"] == "True" && c["reason"] == "Succeeded";
  }
  EXPECT_TRUE(finished) << patches[0].patch.dump();
}

TEST(DecideKueueTest, WorkersWhosePodsFinishedAreReclaimable) {
  World world = QueuedRunning();
  world.view = View(1990);
  world.pods[0]["status"]["phase"] = "Succeeded";
  world.view->done = true;  // the session ended; its pods exit one by one
  world.view->finished_at = 10;
  const Decision decision = world.Pass();
  const auto patches = ActionsOf<PatchWorkload>(decision);
  ASSERT_FALSE(patches.empty());
  EXPECT_EQ(patches[0].patch["status"]["reclaimablePods"][0]["count"], 1);
}

// A queued job's session releases idle workers in the tail (idle_release.h);
// one not queued keeps them to the end.
TEST(DecideKueueTest, OnlyAQueuedJobsSessionReleasesIdleWorkers) {
  World queued = Queued();
  queued.Pass();
  Admit(queued, 3, api::FlavorView{"default", {}, json::array()});
  const auto registered = ActionsOf<RegisterJob>(queued.Pass());
  ASSERT_EQ(registered.size(), 1u);
  EXPECT_TRUE(registered[0].config.release_idle);
  World plain;
  const auto alone = ActionsOf<RegisterJob>(plain.Pass());
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_FALSE(alone[0].config.release_idle);
}

// A worker released in the tail exits 0 while the job runs: its Succeeded
// pod is finished, not a failure, not deleted or made again; its quota is
// reclaimable and the job's condition says it was released.
TEST(DecideKueueTest, AReleasedWorkersSucceededPodIsFinishedAndReclaimable) {
  World world = QueuedRunning();
  world.view = View(1990);
  world.view->workers[0].released = true;
  world.pods[0]["status"]["phase"] = "Succeeded";
  Decision decision = world.Pass();
  EXPECT_TRUE(ActionsOf<WorkerLost>(decision).empty());
  EXPECT_TRUE(ActionsOf<DeletePod>(decision).empty());
  EXPECT_TRUE(ActionsOf<CreateObjects>(decision).empty());
  EXPECT_EQ(S(decision)["phase"], "Running");
  EXPECT_EQ(S(decision).value("failedPods", 0), 0);
  EXPECT_EQ(S(decision)["workers"], 2);
  std::string running;
  for (const auto& condition : S(decision).value("conditions", json::array())) {
    if (condition["type"] == "Ready") running = condition.value("message", "");
  }
  EXPECT_NE(running.find("2 of 3 workers running, 1 released"), std::string::npos) << running;
  auto patches = ActionsOf<PatchWorkload>(decision);
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0].patch["status"]["reclaimablePods"][0]["count"], 1);
  // Its pod gone (deleted by hand, its node drained): not made again.
  world.pods.erase(world.pods.begin());
  decision = world.Pass();
  EXPECT_TRUE(ActionsOf<CreateObjects>(decision).empty());
  EXPECT_TRUE(ActionsOf<WorkerLost>(decision).empty());
  // The same pod of a worker not released is a failure, replaced.
  World failed = QueuedRunning();
  failed.view = View(1990);
  failed.pods[0]["status"]["phase"] = "Succeeded";
  decision = failed.Pass();
  EXPECT_EQ(ActionsOf<WorkerLost>(decision).size(), 1u);
  EXPECT_EQ(S(decision).value("failedPods", 0), 1);
}

// A queued job whose session released the worker of pi4b-master in its
// tail: that worker exited 0 and its pod Succeeded.
World ReleasedInTheTail() {
  World world = QueuedRunning();
  world.view = View(1990);
  world.view->workers[1].released = true;
  world.pods[1]["status"]["phase"] = "Succeeded";
  return world;
}

// What a restarted operator starts from: no memory but the job's status as
// the API server holds it (the last one written), and the token read from
// the job's Secret; the coordinator's session went with the old process.
void RestartOperator(World& world) {
  auto status = api::StatusFromJson(api::StatusToJson(world.memory.written.status));
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  world.memory = JobMemory{};
  world.memory.written.status = std::move(*status);
  world.secret_token = "fresh";
  world.view.reset();
}

std::vector<std::string> SessionNodes(const RegisterJob& registered) {
  std::vector<std::string> nodes;
  for (const auto& worker : registered.config.workers) nodes.push_back(worker.name);
  return nodes;
}

// Issue 44: a release is sealed beside the checkpoint (claims.releasedNodes)
// and goes out at once, not at the next progress write: an operator that
// dies after it must know.
TEST(DecideKueueTest, AReleaseIsSealedBesideTheCheckpointAndWrittenAtOnce) {
  World world = ReleasedInTheTail();
  const Decision decision = world.Pass();  // no time passed since the last write
  const auto writes = ActionsOf<WriteStatus>(decision);
  ASSERT_EQ(writes.size(), 1u) << "the release waits for the pacing";
  const json status = api::StatusToJson(writes[0].status);
  EXPECT_EQ(status["checkpoint"]["claims"]["releasedNodes"], json::array({"pi4b-master"}))
      << status["checkpoint"].dump();
  EXPECT_TRUE(ActionsOf<WriteStatus>(world.Pass()).empty()) << "once";
}

// Issue 44: an operator restarted after a release makes no pod for the
// released worker again (its session leaves the node out), does not count
// its Succeeded pod a failure, keeps its quota reclaimable and its row.
TEST(DecideKueueTest, ARestartedOperatorMakesNoPodForAReleasedWorkerAndKeepsItReclaimable) {
  World world = ReleasedInTheTail();
  world.Pass();
  // Kueue took the count the operator patched.
  Admit(world, 3, api::FlavorView{"default", {}, json::array()}, 1, "3");
  world.Pass();
  ASSERT_NO_FATAL_FAILURE(RestartOperator(world));

  Decision decision = world.Pass();
  const auto registered = ActionsOf<RegisterJob>(decision);
  ASSERT_EQ(registered.size(), 1u);
  EXPECT_EQ(SessionNodes(registered[0]), (std::vector<std::string>{"pi3b-worker", "pi4b-worker"}));
  EXPECT_TRUE(registered[0].config.resume);
  // The admission was announced before the restart: the status's Admitted
  // condition says so, and it is not said again.
  EXPECT_EQ(EventReasons(decision), (std::vector<std::string>{"Resumed"}));

  world.view = View(1990);
  world.view->workers.erase(world.view->workers.begin() + 1);
  decision = world.Pass();
  EXPECT_TRUE(ActionsOf<CreateObjects>(decision).empty()) << "the released pod made again";
  EXPECT_TRUE(ActionsOf<DeletePod>(decision).empty());
  EXPECT_TRUE(ActionsOf<WorkerLost>(decision).empty());
  EXPECT_TRUE(ActionsOf<PatchWorkload>(decision).empty()) << "reclaimablePods 1 stays";
  EXPECT_EQ(S(decision).value("failedPods", 0), 0);
  const json status = S(decision);
  EXPECT_EQ(status["workers"], 2);
  std::string ready;
  for (const auto& condition : status["conditions"]) {
    if (condition["type"] == "Ready") ready = condition.value("message", "");
  }
  EXPECT_NE(ready.find("2 of 3 workers running, 1 released"), std::string::npos) << ready;
  std::vector<std::string> rows;
  for (const auto& row : status["nodes"]) rows.push_back(row["name"]);
  EXPECT_EQ(rows, (std::vector<std::string>{"pi3b-worker", "pi4b-worker", "pi4b-master"}))
      << "the released worker's items still count";
  EXPECT_EQ(status["checkpoint"]["claims"]["releasedNodes"], json::array({"pi4b-master"}))
      << "sealed again for the next restart";

  // Its pod gone (deleted by hand, its node drained) after the restart: not
  // made again.
  world.pods.erase(world.pods.begin() + 1);
  decision = world.Pass();
  EXPECT_TRUE(ActionsOf<CreateObjects>(decision).empty());
  EXPECT_TRUE(ActionsOf<PatchWorkload>(decision).empty());
}

// A released node claimed in status by someone with status rights breaks
// the seal: the restarted operator does not leave the node out.
TEST(DecideKueueTest, AReleaseNotSealedByTheOperatorLeavesNoNodeOut) {
  World world = QueuedRunning();
  world.view = View(1990);
  world.Pass();
  ASSERT_TRUE(world.memory.written.status.checkpoint &&
              world.memory.written.status.checkpoint->contains("claims"));
  (*world.memory.written.status.checkpoint)["claims"]["releasedNodes"] =
      json::array({"pi4b-master"});
  ASSERT_NO_FATAL_FAILURE(RestartOperator(world));
  const auto registered = ActionsOf<RegisterJob>(world.Pass());
  ASSERT_EQ(registered.size(), 1u);
  EXPECT_EQ(SessionNodes(registered[0]), kNodes);
  EXPECT_FALSE(registered[0].config.resume) << "nor resumes from the checkpoint";
}

// A job evicted (or suspended) after a release stops: the released worker's
// Succeeded pod does not hold the stop. Admitted again with the Workload's
// reclaimablePods, it runs on the others.
TEST(DecideKueueTest, AJobEvictedAfterAReleaseStopsAndResumesWithoutTheReleasedWorker) {
  World world = ReleasedInTheTail();
  world.Pass();
  auto conditions = AdmittedConditions();
  conditions["Evicted"] = {true, "Preempted", "Preempted to accommodate a workload (UID: x)"};
  world.queue->workload = api::ReadWorkload(WorkloadJson(3, conditions, "default", 1, "5"));
  Decision decision = world.Pass();
  EXPECT_EQ(ActionsOf<DeletePod>(decision).size(), 2u) << "the Succeeded pod stays";
  world.pods.erase(world.pods.begin() + 2);
  world.pods.erase(world.pods.begin());
  decision = world.Pass();
  EXPECT_EQ(ActionsOf<RemoveJob>(decision).size(), 1u);
  EXPECT_EQ(S(decision)["phase"], "Suspended");
  ASSERT_EQ(ActionsOf<PatchWorkload>(decision).size(), 1u) << "the quota handed back";

  world.view.reset();
  Admit(world, 3, api::FlavorView{"default", {}, json::array()}, 1, "7");
  const auto registered = ActionsOf<RegisterJob>(world.Pass());
  ASSERT_EQ(registered.size(), 1u);
  EXPECT_EQ(SessionNodes(registered[0]), (std::vector<std::string>{"pi3b-worker", "pi4b-worker"}));
}

// A Workload deleted under the job is made again with no reclaimable pods:
// every node runs again, the release forgotten in memory and in the seal.
TEST(DecideKueueTest, AWorkloadMadeAgainForgetsTheReleasedWorkers) {
  World world = ReleasedInTheTail();
  world.Pass();
  world.queue->workload.reset();
  world.Pass();  // stops the session
  world.pods.erase(world.pods.begin() + 2);
  world.pods.erase(world.pods.begin());
  const Decision decision = world.Pass();
  const auto created = ActionsOf<CreateWorkload>(decision);
  ASSERT_EQ(created.size(), 1u);
  EXPECT_EQ(created[0].workload["spec"]["podSets"][0]["count"], 3);
  EXPECT_TRUE(decision.memory.faults.ReleasedNodes().empty());
  EXPECT_FALSE(decision.memory.faults.nodes.contains("pi4b-master"))
      << "its record, with nothing left to keep, is dropped";
  ASSERT_TRUE(S(decision).contains("checkpoint"));
  EXPECT_FALSE(S(decision)["checkpoint"]["claims"].contains("releasedNodes"));
}

// docs/operator.md, "A node joining mid-job under Kueue": within the pods
// the Workload was admitted with, a node that becomes eligible waits.
TEST(DecideKueueTest, ANodeJoiningMidJobJoinsOnlyWithinTheAdmittedCount) {
  World world = Queued();
  world.nodes[0] = Node(kNodes[0], /*ready=*/false);
  world.Pass();
  Admit(world, 2, api::FlavorView{"default", {}, json::array()});
  world.Pass();
  world.view = View(0);
  world.view->workers.erase(world.view->workers.begin());  // the two nodes that run
  world.Pass();
  world.nodes[0] = Node(kNodes[0], /*ready=*/true);
  Decision decision = world.Pass();
  EXPECT_TRUE(ActionsOf<AddWorker>(decision).empty());
  // Without Kueue the same node joins.
  world.queue.reset();
  decision = world.Pass();
  EXPECT_EQ(ActionsOf<AddWorker>(decision).size(), 1u);
}

TEST(DecideKueueTest, AJobWithoutAQueueRunsAsBefore) {
  World world;
  const Decision decision = world.Pass();
  EXPECT_EQ(ActionsOf<RegisterJob>(decision).size(), 1u);
  EXPECT_TRUE(ActionsOf<CreateWorkload>(decision).empty());
  EXPECT_EQ(ConditionReason(S(decision), "Admitted"), "");
}

TEST(KueueTest, TheWorkloadCarriesTheWorkerPodsRequestsSelectorAndPriority) {
  const api::ParsedSpec parsed = api::ParseWeightedJobSpec(
      json::parse(R"({"workload":{"primes":{"limit":4000}},"nodeSelector":{"pool":"a"},
        "worker":{"resources":{"requests":{"cpu":"500m"},"limits":{"cpu":"1"}}}})"),
      "p");
  ASSERT_TRUE(parsed.spec) << parsed.error.status.message();
  api::ObjectMeta job;
  job.name = "p";
  job.ns = "ns";
  job.uid = "abcdef-123";
  const json workload = BuildWorkload(job, *parsed.spec, WorkerPodSettings{}, "q", 2, "high", 1000);
  EXPECT_EQ(workload["metadata"]["name"], "weightedjob-p-abcde");
  const json& pod = workload["spec"]["podSets"][0]["template"]["spec"];
  EXPECT_EQ(pod["containers"][0]["resources"]["requests"]["cpu"], "500m");
  EXPECT_EQ(pod["nodeSelector"]["pool"], "a");
  EXPECT_EQ(workload["spec"]["priority"], 1000);
  EXPECT_EQ(workload["spec"]["priorityClassRef"]["kind"], "WorkloadPriorityClass");
  EXPECT_EQ(workload["spec"]["priorityClassRef"]["name"], "high");
  const json plain =
      BuildWorkload(job, *parsed.spec, WorkerPodSettings{}, "q", 2, "", std::nullopt);
  EXPECT_FALSE(plain["spec"].contains("priority"));
}

TEST(KueueTest, PlacingOnAFlavorKeepsTheJobsOwnSelection) {
  const api::ParsedSpec parsed = api::ParseWeightedJobSpec(
      json::parse(R"({"workload":{"primes":{"limit":4000}},"nodeSelector":{"pool":"a"}})"), "p");
  ASSERT_TRUE(parsed.spec);
  const api::WeightedJobSpec placed = PlaceOnFlavors(
      *parsed.spec,
      {api::FlavorView{"f", {{"pool", "b"}, {"zone", "z"}}, json::array({{{"key", "t"}}})}});
  EXPECT_EQ(placed.pod_template.node_selector,
            (std::map<std::string, std::string>{{"pool", "a"}, {"zone", "z"}}));
  EXPECT_EQ(placed.pod_template.spec["nodeSelector"]["zone"], "z");
  EXPECT_EQ(placed.pod_template.tolerations.size(), 1u);
}

TEST(KueueTest, AConditionKeepsItsTransitionTimeWhileItsStatusStays) {
  json conditions = WithCondition(json::array(), "Finished", false, "A", "a", 1, "t1");
  conditions = WithCondition(conditions, "Finished", false, "B", "b", 2, "t2");
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "t1");
  EXPECT_EQ(conditions[0]["reason"], "B");
  conditions = WithCondition(conditions, "Finished", true, "C", "c", 2, "t3");
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "t3");
}

TEST(KueueTest, ADeactivatedWorkloadIsNotRequeued) {
  auto conditions = AdmittedConditions();
  conditions["Evicted"] = {true, "Deactivated", "The workload is deactivated"};
  const json patch = ClearAdmissionPatch(api::ReadWorkload(WorkloadJson(1, conditions, "f")), "t");
  for (const auto& c : patch["status"]["conditions"]) {
    if (c["type"] == "Requeued") {
      EXPECT_EQ(c["status"], "False");
    }
  }
}

}  // namespace
}  // namespace ballast::controller::decide_test
