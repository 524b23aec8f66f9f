// `ballast operator` end to end when the API server refuses a job's worker
// pods (issue 46; docs/operator.md, "Refused worker pods"): a namespace
// enforcing the `restricted` PodSecurity level and a hostPath volume, a
// template naming a PriorityClass that does not exist, and a ResourceQuota
// of one pod. The job says why at once (condition WorkersRefused, a Warning
// event quoting the API server), the first two fail after
// --refused-pod-timeout and the quota is waited for; the pod creates the API
// server refused are counted from its own metrics
// (apiserver_request_total), before and after, and printed with their rate.
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>

#include "tests/operator/e2e/operator_e2e_support.h"

namespace ballast::operator_e2e {
namespace {

// Pod creates the API server has answered with 403 since it started, by its
// own counter: apiserver_request_total{verb="POST",resource="pods",code="403"}
// (summed over its other labels). nullopt when /metrics cannot be read.
std::optional<uint64_t> RefusedPodCreates() {
  auto [code, text] = Shell("kubectl get --raw /metrics");
  if (code != 0) return std::nullopt;
  uint64_t total = 0;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("apiserver_request_total{", 0) != 0) continue;
    bool matches = true;
    for (const char* label :
         {"verb=\"POST\"", "resource=\"pods\"", "code=\"403\"", "subresource=\"\""}) {
      matches &= line.find(label) != std::string::npos;
    }
    if (matches) total += static_cast<uint64_t>(std::stod(line.substr(line.rfind(' ') + 1)));
  }
  return total;
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class RefusedPodsTest : public OperatorTest {
 protected:
  // A primes job whose worker pods carry `pod_spec` merged into the template.
  static json JobWithPodSpec(const std::string& name, const json& pod_spec) {
    json job = PrimesJob(name, kSmallLimit);
    job["spec"]["template"] = {{"spec", pod_spec}};
    return job;
  }

  // Applies `job`, whose pods the API server refuses with `reason`
  // (create_refusals.h) and a message holding each of `words`: WorkersRefused
  // says so at once, the job fails with the server's message within
  // --refused-pod-timeout (5 s here) and a few seconds, with a Warning event
  // quoting it, no pod made, and few creates sent. Prints the figures.
  void ExpectRefusedAndFailed(const json& job, const std::string& reason,
                              const std::vector<std::string>& words) {
    const std::string name = job["metadata"]["name"];
    const auto before = RefusedPodCreates();
    ASSERT_TRUE(before) << "cannot read the API server's /metrics";
    const auto start = Clock::now();
    ASSERT_FALSE(CreateJob(job).is_null());
    auto refused = WaitForJob(
        name,
        [&](const json& j) {
          return ConditionOf(j, "WorkersRefused").value("reason", "") == reason;
        },
        seconds(20), "condition WorkersRefused " + reason);
    ASSERT_TRUE(refused);
    const double said = SecondsSince(start);
    EXPECT_EQ(ConditionOf(*refused, "WorkersRefused").value("status", ""), "True");
    auto failed = WaitForJob(
        name, [](const json& j) { return PhaseOf(j) == "Failed"; }, seconds(60),
        "job " + name + " to fail");
    ASSERT_TRUE(failed);
    const double ended = SecondsSince(start);
    const json condition = ConditionOf(*failed, "Failed");
    EXPECT_EQ(condition.value("reason", ""), "WorkerPodRefused") << condition.dump();
    const std::string message = condition.value("message", "");
    for (const std::string& word : words) {
      EXPECT_NE(message.find(word), std::string::npos) << word << " not in: " << message;
    }
    const auto event = WaitEvent(name, reason);
    ASSERT_TRUE(event);
    EXPECT_EQ(event->value("type", ""), "Warning");
    for (const std::string& word : words) {
      EXPECT_NE(event->value("message", "").find(word), std::string::npos) << event->dump();
    }
    // Nothing is sent once the job failed.
    std::this_thread::sleep_for(seconds(3));
    const auto after = RefusedPodCreates();
    ASSERT_TRUE(after);
    const uint64_t creates = *after - *before;
    std::cout << "refused " << reason << ": condition after " << said << " s, Failed after "
              << ended << " s, " << creates << " pod creates refused ("
              << static_cast<double>(creates) / ended << " per second)\n";
    // Three pods, then one probe at 1 and 3 s; the one at 7 s fails it.
    EXPECT_GE(creates, 3u);
    EXPECT_LE(creates, 8u);
    EXPECT_LT(ended, 20) << "--refused-pod-timeout 5 and a backoff of 1, 2, 4 s";
    EXPECT_TRUE(JobPods(name).empty());
  }
};

// issue 46: ~290 refused creates a second, the job Pending with no word of why.
TEST_F(RefusedPodsTest, PodSecurityRefusalFailsTheJobWithTheServersMessageAfterAFewCreates) {
  RestartWith({"--refused-pod-timeout", "5"});
  auto labelled = client_->MergePatch(
      kube::Namespaces().Named(ns_),
      {{"metadata", {{"labels", {{"pod-security.kubernetes.io/enforce", "restricted"}}}}}});
  ASSERT_TRUE(labelled.ok()) << labelled.status().ToString();
  // Ballast's defaults meet `restricted`; a hostPath volume does not. (A
  // privileged container is refused as invalid before admission: Ballast
  // sets allowPrivilegeEscalation false, which privileged contradicts.)
  const json host_path = {
      {"containers", json::array({{{"name", "worker"}}})},
      {"volumes", json::array({{{"name", "host"}, {"hostPath", {{"path", "/tmp"}}}}})}};
  ExpectRefusedAndFailed(JobWithPodSpec("host-path", host_path), "PodSecurity",
                         {"violates PodSecurity \"restricted:latest\"", "hostPath"});
}

TEST_F(RefusedPodsTest, AMissingPriorityClassFailsTheJobWithTheServersMessageAfterAFewCreates) {
  RestartWith({"--refused-pod-timeout", "5"});
  const json no_class = {{"containers", json::array({{{"name", "worker"}}})},
                         {"priorityClassName", "ballast-no-such"}};
  ExpectRefusedAndFailed(JobWithPodSpec("no-class", no_class), "PriorityClassNotFound",
                         {"no PriorityClass with name ballast-no-such was found"});
}

// A quota of one pod: the job runs on one worker, says it waits for quota,
// and finishes exactly, its refused creates backed off.
TEST_F(RefusedPodsTest, AQuotaOfOnePodIsWaitedForAndTheJobFinishesExactly) {
  const ResourceRef quotas = {"", "v1", "resourcequotas", true, ns_, ""};
  auto created = client_->Create(quotas, {{"apiVersion", "v1"},
                                          {"kind", "ResourceQuota"},
                                          {"metadata", {{"name", "pods-1"}}},
                                          {"spec", {{"hard", {{"pods", "1"}}}}}});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  // The quota admits pods once the controller-manager has written its status.
  ASSERT_TRUE(Poll(
      [&] {
        auto quota = client_->Get(quotas.Named("pods-1"));
        return quota.ok() && quota->value("/status/hard/pods"_json_pointer, "") == "1";
      },
      seconds(30)));
  const auto before = RefusedPodCreates();
  ASSERT_TRUE(before);
  const std::string name = "quota";
  const auto start = Clock::now();
  ASSERT_FALSE(CreateJob(PrimesJob(name, kSmallLimit)).is_null());
  std::string waiting;  // the WorkersRefused message seen while it ran
  size_t most_running = 0;
  auto done = WaitForJob(
      name,
      [&](const json& job) {
        const json condition = ConditionOf(job, "WorkersRefused");
        if (condition.value("reason", "") == "QuotaExceeded")
          waiting = condition.value("message", "");
        most_running = std::max(most_running, RunningPods(name));
        return PhaseOf(job) == "Succeeded" || PhaseOf(job) == "Failed";
      },
      seconds(240), "job quota to finish");
  ASSERT_TRUE(done);
  const double ended = SecondsSince(start);
  ExpectCompleteAndExact(*done, kSmallLimit);
  EXPECT_EQ(waiting.rfind("waiting for quota: ", 0), 0u) << waiting;
  EXPECT_NE(waiting.find("exceeded quota: pods-1"), std::string::npos) << waiting;
  EXPECT_LE(most_running, 1u);
  const auto event = WaitEvent(name, "QuotaExceeded");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->value("type", ""), "Warning");
  const auto after = RefusedPodCreates();
  ASSERT_TRUE(after);
  const uint64_t creates = *after - *before;
  std::cout << "refused QuotaExceeded: Succeeded after " << ended << " s, " << creates
            << " pod creates refused (" << static_cast<double>(creates) / ended << " per second)\n";
  // Two of the first three, then one probe at 1, 3, 7, 15, ... s.
  EXPECT_LE(creates, 2 + static_cast<uint64_t>(std::ceil(std::log2(ended + 1))) + 1);
}

}  // namespace
}  // namespace ballast::operator_e2e
