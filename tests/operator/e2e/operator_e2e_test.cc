// `ballast operator` end to end: each test starts its own operator process on
// the e2e control plane (docs/testenv.md), in a namespace of its own, applies
// a primes WeightedJob on seed 000's three emulated boards (the nodes
// labelled ballast.io/pool=seed000: pi4b-0, pi4b-1, pi3b-0), disturbs it
// (a worker killed, the operator restarted, the job suspended, deleted, a
// node not Ready) and checks the state of the world through the API server:
// status, pods, the token Secret, Events, and the result against the
// reference computation. No fakes.
//
// On a failure the test prints the job's status, its Events, the tail of the
// operator's log and of the worker pods' logs (operator_e2e_support.h).
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/operator/e2e/operator_e2e_support.h"

namespace ballast::operator_e2e {
namespace {

TEST_F(OperatorTest, PrimesJobCompletesWithTheExactResult) {
  const std::string name = "primes";
  const json created = CreateJob(PrimesJob(name, kSmallLimit));
  ASSERT_FALSE(created.is_null());
  const std::string uid = created["metadata"]["uid"];

  auto job = WaitSucceeded(name);
  ASSERT_TRUE(job);
  ExpectCompleteAndExact(*job, kSmallLimit);
  const json status = StatusOf(*job);
  EXPECT_EQ(status["result"]["primes"]["count"], 17984u);  // pi(200000)
  EXPECT_EQ(ConditionOf(*job, "Failed").value("status", "False"), "False");

  // The weights of seed 000's boards, one row and one pod per node, every
  // item counted once.
  std::map<std::string, double> weights;
  uint64_t items = 0;
  for (const auto& row : status.value("nodes", json::array())) {
    weights[row.value("name", "")] = row.value("weight", 0.0);
    items += row.value("items", uint64_t{0});
    EXPECT_EQ(row.value("pod", ""), name + "-" + row.value("name", ""));
    EXPECT_GT(row.value("score", 0.0), 0);
  }
  EXPECT_EQ(weights, kSeed000Weights);
  EXPECT_EQ(items, kSmallLimit / 2) << "the nodes' items add up to the job's";
  EXPECT_FALSE(status.value("startTime", "").empty());
  EXPECT_FALSE(status.value("completionTime", "").empty());
  EXPECT_EQ(status.value("failedPods", -1), 0);
  const double efficiency = status.value("efficiency", 0.0);
  EXPECT_GT(efficiency, 0);
  EXPECT_GT(status.value("makespanSeconds", 0.0), 0);
  EXPECT_GT(status.value("idealSeconds", 0.0), 0);
  // Every node of the test bed declares its speed (ballast.io/emulated-speed):
  // the figure is measured against those, the job's own estimate beside it.
  EXPECT_EQ(status.value("efficiencyReference", ""), "declared speeds") << status.dump();
  EXPECT_EQ(status.value("limitBound", ""), "work") << status.dump();
  const double estimated = status.value("estimatedEfficiency", 0.0);
  EXPECT_GT(estimated, 0) << status.dump();
  EXPECT_GT(status.value("estimatedIdealSeconds", 0.0), 0);
  std::cout << "primes < " << kSmallLimit << " on seed000: makespan "
            << status.value("makespanSeconds", 0.0) << " s, ideal "
            << status.value("idealSeconds", 0.0) << " s, efficiency " << efficiency
            << " against declared speeds, the job's own estimate " << estimated << "\n";
  RecordProperty("efficiency", std::to_string(efficiency));
  RecordProperty("estimatedEfficiency", std::to_string(estimated));

  // The worker pods: one per node, labelled, owned by the job, pinned by
  // required node affinity and bound there by the scheduler.
  const auto pods = JobPods(name);
  ASSERT_EQ(pods.size(), kSeed000Weights.size()) << Describe(name);
  for (const auto& pod : pods) {
    const std::string node = pod["metadata"]["labels"].value("ballast.io/node", "");
    ASSERT_TRUE(kSeed000Weights.count(node)) << pod["metadata"].dump();
    EXPECT_EQ(pod["metadata"]["name"], name + "-" + node);
    EXPECT_EQ(pod["metadata"]["labels"].value("ballast.io/job", ""), name);
    EXPECT_EQ(pod.value("/spec/nodeName"_json_pointer, ""), node);
    const json owners = pod["metadata"].value("ownerReferences", json::array());
    ASSERT_EQ(owners.size(), 1u) << pod["metadata"].dump();
    EXPECT_EQ(owners[0].value("uid", ""), uid);
    EXPECT_EQ(owners[0].value("kind", ""), "WeightedJob");
    EXPECT_EQ(owners[0].value("name", ""), name);
    EXPECT_TRUE(owners[0].value("controller", false));
    const json terms = pod.value(
        "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms"_json_pointer,
        json::array());
    ASSERT_EQ(terms.size(), 1u) << pod["spec"].dump();
    const json field = terms[0].value("matchFields", json::array());
    ASSERT_EQ(field.size(), 1u) << terms.dump();
    EXPECT_EQ(field[0].value("key", ""), "metadata.name");
    EXPECT_EQ(field[0].value("operator", ""), "In");
    EXPECT_EQ(field[0].value("values", json::array()), json::array({node}));
    // The worker said done and exited 0; finished pods stay, as a Job's do.
    EXPECT_TRUE(Poll(
        [&] {
          auto now = client_->Get(kPods.In(ns_).Named(pod["metadata"]["name"]));
          return now.ok() && now->value("/status/phase"_json_pointer, "") == "Succeeded";
        },
        seconds(30)))
        << pod["metadata"]["name"] << " did not end Succeeded";
  }

  // The token Secret, owned by the job.
  auto secret = client_->Get(kSecrets.In(ns_).Named(name + "-token"));
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  EXPECT_FALSE(secret->value("/data/token"_json_pointer, "").empty());
  const json owners = (*secret)["metadata"].value("ownerReferences", json::array());
  ASSERT_EQ(owners.size(), 1u);
  EXPECT_EQ(owners[0].value("uid", ""), uid);

  EXPECT_TRUE(WaitEvent(name, "Started"));
  EXPECT_TRUE(WaitEvent(name, "Completed"));
}

TEST_F(OperatorTest, KilledWorkerIsReplacedAndTheResultStaysExact) {
  const std::string name = "primes";
  ASSERT_FALSE(CreateJob(PrimesJob(name, kMidRunLimit)).is_null());
  ASSERT_TRUE(WaitMidRun(name));

  const auto pids = WorkerPids(JobId(name), "pi4b-0");
  ASSERT_EQ(pids.size(), 1u) << "pi4b-0's worker process of " << JobId(name) << "\n"
                             << Describe(name);
  ASSERT_EQ(kill(pids[0], SIGKILL), 0);
  auto before = GetJob(name);
  ASSERT_TRUE(before);
  ASSERT_NE(PhaseOf(*before), "Succeeded") << "the job finished before the kill; make it longer";

  ASSERT_TRUE(WaitEvent(name, "WorkerFailed", seconds(30)));
  auto job = WaitSucceeded(name);
  ASSERT_TRUE(job);
  ExpectCompleteAndExact(*job, kMidRunLimit);
  EXPECT_GE(StatusOf(*job).value("failedPods", 0), 1);
  uint64_t items = 0;
  for (const auto& row : StatusOf(*job).value("nodes", json::array())) {
    items += row.value("items", uint64_t{0});
  }
  EXPECT_EQ(items, kMidRunLimit / 2) << "the nodes' items add up to the job's";
  const auto failed = FindEvent(name, "WorkerFailed");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->value("type", ""), "Warning");
  EXPECT_NE(failed->value("message", "").find("pi4b-0"), std::string::npos)
      << failed->value("message", "");
}

// Worker pods mount the token Secret: one deleted by hand mid-job is made
// again, with the session's token, before the replacement of a killed
// worker, which then starts and reports (the test bed's node agent fails a
// container whose Secret volume is missing).
TEST_F(OperatorTest, ATokenSecretDeletedMidJobIsMadeAgainForTheReplacementWorker) {
  const std::string name = "primes";
  ASSERT_FALSE(CreateJob(PrimesJob(name, kMidRunLimit)).is_null());
  ASSERT_TRUE(WaitMidRun(name));
  auto secret = client_->Get(kSecrets.In(ns_).Named(name + "-token"));
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  const std::string token = secret->value("/data/token"_json_pointer, "");
  ASSERT_TRUE(client_->Delete(kSecrets.In(ns_).Named(name + "-token")).ok());

  const auto pids = WorkerPids(JobId(name), "pi4b-0");
  ASSERT_EQ(pids.size(), 1u) << Describe(name);
  ASSERT_EQ(kill(pids[0], SIGKILL), 0);
  ASSERT_TRUE(WaitEvent(name, "WorkerFailed", seconds(30)));
  auto job = WaitSucceeded(name);
  ASSERT_TRUE(job) << Describe(name);
  ExpectCompleteAndExact(*job, kMidRunLimit);
  EXPECT_EQ(StatusOf(*job).value("failedPods", 0), 1) << "the replacement did not fail";
  secret = client_->Get(kSecrets.In(ns_).Named(name + "-token"));
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  EXPECT_EQ(secret->value("/data/token"_json_pointer, ""), token) << "the session's token";
}

// The workers outlive the coordinator's restart (404 while the job registers
// again -> retry; 409 for a stale lease -> start over: worker/worker_loop.h),
// so no pod fails.
TEST_F(OperatorTest, RestartedOperatorResumesFromTheCheckpoint) {
  const std::string name = "primes";
  ASSERT_FALSE(CreateJob(PrimesJob(name, kMidRunLimit)).is_null());
  ASSERT_TRUE(WaitCheckpointed(name));

  operator_->Kill(SIGKILL);
  // What the status held when the operator died: all a new one can know.
  auto at_kill = GetJob(name);
  ASSERT_TRUE(at_kill);
  const uint64_t completed_at_kill = CompletedOf(*at_kill);
  const uint64_t checkpointed = CheckpointItems(*at_kill);
  const std::string version_at_kill = kube::ResourceVersionOf(*at_kill);
  std::cout << "operator killed at completedItems " << completed_at_kill << ", checkpoint "
            << checkpointed << " items\n";
  ASSERT_NE(PhaseOf(*at_kill), "Succeeded");

  // Every status the new operator writes, from a watch.
  std::mutex mu;
  std::vector<json> seen;
  kube::Cancellation cancel;
  std::thread watcher([&] {
    kube::WatchOptions options;
    options.resource_version = version_at_kill;
    options.field_selector = "metadata.name=" + name;
    (void)client_->Watch(
        kJobs.In(ns_), options,
        [&](const kube::WatchEvent& event) {
          if (event.type == kube::WatchEventType::kModified) {
            std::lock_guard lock(mu);
            seen.push_back(event.object);
          }
          return true;
        },
        &cancel);
  });

  ASSERT_TRUE(StartOperator());
  auto job = WaitSucceeded(name);
  cancel.Cancel();
  watcher.join();
  ASSERT_TRUE(job);
  ExpectCompleteAndExact(*job, kMidRunLimit);

  {
    std::lock_guard lock(mu);
    ASSERT_FALSE(seen.empty());
    EXPECT_GE(CompletedOf(seen.front()), completed_at_kill)
        << "the first status after the restart lost checkpointed items: "
        << StatusOf(seen.front()).dump(2);
    uint64_t previous = completed_at_kill;
    for (const auto& object : seen) {
      EXPECT_GE(CompletedOf(object), previous) << "completedItems went back";
      previous = std::max(previous, CompletedOf(object));
    }
    std::cout << "first status after the restart: completedItems " << CompletedOf(seen.front())
              << "\n";
  }
  const auto resumed = WaitEvent(name, "Resumed");
  ASSERT_TRUE(resumed);
  const std::string message = resumed->value("message", "");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(message, match, std::regex(R"(checkpoint at (\d+) of)")))
      << message;
  EXPECT_EQ(std::stoull(match[1]), checkpointed) << message;
  // The workers waited for the new coordinator instead of failing.
  EXPECT_EQ(StatusOf(*job).value("failedPods", -1), 0)
      << "worker pods failed across the operator's restart\n"
      << Describe(name);
}

// Issue 46: a checkpoint patched to claim items that never ran (by anyone
// with status rights) while no operator runs is not resumed from: its seal
// does not match, the job starts again and its result is still exact.
TEST_F(OperatorTest, AForgedCheckpointIsNotResumedFromAndTheResultStaysExact) {
  const std::string name = "primes";
  ASSERT_FALSE(CreateJob(PrimesJob(name, kMidRunLimit)).is_null());
  ASSERT_TRUE(WaitCheckpointed(name));
  operator_->Kill(SIGKILL);
  auto at_kill = GetJob(name);
  ASSERT_TRUE(at_kill);
  const uint64_t items = StatusOf(*at_kill).value("items", uint64_t{0});
  json checkpoint = StatusOf(*at_kill).at("checkpoint");
  ASSERT_TRUE(checkpoint.contains("seal")) << checkpoint.dump();
  checkpoint["completed"] = json::array({json::array({0, items - 10})});
  auto patched = client_->PatchStatus(
      kJobs.In(ns_).Named(name),
      {{"status", {{"checkpoint", checkpoint}, {"completedItems", items - 10}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();

  ASSERT_TRUE(StartOperator());
  const auto rejected = WaitEvent(name, "CheckpointRejected");
  ASSERT_TRUE(rejected) << Describe(name);
  EXPECT_EQ(rejected->value("type", ""), "Warning");
  EXPECT_NE(rejected->value("message", "").find("does not match"), std::string::npos)
      << rejected->value("message", "");
  auto job = WaitSucceeded(name);
  ASSERT_TRUE(job) << Describe(name);
  ExpectCompleteAndExact(*job, kMidRunLimit);
  EXPECT_FALSE(FindEvent(name, "Resumed")) << "the forged checkpoint was resumed from";
}

// Issue 46: startTime and failedPods patched while no operator runs (to move
// the job's deadline, or its backoff count) are put back from the claims the
// operator sealed beside the checkpoint, and the job resumes and is exact.
TEST_F(OperatorTest, PatchedStartTimeAndFailedPodsArePutBackFromTheSealedClaims) {
  const std::string name = "primes";
  ASSERT_FALSE(CreateJob(PrimesJob(name, kMidRunLimit)).is_null());
  ASSERT_TRUE(WaitCheckpointed(name));
  operator_->Kill(SIGKILL);
  auto at_kill = GetJob(name);
  ASSERT_TRUE(at_kill);
  const std::string started = StatusOf(*at_kill).value("startTime", "");
  ASSERT_FALSE(started.empty());
  ASSERT_EQ(StatusOf(*at_kill)["checkpoint"]["claims"]["startTime"], started)
      << StatusOf(*at_kill)["checkpoint"].dump();
  auto patched = client_->PatchStatus(
      kJobs.In(ns_).Named(name),
      {{"status", {{"startTime", "2020-01-01T00:00:00Z"}, {"failedPods", 5}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();

  ASSERT_TRUE(StartOperator());
  const auto restored = WaitEvent(name, "StatusRestored");
  ASSERT_TRUE(restored) << Describe(name);
  EXPECT_EQ(restored->value("type", ""), "Warning");
  const std::string message = restored->value("message", "");
  EXPECT_NE(message.find("startTime " + started), std::string::npos) << message;
  EXPECT_NE(message.find("failedPods 0 (was 5)"), std::string::npos) << message;
  auto job = WaitSucceeded(name);
  ASSERT_TRUE(job) << Describe(name);
  ExpectCompleteAndExact(*job, kMidRunLimit);
  EXPECT_EQ(StatusOf(*job).value("startTime", ""), started);
  EXPECT_EQ(StatusOf(*job).value("failedPods", -1), 0);
  EXPECT_TRUE(FindEvent(name, "Resumed")) << Describe(name);
}

// An operator that died after creating a new job's token Secret, before the
// job's start reached status: the next one finds the Secret, takes its token
// (the workers read that one) and the job completes with no worker failing.
TEST_F(OperatorTest, NewJobTakesTheTokenOfTheSecretAnEarlierOperatorMade) {
  operator_->Stop();
  const std::string name = "primes";
  const json job = CreateJob(PrimesJob(name, kSmallLimit));
  ASSERT_FALSE(job.is_null());
  const std::string token = "made-by-an-earlier-operator";
  const json secret = {{"apiVersion", "v1"},
                       {"kind", "Secret"},
                       {"type", "Opaque"},
                       {"metadata",
                        {{"name", name + "-token"},
                         {"ownerReferences",
                          {{{"apiVersion", "ballast.io/v1alpha1"},
                            {"kind", "WeightedJob"},
                            {"name", name},
                            {"uid", job["metadata"]["uid"]},
                            {"controller", true}}}}}},
                       {"stringData", {{"token", token}}}};
  ASSERT_TRUE(client_->Create(kSecrets.In(ns_), secret).ok());

  ASSERT_TRUE(StartOperator());
  auto done = WaitSucceeded(name);
  ASSERT_TRUE(done);
  ExpectCompleteAndExact(*done, kSmallLimit);
  EXPECT_EQ(StatusOf(*done).value("failedPods", -1), 0) << Describe(name);
  auto kept = client_->Get(kSecrets.In(ns_).Named(name + "-token"));
  ASSERT_TRUE(kept.ok());
  auto stored = kube::DecodeBase64(kept->at("data").at("token"));
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(*stored, token);
}

// Only the operator says a job is finished: a Complete=True patched into a
// running job's status (by anyone with status rights) is written over with
// the operator's own conditions, with a Warning (issue 46: `kubectl wait
// --for=condition=Complete` returned at 165 of 600 items).
TEST_F(OperatorTest, AForgedCompleteConditionIsWrittenOverWhileTheJobRuns) {
  const std::string name = "forged";
  ASSERT_FALSE(CreateJob(HeldJob(PrimesJob(name, kMidRunLimit))).is_null());
  ASSERT_TRUE(WaitMidRun(name));
  // Held, so that it still runs when the restored status is read back.
  HeldWorkers held = HoldWorkers(name);
  auto patched = client_->PatchStatus(
      kJobs.In(ns_).Named(name),
      {{"status",
        {{"conditions", json::array({{{"type", "Complete"},
                                      {"status", "True"},
                                      {"reason", "Forged"},
                                      {"message", "not the operator's"},
                                      {"lastTransitionTime", "2026-01-01T00:00:00Z"}}})}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  auto restored = WaitEvent(name, "ConditionsRestored");
  ASSERT_TRUE(restored) << Describe(name);
  ASSERT_TRUE(Poll(
      [&] {
        auto job = GetJob(name);
        return job && ConditionOf(*job, "Complete").value("status", "") != "True" &&
               PhaseOf(*job) == "Running";
      },
      seconds(10)))
      << Describe(name);
  held.Release();
  auto done = WaitSucceeded(name);
  ASSERT_TRUE(done) << Describe(name);
  EXPECT_EQ(ConditionOf(*done, "Complete").value("reason", ""), "AllItemsFinished");
}

TEST_F(OperatorTest, SuspendKeepsTheCheckpointAndResumeCompletes) {
  const std::string name = "primes";
  ASSERT_FALSE(CreateJob(PrimesJob(name, kMidRunLimit)).is_null());
  ASSERT_TRUE(WaitMidRun(name));

  auto patched = client_->MergePatch(kJobs.In(ns_).Named(name), {{"spec", {{"suspend", true}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  auto suspended = WaitForJob(
      name,
      [](const json& job) {
        return PhaseOf(job) == "Suspended" &&
               ConditionOf(job, "Suspended").value("status", "") == "True";
      },
      seconds(60), "job " + name + " to be Suspended");
  ASSERT_TRUE(suspended);
  ASSERT_TRUE(Poll([&] { return JobPods(name).empty(); }, seconds(60)))
      << "the worker pods are still there\n"
      << Describe(name);
  EXPECT_TRUE(Poll([&] { return WorkerPids(JobId(name)).empty(); }, seconds(10)))
      << "worker processes still run";

  // Nothing changes while suspended; what is kept is in the checkpoint.
  std::this_thread::sleep_for(seconds(2));
  auto job = GetJob(name);
  ASSERT_TRUE(job);
  const json status = StatusOf(*job);
  EXPECT_EQ(status.value("phase", ""), "Suspended");
  EXPECT_EQ(ConditionOf(*job, "Suspended").value("reason", ""), "SuspendedByUser");
  EXPECT_EQ(status.value("workers", -1), 0);
  ASSERT_TRUE(status.contains("checkpoint")) << status.dump(2);
  const uint64_t kept = CheckpointItems(*job);
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, kMidRunLimit / 2);
  EXPECT_EQ(status.value("completedItems", uint64_t{0}), kept);
  EXPECT_TRUE(status["checkpoint"].contains("result"));
  EXPECT_EQ(status["checkpoint"]["result"], status.value("result", json()));
  EXPECT_TRUE(JobPods(name).empty());
  std::cout << "suspended with " << kept << " of " << kMidRunLimit / 2 << " items kept\n";
  EXPECT_TRUE(WaitEvent(name, "Suspended"));

  patched = client_->MergePatch(kJobs.In(ns_).Named(name), {{"spec", {{"suspend", false}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  auto done = WaitSucceeded(name);
  ASSERT_TRUE(done);
  ExpectCompleteAndExact(*done, kMidRunLimit);
  EXPECT_EQ(ConditionOf(*done, "Suspended").value("status", ""), "False");
  const auto resumed = WaitEvent(name, "Resumed");
  ASSERT_TRUE(resumed);
  EXPECT_NE(resumed->value("message", "").find("checkpoint at " + std::to_string(kept)),
            std::string::npos)
      << resumed->value("message", "");
}

TEST_F(OperatorTest, DeletedJobsPodsAndSecretAreCollected) {
  const std::string name = "primes";
  ASSERT_FALSE(CreateJob(PrimesJob(name, kMidRunLimit)).is_null());
  ASSERT_TRUE(WaitMidRun(name));
  ASSERT_TRUE(client_->Get(kSecrets.In(ns_).Named(name + "-token")).ok());

  ASSERT_TRUE(client_->Delete(kJobs.In(ns_).Named(name)).ok());
  // Within a bounded wait: the garbage collector deletes pods and Secret at
  // once; a pod goes when the node agent has stopped its worker (SIGTERM,
  // SIGKILL after the 30 s grace period). Measured: the workers take the
  // whole 30 s, since the coordinator forgot the deleted job and they retry
  // its 404 (for give_up_s, 60 s) without heeding SIGTERM
  // (worker/worker_loop.cc, Exchange).
  const auto start = Clock::now();
  auto since = [&] {
    return std::to_string(std::chrono::duration_cast<milliseconds>(Clock::now() - start).count()) +
           " ms";
  };
  EXPECT_TRUE(Poll([&] { return !GetJob(name); }, seconds(30))) << "the job is still there";
  std::cout << "job gone after " << since() << "\n";
  EXPECT_TRUE(Poll(
      [&] {
        return client_->Get(kSecrets.In(ns_).Named(name + "-token")).status().code() ==
               StatusCode::kNotFound;
      },
      seconds(30)))
      << "the token Secret is still there";
  std::cout << "Secret gone after " << since() << "\n";
  EXPECT_TRUE(Poll(
      [&] {
        for (const auto& pod : JobPods(name)) {
          if (!Deleting(pod)) return false;
        }
        return true;
      },
      seconds(30)))
      << "the worker pods are not being deleted\n"
      << Describe(name);
  std::cout << "pods deleting after " << since() << "\n";
  EXPECT_TRUE(Poll([&] { return WorkerPids(JobId(name)).empty(); }, seconds(45)))
      << "worker processes still run";
  std::cout << "worker processes gone after " << since() << "\n";
  EXPECT_TRUE(Poll([&] { return JobPods(name).empty(); }, seconds(45)))
      << "the worker pods are still there\n"
      << Describe(name);
  std::cout << "pods gone after " << since() << "\n";
}

TEST_F(OperatorTest, InvalidSpecsAreRefusedOrFail) {
  // The API server refuses these on create, naming the field.
  json negative = PrimesJob("negative-items", kSmallLimit);
  negative["spec"]["items"] = -5;
  auto refused = client_->Create(kJobs.In(ns_), negative);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalid) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("spec.items"), std::string::npos)
      << refused.status().message();

  json policy = PrimesJob("unknown-policy", kSmallLimit);
  policy["spec"]["policy"] = "fastest";
  refused = client_->Create(kJobs.In(ns_), policy);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalid) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("spec.policy"), std::string::npos)
      << refused.status().message();

  // A profile that does not exist: accepted, then Failed by the operator.
  json missing = PrimesJob("no-profile", kSmallLimit);
  missing["spec"]["profile"] = "nope";
  ASSERT_FALSE(CreateJob(missing).is_null());
  // An option of another policy: the schema lets it through, the operator's
  // parser does not.
  json option = PrimesJob("wrong-option", kSmallLimit);
  option["spec"]["policy"] = {{"name", "selfsched"}, {"compensation", "none"}};
  ASSERT_FALSE(CreateJob(option).is_null());

  auto failed = WaitForJob(
      "no-profile",
      [](const json& job) { return ConditionOf(job, "Failed").value("status", "") == "True"; },
      seconds(30), "job no-profile to fail");
  ASSERT_TRUE(failed);
  const json condition = ConditionOf(*failed, "Failed");
  EXPECT_EQ(PhaseOf(*failed), "Failed");
  EXPECT_EQ(condition.value("reason", ""), "ProfileNotFound") << condition.dump();
  EXPECT_NE(condition.value("message", "").find("nope"), std::string::npos) << condition.dump();
  EXPECT_TRUE(JobPods("no-profile").empty());
  // The profile is resolved before the token Secret is made.
  EXPECT_EQ(client_->Get(kSecrets.In(ns_).Named("no-profile-token")).status().code(),
            StatusCode::kNotFound);

  auto invalid = WaitForJob(
      "wrong-option",
      [](const json& job) { return ConditionOf(job, "Failed").value("status", "") == "True"; },
      seconds(30), "job wrong-option to fail");
  ASSERT_TRUE(invalid);
  const json invalid_condition = ConditionOf(*invalid, "Failed");
  EXPECT_EQ(invalid_condition.value("reason", ""), "InvalidPolicy") << invalid_condition.dump();
  EXPECT_NE(invalid_condition.value("message", "").find("compensation"), std::string::npos)
      << invalid_condition.dump();
  EXPECT_TRUE(JobPods("wrong-option").empty());
}

TEST_F(OperatorTest, NodeNotReadyLosesItsWorkerAndTheJobCompletes) {
  const std::string name = "primes";
  const std::string node = "pi4b-1";
  ASSERT_FALSE(CreateJob(PrimesJob(name, kMidRunLimit)).is_null());
  ASSERT_TRUE(WaitMidRun(name));
  auto pod = client_->Get(kPods.In(ns_).Named(name + "-" + node));
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  const std::string pod_uid = (*pod)["metadata"]["uid"];

  touched_nodes_.insert(node);  // TearDown makes it Ready again if need be
  ASSERT_NO_FATAL_FAILURE(
      SetNodeReady(node, false, "KubeletNotReady", "operator e2e test: the board went away"));
  const auto not_ready_at = Clock::now();
  // The node agent reports the node Ready again within a minute; should it do
  // so before the operator saw the change, the node goes away once more.
  std::optional<json> lost;
  Poll(
      [&] {
        lost = FindEvent(name, "NodeNotReady");
        if (!lost && NodeReady(node)) {
          SetNodeReady(node, false, "KubeletNotReady", "operator e2e test: the board went away");
        }
        return lost.has_value();
      },
      seconds(30));
  ASSERT_TRUE(lost) << "no NodeNotReady Event 30 s after " << node << " went NotReady\n"
                    << Describe(name);
  std::cout << "NodeNotReady Event "
            << std::chrono::duration_cast<milliseconds>(Clock::now() - not_ready_at).count()
            << " ms after the node went NotReady\n";
  EXPECT_NE(lost->value("message", "").find(node), std::string::npos) << lost->value("message", "");
  // The operator deleted that pod (it may have made a new one since, when the
  // node agent reported the node Ready again).
  EXPECT_TRUE(PodGoesWithin30s(name, node, pod_uid)) << node << "'s pod was not deleted\n"
                                                     << Describe(name);
  auto before = GetJob(name);
  ASSERT_TRUE(before);
  EXPECT_NE(PhaseOf(*before), "Succeeded") << "the job finished before the node was lost";

  auto job = WaitSucceeded(name);
  ASSERT_TRUE(job);
  ExpectCompleteAndExact(*job, kMidRunLimit);
  std::cout << node << " at completion: Ready " << NodeReady(node) << ", untainted "
            << NodeReadyAndUntainted(node) << "; NodeReady Event "
            << FindEvent(name, "NodeReady").has_value() << "\n";
}

// Two replicas with --leader-elect on one Lease: only the holder listens for
// workers and reconciles; when it stops (SIGTERM releases the Lease and the
// port) the other takes over mid-run and finishes the job from the checkpoint.
// Two replicas as the chart runs them: --leader-elect, --mark-leader-pod
// (their pods here are stand-ins that never schedule: what matters is the
// label on them) and --health-listen. Only the Lease holder listens,
// reconciles and carries the leader label; the standby removes a stale one
// at start and is Ready; SIGTERM to the leader removes its label, closes
// the port and releases the Lease; the standby takes over, labels its pod
// and resumes the job exactly.
TEST_F(OperatorTest, StandbyReplicaTakesOverWhenTheLeaderStops) {
  operator_->Stop();  // the fixture's operator runs without leader election
  auto stand_in = [&](const std::string& name, bool labelled) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"labels", {{"app", "ballast-operator"}}}}},
                {"spec",
                 {{"nodeSelector", {{"ballast.io/stand-in", "never"}}},
                  {"containers", json::array({{{"name", "operator"},
                                               {"image", "ballast:0.1.0"},
                                               {"command", json::array({"sleep", "3600"})}}})}}}};
    if (labelled) pod["metadata"]["labels"]["ballast.io/coordinator"] = "leader";
    auto created = client_->Create(kPods.In(ns_), pod);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  };
  ASSERT_NO_FATAL_FAILURE(stand_in("replica-a", false));
  // A former leader's pod that restarted: its label must go before anything.
  ASSERT_NO_FATAL_FAILURE(stand_in("replica-b", true));
  auto leader_label = [&](const std::string& pod) {
    auto object = client_->Get(kPods.In(ns_).Named(pod));
    return object.ok() ? object->value("/metadata/labels/ballast.io~1coordinator"_json_pointer,
                                       std::string())
                       : std::string("(no pod)");
  };
  std::map<std::string, uint16_t> health_ports;
  auto replica = [&](const std::string& identity) {
    health_ports[identity] = FreePort();
    return Replica(identity,
                   {"--mark-leader-pod", "--health-listen",
                    "127.0.0.1:" + std::to_string(health_ports[identity])},
                   {"POD_NAME=" + identity, "POD_NAMESPACE=" + ns_});
  };
  auto probe = [&](const std::string& identity, const std::string& path) {
    return HttpGet(health_ports[identity], path).first;
  };
  const kube::ResourceRef lease = kube::Leases().In(ns_).Named("ballast-operator");
  auto holder = [&] {
    auto object = client_->Get(lease);
    return object.ok() ? object->value("/spec/holderIdentity"_json_pointer, std::string()) : "";
  };
  // operator_ is the replica the fixture's waits watch (they stop early when
  // it dies): the leader first, then the standby.
  operator_ = replica("replica-a");
  ASSERT_TRUE(operator_->Start());
  ASSERT_TRUE(Poll([&] { return holder() == "replica-a"; }, seconds(30)))
      << "replica-a never took the Lease; holder '" << holder() << "'";
  EXPECT_TRUE(Poll([&] { return leader_label("replica-a") == "leader"; }, seconds(30)))
      << "the leader did not label its pod";
  EXPECT_TRUE(Poll([&] { return probe("replica-a", "/readyz") == 200; }, seconds(30)))
      << "the leader is not Ready: " << HttpGet(health_ports["replica-a"], "/readyz").second;
  EXPECT_EQ(probe("replica-a", "/healthz"), 200);
  auto second = replica("replica-b");
  ASSERT_TRUE(second->Start());
  EXPECT_TRUE(Poll([&] { return leader_label("replica-b").empty(); }, seconds(30)))
      << "the standby kept a stale leader label: '" << leader_label("replica-b") << "'";
  EXPECT_TRUE(Poll([&] { return probe("replica-b", "/readyz") == 200; }, seconds(30)))
      << "a standby is Ready too (PodDisruptionBudget, helm upgrade --wait)";
  EXPECT_EQ(HttpGet(health_ports["replica-b"], "/readyz").second,
            "ok (standby: waiting for the leader Lease)\n");
  EXPECT_EQ(probe("replica-b", "/healthz"), 200);

  const std::string name = "primes";
  ASSERT_FALSE(CreateJob(PrimesJob(name, kMidRunLimit)).is_null());
  ASSERT_TRUE(WaitCheckpointed(name));
  EXPECT_EQ(holder(), "replica-a");
  EXPECT_TRUE(second->Running()) << "the standby exited: " << second->ExitDescription();
  kube::ListOptions leaders;
  leaders.label_selector = "ballast.io/coordinator=leader";
  auto labelled = client_->List(kPods.In(ns_), leaders);
  ASSERT_TRUE(labelled.ok());
  ASSERT_EQ(labelled->items.size(), 1u) << "one pod for the Service to select";
  EXPECT_EQ(labelled->items[0]["metadata"]["name"], "replica-a");

  const auto stop_sent = Clock::now();
  operator_->Kill(SIGTERM);
  const double stop_s = std::chrono::duration<double>(Clock::now() - stop_sent).count();
  EXPECT_LT(stop_s, 30) << "past the pod's terminationGracePeriodSeconds";
  std::cout << "leader stopped " << stop_s << " s after SIGTERM\n";
  // Before it exited: its label went, its last checkpoint was written and
  // its Lease released (its port closed: the successor binds the same one).
  EXPECT_EQ(leader_label("replica-a"), "");
  EXPECT_NE(holder(), "replica-a");
  EXPECT_NE(Tail(log_, 400).find("final status handed over jobs=1"), std::string::npos);
  const auto at_stop = GetJob(name);
  ASSERT_TRUE(at_stop);
  const uint64_t checkpoint_at_stop = CheckpointItems(*at_stop);
  operator_ = std::move(second);
  ASSERT_TRUE(Poll([&] { return holder() == "replica-b"; }, seconds(30)))
      << "replica-b did not take over; holder '" << holder() << "'";
  EXPECT_TRUE(Poll([&] { return leader_label("replica-b") == "leader"; }, seconds(30)))
      << "the new leader did not label its pod";
  auto job = WaitSucceeded(name);
  ASSERT_TRUE(job);
  ExpectCompleteAndExact(*job, kMidRunLimit);
  auto resumed = WaitEvent(name, "Resumed");
  ASSERT_TRUE(resumed) << Describe(name);
  // The standby started from exactly what the leader wrote as it stopped.
  EXPECT_NE(
      resumed->value("message", "")
          .find("resumed from the checkpoint at " + std::to_string(checkpoint_at_stop) + " of "),
      std::string::npos)
      << resumed->value("message", "") << " (checkpoint at the stop: " << checkpoint_at_stop << ")";
  EXPECT_EQ(StatusOf(*job).value("failedPods", -1), 0) << "a worker died in the hand-over";
}

}  // namespace
}  // namespace ballast::operator_e2e
