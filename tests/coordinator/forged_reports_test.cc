// What a token holder's forged report can no longer do (issue 30): a result
// impossible for its range is refused at once, whether or not verification
// would have sampled it; reported seconds are bounded by the worker's cores
// and the time the job has lasted; and no efficiency computed from them
// exceeds 1. JobSession without HTTP, and the bound itself against true
// counts.
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <random>

#include "coordinator/job_session.h"
#include "coordinator/result_bounds.h"
#include "core/balance/efficiency.h"
#include "tests/coordinator/session_reports.h"
#include "tests/support/policy_spec.h"
#include "tests/support/primes_workload.h"
#include "tests/support/test_seed.h"
#include "worker/kernels/kernel.h"

namespace ballast::coordinator::forged_reports_test {
namespace {

using balance::Range;
using balance::Reply;
using protocol::ReportMessage;
using session_reports::Idle;
using session_reports::NewSession;
using workload::Result;

// A job whose workers get equal shares in one lease each, unless `policy`
// says otherwise.
JobConfig JobOf(workload::WorkloadSpec spec, std::vector<std::string> workers,
                const std::string& policy = "equal") {
  JobConfig config;
  config.id = "forged";
  config.token = "secret";
  config.workload = std::move(spec);
  config.policy = testing_support::PolicyNamed(policy);
  for (auto& name : workers) config.workers.push_back({name, 1.0});
  return config;
}

workload::WorkloadSpec MatmulWorkload() {
  workload::WorkloadSpec spec;
  spec.kind = workload::WorkloadKind::kMatmul;
  spec.matmul = {64, 16, 7};
  spec.items = workload::DefaultItems(spec);
  spec.cost = workload::DefaultCost(spec);
  return spec;
}

workload::WorkloadSpec ExecWorkload(uint64_t items) {
  workload::WorkloadSpec spec;
  spec.kind = workload::WorkloadKind::kExec;
  spec.exec.command = {"true"};
  spec.exec.retries = 2;
  spec.items = items;
  spec.cost = workload::DefaultCost(spec);
  return spec;
}

// The lease `worker` gets first.
Range FirstLease(JobSession& session, const std::string& worker) {
  auto reply = session.HandleReport(Idle(worker), 1);
  EXPECT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->kind, Reply::Kind::kLease);
  return reply->lease;
}

// Hands in `range` with `result`; returns the session's answer.
StatusOr<protocol::ReplyMessage> HandIn(JobSession& session, const std::string& worker, Range range,
                                        const Result& result, double now = 2) {
  ReportMessage report = Idle(worker);
  report.completed.push_back({range, result.ToJson()});
  report.position = range.end;
  report.calc_seconds = 0.1;
  return session.HandleReport(report, now);
}

// Expects `result` for `range` to be refused as a bad report naming `field`,
// with nothing merged.
void ExpectRefused(JobSession& session, Range range, const Result& result,
                   const std::string& field) {
  const JobView before = session.View();
  auto refused = HandIn(session, "a", range, result);
  ASSERT_FALSE(refused.ok()) << result.Summary();
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalid);
  EXPECT_NE(refused.status().message().find("completed[0]." + field), std::string::npos)
      << refused.status().message();
  const JobView after = session.View();
  EXPECT_EQ(after.completed, before.completed);
  EXPECT_EQ(after.result, before.result);
  EXPECT_EQ(after.refused_reports, before.refused_reports + 1);
}

// Regression: a primes count larger than the range's numbers could hold was
// merged, and with `verify: 0.3` one forged range passed 70 % of the time.
TEST(ForgedReportsTest, ForgedPrimesCountIsRefusedAtOnceNamingTheField) {
  auto session = NewSession(JobOf(testing::PrimesWorkload(20000), {"a", "b"}));
  const Range lease = FirstLease(*session, "a");
  const Range span = workload::PrimesRangeSpan(session->config().workload, lease);
  const uint64_t bound = PrimesCountBound(span.begin, span.end);
  ExpectRefused(*session, lease, Result::Primes(lease.size() + 1000000, 0), "result.primes.count");
  ExpectRefused(*session, lease, Result::Primes(bound + 1, 0), "result.primes.count");
  // One prime cannot sum to 0, nor to more than the largest number.
  ExpectRefused(*session, lease, Result::Primes(1, 0), "result.primes.sum");
  ExpectRefused(*session, lease, Result::Primes(1, 40000), "result.primes.sum");
  // No primes sum to nothing.
  ExpectRefused(*session, lease, Result::Primes(0, 5), "result.primes.sum");
}

TEST(ForgedReportsTest, WithVerificationAForgedCountIsRefusedEveryTimeNotOnlyWhenSampled) {
  for (int run = 0; run < 20; ++run) {
    JobConfig config = JobOf(testing::PrimesWorkload(20000), {"a", "b"});
    config.verify.fraction = 0.3;
    config.verify.seed = static_cast<uint64_t>(run);
    auto session = NewSession(config);
    const Range lease = FirstLease(*session, "a");
    ExpectRefused(*session, lease, Result::Primes(lease.size() + 1, 0), "result.primes.count");
  }
}

TEST(ForgedReportsTest, PrimesSumOfAJobWithoutChecksumMustBeZero) {
  auto spec = testing::PrimesWorkload(1'000'000, workload::PrimesSpec::Method::kSieve);
  spec.primes.checksum = false;
  auto session = NewSession(JobOf(spec, {"a"}));
  const Range lease = FirstLease(*session, "a");
  ExpectRefused(*session, lease, Result::Primes(1, 3), "result.primes.sum");
}

TEST(ForgedReportsTest, ForgedMatmulBlocksAreRefused) {
  auto session = NewSession(JobOf(MatmulWorkload(), {"a"}));
  const Range lease = FirstLease(*session, "a");
  ExpectRefused(*session, lease, Result::Matmul(lease.size() + 1, 0, 0), "result.matmul.blocks");
  ExpectRefused(*session, lease, Result::Matmul(lease.size() - 1, 0, 0), "result.matmul.blocks");
  ExpectRefused(*session, lease, Result::Matmul(uint64_t{1} << 60, 0, 0), "result.matmul.blocks");
}

TEST(ForgedReportsTest, ForgedExecCountsAreRefused) {
  auto session = NewSession(JobOf(ExecWorkload(1000), {"a"}));
  const Range lease = FirstLease(*session, "a");
  ASSERT_GE(lease.size(), 4u);
  const uint64_t n = lease.size();
  const Range head{lease.begin, lease.begin + 2};
  ExpectRefused(*session, lease, Result::ExecSucceeded(n + 1), "result.exec.succeeded");
  ExpectRefused(*session, lease, Result::ExecSucceeded(n - 1), "result.exec.succeeded");
  ExpectRefused(*session, lease, Result::ExecSucceeded(~uint64_t{0}), "result.exec.succeeded");
  Result outside = Result::ExecSucceeded(n);
  ASSERT_TRUE(outside.Merge(Result::ExecFailed({lease.end, lease.end + 1}, 1, 1)).ok());
  ExpectRefused(*session, lease, outside, "result.exec.failures[0]");
  Result overlapping = Result::ExecSucceeded(n - 3);
  ASSERT_TRUE(overlapping.Merge(Result::ExecFailed(head, 1, 1)).ok());
  ASSERT_TRUE(overlapping.Merge(Result::ExecFailed({lease.begin + 1, lease.begin + 2}, 2, 1)).ok());
  ExpectRefused(*session, lease, overlapping, "result.exec.failures[1]");
  Result code_zero = Result::ExecSucceeded(n - 2);
  ASSERT_TRUE(code_zero.Merge(Result::ExecFailed(head, 0, 1)).ok());
  ExpectRefused(*session, lease, code_zero, "result.exec.failures[0].exitCode");
  Result negative_code = Result::ExecSucceeded(n - 2);
  ASSERT_TRUE(negative_code.Merge(Result::ExecFailed(head, -3, 1)).ok());
  ExpectRefused(*session, lease, negative_code, "result.exec.failures[0].exitCode");
  Result many_attempts = Result::ExecSucceeded(n - 2);
  ASSERT_TRUE(many_attempts.Merge(Result::ExecFailed(head, 1, 4)).ok());  // retries 2: at most 3
  ExpectRefused(*session, lease, many_attempts, "result.exec.failures[0].attempts");
  // What a worker really reports passes: two items failed after 3 attempts.
  Result honest = Result::ExecSucceeded(n - 2);
  ASSERT_TRUE(honest.Merge(Result::ExecFailed(head, 7, 3)).ok());
  EXPECT_TRUE(HandIn(*session, "a", lease, honest).ok());
  EXPECT_EQ(session->View().completed, n);
}

TEST(ForgedReportsTest, NegativeCountsAreRefusedByTheResultsParser) {
  auto session = NewSession(JobOf(testing::PrimesWorkload(20000), {"a"}));
  const Range lease = FirstLease(*session, "a");
  ReportMessage report = Idle("a");
  report.completed.push_back({lease, {{"primes", {{"count", -5}, {"sum", "0x0"}}}}});
  auto refused = session->HandleReport(report, 2);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalid);
  EXPECT_NE(refused.status().message().find("primes.count"), std::string::npos)
      << refused.status().message();
}

TEST(ForgedReportsTest, HonestResultsOfEveryWorkloadPass) {
  for (const auto& spec :
       {testing::PrimesWorkload(20000),
        testing::PrimesWorkload(50'000'000, workload::PrimesSpec::Method::kSieve),
        MatmulWorkload()}) {
    auto session = NewSession(JobOf(spec, {"a"}));
    const Range lease = FirstLease(*session, "a");
    auto kernel = kernels::MakeKernel(spec);
    ASSERT_TRUE(kernel.ok());
    auto result = (*kernel)->Compute(lease);
    ASSERT_TRUE(result.ok());
    EXPECT_TRUE(HandIn(*session, "a", lease, *result).ok()) << result->Summary();
  }
}

// A bound that refuses a true count would fail honest jobs: the bound is
// checked against the true count of random spans, the small ones (where the
// wheel's 2, 3 and 5 matter) most of all.
TEST(ForgedReportsTest, PrimesCountBoundIsNeverBelowTheTrueCount) {
  constexpr uint64_t kLimit = 200000;
  std::vector<bool> composite(kLimit, false);
  composite[0] = composite[1] = true;
  for (uint64_t p = 2; p * p < kLimit; ++p) {
    if (!composite[p]) {
      for (uint64_t m = p * p; m < kLimit; m += p) composite[m] = true;
    }
  }
  std::vector<uint64_t> below(kLimit + 1, 0);  // primes < x
  for (uint64_t x = 0; x < kLimit; ++x) below[x + 1] = below[x] + (composite[x] ? 0 : 1);
  const uint64_t seed = testing_support::TestSeed();
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 random(seed);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t lo = random() % kLimit;
    const uint64_t width = i % 2 == 0 ? random() % 40 : random() % (kLimit - lo + 1);
    const uint64_t hi = std::min(kLimit, lo + width);
    ASSERT_GE(PrimesCountBound(lo, hi), below[hi] - below[lo]) << "[" << lo << ", " << hi << ")";
  }
  EXPECT_EQ(PrimesCountBound(0, 3), 2u);    // 1 (prime to 30) and 2
  EXPECT_EQ(PrimesCountBound(0, 30), 11u);  // 8 prime to 30, and 2, 3, 5; pi(30) = 10
  EXPECT_EQ(PrimesCountBound(7, 7), 0u);
  EXPECT_EQ(PrimesCountBound(~uint64_t{0} - 30, ~uint64_t{0}), 8u);
}

// Regression: a cpuSeconds of 1e300 was capped at 64 cores x the window, and
// the run printed "efficiency 14.419". It is bounded by the worker's cores.
TEST(ForgedReportsTest, ForgedCpuSecondsAreBoundedByTheWorkersCores) {
  JobConfig config = JobOf(testing::PrimesWorkload(20000), {"a"});
  config.worker_cores = {{"a", 0.5}};
  auto session = NewSession(config);
  const Range lease = FirstLease(*session, "a");
  ReportMessage forged = Idle("a");
  auto kernel = kernels::MakeKernel(config.workload);
  ASSERT_TRUE(kernel.ok());
  forged.completed.push_back({lease, (*kernel)->Compute(lease)->ToJson()});
  forged.calc_seconds = 1e300;
  forged.cpu_seconds = 1e300;
  ASSERT_TRUE(session->HandleReport(forged, 3).ok());
  const JobView view = session->View();
  // Two seconds since its previous report, and the slack: 3 s of 0.5 core.
  EXPECT_DOUBLE_EQ(view.workers[0].busy_s, 2 + kReportSlackSeconds);
  EXPECT_DOUBLE_EQ(view.workers[0].cpu_s, 0.5 * (2 + kReportSlackSeconds));
  EXPECT_EQ(view.clamped_reports, 1u);
}

// A worker that reports every 10 ms claiming a second each time used to add
// the second of slack up, report after report.
TEST(ForgedReportsTest, ManyReportsCannotAddTheSlackUp) {
  JobConfig config = JobOf(testing::PrimesWorkload(20000), {"a"});
  config.worker_cores = {{"a", 2}};
  auto session = NewSession(config);
  double now = 0;
  for (int i = 0; i < 500; ++i) {
    ReportMessage report = Idle("a");
    report.calc_seconds = 1.01;
    report.cpu_seconds = 2.02;
    ASSERT_TRUE(session->HandleReport(report, now += 0.01).ok());
  }
  const JobView view = session->View();
  EXPECT_LE(view.workers[0].busy_s, now + kReportSlackSeconds + 1e-9);
  EXPECT_LE(view.workers[0].cpu_s, 2 * (now + kReportSlackSeconds) + 1e-9);
}

TEST(ForgedReportsTest, WorkerCoresMustBeAFiniteNumberAboveZero) {
  for (double cores : {0.0, -1.0, std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::quiet_NaN()}) {
    JobConfig config = JobOf(testing::PrimesWorkload(2000), {"a"});
    config.worker_cores = {{"a", cores}};
    EXPECT_EQ(JobSession::Create(config, 0).status().code(), StatusCode::kInvalid) << cores;
  }
}

// The figure `ballast run` prints, from what the session recorded: a worker
// that forges cpuSeconds of 1e300 in every report of a whole job cannot push
// it above 1 (before, 14.419), and the run can tell it was capped.
TEST(ForgedReportsTest, AForgedReportCannotPushTheEfficiencyAboveOne) {
  JobConfig config = JobOf(testing::PrimesWorkload(20000), {"a", "b"}, "selfsched");
  const double speed = 0.5;  // each node's emulated cores
  config.worker_cores = {{"a", speed}, {"b", speed}};
  auto session = NewSession(config);
  auto kernel = kernels::MakeKernel(config.workload);
  ASSERT_TRUE(kernel.ok());
  std::map<std::string, Range> leases;
  double now = 0;
  while (!session->Finished() && now < 1000) {
    for (const std::string worker : {"a", "b"}) {
      ReportMessage report = Idle(worker);
      if (auto it = leases.find(worker); it != leases.end()) {
        report.completed.push_back({it->second, (*kernel)->Compute(it->second)->ToJson()});
        report.position = it->second.end;
        leases.erase(it);
      }
      report.calc_seconds = 1e300;
      report.cpu_seconds = worker == std::string("a") ? 1e300 : 0.01;
      auto reply = session->HandleReport(report, now += 0.05);
      ASSERT_TRUE(reply.ok()) << reply.status().ToString();
      if (reply->kind == Reply::Kind::kLease) leases[worker] = reply->lease;
    }
  }
  ASSERT_TRUE(session->Finished());
  const JobView view = session->View();
  double work = 0;
  for (const auto& worker : view.workers) work += worker.cpu_s - worker.dropped_cpu_s;
  const double ideal = balance::IdealSeconds(work, 2 * speed);
  const double efficiency = balance::Efficiency(ideal, view.finished_at);
  std::printf("forged work %.3f core-s over %.3f s: ideal %.3f s, efficiency %.3f\n", work,
              view.finished_at, ideal, efficiency);
  EXPECT_LE(efficiency, 1.0);
  // The bound leaves the forger its cores over the job's time and the slack:
  // the work can exceed the makespan only by that slack, and the cap says so.
  EXPECT_LE(ideal, view.finished_at + kReportSlackSeconds + 0.05);
  EXPECT_GT(view.clamped_reports, 0u);
}

}  // namespace
}  // namespace ballast::coordinator::forged_reports_test
