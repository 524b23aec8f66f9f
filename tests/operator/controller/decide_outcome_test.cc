// Decide (operator/controller/decide.h) on what a user is told: a job taken
// in gets a phase at once; failed items are counted, warned of, and fail the
// job past spec.failurePolicy.maxFailedItems; a finished job's conditions
// follow Kubernetes' (Complete or Failed, no Ready); its status separates
// end to end from compute and says what its efficiency is measured against.
#include <gtest/gtest.h>

#include "operator/controller/decide.h"
#include "tests/operator/controller/decide_world.h"

namespace ballast::controller {
namespace {

using namespace decide_test;  // NOLINT: the world of every test here

Decision AcceptPass(World& world) {
  const api::ParsedSpec spec = api::ParseWeightedJobSpec(world.job["spec"], "p");
  DecideInput input;
  input.ns = "ns";
  input.name = "p";
  input.id = "ns.p";
  input.job = api::ReadJob(world.job);
  input.spec = &spec;
  input.now = {world.wall, world.steady, Rfc3339(world.wall)};
  Decision decision = Accept(input, world.memory);
  world.memory = decision.memory;
  return decision;
}

std::string ConditionStatus(const json& status, const std::string& type) {
  for (const auto& condition : status.value("conditions", json::array())) {
    if (condition["type"] == type) return condition["status"];
  }
  return "";
}

TEST(DecideOutcomeTest, AJobNoOperatorTookInYetIsPendingAtOnceWithAnAcceptedEvent) {
  World world;
  world.job["metadata"]["creationTimestamp"] = Rfc3339(kStart - 2);
  ASSERT_TRUE(NeedsAccept(world.memory));
  const Decision decision = AcceptPass(world);
  const json status = S(decision);
  EXPECT_EQ(status["phase"], "Pending");
  EXPECT_EQ(status["observedGeneration"], 1);
  EXPECT_EQ(ConditionReason(status, "Progressing"), "Accepted");
  EXPECT_EQ(ConditionStatus(status, "Progressing"), "True");
  EXPECT_EQ(ActionsOf<WriteStatus>(decision).size(), 1u) << "written at once";
  EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty()) << "the slow work comes next pass";
  EXPECT_EQ(decision.requeue_after, milliseconds(1));
  ASSERT_EQ(Events(decision).size(), 1u);
  EXPECT_FALSE(Events(decision)[0].warning);
  EXPECT_EQ(Events(decision)[0].message, "an operator took the job in 2 s after it was created");
  EXPECT_FALSE(NeedsAccept(world.memory));
  EXPECT_EQ(world.memory.clock.accepted_wall, kStart);
  // The next pass, a millisecond later, registers as a job's first pass
  // does, and hands its startTime over at once (regression: it waited for
  // the status interval and was lost).
  world.steady += milliseconds(1);
  world.wall += 0.001;
  const Decision registered = world.Pass();
  EXPECT_EQ(ActionsOf<RegisterJob>(registered).size(), 1u);
  const auto writes = ActionsOf<WriteStatus>(registered);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_TRUE(writes[0].status.start_time);
  EXPECT_TRUE(world.memory.written.status.start_time);
}

// The CRD defaults status.phase to Pending: what tells a job no operator
// took in is the absent observedGeneration, and the Accepted event comes all
// the same.
TEST(DecideOutcomeTest, ThePhaseTheSchemaDefaultsDoesNotHideThatNoOperatorTookTheJobIn) {
  World world;
  world.memory.written.status = *api::StatusFromJson(json{{"phase", "Pending"}});
  ASSERT_TRUE(NeedsAccept(world.memory));
  const Decision decision = AcceptPass(world);
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"Accepted"});
  EXPECT_FALSE(NeedsAccept(world.memory));
}

TEST(DecideOutcomeTest, AJobThatWaitedLongForAnOperatorSaysSoInAWarning) {
  World world;
  world.job["metadata"]["creationTimestamp"] = Rfc3339(kStart - 600);
  const Decision decision = AcceptPass(world);
  ASSERT_EQ(Events(decision).size(), 1u);
  EXPECT_TRUE(Events(decision)[0].warning);
  EXPECT_EQ(Events(decision)[0].message,
            "an operator took the job in 600 s after it was created; until then no operator was "
            "running, or none held the leader lease");
}

// An exec job of 2000 items on kNodes, `max_failed` tolerated.
World ExecJob(std::optional<int> max_failed) {
  World world;
  world.job["spec"] = {{"workload", {{"exec", {{"command", {"true"}}, {"retries", 2}}}}},
                       {"items", 2000},
                       {"backoffLimit", 1}};
  if (max_failed) world.job["spec"]["failurePolicy"] = {{"maxFailedItems", *max_failed}};
  world.Pass();
  world.view = View(0);
  world.view->result = workload::Result::Empty(workload::WorkloadKind::kExec);
  world.Pass();
  for (size_t i = 0; i < kNodes.size(); ++i) {
    world.pods.push_back(Pod(kNodes[i], "Running", "pod-uid-" + std::to_string(i)));
  }
  world.Pass();
  return world;
}

// The view of ExecJob with `completed` items done, item 7 failed (3 attempts, exit 1).
coordinator::JobView ItemSevenFailed(uint64_t completed, bool done) {
  coordinator::JobView view = View(completed, done);
  view.result = workload::Result::ExecSucceeded(completed - 1);
  EXPECT_TRUE(view.result.Merge(workload::Result::ExecFailed({7, 8}, 1, 3)).ok());
  return view;
}

// maxFailedItems: 0 is a Job's maxFailedIndexes of 0: the first failed item
// fails the job at once, and the rest is not computed.
TEST(DecideOutcomeTest, AFailedItemPastMaxFailedItemsFailsTheJobAtOnceNamingIt) {
  World world = ExecJob(0);
  world.view = ItemSevenFailed(600, false);
  world.checkpoint = coordinator::Checkpoint{};
  world.checkpoint->completed.Add({0, 600});
  const Decision decision = world.Pass();
  const json status = S(decision);
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["checkpoint"]["completed"], (json{{0, 600}})) << "what was finished, newest";
  EXPECT_EQ(status["failedItems"], 1);
  EXPECT_EQ(ConditionReason(status, "Failed"), "TooManyFailedItems");
  EXPECT_EQ(ConditionStatus(status, "Failed"), "True");
  EXPECT_EQ(ConditionStatus(status, "Ready"), "") << "no Ready condition once finished";
  EXPECT_EQ(ConditionStatus(status, "Progressing"), "False");
  std::string failed_message;
  for (const auto& c : status["conditions"]) {
    if (c["type"] == "Failed") failed_message = c["message"];
  }
  EXPECT_EQ(failed_message,
            "1 item failed all attempts, more than failurePolicy.maxFailedItems (0): item 7 (exit "
            "code 1 after 3 attempts)");
  EXPECT_EQ(EventReasons(decision),
            (std::vector<std::string>{"ItemsFailed", "TooManyFailedItems"}));
  for (const auto& event : Events(decision)) EXPECT_TRUE(event.warning) << event.message;
  EXPECT_EQ(ActionsOf<DeletePod>(decision).size(), 3u) << "the rest is not computed";
  EXPECT_EQ(ActionsOf<RemoveJob>(decision).size(), 1u);
}

// The default (maxFailedItems unset) is a Job with backoffLimitPerIndex: a
// failed item is reported at once and the job runs on; once every item was
// attempted it fails, naming the failed item, with the others' result kept.
TEST(DecideOutcomeTest, AFailedItemByDefaultLetsEveryOtherItemFinishThenFailsTheJob) {
  World world = ExecJob(std::nullopt);
  world.view = ItemSevenFailed(600, false);
  Decision decision = world.Pass();
  EXPECT_EQ(S(decision)["phase"], "Running") << "the other items go on";
  EXPECT_EQ(S(decision)["failedItems"], 1);
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"ItemsFailed"});
  EXPECT_EQ(Events(decision)[0].message,
            "1 item failed all attempts so far (failurePolicy.maxFailedItems unset): item 7 (exit "
            "code 1 after 3 attempts)");
  EXPECT_TRUE(ActionsOf<DeletePod>(decision).empty());

  world.steady += std::chrono::seconds(3);
  world.view = ItemSevenFailed(2000, true);
  decision = world.Pass();
  const json status = S(decision);
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(ConditionReason(status, "Failed"), "FailedItems");
  EXPECT_EQ(status["result"]["exec"]["succeeded"], 1999) << "the others' result is kept";
  std::string failed_message;
  for (const auto& c : status["conditions"]) {
    if (c["type"] == "Failed") failed_message = c["message"];
  }
  EXPECT_EQ(failed_message,
            "1 of 2000 items failed all attempts; the other 1999 finished and their merged result "
            "is in status.result (set failurePolicy.maxFailedItems to tolerate failed items): "
            "item 7 (exit code 1 after 3 attempts)");
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"FailedItems"});
}

// The count the last ItemsFailed event said is the status's, which goes out
// at once when it grows: neither pacing nor a restart says it again.
TEST(DecideOutcomeTest, AnItemsFailedEventIsSaidOncePerCountThroughPacingAndARestart) {
  World world = ExecJob(std::nullopt);
  world.view = ItemSevenFailed(600, false);
  world.Pass();
  world.steady += std::chrono::milliseconds(10);  // well within the status interval
  world.view = ItemSevenFailed(700, false);
  Decision decision = world.Pass();
  EXPECT_TRUE(EventReasons(decision).empty());
  EXPECT_EQ(world.memory.written.status.failed_items, 1u);
  world.memory = MemoryFromStatus(world.memory.written.status);
  decision = world.Pass();
  for (const std::string& reason : EventReasons(decision)) EXPECT_NE(reason, "ItemsFailed");
}

TEST(DecideOutcomeTest, FailedItemsWithinThePolicyCompleteTheJobSayingSo) {
  World world = ExecJob(1);
  world.view = ItemSevenFailed(600, false);
  world.steady += std::chrono::seconds(3);
  Decision decision = world.Pass();
  EXPECT_EQ(S(decision)["phase"], "Running");
  EXPECT_EQ(S(decision)["failedItems"], 1);
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"ItemsFailed"});
  EXPECT_EQ(Events(decision)[0].message,
            "1 item failed all attempts so far (failurePolicy.maxFailedItems 1): item 7 (exit code "
            "1 after 3 attempts)");
  world.steady += std::chrono::seconds(3);
  EXPECT_TRUE(EventReasons(world.Pass()).empty()) << "warned once per new failure";

  world.view = ItemSevenFailed(2000, true);
  decision = world.Pass();
  const json status = S(decision);
  EXPECT_EQ(status["phase"], "Succeeded");
  EXPECT_EQ(ConditionReason(status, "Complete"), "CompletedWithFailedItems");
  EXPECT_EQ(ConditionStatus(status, "Complete"), "True");
  EXPECT_EQ(ConditionStatus(status, "Ready"), "");
  ASSERT_EQ(Events(decision).size(), 1u);
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"Completed"});
  EXPECT_TRUE(Events(decision)[0].warning) << "not a plain success";
  EXPECT_EQ(
      Events(decision)[0].message.rfind(
          "1999 of 2000 items succeeded, 1 failed (failurePolicy.maxFailedItems 1) in 10.0 s", 0),
      0u)
      << Events(decision)[0].message;
}

TEST(DecideOutcomeTest, ListedItemsThatFailAreNamedByValueInStatus) {
  World world;
  json list = json::array();
  for (int i = 0; i < 30; ++i) list.push_back("photo-" + std::to_string(i) + ".jpg");
  world.job["spec"] = {{"workload", {{"exec", {{"command", {"true"}}}}}},
                       {"itemsFrom", {{"list", list}}},
                       {"failurePolicy", {{"maxFailedItems", 5}}}};
  world.Pass();
  coordinator::JobView view = View(10);
  view.items = 30;
  view.result = workload::Result::ExecSucceeded(9);
  ASSERT_TRUE(view.result.Merge(workload::Result::ExecFailed({7, 8}, 4, 1)).ok());
  world.view = view;
  const Decision decision = world.Pass();
  EXPECT_EQ(S(decision)["failedItemValues"], json::array({"photo-7.jpg"}));
  ASSERT_EQ(EventReasons(decision)[0], "ItemsFailed");
  EXPECT_EQ(Events(decision)[0].message,
            "1 item failed all attempts so far (failurePolicy.maxFailedItems 5): photo-7.jpg "
            "(list[7], exit code 4 after 1 attempt)");
}

// The view counts costs in mean items (the whole job costs `items`); the
// status in the units the job declares: here bytes, 30 items of 100 to 3000.
TEST(DecideOutcomeTest, CostsInTheStatusAreInTheJobsOwnUnits) {
  World world;
  json list = json::array();
  for (int i = 1; i <= 30; ++i) {
    list.push_back({{"value", "f" + std::to_string(i)}, {"cost", 100 * i}});
  }
  world.job["spec"] = {{"workload", {{"exec", {{"command", {"true"}}}}}},
                       {"itemsFrom", {{"list", list}}}};
  world.Pass();
  coordinator::JobView view = View(3);
  view.items = 30;
  view.completed_cost = 6;  // mean items: 6 x 1550 bytes
  for (auto& worker : view.workers) worker.cost = 2;
  world.view = view;
  const json status = S(world.Pass());
  EXPECT_EQ(status["totalCost"], 46500);  // 100 + 200 + ... + 3000
  EXPECT_EQ(status["completedCost"], 9300);
  EXPECT_EQ(status["nodes"][0]["cost"], 3100);
  EXPECT_EQ(status["nodes"][0]["costSpeed"], 3100) << "in its one busy second";
}

TEST(DecideOutcomeTest, ASucceededJobHasCompleteAndNoReadyConditionAndItsTiming) {
  World world;
  world.job["metadata"]["creationTimestamp"] = Rfc3339(kStart - 1);
  AcceptPass(world);
  world = [&] {
    World running = world;
    running.Pass();  // registers at kStart
    running.view = View(0);
    running.Pass();
    for (size_t i = 0; i < kNodes.size(); ++i) {
      json pod = Pod(kNodes[i], "Running", "pod-uid-" + std::to_string(i));
      pod["status"]["conditions"] = {{{"type", "PodScheduled"},
                                      {"status", "True"},
                                      {"lastTransitionTime", Rfc3339(kStart + 1)}},
                                     {{"type", "PodReadyToStartContainers"},
                                      {"status", "True"},
                                      {"lastTransitionTime", Rfc3339(kStart + 2)}}};
      pod["status"]["containerStatuses"] = {
          {{"name", "worker"}, {"state", {{"running", {{"startedAt", Rfc3339(kStart + 6)}}}}}}};
      running.pods.push_back(pod);
    }
    running.Pass();
    return running;
  }();
  coordinator::JobView view = View(2000, true);
  for (size_t i = 0; i < view.workers.size(); ++i) {
    view.workers[i].contacted = true;
    view.workers[i].first_contact = 7 - static_cast<double>(i == 1);  // pi4b-master first
  }
  view.finished_at = 10;
  world.view = view;
  const json status = S(world.Pass());
  EXPECT_EQ(status["phase"], "Succeeded");
  EXPECT_EQ(ConditionStatus(status, "Complete"), "True");
  EXPECT_EQ(ConditionReason(status, "Complete"), "AllItemsFinished");
  EXPECT_EQ(ConditionStatus(status, "Ready"), "") << "Complete says it; Ready=False would not";
  EXPECT_EQ(ConditionStatus(status, "Progressing"), "False");
  EXPECT_EQ(status["failedItems"], 0);
  EXPECT_EQ(status["timing"], json::parse(R"({
    "endToEndSeconds": 11, "computeSeconds": 4, "computeEfficiency": 2,
    "firstReportNode": "pi4b-master",
    "beforeFirstReport": {"operatorSeconds": 1, "waitingForNodesSeconds": 0,
                          "podSchedulingSeconds": 1, "podStartSeconds": 1,
                          "containerStartSeconds": 4, "workerStartSeconds": 0}})"));
  EXPECT_EQ(status["efficiencyNote"],
            "11.0 s end to end, 4.0 s computing; before it mostly container start 4.0 s");
}

// A job shorter than the pod cache's lag finishes before the cache shows
// its pods scheduled and started: the timing is completed while the session
// lingers, and written.
TEST(DecideOutcomeTest, TheTimingIsCompletedFromPodsTheCacheShowsOnlyAfterTheFinish) {
  World world = Running();
  coordinator::JobView view = View(2000, true);
  for (auto& worker : view.workers) {
    worker.contacted = true;
    worker.first_contact = 7;
  }
  world.view = view;
  Decision decision = world.Pass();
  EXPECT_FALSE(S(decision)["timing"]["beforeFirstReport"].contains("podSchedulingSeconds"));
  EXPECT_EQ(S(decision)["phase"], "Succeeded");
  EXPECT_TRUE(EventReasons(decision).empty())
      << "the Completed Event waits for the timing it names";
  for (auto& pod : world.pods) {
    pod["status"] = {
        {"phase", "Succeeded"},
        {"conditions",
         {{{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", Rfc3339(kStart)}}}},
        {"containerStatuses",
         {{{"name", "worker"},
           {"state", {{"terminated", {{"exitCode", 0}, {"startedAt", Rfc3339(kStart + 5)}}}}}}}}};
  }
  decision = world.Pass();
  const json before = S(decision)["timing"]["beforeFirstReport"];
  // No creationTimestamp here: the origin is the session's start.
  EXPECT_EQ(before, json::parse(R"({"podSchedulingSeconds": 0, "containerStartSeconds": 5,
                                    "workerStartSeconds": 2})"));
  EXPECT_EQ(ActionsOf<WriteStatus>(decision).size(), 1u);
  EXPECT_EQ(ActionsOf<RemoveJob>(decision).size(), 1u) << "the pods are done";
  // The Completed Event, the Progressing condition and the NOTE say the same.
  const json status = S(decision);
  ASSERT_EQ(EventReasons(decision), std::vector<std::string>{"Completed"});
  const std::string message = ActionsOf<RecordEvent>(decision)[0].message;
  EXPECT_NE(message.find(status["efficiencyNote"].get<std::string>()), std::string::npos)
      << message;
  EXPECT_EQ(status["note"], status["efficiencyNote"]);
  for (const auto& condition : status["conditions"]) {
    if (condition["type"] == "Progressing") {
      EXPECT_EQ(condition["message"], message);
    }
  }
  // Nothing changes after that.
  world.view.reset();
  const Decision after = world.Pass();
  EXPECT_TRUE(EventReasons(after).empty());
  EXPECT_TRUE(ActionsOf<WriteStatus>(after).empty());
}

// The pod cache can lag the job: a job of a second may finish before the
// cache shows its pods at all. The session lingers until it does, so that
// the timing gets the first reporter's pod.
TEST(DecideOutcomeTest, AFinishedSessionWaitsForPodsTheCacheHasNotShownYet) {
  World world;
  world.Pass();
  world.view = View(0);
  world.Pass();  // the pods are made
  world.writes.on_their_way = {"p-pi3b-worker", "p-pi4b-master", "p-pi4b-worker"};
  world.view = View(2000, true);
  Decision decision = world.Pass();
  EXPECT_EQ(S(decision)["phase"], "Succeeded");
  EXPECT_TRUE(ActionsOf<RemoveJob>(decision).empty()) << "its pods are on their way";
  EXPECT_EQ(decision.requeue_after, milliseconds(500));
  world.writes = {};
  for (size_t i = 0; i < kNodes.size(); ++i) {
    world.pods.push_back(Pod(kNodes[i], "Succeeded", "pod-uid-" + std::to_string(i)));
  }
  EXPECT_EQ(ActionsOf<RemoveJob>(world.Pass()).size(), 1u);
}

TEST(DecideOutcomeTest, AnEfficiencyWithoutAReferenceIsNamedTheEstimateSayingWhy) {
  World world;
  world.nodes[0]["metadata"]["annotations"] = json::object();
  world.Pass();
  world.view = View(0);
  world.Pass();
  world.view = View(2000, true);
  const Decision decision = world.Pass();
  const json status = S(decision);
  EXPECT_EQ(status["efficiencyReference"], "estimate");
  EXPECT_EQ(status["efficiency"], status["estimatedEfficiency"]);
  const std::string note = status["efficiencyNote"];
  EXPECT_EQ(note.find("estimate"), std::string::npos) << "the NOTE stays short: " << note;
  ASSERT_EQ(EventReasons(decision), std::vector<std::string>{"Completed"});
  const std::string said = Events(decision)[0].message;
  EXPECT_NE(said.find("the job's own estimate: no ballast.io/emulated-speed on node pi3b-worker "
                      "(1 of 3)"),
            std::string::npos)
      << said;
}

// A job whose items' ConfigMap is not there yet waits for it, saying so at
// once, as a pod waits for its ConfigMap (it may come later in the same
// apply); it runs when the ConfigMap comes, and fails past items_wait.
TEST(DecideOutcomeTest, AJobWaitsForItsItemsConfigMapWithinABound) {
  World world;
  world.options.items_wait = std::chrono::seconds(10);
  world.Pass();  // accepted
  world.items_missing = "ConfigMap ns/photos does not exist";
  Decision decision = world.Pass();
  json status = S(decision);
  EXPECT_EQ(status["phase"], "Pending");
  EXPECT_EQ(ConditionReason(status, "Ready"), "WaitingForItems");
  ASSERT_EQ(EventReasons(decision), std::vector<std::string>{"WaitingForItems"});
  EXPECT_EQ(Events(decision)[0].message,
            "waiting for the job's items: ConfigMap ns/photos does not exist; the job fails if it "
            "does not exist within 10 s");
  EXPECT_TRUE(Events(decision)[0].warning);
  EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty());
  EXPECT_LE(decision.requeue_after.value_or(std::chrono::hours(1)), std::chrono::seconds(2));
  world.steady += std::chrono::seconds(5);
  EXPECT_TRUE(EventReasons(world.Pass()).empty()) << "said once";

  // It comes: the job goes on to register.
  world.items_missing.reset();
  decision = world.Pass();
  EXPECT_EQ(ActionsOf<RegisterJob>(decision).size(), 1u);
  EXPECT_FALSE(world.memory.clock.items_missing_since);

  // One that never comes fails the job, naming it, once the bound is past.
  World never;
  never.options.items_wait = std::chrono::seconds(10);
  never.Pass();
  never.items_missing = "ConfigMap ns/photos does not exist";
  never.Pass();
  never.steady += std::chrono::seconds(10);
  status = S(never.Pass());
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(ConditionReason(status, "Failed"), "InvalidSpec");
  std::string failed;
  for (const auto& c : status["conditions"]) {
    if (c["type"] == "Failed") failed = c["message"];
  }
  EXPECT_EQ(failed, "spec.itemsFrom.configMap: ConfigMap ns/photos does not exist (waited 10 s)");
}

// The WaitingForItems event is said once per wait, a restart included: the
// status, written at once with it, says it was.
TEST(DecideOutcomeTest, ARestartDoesNotSayWaitingForItemsAgain) {
  World world;
  world.Pass();  // accepted
  world.items_missing = "ConfigMap ns/photos does not exist";
  const Decision decision = world.Pass();
  ASSERT_EQ(EventReasons(decision), std::vector<std::string>{"WaitingForItems"});
  ASSERT_EQ(ActionsOf<WriteStatus>(decision).size(), 1u) << "at once";
  world.memory = MemoryFromStatus(ActionsOf<WriteStatus>(decision)[0].status);  // restarted
  world.steady += std::chrono::seconds(1);
  world.wall += 1;
  const Decision after = world.Pass();
  EXPECT_EQ(ConditionReason(S(after), "Ready"), "WaitingForItems");
  EXPECT_TRUE(EventReasons(after).empty()) << "said before the restart";
}

// A job's listed items are fixed at its start: read again (an operator
// restarted) and changed, the job fails saying so, instead of resuming a
// checkpoint of another list (issue 46: "resumed from the checkpoint at 30
// of 20 items", then Running forever).
TEST(DecideOutcomeTest, AListThatChangedSinceTheJobStartedFailsItNamingBoth) {
  World world;
  world.job["spec"] = {{"workload", {{"exec", {{"command", {"true"}}}}}},
                       {"itemsFrom", {{"list", {"a", "b", "c", "d"}}}},
                       {"backoffLimit", 1}};
  world.Pass();
  Decision decision = world.Pass();
  const json status = S(decision);
  ASSERT_TRUE(status.contains("itemsDigest")) << status.dump();
  EXPECT_EQ(status["itemsDigest"].get<std::string>().rfind("fnv1a64:", 0), 0u);
  EXPECT_EQ(status["items"], 4);

  world.job["spec"]["itemsFrom"]["list"] = {"a", "b"};
  world.steady += std::chrono::seconds(1);
  decision = world.Pass();
  const json failed = S(decision);
  EXPECT_EQ(failed["phase"], "Failed");
  EXPECT_EQ(ConditionReason(failed, "Failed"), "ItemsChanged");
  std::string message;
  for (const auto& c : failed["conditions"]) {
    if (c["type"] == "Failed") message = c["message"];
  }
  EXPECT_EQ(message,
            "spec.itemsFrom: the list is not the one the job started with (4 items then, 2 now): a "
            "job's items are fixed at its start; put the list back, or delete the job and create "
            "it again");
  // The same list read again is the same job.
  World same;
  same.job = world.job;
  same.job["spec"]["itemsFrom"]["list"] = {"a", "b", "c", "d"};
  same.Pass();
  same.Pass();
  same.steady += std::chrono::seconds(1);
  EXPECT_NE(S(same.Pass())["phase"], "Failed");
}

// Only the operator says a job is finished: a Complete=True patched into the
// status of a running job is written over with the operator's conditions at
// once (issue 46: `kubectl wait --for=condition=Complete` returned at 165 of
// 600 items).
TEST(DecideOutcomeTest, AFinishedConditionTheOperatorDidNotSetIsWrittenOver) {
  World world = Running();
  world.view = View(600);
  world.steady += std::chrono::seconds(3);
  world.Pass();
  world.job["status"] = {
      {"conditions", {{{"type", "Complete"}, {"status", "True"}, {"reason", "Forged"}}}}};
  world.steady += std::chrono::milliseconds(100);  // well within the status interval
  const Decision decision = world.Pass();
  ASSERT_EQ(EventReasons(decision), std::vector<std::string>{"ConditionsRestored"});
  EXPECT_TRUE(Events(decision)[0].warning);
  const auto writes = ActionsOf<WriteStatus>(decision);
  ASSERT_EQ(writes.size(), 1u) << "written at once, not at the next interval";
  EXPECT_TRUE(writes[0].restate_conditions) << "the conditions go whole, past the writer's diff";
  const json status = api::StatusToJson(writes[0].status);
  EXPECT_EQ(status["phase"], "Running");
  EXPECT_EQ(ConditionStatus(status, "Complete"), "");
  EXPECT_EQ(ConditionStatus(status, "Ready"), "True");
  // The operator's own Complete, once the job is done, is no claim.
  world.job["status"] = json::object();
  world.view = View(2000, true);
  world.Pass();
  world.job["status"] = {{"conditions", {{{"type", "Complete"}, {"status", "True"}}}}};
  EXPECT_TRUE(EventReasons(world.Pass()).empty());
}

}  // namespace
}  // namespace ballast::controller
