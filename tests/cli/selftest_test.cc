// `ballast selftest`'s pure part (cli/selftest.h): the job it submits is one
// the operator accepts, its own sieve agrees with the workers' reference
// kernel, and the verdict on a job says exactly what differed.
#include "cli/selftest.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "operator/api/weighted_job.h"
#include "tests/support/primes_workload.h"
#include "worker/kernels/reference.h"

namespace ballast::cli::selftest {
namespace {

using nlohmann::json;

json JobWithStatus(json status) {
  json job = Job(Spec{});
  job["status"] = std::move(status);
  return job;
}

TEST(SelftestTest, ExpectedPrimesAgreesWithTheWorkersReferenceKernel) {
  for (uint64_t limit : {2ULL, 3ULL, 10ULL, 97ULL, 20000ULL, 300000ULL}) {
    auto reference = kernels::ReferenceResult(testing::PrimesWorkload(limit));
    ASSERT_TRUE(reference.ok()) << reference.status().ToString();
    EXPECT_EQ(ExpectedPrimes(limit), *reference) << "limit " << limit;
  }
  EXPECT_EQ(ExpectedPrimes(300000).primes().count, 25997u);  // seed 000's figure
  EXPECT_EQ(ExpectedPrimes(2).primes().count, 0u);
}

TEST(SelftestTest, JobIsAWeightedJobTheOperatorAccepts) {
  Spec spec;
  spec.ns = "ballast-system";
  spec.name = "ballast-selftest";
  spec.limit = 50000;
  spec.profile = "boards";
  spec.node_selector = {{"ballast.io/pool", "seed000"}};
  spec.timeout_seconds = 120;
  const json job = Job(spec);
  EXPECT_EQ(job["apiVersion"], "ballast.io/v1alpha1");
  EXPECT_EQ(job["kind"], "WeightedJob");
  EXPECT_EQ(job["metadata"]["namespace"], "ballast-system");
  const auto parsed = api::ParseWeightedJobSpec(job["spec"], "ballast-selftest");
  ASSERT_TRUE(parsed.spec.has_value()) << parsed.error.status.ToString();
  EXPECT_EQ(parsed.spec->job.workload.primes.limit, 50000u);
  EXPECT_EQ(parsed.spec->job.profile, "boards");
  EXPECT_EQ(parsed.spec->job.active_deadline_s, 120.0);
  EXPECT_EQ(parsed.spec->pod_template.node_selector, spec.node_selector);
  EXPECT_TRUE(parsed.ttl_seconds_after_finished.has_value());
  EXPECT_FALSE(Job(Spec{})["spec"].contains("nodeSelector"));
}

TEST(SelftestTest, ValidateNamesTheFlagThatIsWrong) {
  const auto message = [](auto change) {
    Spec spec;
    change(spec);
    return Validate(spec).ToString();
  };
  EXPECT_TRUE(Validate(Spec{}).ok());
  EXPECT_NE(message([](Spec& s) { s.ns = "Team/A"; }).find("--namespace: expected a DNS-1123"),
            std::string::npos);
  EXPECT_NE(message([](Spec& s) { s.name = "a.b"; }).find("--name: expected a DNS-1123 label"),
            std::string::npos);
  EXPECT_NE(message([](Spec& s) { s.profile = ""; }).find("--profile:"), std::string::npos);
  EXPECT_NE(message([](Spec& s) {
              s.limit = 1;
            }).find("--limit: expected an integer in [2, 100000000], got 1"),
            std::string::npos);
  EXPECT_NE(message([](Spec& s) { s.timeout_seconds = 0; }).find("--timeout: expected seconds > 0"),
            std::string::npos);
  EXPECT_NE(message([](Spec& s) {
              s.node_selector = {{"", "x"}};
            }).find("--node-selector: expected KEY=VALUE, got '=x'"),
            std::string::npos);
}

TEST(SelftestTest, SucceededWithTheExactResultPasses) {
  const auto expected = ExpectedPrimes(20000);
  const Assessment verdict =
      Assess(JobWithStatus({{"phase", "Succeeded"}, {"result", expected.ToJson()}}), expected);
  EXPECT_EQ(verdict.verdict, Verdict::kPassed);
  EXPECT_EQ(verdict.message,
            "2262 primes, checksum 0x0000000001430bf7, as the sieve here counts them");
}

// The nodes that ran it come from the finished job's rows, by name, the
// first six listed: what a short job's progress lines may never show.
TEST(SelftestTest, PassingLineNamesTheNodesThatRanIt) {
  const auto expected = ExpectedPrimes(20000);
  json status = {{"phase", "Succeeded"},
                 {"result", expected.ToJson()},
                 {"nodes", json::array({{{"name", "pi-b"}}, {{"name", "pi-a"}}})}};
  EXPECT_EQ(Assess(JobWithStatus(status), expected).message,
            "2262 primes, checksum 0x0000000001430bf7, as the sieve here counts them, "
            "on 2 nodes (pi-a, pi-b)");
  status["nodes"] = json::array({{{"name", "pi-a"}}});
  EXPECT_NE(Assess(JobWithStatus(status), expected).message.find(", on 1 node (pi-a)"),
            std::string::npos);
  status["nodes"] = json::array();
  for (int n = 8; n >= 1; --n) status["nodes"].push_back({{"name", fmt::format("n{}", n)}});
  EXPECT_NE(Assess(JobWithStatus(status), expected)
                .message.find(", on 8 nodes (n1, n2, n3, n4, n5, n6 and 2 more)"),
            std::string::npos);
}

TEST(SelftestTest, AnotherCountOrChecksumFailsSayingWhatDiffered) {
  const auto expected = ExpectedPrimes(20000);
  const auto off_by_one = workload::Result::Primes(2261, expected.primes().sum - 19997);
  Assessment verdict =
      Assess(JobWithStatus({{"phase", "Succeeded"}, {"result", off_by_one.ToJson()}}), expected);
  EXPECT_EQ(verdict.verdict, Verdict::kFailed);
  EXPECT_EQ(verdict.message.rfind("the job's result differs from the sieve's here: ", 0), 0u)
      << verdict.message;
  EXPECT_NE(verdict.message.find("count: expected 2262, got 2261"), std::string::npos);
  EXPECT_NE(verdict.message.find("checksum (sum of the primes mod 2^64): expected "
                                 "0x0000000001430bf7, got 0x000000000142bdda"),
            std::string::npos)
      << verdict.message;

  const auto same_count = workload::Result::Primes(2262, 1);
  verdict =
      Assess(JobWithStatus({{"phase", "Succeeded"}, {"result", same_count.ToJson()}}), expected);
  EXPECT_EQ(verdict.verdict, Verdict::kFailed);
  EXPECT_EQ(verdict.message.find("count:"), std::string::npos) << verdict.message;
  EXPECT_NE(verdict.message.find("got 0x0000000000000001"), std::string::npos) << verdict.message;
}

TEST(SelftestTest, AMissingOrMalformedResultFailsNamingIt) {
  const auto expected = ExpectedPrimes(100);
  Assessment verdict = Assess(JobWithStatus({{"phase", "Succeeded"}}), expected);
  EXPECT_EQ(verdict.verdict, Verdict::kFailed);
  EXPECT_EQ(verdict.message, "the job Succeeded without status.result");
  verdict = Assess(
      JobWithStatus({{"phase", "Succeeded"}, {"result", {{"matmul", {{"blocks", 1}}}}}}), expected);
  EXPECT_EQ(verdict.verdict, Verdict::kFailed);
  EXPECT_EQ(verdict.message.rfind("status.result {\"matmul\"", 0), 0u) << verdict.message;
  verdict = Assess(JobWithStatus({{"phase", 3}}), expected);
  EXPECT_EQ(verdict.verdict, Verdict::kFailed);
  EXPECT_EQ(verdict.message, "status.phase: expected a string, got 3");
  // Read by the status's one reader: a phase it does not know is named too.
  verdict = Assess(JobWithStatus({{"phase", "Done"}}), expected);
  EXPECT_EQ(verdict.verdict, Verdict::kFailed);
  EXPECT_EQ(verdict.message.rfind("status.phase: expected Pending, Running", 0), 0u)
      << verdict.message;
}

TEST(SelftestTest, FailedJobFailsWithItsCondition) {
  const json status = {
      {"phase", "Failed"},
      {"conditions", json::array({{{"type", "Ready"}, {"reason", "Started"}, {"message", "x"}},
                                  {{"type", "Failed"},
                                   {"reason", "ProfileNotFound"},
                                   {"message", "WeightProfile 'nope' does not exist"}}})}};
  const Assessment verdict = Assess(JobWithStatus(status), ExpectedPrimes(100));
  EXPECT_EQ(verdict.verdict, Verdict::kFailed);
  EXPECT_EQ(verdict.message,
            "the job Failed (ProfileNotFound: WeightProfile 'nope' does not exist)");
  EXPECT_EQ(Assess(JobWithStatus({{"phase", "Failed"}}), ExpectedPrimes(100)).message,
            "the job Failed");
}

TEST(SelftestTest, UnfinishedJobWaitsWithAProgressLine) {
  const auto expected = ExpectedPrimes(300000);
  Assessment verdict = Assess(Job(Spec{}), expected);
  EXPECT_EQ(verdict.verdict, Verdict::kWaiting);
  EXPECT_EQ(verdict.message, "waiting for the operator (not taken in yet)");
  // The CRD defaults the phase to Pending: no observedGeneration, no operator.
  EXPECT_EQ(Assess(JobWithStatus({{"phase", "Pending"}}), expected).message,
            "waiting for the operator (not taken in yet)");
  verdict = Assess(JobWithStatus({{"phase", "Running"},
                                  {"progress", "42%"},
                                  {"completedItems", 63000},
                                  {"items", 150000},
                                  {"workers", 3}}),
                   expected);
  EXPECT_EQ(verdict.verdict, Verdict::kWaiting);
  EXPECT_EQ(verdict.message, "Running 42% (63000/150000 items), 3 workers");
  EXPECT_EQ(
      Assess(JobWithStatus({{"phase", "Pending"}, {"observedGeneration", 1}}), expected).message,
      "Pending");
  EXPECT_EQ(Assess(JobWithStatus({{"phase", "Suspended"}}), expected).verdict, Verdict::kWaiting);
}

}  // namespace
}  // namespace ballast::cli::selftest
