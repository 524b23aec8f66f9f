// Decide (operator/controller/decide.h) when the API server refuses the
// job's worker pods (create_refusals.h): the creates that follow are backed
// off, one pod at a time; the job says why at once (condition WorkersRefused,
// one Warning event per row); PodSecurity fails it after the bound, a quota
// is waited for, a refusal as built (422) fails it at once, and a pod
// accepted again ends the row. Each test drives the passes as the reconciler
// does: a pass that creates is followed at once by the pass that collects
// the task's refusal.
#include <gtest/gtest.h>

#include "tests/operator/controller/decide_world.h"

namespace ballast::controller {
namespace {

using namespace decide_test;  // NOLINT: the world of every test here

const std::string kPodSecurity =
    "pods \"p-pi3b-worker\" is forbidden: violates PodSecurity \"restricted:latest\": restricted "
    "volume types (volume \"host\" uses restricted volume type \"hostPath\")";
const std::string kQuota =
    "pods \"p-pi3b-worker\" is forbidden: exceeded quota: pods-1, requested: pods=1, used: "
    "pods=1, limited: pods=1";

json ConditionOf(const Decision& decision, const std::string& type) {
  for (const auto& condition : S(decision).value("conditions", json::array())) {
    if (condition["type"] == type) return condition;
  }
  return json::object();
}

void Advance(World& world, milliseconds by) {
  world.steady += by;
  world.wall += static_cast<double>(by.count()) / 1000;
}

size_t PodsCreated(const Decision& decision) {
  size_t pods = 0;
  for (const auto& create : ActionsOf<CreateObjects>(decision)) pods += create.pods.size();
  return pods;
}

// A registered job whose session is there: the next pass creates its pods.
World Registered() {
  World world;
  world.Pass();
  world.view = View(0);
  return world;
}

// What a run of passes every second saw, each create refused with `refusal`.
struct Refused {
  std::vector<double> creates_at;  // seconds from the start, one per create task
  size_t pods = 0;                 // pod creates sent
  int warnings = 0;                // Warning events of the refusal's reason
  std::vector<std::string> lost;   // WorkerLost actions, by node
  std::optional<Decision> failed;  // the pass that failed the job
  Decision last;
};

Refused RefuseEveryCreate(World& world, const CreateRefusal& refusal, milliseconds horizon) {
  Refused run;
  const double start = world.wall;
  const std::string reason = api::ReasonName(RefusalReason(refusal.kind));
  const milliseconds tick = std::chrono::seconds(1);
  for (milliseconds t{0}; t <= horizon; t += tick, Advance(world, tick)) {
    Decision decision = world.Pass();
    const size_t pods = PodsCreated(decision);
    if (pods > 0) {
      run.creates_at.push_back(world.wall - start);
      run.pods += pods;
      world.create_refusal = refusal;  // the task's outcome, collected at once
      decision = world.Pass();
      world.create_refusal.reset();
      EXPECT_EQ(PodsCreated(decision), 0u) << "a create right after a refusal";
    }
    for (const auto& worker : ActionsOf<WorkerLost>(decision)) run.lost.push_back(worker.node);
    for (const auto& event : ActionsOf<RecordEvent>(decision)) {
      run.warnings += event.warning && api::ReasonName(event.reason) == reason ? 1 : 0;
    }
    run.last = decision;
    if (decision.status.Is(api::JobPhase::kFailed)) {
      run.failed = decision;
      break;
    }
  }
  return run;
}

// issue 46: a namespace enforcing `restricted` refused a privileged template
// ~290 times a second, and the job stayed Pending with no word of why.
TEST(DecideRefusalsTest, PodSecurityRefusalsBackOffSayWhyAndFailTheJobAfterTheBound) {
  World world = Registered();
  const Refused run =
      RefuseEveryCreate(world, {RefusalClass::kPodSecurity, kPodSecurity}, std::chrono::minutes(5));
  ASSERT_TRUE(run.failed) << S(run.last).dump(2);
  // Three pods, then one probe at 1, 3, 7, 15 and 31 s: 8 requests in all.
  EXPECT_EQ(run.creates_at, (std::vector<double>{0, 1, 3, 7, 15, 31}));
  EXPECT_EQ(run.pods, 8u);
  EXPECT_EQ(run.warnings, 1) << "one Warning event for the row";
  EXPECT_TRUE(run.lost.empty()) << "the job fails: its workers keep their shares meanwhile";
  const json failed = ConditionOf(*run.failed, "Failed");
  EXPECT_EQ(failed["reason"], "WorkerPodRefused");
  EXPECT_EQ(failed["message"], kPodSecurity + " (refused 6 times in 31 s)");
  const json refused = ConditionOf(*run.failed, "WorkersRefused");
  EXPECT_EQ(refused["status"], "True");
  EXPECT_EQ(refused["reason"], "PodSecurity");
  EXPECT_EQ(refused["message"],
            kPodSecurity +
                "; tried again with backoff, the job fails if its pods are still refused 30 s "
                "after the first refusal");
}

TEST(DecideRefusalsTest, TheFirstRefusalIsReportedAtOnceAndThePassComesBackWhenTheWaitEnds) {
  World world = Registered();
  ASSERT_EQ(PodsCreated(world.Pass()), 3u);
  world.create_refusal = CreateRefusal{RefusalClass::kPodSecurity, kPodSecurity};
  const Decision refused = world.Pass();
  world.create_refusal.reset();
  EXPECT_EQ(PodsCreated(refused), 0u);
  EXPECT_EQ(ConditionOf(refused, "WorkersRefused")["reason"], "PodSecurity");
  EXPECT_EQ(S(refused)["phase"], "Pending");
  ASSERT_FALSE(ActionsOf<WriteStatus>(refused).empty()) << "the condition is written at once";
  const auto events = ActionsOf<RecordEvent>(refused);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].warning);
  EXPECT_EQ(api::ReasonName(events[0].reason), std::string("PodSecurity"));
  EXPECT_EQ(events[0].message.rfind(kPodSecurity, 0), 0u) << events[0].message;
  ASSERT_TRUE(refused.requeue_after);
  EXPECT_EQ(*refused.requeue_after, milliseconds(1001)) << "when the backoff ends";
  Advance(world, milliseconds(400));
  const Decision waiting = world.Pass();
  EXPECT_EQ(PodsCreated(waiting), 0u);
  ASSERT_TRUE(waiting.requeue_after);
  EXPECT_EQ(*waiting.requeue_after, milliseconds(601)) << "when the backoff ends";
}

TEST(DecideRefusalsTest, AnExceededQuotaIsWaitedForAndAnAcceptedPodEndsTheRow) {
  World world = Registered();
  const Refused run =
      RefuseEveryCreate(world, {RefusalClass::kQuotaExceeded, kQuota}, std::chrono::minutes(10));
  EXPECT_FALSE(run.failed);
  EXPECT_EQ(run.creates_at, (std::vector<double>{0, 1, 3, 7, 15, 31, 63, 127, 255, 511}));
  EXPECT_EQ(run.warnings, 1);
  // Their shares go to the workers that run (none here) at the first
  // refusal, not after the coordinator's start timeout; once each.
  EXPECT_EQ(run.lost, kNodes);
  const json refused = ConditionOf(run.last, "WorkersRefused");
  EXPECT_EQ(refused["reason"], "QuotaExceeded");
  EXPECT_EQ(refused["message"],
            "waiting for quota: " + kQuota + "; tried again with backoff (at most 300 s apart)");
  EXPECT_EQ(S(run.last)["phase"], "Pending");
  // Quota freed: the next probe is accepted, and the rest go at once.
  Advance(world, std::chrono::seconds(300));
  const auto probe = ActionsOf<CreateObjects>(world.Pass());
  ASSERT_EQ(probe.size(), 1u);
  ASSERT_EQ(probe[0].pods.size(), 1u);
  world.writes.pods_created = true;
  world.writes.on_their_way = {probe[0].pods[0]["metadata"]["name"].get<std::string>()};
  const Decision accepted = world.Pass();
  world.writes.pods_created = false;
  const json created = ConditionOf(accepted, "WorkersRefused");
  EXPECT_EQ(created["status"], "False");
  EXPECT_EQ(created["reason"], "WorkersCreated");
  EXPECT_EQ(created["message"],
            "the API server accepted the job's worker pods after 10 refused "
            "creates");
  EXPECT_EQ(EventReasons(accepted), std::vector<std::string>{"WorkersCreated"});
  EXPECT_EQ(PodsCreated(accepted), 2u) << "the others, without waiting";
}

// The 422 that issue 46 found handled right stays so: Failed at once.
TEST(DecideRefusalsTest, APodRefusedAsBuiltFailsTheJobAtOnceWithTheServersMessage) {
  World world = Registered();
  ASSERT_EQ(PodsCreated(world.Pass()), 3u);
  const std::string invalid =
      "Pod \"p-pi3b-worker\" is invalid: spec.containers[0].resources.requests: Invalid value: "
      "\"2\": must be less than or equal to cpu limit";
  world.create_refusal = CreateRefusal{RefusalClass::kInvalid, invalid};
  const Decision decision = world.Pass();
  EXPECT_EQ(S(decision)["phase"], "Failed");
  EXPECT_EQ(ConditionOf(decision, "Failed")["reason"], "WorkerPodRefused");
  EXPECT_EQ(ConditionOf(decision, "Failed")["message"], invalid);
  EXPECT_EQ(ConditionOf(decision, "WorkersRefused"), json::object());
}

TEST(DecideRefusalsTest, TransientFailuresAreRetriedWithBackoffAndNeverFailTheJob) {
  World world = Registered();
  const Refused run =
      RefuseEveryCreate(world, {RefusalClass::kCreateFailed, "etcdserver: request timed out"},
                        std::chrono::minutes(10));
  EXPECT_FALSE(run.failed);
  EXPECT_EQ(run.creates_at.size(), 10u);
  EXPECT_EQ(ConditionOf(run.last, "WorkersRefused")["reason"], "CreateFailed");
}

TEST(DecideRefusalsTest, AnEditedJobCreatesItsPodsWithoutWaiting) {
  World world = Registered();
  ASSERT_EQ(PodsCreated(world.Pass()), 3u);
  world.create_refusal = CreateRefusal{RefusalClass::kPriorityClassNotFound,
                                       "pods \"p-pi3b-worker\" is forbidden: no PriorityClass "
                                       "with name high was found"};
  world.Pass();
  world.create_refusal.reset();
  Advance(world, milliseconds(100));
  EXPECT_EQ(PodsCreated(world.Pass()), 0u);
  world.job["metadata"]["generation"] = 2;  // the template fixed, say
  EXPECT_EQ(PodsCreated(world.Pass()), 3u);
}

}  // namespace
}  // namespace ballast::controller
