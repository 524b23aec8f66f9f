// The Executor (operator/runtime/executor.h) against the real parts: the
// e2e control plane's API server and a coordinator::Server on loopback. Each
// test checks the state of the world the actions leave (objects, status, the
// coordinator's jobs) and what Collect reports of the writes in flight.
// Worker pods are pinned to a node that does not exist, so none starts.
#include <gtest/gtest.h>

#include <atomic>

#include "coordinator/server.h"
#include "core/job/job_json.h"
#include "net/kube/kubeconfig.h"
#include "operator/controller/create_refusals.h"
#include "operator/controller/worker_objects.h"
#include "operator/runtime/executor.h"
#include "operator/runtime/resources.h"
#include "tests/net/kube/e2e_support.h"

namespace ballast::runtime {
namespace {

using kube::testing::WaitUntil;
using nlohmann::json;

class ExecutorTest : public kube::testing::KubeE2eTest {
 protected:
  void SetUp() override {
    KubeE2eTest::SetUp();
    ASSERT_TRUE(client_);
    auto server = coordinator::Server::Start({});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    coordinator_ = std::move(*server);
    events_ = std::make_unique<EventRecorder>(*client_, "executor-e2e");
    executor_ = std::make_unique<Executor>(*client_, *coordinator_, *events_, 2,
                                           [this](const std::string&) { ++requeues_; });
    const json job = {{"apiVersion", "ballast.io/v1alpha1"},
                      {"kind", "WeightedJob"},
                      {"metadata", {{"name", "j"}}},
                      {"spec", {{"workload", {{"primes", {{"limit", 1000}}}}}}}};
    auto created = client_->Create(WeightedJobs().In(ns_), job);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    job_ = *created;
    job_meta_ = api::ReadMeta(job_);
    ref_ = {ns_ + "/j", ns_, "j", job_["metadata"]["uid"], ns_ + ".j", &job_};
  }
  void TearDown() override {
    executor_.reset();  // runs what is queued, while the client is alive
    events_.reset();
    KubeE2eTest::TearDown();
  }

  // What the writes left once no create task runs.
  Collected Settled(const std::set<std::string>& cached = {}) {
    Collected collected;
    EXPECT_TRUE(WaitUntil([&] {
      collected = executor_->Collect(ref_.key, cached, std::chrono::steady_clock::now());
      return !collected.writes.creating;
    }));
    return collected;
  }

  json Pod(const std::string& node) {
    controller::WorkerPodSettings settings;
    settings.coordinator_url = coordinator_->url();
    settings.coordinator_job = ref_.id;
    api::ParsedSpec parsed = api::ParseWeightedJobSpec(job_["spec"], "j");
    EXPECT_TRUE(parsed.spec) << parsed.error.status.ToString();
    return controller::BuildWorkerPod(job_meta_, parsed.spec.value_or(api::WeightedJobSpec{}), node,
                                      settings);
  }

  coordinator::JobConfig Config() {
    auto spec = job::JobSpecFromJson(job_["spec"], "j");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    coordinator::JobConfig config;
    config.id = ref_.id;
    config.token = "t";
    config.workload = spec->workload;
    config.policy = spec->policy;
    config.workers = {{"no-such-node", 1}};
    return config;
  }

  std::unique_ptr<coordinator::Server> coordinator_;
  std::unique_ptr<EventRecorder> events_;
  std::unique_ptr<Executor> executor_;
  std::atomic<int> requeues_{0};
  json job_;
  api::ObjectMeta job_meta_;  // job_'s, as the worker objects are built from it
  JobRef ref_;
};

TEST_F(ExecutorTest, CreateObjectsMakesTheSecretThenThePodsAndExpectsThemUntilCached) {
  const controller::CreateObjects create{controller::BuildTokenSecret(job_meta_, "fresh"),
                                         "fresh",
                                         {Pod("no-such-node"), Pod("no-such-node-2")},
                                         /*restore=*/false};
  ASSERT_TRUE(executor_->Execute(ref_, {create}).ok());
  Collected collected = Settled();
  EXPECT_TRUE(collected.create_error.ok()) << collected.create_error.ToString();
  EXPECT_TRUE(collected.writes.secret_exists);
  EXPECT_FALSE(collected.writes.adopted_token);
  const std::set<std::string> names = {"j-no-such-node", "j-no-such-node-2"};
  EXPECT_EQ(collected.writes.on_their_way, names);
  auto secret = client_->Get(Secrets().In(ns_).Named(controller::TokenSecretName("j")));
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  EXPECT_EQ(kube::DecodeBase64(secret->value("/data/token"_json_pointer, "")).value(), "fresh");
  for (const auto& name : names) EXPECT_TRUE(client_->Get(Pods().In(ns_).Named(name)).ok());
  // Once the pod cache holds them, they are no longer on their way.
  collected = Settled(names);
  EXPECT_TRUE(collected.writes.on_their_way.empty());
  EXPECT_EQ(requeues_, 0) << "created pods come back through the pod cache";
}

// issue 46: a quota that admits one of a task's pods. The one made is
// expected (not created again before the cache has it), the refusal is
// collected and the job queued for it; the task sends its first batch of
// eight and no more.
TEST_F(ExecutorTest, AQuotaThatAdmitsOnePodLeavesItExpectedAndTheTaskEndsAtTheRefusedBatch) {
  const kube::ResourceRef quotas = {"", "v1", "resourcequotas", true, ns_, ""};
  ASSERT_TRUE(client_
                  ->Create(quotas, {{"apiVersion", "v1"},
                                    {"kind", "ResourceQuota"},
                                    {"metadata", {{"name", "pods-1"}}},
                                    {"spec", {{"hard", {{"pods", "1"}}}}}})
                  .ok());
  ASSERT_TRUE(WaitUntil([&] {
    auto quota = client_->Get(quotas.Named("pods-1"));
    return quota.ok() && quota->value("/status/hard/pods"_json_pointer, "") == "1";
  }));
  controller::CreateObjects create{std::nullopt, "t", {}, false};
  for (int i = 0; i < 20; ++i) create.pods.push_back(Pod("no-such-node-" + std::to_string(i)));
  const uint64_t before = client_->RequestCounts()["create"];
  ASSERT_TRUE(executor_->Execute(ref_, {create}).ok());
  const Collected collected = Settled();
  const controller::CreateRefusal refusal =
      controller::ClassifyCreateRefusal(collected.create_error);
  EXPECT_EQ(refusal.kind, controller::RefusalClass::kQuotaExceeded)
      << collected.create_error.ToString();
  EXPECT_NE(refusal.message.find("exceeded quota: pods-1"), std::string::npos) << refusal.message;
  EXPECT_FALSE(collected.writes.pods_created);
  ASSERT_EQ(collected.writes.on_their_way.size(), 1u);
  EXPECT_TRUE(client_->Get(Pods().In(ns_).Named(*collected.writes.on_their_way.begin())).ok());
  EXPECT_EQ(client_->RequestCounts()["create"] - before, 8u);
  EXPECT_TRUE(WaitUntil([&] { return requeues_ > 0; })) << "the refusal needs a pass";
}

TEST_F(ExecutorTest, AnExistingSecretOfTheJobHandsItsTokenOverAndNoPodIsMade) {
  ASSERT_TRUE(
      client_->Create(Secrets().In(ns_), controller::BuildTokenSecret(job_meta_, "earlier")).ok());
  const controller::CreateObjects create{
      controller::BuildTokenSecret(job_meta_, "fresh"), "fresh", {Pod("no-such-node")}, false};
  ASSERT_TRUE(executor_->Execute(ref_, {create}).ok());
  const Collected collected = Settled();
  ASSERT_TRUE(collected.writes.adopted_token);
  EXPECT_EQ(*collected.writes.adopted_token, "earlier");
  EXPECT_TRUE(collected.writes.secret_exists) << "found";
  EXPECT_EQ(client_->Get(Pods().In(ns_).Named("j-no-such-node")).status().code(),
            StatusCode::kNotFound)
      << "pods wait until the session holds the Secret's token";
  EXPECT_TRUE(WaitUntil([&] { return requeues_ > 0; })) << "the job needs a pass of its own";
}

// Replacement pods mount the token Secret: one deleted by hand is made
// again before them; one that is there is left as it is and not read.
TEST_F(ExecutorTest, ATokenSecretDeletedByHandIsMadeAgainBeforeReplacementPods) {
  const controller::CreateObjects restore{controller::BuildTokenSecret(job_meta_, "held"),
                                          "held",
                                          {Pod("no-such-node")},
                                          /*restore=*/true};
  ASSERT_TRUE(executor_->Execute(ref_, {restore}).ok());
  Collected collected = Settled();
  EXPECT_TRUE(collected.create_error.ok()) << collected.create_error.ToString();
  EXPECT_TRUE(collected.writes.secret_exists) << "made again";
  auto secret = client_->Get(Secrets().In(ns_).Named(controller::TokenSecretName("j")));
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  EXPECT_EQ(kube::DecodeBase64(secret->value("/data/token"_json_pointer, "")).value(), "held");
  EXPECT_TRUE(client_->Get(Pods().In(ns_).Named("j-no-such-node")).ok());

  const controller::CreateObjects again{controller::BuildTokenSecret(job_meta_, "other"),
                                        "other",
                                        {Pod("no-such-node-2")},
                                        /*restore=*/true};
  ASSERT_TRUE(executor_->Execute(ref_, {again}).ok());
  collected = Settled({"j-no-such-node"});
  EXPECT_TRUE(collected.create_error.ok()) << collected.create_error.ToString();
  EXPECT_FALSE(collected.writes.adopted_token) << "a restore reads no token back";
  secret = client_->Get(Secrets().In(ns_).Named(controller::TokenSecretName("j")));
  ASSERT_TRUE(secret.ok());
  EXPECT_EQ(kube::DecodeBase64(secret->value("/data/token"_json_pointer, "")).value(), "held");
  EXPECT_TRUE(client_->Get(Pods().In(ns_).Named("j-no-such-node-2")).ok());
}

TEST_F(ExecutorTest, CreateOrReadSecretReadsThisJobsTokenAndRefusesOneWithout) {
  EXPECT_FALSE(
      executor_->Collect(ref_.key, {}, std::chrono::steady_clock::now()).writes.secret_exists);
  auto token = executor_->CreateOrReadSecret(
      ref_.key, ns_, controller::BuildTokenSecret(job_meta_, "a"), ref_.uid, "a");
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, "a");
  EXPECT_TRUE(
      executor_->Collect(ref_.key, {}, std::chrono::steady_clock::now()).writes.secret_exists)
      << "and says so to the job's passes";
  token = executor_->CreateOrReadSecret(ref_.key, ns_, controller::BuildTokenSecret(job_meta_, "b"),
                                        ref_.uid, "b");
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, "a") << "the Secret's token is the one in effect";
  // A Secret of this job that holds no token cannot be used: Invalid.
  json empty = controller::BuildTokenSecret(job_meta_, "");
  empty["stringData"] = json::object();
  ASSERT_TRUE(client_->Delete(Secrets().In(ns_).Named(controller::TokenSecretName("j"))).ok());
  ASSERT_TRUE(client_->Create(Secrets().In(ns_), empty).ok());
  token = executor_->CreateOrReadSecret(ref_.key, ns_, controller::BuildTokenSecret(job_meta_, "c"),
                                        ref_.uid, "c");
  EXPECT_EQ(token.status().code(), StatusCode::kInvalid) << token.status().ToString();
}

// The WaitingForQueue event goes with the job's first CreateWorkload: the
// Executor says it was asked for from then on, whatever the API server
// answered (here it has no Workload kind: Kueue is not installed).
TEST_F(ExecutorTest, AWorkloadAskedForIsSaidSoInEveryLaterCollect) {
  const auto collect = [&] {
    return executor_->Collect(ref_.key, {}, std::chrono::steady_clock::now());
  };
  EXPECT_FALSE(collect().writes.workload_requested);
  const controller::CreateWorkload create{{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                                           {"kind", "Workload"},
                                           {"metadata", {{"name", "job-j"}, {"namespace", ns_}}}}};
  EXPECT_FALSE(executor_->Execute(ref_, {create}).ok()) << "no Workload kind here";
  EXPECT_TRUE(collect().writes.workload_requested);
  EXPECT_TRUE(collect().writes.workload_requested) << "kept, not reported once";
  executor_->Forget(ref_.key);
  EXPECT_FALSE(collect().writes.workload_requested) << "a job created again asks again";
}

TEST_F(ExecutorTest, StatusWritesReachTheApiServerNewestLastAndRemovedKeysGo) {
  executor_->Seed(ref_.key, json::object());
  api::WeightedJobStatus running;
  running.phase = api::JobPhase::kRunning;
  running.progress = "10%";
  running.workers = 2;
  api::WeightedJobStatus later = running;
  later.progress = "20%";
  later.workers.reset();
  ASSERT_TRUE(
      executor_->Execute(ref_, {controller::WriteStatus{running}, controller::WriteStatus{later}})
          .ok());
  ASSERT_TRUE(WaitUntil([&] {
    return executor_->Collect(ref_.key, {}, std::chrono::steady_clock::now()).writes.status_written;
  }));
  auto stored = client_->Get(WeightedJobs().In(ns_).Named("j"));
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored)["status"]["progress"], "20%");
  EXPECT_FALSE((*stored)["status"].contains("workers"));
}

TEST_F(ExecutorTest, RegisterReplacesASessionItLostTrackOfAndRemoveForgetsIt) {
  ASSERT_TRUE(executor_->Execute(ref_, {controller::RegisterJob{Config()}}).ok());
  ASSERT_TRUE(coordinator_->View(ref_.id));
  EXPECT_TRUE(executor_->Execute(ref_, {controller::RegisterJob{Config()}}).ok())
      << "Conflict: added again";
  EXPECT_TRUE(executor_->Execute(ref_, {controller::WorkerLost{"not-a-worker"}}).ok())
      << "best effort";
  ASSERT_TRUE(executor_->Execute(ref_, {controller::RemoveJob{}}).ok());
  EXPECT_FALSE(coordinator_->View(ref_.id));
  coordinator::JobConfig invalid = Config();
  invalid.workers.clear();
  EXPECT_EQ(executor_->Execute(ref_, {controller::RegisterJob{invalid}}).code(),
            StatusCode::kInvalid);
}

TEST_F(ExecutorTest, DeletesOfWhatIsGoneOrAnotherIncarnationAreNoErrors) {
  ASSERT_TRUE(client_->Create(Pods().In(ns_), Pod("no-such-node")).ok());
  EXPECT_TRUE(
      executor_->Execute(ref_, {controller::DeletePod{"j-no-such-node", "some-other-uid"}}).ok());
  EXPECT_TRUE(client_->Get(Pods().In(ns_).Named("j-no-such-node")).ok()) << "uid precondition";
  EXPECT_TRUE(executor_->Execute(ref_, {controller::DeletePod{"j-no-such-node", ""}}).ok());
  EXPECT_TRUE(executor_->Execute(ref_, {controller::DeletePod{"never-was", ""}}).ok());
  ASSERT_TRUE(executor_->Execute(ref_, {controller::DeleteJob{ref_.uid}}).ok());
  EXPECT_TRUE(WaitUntil([&] {
    return client_->Get(WeightedJobs().In(ns_).Named("j")).status().code() == StatusCode::kNotFound;
  }));
}

}  // namespace
}  // namespace ballast::runtime
