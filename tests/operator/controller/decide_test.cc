// Decide (operator/controller/decide.h): the operator's behaviour as a pure
// function, pass by pass, with no control plane and no coordinator: each
// test builds what a pass sees (the job, its pods, the nodes, the profile,
// the coordinator's view, the writes in flight, the time) and checks the
// status, the memory and the actions.
#include "operator/controller/decide.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "operator/controller/decide_internal.h"
#include "tests/operator/controller/decide_world.h"

namespace ballast::controller {
namespace {

using namespace decide_test;  // NOLINT: the world of every test here

TEST(DecideTest, ANewJobIsWeighedAndRegisteredOnEveryEligibleNodeWithAFreshToken) {
  World world;
  const Decision decision = world.Pass();
  const auto registered = ActionsOf<RegisterJob>(decision);
  ASSERT_EQ(registered.size(), 1u);
  const coordinator::JobConfig& config = registered[0].config;
  EXPECT_EQ(config.id, "ns.p");
  EXPECT_EQ(config.token, "fresh");
  ASSERT_EQ(config.workers.size(), 3u);
  EXPECT_EQ(config.workers[0].name, "pi3b-worker");
  EXPECT_LT(config.workers[0].speed, config.workers[1].speed) << "a Pi 3B weighs less";
  EXPECT_FALSE(config.resume);
  EXPECT_EQ(S(decision)["startTime"], "2027-01-15T08:00:00Z");
  EXPECT_EQ(decision.requeue_after, milliseconds(1));
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"Started"});
}

TEST(DecideTest, ARegisteredJobCreatesItsPodsWithTheSecretOnceAndWaitsForThem) {
  World world;
  world.Pass();
  world.view = View(0);
  Decision decision = world.Pass();
  auto creates = ActionsOf<CreateObjects>(decision);
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_TRUE(creates[0].secret);
  EXPECT_FALSE(creates[0].restore);
  EXPECT_EQ(creates[0].token, "fresh");
  ASSERT_EQ(creates[0].pods.size(), 3u);
  EXPECT_EQ(creates[0].pods[0]["metadata"]["name"], "p-pi3b-worker");
  EXPECT_EQ(S(decision)["phase"], "Pending");
  EXPECT_EQ(ConditionReason(S(decision), "Ready"), "WaitingForWorkers");

  world.writes.creating = true;  // the task runs: nothing is made twice
  EXPECT_TRUE(ActionsOf<CreateObjects>(world.Pass()).empty());
  world.writes = {};
  world.writes.secret_exists = true;  // the task made it: the Executor says so from now on
  world.writes.on_their_way = {"p-pi3b-worker", "p-pi4b-master", "p-pi4b-worker"};
  EXPECT_TRUE(ActionsOf<CreateObjects>(world.Pass()).empty());
  world.writes = {};
  world.writes.secret_exists = true;
  world.pods = {Pod("pi3b-worker", "Running", "u0")};  // two pods went missing
  creates = ActionsOf<CreateObjects>(world.Pass());
  ASSERT_EQ(creates.size(), 1u);
  // The Secret exists: made again only if it is gone (the pods mount it).
  ASSERT_TRUE(creates[0].secret);
  EXPECT_TRUE(creates[0].restore);
  EXPECT_EQ(creates[0].pods.size(), 2u);
}

// A checkpoint over kMaxCheckpointBytes is not written: the last one that
// fit stays (older, so safe to resume from), with one Warning.
TEST(DecideTest, ACheckpointTooLargeForTheStatusKeepsTheLastOneThatFit) {
  World world = Running();
  world.view = View(600);
  world.checkpoint = coordinator::Checkpoint{};
  world.checkpoint->completed.Add({0, 600});
  world.steady += std::chrono::seconds(3);
  const json fit = S(world.Pass())["checkpoint"];
  ASSERT_EQ(fit["completed"], (json{{0, 600}}));
  for (uint64_t begin = 1000; begin < 1000 + 2 * 10000; begin += 2) {
    world.checkpoint->completed.Add({begin, begin + 1});  // 10,000 ranges: over 128 KiB
  }
  world.steady += std::chrono::seconds(3);
  Decision decision = world.Pass();
  EXPECT_EQ(S(decision)["checkpoint"], fit);
  EXPECT_EQ(EventReasons(decision), (std::vector<std::string>{"CheckpointTooLarge"}));
  world.steady += std::chrono::seconds(3);
  decision = world.Pass();
  EXPECT_EQ(S(decision)["checkpoint"], fit);
  EXPECT_TRUE(EventReasons(decision).empty()) << "warned once";
  // A pod fails: the last checkpoint that fit is sealed again with the count.
  world.pods[1]["status"]["phase"] = "Failed";
  world.steady += std::chrono::seconds(3);
  const json refit = S(world.Pass())["checkpoint"];
  EXPECT_EQ(refit["completed"], fit["completed"]);
  EXPECT_EQ(refit["claims"]["failedPods"], 1);
  EXPECT_NE(refit["seal"], fit["seal"]);
}

// A thousand nodes with the same unknown label value make one Warning, not
// a thousand; a label only one node lacks keeps its own.
TEST(DecideTest, LabelWarningsAreGroupedByWhatTheySay) {
  std::vector<std::string> warnings;
  for (int i = 0; i < 1000; ++i) {
    warnings.push_back(fmt::format(
        "node n{}: criterion os-release (label ballast.io/os-release): unknown value '2024', "
        "using default 5 (norm)",
        i));
  }
  warnings.push_back(
      "node odd: criterion ram (label ballast.io/ram-mb): label missing, using "
      "default 4 (mid)");
  warnings.push_back("not about one node");
  EXPECT_EQ(decide::GroupNodeWarnings(warnings),
            (std::vector<std::string>{
                "criterion os-release (label ballast.io/os-release): unknown value '2024', using "
                "default 5 (norm), on 1000 nodes: n0, n1, n2, n3, n4, n5, n6, n7, n8, n9, and 990 "
                "more",
                "node odd: criterion ram (label ballast.io/ram-mb): label missing, using default 4 "
                "(mid)",
                "not about one node"}));
  EXPECT_EQ(decide::ListSome({"a", "b"}), "a; b");
  EXPECT_EQ(decide::ListSome({"a", "b", "c"}, 2), "a; b; and 1 more");
}

TEST(DecideTest, RunningPodsMakeTheJobRunningAndStatusShowsTheView) {
  World world = Running();
  world.view = View(600);
  world.steady += std::chrono::seconds(3);  // past the status interval
  const Decision decision = world.Pass();
  EXPECT_EQ(S(decision)["phase"], "Running");
  EXPECT_EQ(S(decision)["workers"], 3);
  EXPECT_EQ(S(decision)["progress"], "30%");
  EXPECT_EQ(S(decision)["nodes"].size(), 3u);
  EXPECT_EQ(S(decision)["nodes"][1]["pod"], "p-pi4b-master");
  EXPECT_FALSE(S(decision)["nodes"][1].contains("duplicateSeconds"));  // no copy dropped
  EXPECT_TRUE(S(decision).contains("checkpoint"));
  EXPECT_EQ(ActionsOf<WriteStatus>(decision).size(), 1u);
  EXPECT_EQ(decision.requeue_after, milliseconds(2000));
}

// Busy seconds a node spent on items another handed in first (an endgame
// copy that lost) are shown in its row.
TEST(DecideTest, ANodesDroppedCopiesAreShownInItsRow) {
  World world = Running();
  world.view = View(600);
  world.view->workers[1].dropped_busy_s = 1.23456;
  world.steady += std::chrono::seconds(3);
  const Decision decision = world.Pass();
  EXPECT_EQ(S(decision)["nodes"][1]["duplicateSeconds"], 1.235);
  EXPECT_FALSE(S(decision)["nodes"][0].contains("duplicateSeconds"));
}

// The move to Running counts the workers then ("1 of 3"); once all run,
// another WorkersRunning event says "3 of 3", once.
TEST(DecideTest, WorkersRunningIsAnnouncedAgainWhenEveryWorkerRuns) {
  World world;
  world.Pass();  // registers
  world.view = View(0);
  world.Pass();  // creates the pods
  world.pods.push_back(Pod(kNodes[0], "Running", "pod-uid-0"));
  world.pods.push_back(Pod(kNodes[1], "Pending", "pod-uid-1"));
  world.pods.push_back(Pod(kNodes[2], "Pending", "pod-uid-2"));
  Decision decision = world.Pass();
  ASSERT_EQ(EventReasons(decision), std::vector<std::string>{"WorkersRunning"});
  EXPECT_EQ(Events(decision)[0].message, "1 of 3 workers running");
  for (size_t i = 1; i < 3; ++i) {
    world.pods[i] = Pod(kNodes[i], "Running", "pod-uid-" + std::to_string(i));
  }
  world.steady += std::chrono::seconds(1);
  decision = world.Pass();
  ASSERT_EQ(EventReasons(decision), std::vector<std::string>{"WorkersRunning"});
  EXPECT_EQ(Events(decision)[0].message, "3 of 3 workers running");
  EXPECT_FALSE(Events(decision)[0].warning);
  world.steady += std::chrono::seconds(1);
  EXPECT_TRUE(EventReasons(world.Pass()).empty()) << "said once";
  // A restarted operator registers the job again; its workers still run:
  // "3 of 3" was said (status.workers), and is not said again.
  world.memory = MemoryFromStatus(world.memory.written.status);
  world.view.reset();
  ASSERT_EQ(ActionsOf<RegisterJob>(world.Pass()).size(), 1u);
  world.view = View(0);
  world.steady += std::chrono::seconds(1);
  EXPECT_TRUE(EventReasons(world.Pass()).empty()) << "not again after a restart";
  // All at once: the move to Running says "3 of 3" and nothing follows.
  World at_once = Running();
  at_once.steady += std::chrono::seconds(1);
  EXPECT_TRUE(EventReasons(at_once.Pass()).empty());
}

// With the default pacing (status_pacing.h): the first items done are
// written within the status interval; then progress alone waits for a step
// of the job or the progress interval, a change a reader sees beside it for
// the status interval, a transition for nothing.
TEST(DecideTest, StatusIsWrittenOnTransitionsAtOnceVisibleChangesSoonAndProgressByStepsOrSeldom) {
  World world = Running();
  world.options.pacing = StatusPacing{};
  world.view = View(300);  // 15 % of the job: its first items
  world.steady += std::chrono::seconds(3);
  Decision decision = world.Pass();
  ASSERT_EQ(ActionsOf<WriteStatus>(decision).size(), 1u) << "the first progress is seen";
  EXPECT_EQ(S(decision)["progress"], "15%");
  world.steady += std::chrono::seconds(3);
  world.view = View(400);  // 20 %
  EXPECT_TRUE(ActionsOf<WriteStatus>(world.Pass()).empty()) << "less than a step waits";
  world.steady += std::chrono::seconds(11);
  world.view = View(800);  // 40 %: a step
  world.checkpoint = coordinator::Checkpoint{};
  world.checkpoint->completed.Add({0, 800});
  decision = world.Pass();
  ASSERT_EQ(ActionsOf<WriteStatus>(decision).size(), 1u) << "a step";
  EXPECT_EQ(S(decision)["progress"], "40%");
  EXPECT_EQ(S(decision)["checkpoint"]["completed"], (json{{0, 800}})) << "the checkpoint with it";
  world.steady += std::chrono::seconds(30);
  world.view = View(900);
  world.checkpoint->completed.Add({800, 900});
  EXPECT_TRUE(ActionsOf<WriteStatus>(world.Pass()).empty()) << "5 points wait";
  world.steady += std::chrono::seconds(30);
  decision = world.Pass();
  ASSERT_EQ(ActionsOf<WriteStatus>(decision).size(), 1u) << "60 s: the progress interval";
  EXPECT_EQ(S(decision)["progress"], "45%");
  EXPECT_EQ(S(decision)["checkpoint"]["completed"], (json{{0, 900}}));
  world.steady += std::chrono::seconds(120);
  EXPECT_TRUE(ActionsOf<WriteStatus>(world.Pass()).empty()) << "nothing changed";
  // A worker's pod is Pending again: the Ready condition's message moves, a
  // transition, written at once.
  world.pods[0]["status"]["phase"] = "Pending";
  EXPECT_EQ(ActionsOf<WriteStatus>(world.Pass()).size(), 1u);
}

TEST(DecideTest, AFailedPodIsLostDeletedByUidAndReplacedWithinBackoffLimit) {
  World world = Running();
  world.pods[1]["status"]["phase"] = "Failed";
  Decision decision = world.Pass();
  const auto lost = ActionsOf<WorkerLost>(decision);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].node, "pi4b-master");
  const auto deletes = ActionsOf<DeletePod>(decision);
  ASSERT_EQ(deletes.size(), 1u);
  EXPECT_EQ(deletes[0].name, "p-pi4b-master");
  EXPECT_EQ(deletes[0].uid, "pod-uid-1");
  EXPECT_EQ(S(decision)["failedPods"], 1);
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"WorkerFailed"});
  // The same failed pod seen again is not counted again.
  EXPECT_TRUE(ActionsOf<WorkerLost>(world.Pass()).empty());
  EXPECT_EQ(world.memory.written.status.failed_pods, 1);
  world.pods.erase(world.pods.begin() + 1);  // deleted: made again
  const auto creates = ActionsOf<CreateObjects>(world.Pass());
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(creates[0].pods[0]["metadata"]["name"], "p-pi4b-master");
}

TEST(DecideTest, AFailedInitContainerIsNamedInTheWorkerFailedEvent) {
  // The worker in the user's image: the init container that bundles it
  // failed, the worker container never started.
  World world = Running();
  world.pods[1]["status"]["phase"] = "Failed";
  world.pods[1]["status"]["initContainerStatuses"] = json::parse(R"([{"name": "bundle",
      "state": {"terminated": {"exitCode": 2, "message": "/ballast is not empty"}}}])");
  world.pods[1]["status"]["containerStatuses"] =
      json::parse(R"([{"name": "worker", "state": {"waiting": {"reason": "PodInitializing"}}}])");
  const auto events = ActionsOf<RecordEvent>(world.Pass());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, api::Reason::kWorkerFailed);
  EXPECT_NE(events[0].message.find(
                "(init container bundle: exit code 2: /ballast is not empty); failure 1"),
            std::string::npos)
      << events[0].message;
}

// Regression: a pod field of another type than the API server's schema
// ("exitCode": "3") made nlohmann's .value() throw out of the pass, and the
// job stopped being reconciled. Read into a view, the field is absent.
TEST(DecideTest, APodFieldOfTheWrongTypeReadsAsAbsentAndThePassGoesOn) {
  World world = Running();
  world.pods[1]["status"]["phase"] = "Failed";
  world.pods[1]["status"]["containerStatuses"] =
      json::parse(R"([{"name": 5, "state": {"terminated": {"exitCode": "3", "message": 7}}}])");
  world.nodes[2]["status"]["conditions"] = "x";
  Decision decision;
  ASSERT_NO_THROW(decision = world.Pass());
  const auto events = ActionsOf<RecordEvent>(decision);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].reason, api::Reason::kWorkerFailed);
  EXPECT_NE(events[0].message.find("failed (exit code -1); failure 1"), std::string::npos)
      << events[0].message;
  // A node whose conditions cannot be read is not Ready: its worker is lost.
  EXPECT_EQ(ActionsOf<WorkerLost>(decision).size(), 2u);
  EXPECT_EQ(EventReasons(decision), (std::vector<std::string>{"WorkerFailed", "NodeNotReady"}));
}

TEST(DecideTest, PastBackoffLimitNoPodIsReplacedAndTheJobFailsWhenNoneIsLeft) {
  World world = Running();
  for (auto& pod : world.pods) pod["status"]["phase"] = "Failed";
  Decision decision = world.Pass();
  EXPECT_EQ(decision.status.failed_pods, 3);
  EXPECT_EQ(S(decision)["phase"], "Failed");
  EXPECT_EQ(ConditionReason(S(decision), "Failed"), "BackoffLimitExceeded");
  EXPECT_EQ(ActionsOf<RemoveJob>(decision).size(), 1u);
  world.pods.clear();
  world.view.reset();
  decision = world.Pass();
  EXPECT_TRUE(ActionsOf<CreateObjects>(decision).empty());
  EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty()) << "a failed job stays failed";
}

TEST(DecideTest, ANodeThatIsNotReadyLosesItsWorkerAndGetsOneAgainWhenReady) {
  World world = Running();
  world.nodes[2] = Node("pi4b-worker", /*ready=*/false);
  Decision decision = world.Pass();
  ASSERT_EQ(ActionsOf<WorkerLost>(decision).size(), 1u);
  EXPECT_EQ(ActionsOf<DeletePod>(decision).at(0).name, "p-pi4b-worker");
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"NodeNotReady"});
  EXPECT_EQ(decision.status.failed_pods, 0) << "a lost node is not a failed pod";
  world.pods.pop_back();
  EXPECT_TRUE(ActionsOf<WorkerLost>(world.Pass()).empty()) << "lost once";
  world.nodes[2] = Node("pi4b-worker");
  decision = world.Pass();
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"NodeReady"});
  EXPECT_EQ(ActionsOf<CreateObjects>(decision).at(0).pods.at(0)["metadata"]["name"],
            "p-pi4b-worker");
}

// A node cordoned mid-job (kubectl cordon or drain) is Ready but no longer
// one the job would be placed on: its worker is lost at once (its lease
// moves now, not when it expires) and its pod deleted; uncordoned, it gets
// a worker again.
TEST(DecideTest, ACordonedNodeLosesItsWorkerAtOnceAndGetsOneAgainWhenUncordoned) {
  World world = Running();
  world.nodes[2]["spec"]["unschedulable"] = true;
  Decision decision = world.Pass();
  ASSERT_EQ(ActionsOf<WorkerLost>(decision).size(), 1u);
  EXPECT_EQ(ActionsOf<WorkerLost>(decision)[0].node, "pi4b-worker");
  EXPECT_EQ(ActionsOf<DeletePod>(decision).at(0).name, "p-pi4b-worker");
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"NodeLeft"});
  EXPECT_NE(ActionsOf<RecordEvent>(decision)[0].message.find("cordoned"), std::string::npos)
      << ActionsOf<RecordEvent>(decision)[0].message;
  world.pods.pop_back();
  EXPECT_TRUE(ActionsOf<WorkerLost>(world.Pass()).empty()) << "lost once";
  world.nodes[2]["spec"]["unschedulable"] = false;
  decision = world.Pass();
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"NodeEligible"});
  EXPECT_EQ(ActionsOf<CreateObjects>(decision).at(0).pods.at(0)["metadata"]["name"],
            "p-pi4b-worker");
  EXPECT_TRUE(ActionsOf<AddWorker>(decision).empty()) << "it is in the session already";
}

// A node that becomes eligible mid-job (plugged in, Ready, labelled in)
// joins the running session: AddWorker with its weight on the session's
// scale, before its pod is created, and a NodeJoined event.
TEST(DecideTest, ANodeEligibleMidJobJoinsTheSessionBeforeItsPodIsMade) {
  World world;
  world.nodes.pop_back();  // pi4b-worker is not there at the start
  world.Pass();
  world.view = View(0);
  world.view->workers.pop_back();
  world.Pass();
  world.pods = {Pod(kNodes[0], "Running", "u0"), Pod(kNodes[1], "Running", "u1")};
  Decision decision = world.Pass();
  EXPECT_TRUE(ActionsOf<AddWorker>(decision).empty());
  ASSERT_EQ(world.memory.session.NodeCount(), 2u);

  world.nodes.push_back(Node("pi4b-worker"));  // plugged in
  decision = world.Pass();
  const auto added = ActionsOf<AddWorker>(decision);
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].prior.name, "pi4b-worker");
  // The same labels as pi4b-master: its weight, on the session's scale (the
  // session's weights are rounded, the newcomer's mapped from its score).
  EXPECT_NEAR(added[0].prior.speed, SessionWeights(world.memory).at(1).weight, 0.25);
  EXPECT_EQ(added[0].prior.credibility, 0);
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"NodeJoined"});
  // AddWorker comes before the pod's creation.
  size_t add_at = 0, create_at = 0;
  for (size_t i = 0; i < decision.actions.size(); ++i) {
    if (std::holds_alternative<AddWorker>(decision.actions[i])) add_at = i;
    if (std::holds_alternative<CreateObjects>(decision.actions[i])) create_at = i;
  }
  EXPECT_LT(add_at, create_at);
  EXPECT_EQ(ActionsOf<CreateObjects>(decision).at(0).pods.at(0)["metadata"]["name"],
            "p-pi4b-worker");
  ASSERT_EQ(world.memory.session.NodeCount(), 3u);
  // Joined once: the next pass adds nothing.
  EXPECT_TRUE(ActionsOf<AddWorker>(world.Pass()).empty());
  // The per-node table shows it once the coordinator does.
  world.view = View(300);
  world.steady += std::chrono::seconds(3);
  decision = world.Pass();
  ASSERT_EQ(S(decision)["nodes"].size(), 3u);
  EXPECT_EQ(S(decision)["nodes"][2]["name"], "pi4b-worker");
}

// A node an earlier session of the job ran on, and the resumed session does
// not (it was gone when the job resumed), loses its row in status, but the
// session's memory keeps its items (SessionNode::items_before): should it
// join mid-job, its row counts on from them.
TEST(DecideTest, ANodeOfAnEarlierSessionThatJoinsLaterCountsOnFromItsItems) {
  World world = Running();
  world.view = View(900);  // 300 items each
  world.steady += std::chrono::seconds(3);
  world.wall += 3;
  ASSERT_EQ(S(world.Pass())["nodes"][2]["items"], 300);
  world.job["spec"]["suspend"] = true;
  world.job["metadata"]["generation"] = 2;
  world.Pass();
  world.pods.clear();
  ASSERT_EQ(S(world.Pass())["phase"], "Suspended");

  world.view.reset();
  world.nodes.pop_back();  // pi4b-worker is gone when the job resumes
  world.job["spec"]["suspend"] = false;
  world.job["metadata"]["generation"] = 3;
  ASSERT_EQ(ActionsOf<RegisterJob>(world.Pass()).size(), 1u);
  ASSERT_EQ(world.memory.session.NodeCount(), 2u);
  world.view = View(600);  // 200 each on the two
  world.view->workers.pop_back();
  world.pods = {Pod(kNodes[0], "Running", "v0"), Pod(kNodes[1], "Running", "v1")};
  world.nodes.push_back(Node(kNodes[2]));  // back: it joins
  ASSERT_EQ(ActionsOf<AddWorker>(world.Pass()).size(), 1u);
  EXPECT_EQ(world.memory.session.Nodes(), kNodes);

  coordinator::WorkerView joined;
  joined.name = kNodes[2];
  joined.items = 10;
  joined.cost = 10;
  joined.busy_s = 1;
  world.view->workers.push_back(joined);
  world.steady += std::chrono::seconds(3);
  world.wall += 3;
  const json rows = S(world.Pass())["nodes"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["items"], 500);
  EXPECT_EQ(rows[1]["items"], 500);
  EXPECT_EQ(rows[2]["name"], kNodes[2]);
  EXPECT_EQ(rows[2]["items"], 310);
}

// A newcomer slower than every node of the session is put on the session's
// scale, though weighed alone it would be the unit.
TEST(DecideTest, ASlowerNewcomerIsWeighedOnTheSessionsScale) {
  World world;
  world.nodes.erase(world.nodes.begin());  // the Pi 3B is not there at the start
  world.Pass();
  world.view = View(0);
  world.view->workers.erase(world.view->workers.begin());
  world.Pass();
  // The session's priors: the two Pi 4B, by their (rounded) weights.
  double session = 0;
  for (const auto& node : SessionWeights(world.memory)) {
    session += SessionPrior(world.memory, node.name).value;
  }
  world.nodes.push_back(Node("pi3b-worker"));
  const auto added = ActionsOf<AddWorker>(world.Pass());
  ASSERT_EQ(added.size(), 1u);
  // Weighed with them, the Pi 3B's score is a fraction of each Pi 4B's
  // (seed 000's 5 / 5 / 1): its prior is a fraction of the slower Pi 4B's
  // (1), where weighed alone it would be the unit itself.
  EXPECT_GT(added[0].prior.speed, session / 20);
  EXPECT_LT(added[0].prior.speed, session / 6);
}

TEST(DecideTest, AFinishedSessionSucceedsWithBothEfficienciesAndLingersWhilePodsExit) {
  World world = Running();
  world.view = View(2000, /*done=*/true);
  Decision decision = world.Pass();
  const json status = S(decision);
  EXPECT_EQ(status["phase"], "Succeeded");
  EXPECT_EQ(ConditionReason(status, "Complete"), "AllItemsFinished");
  EXPECT_EQ(status["progress"], "100%");
  EXPECT_EQ(status["workers"], 0);
  EXPECT_FALSE(status.contains("checkpoint"));
  EXPECT_EQ(status["makespanSeconds"], 10);
  // 12 CPU seconds over 3 x 0.5 declared cores: 8 s.
  EXPECT_EQ(status["idealSeconds"], 8);
  EXPECT_EQ(status["efficiency"], 0.8);
  EXPECT_EQ(status["efficiencyReference"], "declared speeds");
  EXPECT_EQ(status["limitBound"], "work");
  EXPECT_EQ(status["estimatedIdealSeconds"], 8);  // every node busy 8 s
  EXPECT_EQ(status["estimatedEfficiency"], 0.8);
  EXPECT_TRUE(ActionsOf<RemoveJob>(decision).empty()) << "pods still running";
  EXPECT_EQ(decision.requeue_after, milliseconds(500));
  for (auto& pod : world.pods) pod["status"]["phase"] = "Succeeded";
  decision = world.Pass();
  EXPECT_EQ(ActionsOf<RemoveJob>(decision).size(), 1u);
  EXPECT_TRUE(ActionsOf<DeletePod>(decision).empty()) << "finished workers stay";
}

// What the policy takes an item to cost reaches status.costModel (kubectl
// ballast top shows it): the declared costs while the fit has found no start
// cost, then the learned one, with the nodes' seconds per cost unit of the
// model. A policy that learns no costs writes none.
TEST(DecideTest, TheLearnedCostModelReachesTheStatus) {
  World world = Running();
  world.view = View(600);  // 200 items of cost 200 each, in 1 busy second
  EXPECT_FALSE(S(world.Pass()).contains("costModel"));
  world.view->policy.learning_costs = true;
  world.view->policy.cost_samples = 12;
  EXPECT_EQ(S(world.Pass())["costModel"], (json{{"startCost", 0},
                                                {"learned", false},
                                                {"samples", 12},
                                                {"secondsPerCost", 0.005},
                                                {"startSeconds", 0}}));
  // Half a mean item to start each: 900 units of work in 3 s.
  world.view->policy.start_cost = 0.5;
  world.view->policy.cost_samples = 40;
  EXPECT_EQ(S(world.Pass())["costModel"], (json{{"startCost", 0.5},
                                                {"learned", true},
                                                {"samples", 40},
                                                {"secondsPerCost", 0.003333},
                                                {"startSeconds", 0.001667}}));
}

TEST(DecideTest, SpecVerifyFractionReachesTheSessionAndOneOutsideItsRangeFailsTheJob) {
  World world;
  world.job["spec"]["verify"] = {{"fraction", 0.25}};
  const auto registered = ActionsOf<RegisterJob>(world.Pass());
  ASSERT_EQ(registered.size(), 1u);
  EXPECT_EQ(registered[0].config.verify.fraction, 0.25);

  World wrong;
  wrong.job["spec"]["verify"] = {{"fraction", 1.5}};
  const Decision decision = wrong.Pass();
  EXPECT_EQ(S(decision)["phase"], "Failed");
  EXPECT_EQ(ConditionReason(S(decision), "Failed"), "InvalidSpec");
  EXPECT_EQ(S(decision)["conditions"].back()["message"],
            "spec.verify.fraction: expected a number > 0 and <= 1, got 1.5");
}

// Guards a forged result reported as success: a failed verification also
// ends the session (view.done), and must fail the job, not succeed it.
TEST(DecideTest, AFailedVerificationFailsTheJobInsteadOfSucceeding) {
  World world = Running();
  world.view = View(2000, /*done=*/true);
  world.view->verification.failure = "items [0, 10): pi3b-worker and pi4b-worker differ";
  const Decision decision = world.Pass();
  const json status = S(decision);
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(ConditionReason(status, "Failed"), "VerificationFailed");
  EXPECT_EQ(status["conditions"].back()["message"], world.view->verification.failure);
  EXPECT_FALSE(status.contains("efficiency"));
}

// The linger counts from the completionTime the status says, in wall time.
TEST(DecideTest, AFinishedSessionIsRemovedAfterTheLingerEvenWithPodsRunning) {
  World world = Running();
  world.view = View(2000, true);
  const Decision done = world.Pass();
  EXPECT_EQ(S(done)["completionTime"], Rfc3339(world.wall));
  EXPECT_TRUE(ActionsOf<RemoveJob>(done).empty()) << "its pods still run";
  world.steady += std::chrono::seconds(60);
  world.wall += 30;
  EXPECT_TRUE(ActionsOf<RemoveJob>(world.Pass()).empty()) << "30 s since completionTime";
  world.wall += 1;
  EXPECT_EQ(ActionsOf<RemoveJob>(world.Pass()).size(), 1u);
}

TEST(DecideTest, SuspendDeletesThePodsThenKeepsTheCheckpointAndResumeRegistersFromIt) {
  World world = Running();
  world.view = View(900);
  world.job["spec"]["suspend"] = true;
  world.job["metadata"]["generation"] = 2;
  Decision decision = world.Pass();
  EXPECT_EQ(ActionsOf<DeletePod>(decision).size(), 3u);
  EXPECT_TRUE(ActionsOf<RemoveJob>(decision).empty()) << "workers hand back leases first";
  EXPECT_EQ(decision.requeue_after, milliseconds(500));
  world.pods.clear();
  decision = world.Pass();
  EXPECT_EQ(ActionsOf<RemoveJob>(decision).size(), 1u);
  EXPECT_EQ(S(decision)["phase"], "Suspended");
  EXPECT_EQ(ConditionReason(S(decision), "Suspended"), "SuspendedByUser");
  EXPECT_TRUE(S(decision).contains("checkpoint"));
  EXPECT_EQ(S(decision)["observedGeneration"], 2);

  world.view.reset();
  world.job["spec"]["suspend"] = false;
  world.job["metadata"]["generation"] = 3;
  decision = world.Pass();
  const auto registered = ActionsOf<RegisterJob>(decision);
  ASSERT_EQ(registered.size(), 1u);
  EXPECT_TRUE(registered[0].config.resume);
  EXPECT_EQ(registered[0].config.token, "fresh") << "the token stays";
  EXPECT_EQ(EventReasons(decision), std::vector<std::string>{"Resumed"});
}

// Issue 46: a checkpoint patched by someone with status rights (claiming
// items done that never ran) is not resumed from; the job starts again.
TEST(DecideTest, ACheckpointTheOperatorDidNotSealIsNotResumedFrom) {
  World world = Running();
  world.view = View(900);
  world.job["spec"]["suspend"] = true;
  world.Pass();
  world.pods.clear();
  Decision decision = world.Pass();
  ASSERT_EQ(S(decision)["phase"], "Suspended");
  // As a restarted operator reads it back from the job's status.
  ASSERT_TRUE(world.memory.written.status.checkpoint);
  json& checkpoint = *world.memory.written.status.checkpoint;
  ASSERT_TRUE(checkpoint.contains("seal")) << checkpoint.dump();
  checkpoint["completed"] = json::parse("[[0, 590]]");
  world.memory.written.status.completed_items = 590;

  world.view.reset();
  world.job["spec"]["suspend"] = false;
  decision = world.Pass();
  const auto registered = ActionsOf<RegisterJob>(decision);
  ASSERT_EQ(registered.size(), 1u);
  EXPECT_FALSE(registered[0].config.resume)
      << "no item counts as done that the operator did not see";
  EXPECT_EQ(EventReasons(decision), (std::vector<std::string>{"CheckpointRejected", "Started"}));
  const std::string message = Events(decision).at(0).message;
  EXPECT_NE(message.find("checkpoint.seal: does not match"), std::string::npos) << message;
  EXPECT_FALSE(S(decision).contains("checkpoint"));
  EXPECT_EQ(S(decision)["completedItems"], 0);
}

// Issue 46: status.startTime and status.failedPods, patched by someone with
// status rights while the job was suspended (or the operator down), are put
// back from the claims the operator sealed beside the checkpoint, so
// activeDeadlineSeconds and backoffLimit count from what happened.
TEST(DecideTest, AStartTimeOrFailedPodsPatchedInStatusArePutBackFromTheSeal) {
  World world = Running();
  world.view = View(900);
  const std::string started = *world.memory.written.status.start_time;
  world.job["spec"]["suspend"] = true;
  world.Pass();
  world.pods.clear();
  ASSERT_EQ(S(world.Pass())["phase"], "Suspended");
  const json& claims = world.memory.written.status.checkpoint->at("claims");
  EXPECT_EQ(claims, (json{{"startTime", started}, {"failedPods", 0}}));
  // As a restarted operator reads the patched status back.
  world.memory.written.status.start_time = "2020-01-01T00:00:00Z";
  world.memory.written.status.failed_pods = 7;

  world.view.reset();
  world.job["spec"]["suspend"] = false;
  const Decision decision = world.Pass();
  ASSERT_EQ(ActionsOf<RegisterJob>(decision).size(), 1u);
  EXPECT_TRUE(ActionsOf<RegisterJob>(decision)[0].config.resume) << "the checkpoint is sound";
  EXPECT_EQ(EventReasons(decision), (std::vector<std::string>{"StatusRestored", "Resumed"}));
  const std::string message = Events(decision).at(0).message;
  EXPECT_NE(message.find("startTime " + started + " (was 2020-01-01T00:00:00Z)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("failedPods 0 (was 7)"), std::string::npos) << message;
  EXPECT_EQ(S(decision)["startTime"], started);
  EXPECT_EQ(decision.status.failed_pods, 0);
}

// Without claims it can trust (no checkpoint yet, or a rejected one), a
// restarted operator bounds status.startTime by the job's creation and now.
TEST(DecideTest, AStartTimeWithoutSealedClaimsIsBoundedByTheJobsCreation) {
  World world;
  world.job["metadata"]["creationTimestamp"] = Rfc3339(kStart - 5);
  world.memory.written.status.observed_generation = 1;
  world.memory.written.status.phase = api::JobPhase::kRunning;
  world.memory.written.status.start_time = "2020-01-01T00:00:00Z";  // before the job existed
  Decision decision = world.Pass();
  ASSERT_EQ(ActionsOf<RegisterJob>(decision).size(), 1u);
  EXPECT_EQ(EventReasons(decision).at(0), "StatusRestored");
  EXPECT_EQ(S(decision)["startTime"], Rfc3339(kStart - 5));

  World later;
  later.memory.written.status.observed_generation = 1;
  later.memory.written.status.phase = api::JobPhase::kRunning;
  later.memory.written.status.start_time = Rfc3339(kStart + 3600);  // still to come
  decision = later.Pass();
  EXPECT_EQ(S(decision)["startTime"], Rfc3339(kStart));
}

TEST(DecideTest, PastActiveDeadlineTheJobFailsAndItsPodsAreDeleted) {
  World world = Running();
  world.job["spec"]["activeDeadlineSeconds"] = 60;
  world.wall += 61;
  world.checkpoint = coordinator::Checkpoint{};
  for (uint64_t begin = 0; begin < 2 * 20000; begin += 2) {
    world.checkpoint->completed.Add({begin, begin + 1});  // 20,000 ranges: over 128 KiB
  }
  const Decision decision = world.Pass();
  EXPECT_EQ(S(decision)["phase"], "Failed");
  EXPECT_EQ(S(decision)["checkpoint"]["completed"], json::array())
      << "the last one that fit (the empty one of the first passes); the status stays small";
  EXPECT_EQ(EventReasons(decision),
            (std::vector<std::string>{"CheckpointTooLarge", "DeadlineExceeded"}));
  EXPECT_EQ(ConditionReason(S(decision), "Failed"), "DeadlineExceeded");
  EXPECT_EQ(ActionsOf<DeletePod>(decision).size(), 3u);
  EXPECT_EQ(ActionsOf<RemoveJob>(decision).size(), 1u);
}

TEST(DecideTest, BeforeTheDeadlineThePassComesBackAtIt) {
  World world = Running();
  world.job["spec"]["activeDeadlineSeconds"] = 60;
  world.wall += 59.5;
  EXPECT_EQ(world.Pass().requeue_after, milliseconds(501));
}

TEST(DecideTest, AFinishedJobIsDeletedAfterItsTtlOnceItsFinalStatusIsWritten) {
  World world;
  world.job["spec"]["ttlSecondsAfterFinished"] = 30;
  world.memory.written.status = *api::StatusFromJson(
      json{{"phase", "Succeeded"}, {"completionTime", "2027-01-15T08:00:00Z"}});
  const double finished = 1800000000;  // 2027-01-15T08:00:00Z
  world.wall = finished + 10;
  Decision decision = world.Pass();
  EXPECT_TRUE(ActionsOf<DeleteJob>(decision).empty());
  EXPECT_EQ(decision.requeue_after, milliseconds(20001));
  world.wall = finished + 31;
  world.writes.status_written = false;
  decision = world.Pass();
  EXPECT_TRUE(ActionsOf<DeleteJob>(decision).empty()) << "the final status first";
  world.writes.status_written = true;
  decision = world.Pass();
  ASSERT_EQ(ActionsOf<DeleteJob>(decision).size(), 1u);
  EXPECT_EQ(ActionsOf<DeleteJob>(decision)[0].uid, "job-uid");
}

// A finished job whose workers exited: `pods` of kNodes in `phase`.
World FinishedWithPods(const std::string& phase) {
  World world;
  world.memory.written.status = *api::StatusFromJson(
      json{{"phase", "Succeeded"}, {"completionTime", "2027-01-15T08:00:00Z"}});
  for (size_t i = 0; i < kNodes.size(); ++i) {
    world.pods.push_back(Pod(kNodes[i], phase, "u" + std::to_string(i)));
  }
  return world;
}

// Regression (issue 32): the Completed worker pods of every finished job
// stayed until the job was deleted, outliving even `helm uninstall`.
TEST(DecideTest, FinishedWorkerPodsAreDeletedAfterThePodTtlWithTheirUids) {
  World world = FinishedWithPods("Succeeded");
  const double finished = 1800000000;  // 2027-01-15T08:00:00Z
  world.wall = finished + 10;
  Decision decision = world.Pass();
  EXPECT_TRUE(ActionsOf<DeletePod>(decision).empty()) << "their logs are still there to read";
  EXPECT_EQ(decision.requeue_after, milliseconds(590001)) << "the operator's default, 600 s";
  world.wall = finished + 600;
  decision = world.Pass();
  const auto deleted = ActionsOf<DeletePod>(decision);
  ASSERT_EQ(deleted.size(), 3u);
  EXPECT_EQ(deleted[0].name, "p-" + kNodes[0]);
  EXPECT_EQ(deleted[0].uid, "u0") << "a precondition: never a new pod of the same name";
  EXPECT_TRUE(ActionsOf<DeleteJob>(decision).empty()) << "the job stays";
  // Pods already going, and pods of someone else, are left alone.
  for (auto& pod : world.pods) pod["metadata"]["deletionTimestamp"] = "2027-01-15T08:10:00Z";
  world.pods.push_back(Pod("other", "Succeeded", "u9"));
  world.pods.back()["metadata"]["ownerReferences"] = json::array({{{"uid", "another-job"}}});
  decision = world.Pass();
  EXPECT_TRUE(ActionsOf<DeletePod>(decision).empty());
  EXPECT_FALSE(decision.requeue_after);
}

TEST(DecideTest, ThePodTtlIsTheJobsWhenItHasOneAndMinusOneKeepsThePods) {
  const double finished = 1800000000;
  World world = FinishedWithPods("Failed");
  world.job["spec"]["podTTLSecondsAfterFinished"] = 30;
  world.wall = finished + 30;
  EXPECT_EQ(ActionsOf<DeletePod>(world.Pass()).size(), 3u);

  World kept = FinishedWithPods("Succeeded");
  kept.job["spec"]["podTTLSecondsAfterFinished"] = -1;
  kept.wall = finished + 86400 * 365;
  Decision decision = kept.Pass();
  EXPECT_TRUE(ActionsOf<DeletePod>(decision).empty());
  EXPECT_FALSE(decision.requeue_after);

  World operator_keeps = FinishedWithPods("Succeeded");
  operator_keeps.options.worker_pod_ttl_s = -1;
  operator_keeps.wall = finished + 86400;
  EXPECT_TRUE(ActionsOf<DeletePod>(operator_keeps.Pass()).empty());
  operator_keeps.job["spec"]["podTTLSecondsAfterFinished"] = 0;
  EXPECT_EQ(ActionsOf<DeletePod>(operator_keeps.Pass()).size(), 3u) << "the job's wins";
}

TEST(DecideTest, ThePodTtlAndTheJobTtlWakeThePassAtTheEarlierOfThem) {
  const double finished = 1800000000;
  World world = FinishedWithPods("Succeeded");
  world.job["spec"]["ttlSecondsAfterFinished"] = 3600;
  world.job["spec"]["podTTLSecondsAfterFinished"] = 60;
  world.wall = finished + 10;
  EXPECT_EQ(world.Pass().requeue_after, milliseconds(50001));
  world.job["spec"]["podTTLSecondsAfterFinished"] = 7200;
  EXPECT_EQ(world.Pass().requeue_after, milliseconds(3590001));
}

TEST(DecideTest, AJobStartedUnderAnEarlierOperatorTakesTheTokenOfItsSecret) {
  World world;
  world.memory.written.status =
      *api::StatusFromJson(json{{"phase", "Running"}, {"startTime", Rfc3339(kStart - 60)}});
  world.secret_token = "earlier";
  Decision decision = world.Pass();
  ASSERT_EQ(ActionsOf<RegisterJob>(decision).size(), 1u);
  EXPECT_EQ(ActionsOf<RegisterJob>(decision)[0].config.token, "earlier");
  world.view = View(0);
  world.secret_token.reset();         // read in the first pass only
  world.writes.secret_exists = true;  // the reconciler read it: the Executor says so
  const auto creates = ActionsOf<CreateObjects>(world.Pass());
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_TRUE(creates[0].restore) << "the earlier operator's Secret is not read again";
}

TEST(DecideTest, ATokenTheWriterFoundInAnExistingSecretReplacesTheSessions) {
  World world;
  world.Pass();
  world.view = View(0);
  world.Pass();  // hands the Secret and pods over
  world.writes.adopted_token = "earlier";
  const Decision decision = world.Pass();
  ASSERT_EQ(ActionsOf<RemoveJob>(decision).size(), 1u);
  const auto registered = ActionsOf<RegisterJob>(decision);
  ASSERT_EQ(registered.size(), 1u);
  EXPECT_EQ(registered[0].config.token, "earlier");
  EXPECT_EQ(decision.memory.token.value, "earlier");
}

TEST(DecideTest, TheCoordinatorForgettingASessionRegistersItAgain) {
  World world = Running();
  world.view.reset();
  EXPECT_EQ(ActionsOf<RegisterJob>(world.Pass()).size(), 1u);
}

struct InvalidCase {
  const char* name;
  json spec_patch;
  const char* reason;
  const char* message_start;
};

TEST(DecideTest, InvalidSpecsFailTheJobWithTheirReasonAndFieldAndRegisterNothing) {
  const InvalidCase cases[] = {
      {"limit",
       {{"workload", {{"primes", {{"limit", "abc"}}}}}},
       "InvalidSpec",
       "spec.workload.primes.limit: expected an integer"},
      {"policy option",
       {{"policy", {{"name", "adaptive"}, {"chunk", 3}}}},
       "InvalidPolicy",
       "spec.policy.chunk: policy adaptive has no option \"chunk\""},
      {"tolerations", {{"tolerations", "all"}}, "InvalidSpec", "spec.tolerations: expected"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    World world;
    world.job["spec"].merge_patch(c.spec_patch);
    const Decision decision = world.Pass();
    EXPECT_EQ(S(decision)["phase"], "Failed");
    EXPECT_EQ(ConditionReason(S(decision), "Failed"), c.reason);
    const std::string message = S(decision)["conditions"].back()["message"];
    EXPECT_EQ(message.rfind(c.message_start, 0), 0u) << message;
    EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty());
    EXPECT_EQ(ActionsOf<WriteStatus>(decision).size(), 1u);
    EXPECT_EQ(EventReasons(decision), std::vector<std::string>{c.reason});
  }
}

TEST(DecideTest, AMissingOrInvalidProfileFailsTheJob) {
  World missing;
  missing.profile.reset();
  Decision decision = missing.Pass();
  EXPECT_EQ(ConditionReason(S(decision), "Failed"), "ProfileNotFound");
  World invalid;
  (*invalid.profile)["spec"]["criteria"][0]["rank"] = -1;
  decision = invalid.Pass();
  EXPECT_EQ(ConditionReason(S(decision), "Failed"), "InvalidProfile");
  const std::string message = S(decision)["conditions"].back()["message"];
  EXPECT_NE(message.find("spec.criteria[0].rank: expected a number > 0 and <= 100, got -1"),
            std::string::npos)
      << message;
}

TEST(DecideTest, WithNoEligibleNodeTheJobWaitsPendingAndLooksAgain) {
  World world;
  world.job["spec"]["nodeSelector"] = {{"ballast.io/pool", "gpu"}};
  const Decision decision = world.Pass();
  EXPECT_TRUE(ActionsOf<RegisterJob>(decision).empty());
  EXPECT_EQ(S(decision)["phase"], "Pending");
  EXPECT_EQ(ConditionReason(S(decision), "Ready"), "NoEligibleNodes");
  EXPECT_EQ(decision.requeue_after, milliseconds(10000));
}

TEST(DecideTest, AWriteTheApiServerRefusedFailsTheJobWithItsReason) {
  World world = Running();
  world.refusal_reason = api::Reason::kWorkerPodRefused;
  world.refusal = "Pod \"p-pi3b-worker\" is invalid: spec.containers[0].resources";
  const Decision decision = world.Pass();
  EXPECT_EQ(S(decision)["phase"], "Failed");
  EXPECT_EQ(ConditionReason(S(decision), "Failed"), "WorkerPodRefused");
  EXPECT_EQ(ActionsOf<DeletePod>(decision).size(), 3u);
}

TEST(DecideTest, TheSameInputsGiveTheSameDecision) {
  World world = Running();
  world.view = View(600);
  world.steady += std::chrono::seconds(3);
  World again = world;
  const Decision first = world.Pass();
  const Decision second = again.Pass();
  EXPECT_EQ(first.status, second.status);
  EXPECT_EQ(first.memory.written.status, second.memory.written.status);
  EXPECT_EQ(first.actions.size(), second.actions.size());
  EXPECT_EQ(first.requeue_after, second.requeue_after);
}

}  // namespace
}  // namespace ballast::controller
