// WeightedJobs admitted by the real Kueue (scripts/testenv-kueue; the CTest
// fixture kueue_up) through the operator started with --kueue: quota for one
// job of two, a higher-priority job preempting a running one that resumes
// from its checkpoint, a flavor restricting the nodes (and the pods it leaves
// out given back as reclaimable), a worker idle in the tail released and its
// pod reclaimable while the job runs, the release kept across an operator
// restart, and a job's Workload deleted with it. Each
// test makes its own ResourceFlavor, ClusterQueue (named after its namespace)
// and LocalQueue, and removes them. docs/operator.md, "Kueue".
#include "tests/operator/e2e/operator_e2e_support.h"

namespace ballast::operator_e2e {
namespace {

const ResourceRef kWorkloads = {"kueue.x-k8s.io", "v1beta2", "workloads", true, "", ""};
const ResourceRef kLocalQueues = {"kueue.x-k8s.io", "v1beta2", "localqueues", true, "", ""};
const ResourceRef kClusterQueues = {"kueue.x-k8s.io", "v1beta2", "clusterqueues", false, "", ""};
const ResourceRef kFlavors = {"kueue.x-k8s.io", "v1beta2", "resourceflavors", false, "", ""};
const ResourceRef kPriorityClasses = {
    "kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", false, "", ""};

// The CPU each worker pod asks for: a job on seed 000's three boards needs
// 300m of a queue's quota.
constexpr char kWorkerCpu[] = "100m";

class KueueTest : public OperatorTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OperatorTest::SetUp());
    ASSERT_TRUE(client_->List(kClusterQueues).ok())
        << "Kueue's CRDs are not installed: the fixture kueue_up (scripts/testenv-kueue up) "
           "starts Kueue";
    metrics_port_ = FreePort();
    ASSERT_NE(metrics_port_, 0);
    ASSERT_NO_FATAL_FAILURE(
        RestartWith({"--kueue", "--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port_)}));
  }

  void TearDown() override {
    OperatorTest::TearDown();  // the namespace, its jobs and Workloads
    for (const auto& ref : cluster_objects_) (void)client_->Delete(ref);
    // Nothing left behind: a ClusterQueue goes once no Workload uses it.
    for (const auto& ref : cluster_objects_) {
      EXPECT_TRUE(Poll([&] { return client_->Get(ref).status().code() == StatusCode::kNotFound; },
                       seconds(60)))
          << ref.resource << " " << ref.name << " is still there";
    }
  }

  void CreateCluster(const ResourceRef& ref, const json& object) {
    auto created = client_->Create(ref, object);
    ASSERT_TRUE(created.ok()) << created.status().ToString() << "\n" << object.dump(2);
    cluster_objects_.push_back(ref.Named(object["metadata"]["name"].get<std::string>()));
  }

  // A flavor with `node_labels`, a ClusterQueue of `cpu` in it (preempting
  // lower priorities within itself) and the LocalQueue "jobs" of the test's
  // namespace pointing at it. Kueue's webhooks default and check each.
  void MakeQueues(const std::string& cpu, const json& node_labels = json::object()) {
    flavor_ = ns_ + "-flavor";
    json flavor = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                   {"kind", "ResourceFlavor"},
                   {"metadata", {{"name", flavor_}}},
                   {"spec", json::object()}};
    if (!node_labels.empty()) flavor["spec"]["nodeLabels"] = node_labels;
    ASSERT_NO_FATAL_FAILURE(CreateCluster(kFlavors, flavor));
    const json queue = {
        {"apiVersion", "kueue.x-k8s.io/v1beta2"},
        {"kind", "ClusterQueue"},
        {"metadata", {{"name", ns_}}},
        {"spec",
         {{"namespaceSelector", {{"matchLabels", {{"kubernetes.io/metadata.name", ns_}}}}},
          {"preemption", {{"withinClusterQueue", "LowerPriority"}}},
          {"resourceGroups",
           json::array(
               {{{"coveredResources", json::array({"cpu"})},
                 {"flavors",
                  json::array({{{"name", flavor_},
                                {"resources", json::array({{{"name", "cpu"},
                                                            {"nominalQuota", cpu}}})}}})}}})}}}};
    ASSERT_NO_FATAL_FAILURE(CreateCluster(kClusterQueues, queue));
    auto local = client_->Create(kLocalQueues.In(ns_), {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                                                        {"kind", "LocalQueue"},
                                                        {"metadata", {{"name", "jobs"}}},
                                                        {"spec", {{"clusterQueue", ns_}}}});
    ASSERT_TRUE(local.ok()) << local.status().ToString();
  }

  // A primes job in LocalQueue "jobs", each worker asking for kWorkerCpu.
  static json QueuedJob(const std::string& name, uint64_t limit,
                        const std::string& priority_class = "") {
    json job = PrimesJob(name, limit);
    job["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", "jobs"}};
    if (!priority_class.empty()) {
      job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = priority_class;
    }
    job["spec"]["worker"] = {{"resources", {{"requests", {{"cpu", kWorkerCpu}}}}}};
    return job;
  }

  // Primes below this in the tail tests: the Pi 3B held (HoldTheTailsPi3B)
  // makes their moments, not the job's size, which only sets how long the
  // job runs after them (a quarter of kMidRunLimit's trial divisions).
  static constexpr uint64_t kTailLimit = kMidRunLimit / 2;

  // The tail tests' job "tail": queues of 300m, the job under `equal`.
  void CreateTailJob() {
    ASSERT_NO_FATAL_FAILURE(MakeQueues("300m"));
    json job = HeldJob(QueuedJob("tail", kTailLimit));
    job["spec"]["policy"] = "equal";
    CreateJob(job);
  }

  // The tail job's Pi 3B held once it holds its `equal` share (a lease
  // granted, as the operator's /metrics count them; no other worker takes
  // it), so that the Pi 4B finish their shares first and the job runs on
  // through what the test checks of their release, however short the job is.
  // Held before its first lease, its share would go to the others once it
  // missed its start and nobody would be released.
  HeldWorkers HoldTheTailsPi3B() {
    std::string metrics;
    EXPECT_TRUE(Poll(
        [&] {
          metrics = HttpGet(metrics_port_, "/metrics").second;
          std::istringstream lines(metrics);
          std::string line;
          while (std::getline(lines, line)) {
            if (line.rfind("ballast_node_leases_total{", 0) == 0 &&
                line.find("weightedjob=\"tail\"") != std::string::npos &&
                line.find("node=\"pi3b-0\"") != std::string::npos) {
              return std::atof(line.c_str() + line.rfind(' ') + 1) >= 1;
            }
          }
          return false;
        },
        seconds(90)))
        << "no lease of pi3b-0 in the operator's /metrics:\n"
        << metrics << Describe("tail");
    return HoldWorkers("tail", {"pi3b-0"});
  }

  // The Workload of job `name` (labelled with it), when there is one.
  std::optional<json> WorkloadOf(const std::string& name) {
    kube::ListOptions options;
    options.label_selector = "ballast.io/job=" + name;
    auto list = client_->List(kWorkloads.In(ns_), options);
    if (!list.ok() || list->items.empty()) return std::nullopt;
    return list->items[0];
  }

  static bool WorkloadCondition(const json& workload, const std::string& type) {
    for (const auto& c : workload.value("/status/conditions"_json_pointer, json::array())) {
      if (c.value("type", "") == type) return c.value("status", "") == "True";
    }
    return false;
  }

  std::vector<std::string> PodNodes(const std::string& job) {
    std::vector<std::string> nodes;
    for (const json& pod : JobPods(job)) {
      nodes.push_back(pod.value("/metadata/labels/ballast.io~1node"_json_pointer, ""));
    }
    std::sort(nodes.begin(), nodes.end());
    return nodes;
  }

  std::vector<ResourceRef> cluster_objects_;
  std::string flavor_;
  uint16_t metrics_port_ = 0;  // the operator's /metrics
};

TEST_F(KueueTest, TwoJobsAgainstQuotaForOneRunOneAfterTheOther) {
  ASSERT_NO_FATAL_FAILURE(MakeQueues("300m"));
  CreateJob(QueuedJob("first", kMidRunLimit));
  ASSERT_TRUE(WaitForJob(
      "first", [](const json& job) { return PhaseOf(job) == "Running"; }, seconds(90),
      "the first job to be admitted and run"));
  CreateJob(QueuedJob("second", kSmallLimit));
  // The second waits, with no pods, its condition naming the queue.
  auto waiting = WaitForJob(
      "second",
      [](const json& job) {
        const json admitted = ConditionOf(job, "Admitted");
        return admitted.value("reason", "") == "WaitingForQueue" &&
               admitted.value("message", "").find("LocalQueue jobs") != std::string::npos;
      },
      seconds(30), "the second job to wait for Kueue");
  ASSERT_TRUE(waiting);
  EXPECT_EQ(PhaseOf(*waiting), "Pending");
  auto second_workload = WorkloadOf("second");
  ASSERT_TRUE(second_workload);
  EXPECT_FALSE(WorkloadCondition(*second_workload, "QuotaReserved"));
  EXPECT_EQ(second_workload->value("/spec/podSets/0/count"_json_pointer, 0), 3);
  EXPECT_TRUE(JobPods("second").empty()) << "held with no pods";

  // The first finishes and hands its quota back; the second runs then.
  auto first = WaitSucceeded("first");
  ASSERT_TRUE(first);
  auto second = WaitSucceeded("second");
  ASSERT_TRUE(second);
  ExpectCompleteAndExact(*first, kMidRunLimit);
  ExpectCompleteAndExact(*second, kSmallLimit);
  for (const char* name : {"first", "second"}) {
    auto workload = WorkloadOf(name);
    ASSERT_TRUE(workload);
    EXPECT_TRUE(WorkloadCondition(*workload, "Finished")) << workload->dump(2);
  }
  EXPECT_EQ(ConditionOf(*second, "Admitted").value("status", ""), "True");

  // Deleting a job deletes its Workload (its owner reference).
  ASSERT_TRUE(client_->Delete(kJobs.In(ns_).Named("first")).ok());
  EXPECT_TRUE(Poll([&] { return !WorkloadOf("first"); }, seconds(60)))
      << "the Workload outlived its job";
}

TEST_F(KueueTest, AHigherPriorityJobPreemptsARunningOneThatResumesFromItsCheckpoint) {
  ASSERT_NO_FATAL_FAILURE(MakeQueues("300m"));
  for (const auto& [name, value] : {std::pair{"low", 100}, std::pair{"high", 1000}}) {
    ASSERT_NO_FATAL_FAILURE(
        CreateCluster(kPriorityClasses, {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                                         {"kind", "WorkloadPriorityClass"},
                                         {"metadata", {{"name", ns_ + "-" + name}}},
                                         {"value", value}}));
  }
  constexpr uint64_t kLowLimit = kMidRunLimit;
  CreateJob(HeldJob(QueuedJob("low", kLowLimit, ns_ + "-low")));
  ASSERT_TRUE(WaitCheckpointed("low"));
  // Held until Kueue's eviction stops it: it cannot end first.
  HeldWorkers held = HoldWorkers("low");
  CreateJob(QueuedJob("high", kSmallLimit, ns_ + "-high"));
  EXPECT_TRUE(Poll([&] { return Stopping("low"); }, seconds(60))) << Describe("low");
  held.Release();

  // Kueue evicts the low job: it stops with its checkpoint, no pods left.
  auto evicted = WaitForJob(
      "low",
      [](const json& job) {
        return PhaseOf(job) == "Suspended" &&
               ConditionOf(job, "Suspended").value("reason", "") == "Evicted";
      },
      seconds(60), "the low job to be evicted");
  ASSERT_TRUE(evicted);
  auto high = WaitSucceeded("high");
  ASSERT_TRUE(high);
  ExpectCompleteAndExact(*high, kSmallLimit);
  const auto suspended = GetJob("low");
  ASSERT_TRUE(suspended);
  const uint64_t kept = CheckpointItems(*suspended);
  EXPECT_GT(kept, 0u) << "the checkpoint is kept";

  // Admitted again, it resumes from the checkpoint and its result is exact.
  auto low = WaitSucceeded("low", seconds(240));
  ASSERT_TRUE(low);
  ExpectCompleteAndExact(*low, kLowLimit);
  for (const char* reason : {"Evicted", "Admitted", "Resumed"}) {
    EXPECT_TRUE(WaitEvent("low", reason)) << "no " << reason << " event of the low job";
  }
  // "resumed from the checkpoint at N of 300000 items", N > 0.
  const auto resumed = FindEvent("low", "Resumed");
  ASSERT_TRUE(resumed);
  const std::string message = resumed->value("message", "");
  EXPECT_NE(message.find("resumed from the checkpoint at "), std::string::npos) << message;
  EXPECT_EQ(message.find("checkpoint at 0 of"), std::string::npos) << message;
  auto workload = WorkloadOf("low");
  ASSERT_TRUE(workload);
  EXPECT_TRUE(WorkloadCondition(*workload, "Finished"));
}

// spec.suspend on a queued job hands its quota back (its Workload
// deactivated) and another job runs meanwhile; resumed, it is admitted again
// and carries on from its checkpoint.
TEST_F(KueueTest, ASuspendedJobGivesItsQuotaBackAndResumesWhenAdmittedAgain) {
  ASSERT_NO_FATAL_FAILURE(MakeQueues("300m"));
  constexpr uint64_t kLongLimit = kMidRunLimit;
  CreateJob(HeldJob(QueuedJob("paused", kLongLimit)));
  ASSERT_TRUE(WaitCheckpointed("paused"));
  HeldWorkers held = HoldWorkers("paused");  // until the suspension stops it
  ASSERT_TRUE(
      client_->MergePatch(kJobs.In(ns_).Named("paused"), {{"spec", {{"suspend", true}}}}).ok());
  EXPECT_TRUE(Poll([&] { return Stopping("paused"); }, seconds(60))) << Describe("paused");
  held.Release();
  ASSERT_TRUE(WaitForJob(
      "paused", [](const json& job) { return PhaseOf(job) == "Suspended"; }, seconds(60),
      "the job to be suspended"));
  EXPECT_TRUE(Poll(
      [&] {
        auto workload = WorkloadOf("paused");
        return workload && !workload->value("/spec/active"_json_pointer, true) &&
               !WorkloadCondition(*workload, "QuotaReserved");
      },
      seconds(30)))
      << "the suspended job's Workload keeps its quota";
  CreateJob(QueuedJob("meanwhile", kSmallLimit));
  auto meanwhile = WaitSucceeded("meanwhile");
  ASSERT_TRUE(meanwhile);
  ExpectCompleteAndExact(*meanwhile, kSmallLimit);
  EXPECT_EQ(PhaseOf(*GetJob("paused")), "Suspended");

  ASSERT_TRUE(
      client_->MergePatch(kJobs.In(ns_).Named("paused"), {{"spec", {{"suspend", false}}}}).ok());
  auto paused = WaitSucceeded("paused", seconds(240));
  ASSERT_TRUE(paused);
  ExpectCompleteAndExact(*paused, kLongLimit);
  EXPECT_TRUE(WaitEvent("paused", "Resumed"));
}

TEST_F(KueueTest, AFlavorRestrictsTheNodesAndThePodsLeftOutAreReclaimable) {
  // Of seed 000's three boards the flavor admits to the two Pi 4B.
  ASSERT_NO_FATAL_FAILURE(MakeQueues("300m", {{"ballast.io/board", "pi-4b"}}));
  CreateJob(QueuedJob("fast", kMidRunLimit));
  ASSERT_TRUE(WaitForJob(
      "fast", [](const json& job) { return PhaseOf(job) == "Running"; }, seconds(90),
      "the job to be admitted and run"));
  EXPECT_EQ(PodNodes("fast"), (std::vector<std::string>{"pi4b-0", "pi4b-1"}));
  // Admitted for three workers, it runs two: one pod's quota goes back.
  json workload;
  EXPECT_TRUE(Poll(
      [&] {
        auto found = WorkloadOf("fast");
        if (found) workload = *found;
        return found && found->value("/status/reclaimablePods/0/count"_json_pointer, 0) == 1;
      },
      seconds(30)))
      << workload.dump(2);
  auto done = WaitSucceeded("fast");
  ASSERT_TRUE(done);
  ExpectCompleteAndExact(*done, kMidRunLimit);
  std::vector<std::string> rows;
  for (const auto& row : StatusOf(*done).value("nodes", json::array())) rows.push_back(row["name"]);
  EXPECT_EQ(rows, (std::vector<std::string>{"pi4b-0", "pi4b-1"}));
  EXPECT_NE(ConditionOf(*done, "Admitted").value("message", "").find(flavor_), std::string::npos);
}

// docs/operator.md, "Kueue", the row "running": a queued job's session
// releases idle workers in its tail, so their quota returns before the job
// ends. Under `equal` the Pi 3B (0.2 of a core) gets as many items as each
// Pi 4B (0.5): the Pi 4B finish their shares first and wait for it (held
// until the release is checked). The first of them to ask is released (two
// others stay), exits 0 and its pod Succeeds: reclaimable while the job still
// runs; the second stays to the end.
TEST_F(KueueTest, AWorkerIdleInTheTailIsReleasedAndItsPodReclaimableWhileTheJobRuns) {
  ASSERT_NO_FATAL_FAILURE(CreateTailJob());
  HeldWorkers held = HoldTheTailsPi3B();
  json workload;
  std::string phase_then;
  const bool reclaimed = Poll(
      [&] {
        auto found = WorkloadOf("tail");
        if (!found) return false;
        workload = *found;
        if (found->value("/status/reclaimablePods/0/count"_json_pointer, 0) < 1) return false;
        // Read after the Workload: Running now was Running then.
        auto now = GetJob("tail");
        phase_then = now ? PhaseOf(*now) : "";
        return true;
      },
      seconds(150));
  ASSERT_TRUE(reclaimed) << workload.dump(2) << "\n" << Describe("tail");
  EXPECT_EQ(phase_then, "Running") << "reclaimable only once the job was over\n"
                                   << Describe("tail");
  EXPECT_EQ(workload.value("/status/reclaimablePods/0/count"_json_pointer, 0), 1)
      << "two workers stay to take over a lost one's items";
  const auto reclaimed_at = Clock::now();
  std::string released;
  for (const json& pod : JobPods("tail")) {
    if (pod.value("/status/phase"_json_pointer, "") != "Succeeded") continue;
    released += " " + pod.value("/metadata/labels/ballast.io~1node"_json_pointer, "");
  }
  EXPECT_FALSE(released.empty()) << Describe("tail");

  held.Release();
  auto done = WaitSucceeded("tail", seconds(240));
  ASSERT_TRUE(done);
  std::printf("released:%s; reclaimable %.1f s before the job succeeded (makespan %.1f s)\n",
              released.c_str(), std::chrono::duration<double>(Clock::now() - reclaimed_at).count(),
              StatusOf(*done).value("makespanSeconds", 0.0));
  ExpectCompleteAndExact(*done, kTailLimit);
  EXPECT_EQ(StatusOf(*done).value("failedPods", 0), 0) << "a released worker is no failure";
  EXPECT_FALSE(FindEvent("tail", "WorkerFailed")) << Describe("tail");
  ASSERT_TRUE(Poll(
      [&] {
        auto found = WorkloadOf("tail");
        return found && WorkloadCondition(*found, "Finished");
      },
      seconds(30)))
      << "the Workload is not Finished";
  // Nothing left behind: the job deleted, its pods and Workload go with it.
  ASSERT_TRUE(client_->Delete(kJobs.In(ns_).Named("tail")).ok());
  EXPECT_TRUE(Poll([&] { return JobPods("tail").empty() && !WorkloadOf("tail"); }, seconds(60)))
      << Describe("tail");
}

// Issue 44: the workers released in a queued job's tail survive an operator
// restart. The operator is killed (SIGKILL: no last write) once the job's
// status seals the release beside its checkpoint, the released pod
// Succeeded and its quota is reclaimable; the restarted one resumes on the
// workers that stay: no pod is made again (every pod is one from before the
// kill), none counts as failed, reclaimablePods stays, the result is exact.
TEST_F(KueueTest, AnOperatorRestartedAfterAReleaseMakesNoPodAgainAndKeepsItReclaimable) {
  ASSERT_NO_FATAL_FAILURE(CreateTailJob());
  HeldWorkers held = HoldTheTailsPi3B();  // until the operator is restarted
  const auto released_of = [](const json& job) {
    return StatusOf(job).value("/checkpoint/claims/releasedNodes"_json_pointer, json::array());
  };
  // The release sealed in status, its pod Succeeded and counted by Kueue.
  json released;
  json workload;
  const bool ready_to_kill = Poll(
      [&] {
        auto now = GetJob("tail");
        if (!now || PhaseOf(*now) != "Running" || released_of(*now).empty()) return false;
        released = released_of(*now);
        for (const json& pod : JobPods("tail")) {
          const std::string node = pod.value("/metadata/labels/ballast.io~1node"_json_pointer, "");
          const bool done = pod.value("/status/phase"_json_pointer, "") == "Succeeded";
          if (!done && std::find(released.begin(), released.end(), node) != released.end()) {
            return false;
          }
        }
        auto found = WorkloadOf("tail");
        if (found) workload = *found;
        return found && found->value("/status/reclaimablePods/0/count"_json_pointer, 0) >= 1;
      },
      seconds(150));
  ASSERT_TRUE(ready_to_kill) << released.dump() << "\n"
                             << workload.dump(2) << "\n"
                             << Describe("tail");
  const int reclaimable = workload.value("/status/reclaimablePods/0/count"_json_pointer, 0);

  operator_->Kill(SIGKILL);
  const auto at_kill = GetJob("tail");
  ASSERT_TRUE(at_kill);
  ASSERT_EQ(PhaseOf(*at_kill), "Running") << "the job ended before the kill";
  std::map<std::string, std::string> pods_at_kill;  // name -> uid
  for (const json& pod : JobPods("tail")) {
    pods_at_kill[pod["metadata"]["name"]] = pod["metadata"]["uid"];
  }
  ASSERT_EQ(pods_at_kill.size(), 3u) << Describe("tail");
  const auto killed_at = Clock::now();
  ASSERT_NO_FATAL_FAILURE(RestartWith({"--kueue"}));
  held.Release();

  // Until the job succeeds: only the pods from before the kill, the
  // released one still Succeeded; Kueue's count never below what it was.
  std::string trouble;
  std::optional<json> done;
  const bool finished = Poll(
      [&] {
        for (const json& pod : JobPods("tail")) {
          const std::string name = pod["metadata"]["name"];
          const std::string node = pod.value("/metadata/labels/ballast.io~1node"_json_pointer, "");
          if (pods_at_kill.count(name) == 0 || pods_at_kill[name] != pod["metadata"]["uid"]) {
            trouble = "pod " + name + " was made again";
          }
          const bool was_released =
              std::find(released.begin(), released.end(), node) != released.end();
          if (was_released && pod.value("/status/phase"_json_pointer, "") != "Succeeded") {
            trouble = "the released pod " + name + " is not Succeeded";
          }
        }
        auto found = WorkloadOf("tail");
        if (found &&
            found->value("/status/reclaimablePods/0/count"_json_pointer, 0) < reclaimable) {
          trouble = "reclaimablePods went down: " + found->dump();
        }
        done = GetJob("tail");
        return !trouble.empty() || (done && PhaseOf(*done) == "Succeeded");
      },
      seconds(240));
  ASSERT_TRUE(finished) << Describe("tail");
  ASSERT_EQ(trouble, "") << Describe("tail");
  ASSERT_TRUE(done);
  std::printf(
      "released: %s; the operator killed with %llu items in status, restarted; the job "
      "succeeded %.1f s later (makespan %.1f s)\n",
      released.dump().c_str(), static_cast<unsigned long long>(CompletedOf(*at_kill)),
      std::chrono::duration<double>(Clock::now() - killed_at).count(),
      StatusOf(*done).value("makespanSeconds", 0.0));
  ExpectCompleteAndExact(*done, kTailLimit);
  EXPECT_EQ(StatusOf(*done).value("failedPods", 0), 0) << "a released worker is no failure";
  EXPECT_FALSE(FindEvent("tail", "WorkerFailed")) << Describe("tail");
  EXPECT_TRUE(WaitEvent("tail", "Resumed")) << "the restarted operator resumed the job";
  uint64_t items = 0;
  for (const auto& row : StatusOf(*done).value("nodes", json::array())) {
    items += row.value("items", uint64_t{0});
  }
  EXPECT_GE(items, kTailLimit / 2) << "the released worker's row is kept";
  ASSERT_TRUE(Poll(
      [&] {
        auto found = WorkloadOf("tail");
        if (found) workload = *found;
        return found && WorkloadCondition(*found, "Finished");
      },
      seconds(30)))
      << "the Workload is not Finished";
  EXPECT_GE(workload.value("/status/reclaimablePods/0/count"_json_pointer, 0), reclaimable);
  // Nothing left behind: the job deleted, its pods and Workload go with it.
  ASSERT_TRUE(client_->Delete(kJobs.In(ns_).Named("tail")).ok());
  EXPECT_TRUE(Poll([&] { return JobPods("tail").empty() && !WorkloadOf("tail"); }, seconds(60)))
      << Describe("tail");
}

// Issue 61, Kueue's Workload touched by hand mid-job, against the real
// Kueue: deleted, the job stops with its checkpoint, makes a new Workload,
// is admitted again and ends exact (the decision alone:
// DecideKueueTest.AWorkloadMadeAgainForgetsTheReleasedWorkers).
TEST_F(KueueTest, AWorkloadDeletedByHandMidJobIsMadeAgainAndTheJobEndsExact) {
  ASSERT_NO_FATAL_FAILURE(MakeQueues("300m"));
  constexpr uint64_t kLongLimit = kMidRunLimit;
  CreateJob(HeldJob(QueuedJob("redo", kLongLimit)));
  ASSERT_TRUE(WaitCheckpointed("redo"));
  HeldWorkers held = HoldWorkers("redo");  // until the Workload's deletion stops it
  const auto first = WorkloadOf("redo");
  ASSERT_TRUE(first);
  const std::string first_uid = first->value("/metadata/uid"_json_pointer, "");
  ASSERT_TRUE(client_->Delete(kWorkloads.In(ns_).Named((*first)["metadata"]["name"])).ok());
  EXPECT_TRUE(Poll([&] { return Stopping("redo"); }, seconds(60))) << Describe("redo");
  held.Release();
  json workload;
  EXPECT_TRUE(Poll(
      [&] {
        auto found = WorkloadOf("redo");
        if (found) workload = *found;
        return found && found->value("/metadata/uid"_json_pointer, "") != first_uid &&
               WorkloadCondition(*found, "Admitted");
      },
      seconds(120)))
      << "no new Workload admitted: " << workload.dump(2) << "\n"
      << Describe("redo");
  auto done = WaitSucceeded("redo", seconds(240));
  ASSERT_TRUE(done) << Describe("redo");
  ExpectCompleteAndExact(*done, kLongLimit);
  EXPECT_TRUE(WaitEvent("redo", "Resumed")) << Describe("redo");
}

// Issue 61: Workload deactivated by hand mid-job (spec.active false, as
// Kueue's own requeue limit does): Kueue evicts it and the job stops with its
// checkpoint; the Workload is the job's, so the operator activates it again
// (a job is paused with its spec.suspend), and the job ends exact.
TEST_F(KueueTest, AWorkloadDeactivatedByHandMidJobIsActivatedAgainAndTheJobEndsExact) {
  ASSERT_NO_FATAL_FAILURE(MakeQueues("300m"));
  constexpr uint64_t kLongLimit = kMidRunLimit;
  CreateJob(HeldJob(QueuedJob("poked", kLongLimit)));
  ASSERT_TRUE(WaitCheckpointed("poked"));
  HeldWorkers held = HoldWorkers("poked");  // until Kueue's eviction stops it
  const auto found = WorkloadOf("poked");
  ASSERT_TRUE(found);
  ASSERT_TRUE(client_
                  ->MergePatch(kWorkloads.In(ns_).Named((*found)["metadata"]["name"]),
                               {{"spec", {{"active", false}}}})
                  .ok());
  EXPECT_TRUE(Poll([&] { return Stopping("poked"); }, seconds(60))) << Describe("poked");
  held.Release();
  auto done = WaitSucceeded("poked", seconds(240));
  ASSERT_TRUE(done) << Describe("poked");
  ExpectCompleteAndExact(*done, kLongLimit);
  EXPECT_TRUE(FindEvent("poked", "Evicted")) << Describe("poked");
}

// Issue 61: the LocalQueue deleted under an admitted job. Kueue keeps the
// admission (the ClusterQueue's quota stays reserved): the job runs on and
// ends exact, and its Workload is Finished.
TEST_F(KueueTest, ALocalQueueDeletedMidJobLeavesTheAdmittedJobToEndExact) {
  ASSERT_NO_FATAL_FAILURE(MakeQueues("300m"));
  CreateJob(QueuedJob("orphan", kMidRunLimit));
  ASSERT_TRUE(WaitCheckpointed("orphan"));
  ASSERT_TRUE(client_->Delete(kLocalQueues.In(ns_).Named("jobs")).ok());
  auto done = WaitSucceeded("orphan", seconds(240));
  ASSERT_TRUE(done) << Describe("orphan");
  ExpectCompleteAndExact(*done, kMidRunLimit);
  json workload;
  EXPECT_TRUE(Poll(
      [&] {
        auto found = WorkloadOf("orphan");
        if (found) workload = *found;
        return found && WorkloadCondition(*found, "Finished");
      },
      seconds(30)))
      << workload.dump(2);
}

}  // namespace
}  // namespace ballast::operator_e2e
