// Tests of Result (core/workload/result.h): merging is exact and
// order-independent, kinds never mix, JSON round-trips strictly.
#include "core/workload/result.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace ballast::workload {
namespace {

TEST(ResultTest, EmptyIsTheIdentityOfMerge) {
  for (auto kind : {WorkloadKind::kPrimes, WorkloadKind::kMatmul, WorkloadKind::kExec}) {
    Result empty = Result::Empty(kind);
    EXPECT_EQ(empty.kind(), kind);
    Result twice = Result::Empty(kind);
    ASSERT_TRUE(twice.Merge(empty).ok());
    EXPECT_EQ(twice, empty);
  }
  Result primes = Result::Primes(3, 10);
  ASSERT_TRUE(primes.Merge(Result::Empty(WorkloadKind::kPrimes)).ok());
  EXPECT_EQ(primes, Result::Primes(3, 10));
}

TEST(ResultTest, SumsWrapModuloTwoToThe64Exactly) {
  Result a = Result::Primes(1, 0xFFFFFFFFFFFFFFFFULL);
  ASSERT_TRUE(a.Merge(Result::Primes(2, 5)).ok());
  EXPECT_EQ(a.primes().count, 3u);
  EXPECT_EQ(a.primes().sum, 4u);
  Result m = Result::Matmul(1, static_cast<uint64_t>(-7), 1);
  ASSERT_TRUE(m.Merge(Result::Matmul(2, 3, 0xFFFFFFFFFFFFFFFFULL)).ok());
  EXPECT_EQ(m.matmul(), (MatmulTotals{3, static_cast<uint64_t>(-4), 0}));
}

TEST(ResultTest, KindsNeverMixAndTheTargetIsUnchanged) {
  Result primes = Result::Primes(4, 17);
  Status status = primes.Merge(Result::Matmul(1, 2, 3));
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_NE(status.message().find("matmul"), std::string::npos);
  EXPECT_EQ(primes, Result::Primes(4, 17));
  EXPECT_FALSE(Result::Empty(WorkloadKind::kExec).Merge(primes).ok());
}

// Randomized: exec results of a split job merge to the same canonical value
// in any order and however the failed items were grouped.
TEST(ResultTest, ExecFailuresMergeToOneCanonicalListInAnyOrder) {
  const unsigned seed = std::random_device{}();
  std::printf("ExecFailuresMergeToOneCanonicalListInAnyOrder seed=%u\n", seed);
  SCOPED_TRACE(seed);
  std::mt19937 random(seed);
  // Items 0..199: each item succeeds or fails with exit code 1 or 2.
  std::vector<int> outcome(200);
  for (int& code : outcome) code = static_cast<int>(random() % 3);
  std::vector<Result> parts;
  for (uint64_t item = 0; item < outcome.size(); ++item) {
    parts.push_back(outcome[item] == 0 ? Result::ExecSucceeded(1)
                                       : Result::ExecFailed({item, item + 1}, outcome[item], 3));
  }
  Result expected = Result::Empty(WorkloadKind::kExec);
  for (const Result& part : parts) ASSERT_TRUE(expected.Merge(part).ok());
  std::vector<size_t> order(parts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (int trial = 0; trial < 20; ++trial) {
    std::shuffle(order.begin(), order.end(), random);
    // Merge in random groups, then the groups together.
    std::vector<Result> groups;
    for (size_t index : order) {
      if (groups.empty() || random() % 4 == 0) groups.push_back(Result::Empty(WorkloadKind::kExec));
      ASSERT_TRUE(groups.back().Merge(parts[index]).ok());
    }
    Result total = Result::Empty(WorkloadKind::kExec);
    for (const Result& group : groups) ASSERT_TRUE(total.Merge(group).ok());
    ASSERT_EQ(total, expected);
  }
  uint64_t failed = 0;
  for (const ExecFailure& failure : expected.exec().failures) {
    failed += failure.items.size();
    EXPECT_EQ(failure.attempts, 3u);
  }
  const auto succeeded = static_cast<uint64_t>(std::count(outcome.begin(), outcome.end(), 0));
  EXPECT_EQ(expected.exec().succeeded, succeeded);
  EXPECT_EQ(failed + succeeded, outcome.size());
}

TEST(ResultTest, AdjacentFailuresWithTheSameEndingJoin) {
  Result r = Result::ExecFailed({5, 8}, 1, 3);
  ASSERT_TRUE(r.Merge(Result::ExecFailed({0, 5}, 1, 3)).ok());
  ASSERT_TRUE(r.Merge(Result::ExecFailed({8, 9}, 2, 3)).ok());
  ASSERT_EQ(r.exec().failures.size(), 2u);
  EXPECT_EQ(r.exec().failures[0], (ExecFailure{{0, 8}, 1, 3, "", ""}));
  EXPECT_EQ(r.exec().failures[1], (ExecFailure{{8, 9}, 2, 3, "", ""}));
  EXPECT_EQ(r.Summary(),
            "0 items succeeded, 9 failed: [0, 8) exit 1 after 3 attempts; [8, 9) exit 2 after 3 "
            "attempts");
}

TEST(ResultTest, OneAttemptIsSaidInTheSingular) {
  Result r = Result::ExecFailed({0, 3}, 1, 1);
  ASSERT_TRUE(r.Merge(Result::ExecFailed({5, 6}, 2, 2)).ok());
  EXPECT_EQ(r.Summary(),
            "0 items succeeded, 4 failed: [0, 3) exit 1 after 1 attempt; [5, 6) exit 2 after 2 "
            "attempts");
}

TEST(ResultTest, JsonRoundTripsEveryKind) {
  Result exec = Result::ExecSucceeded(7);
  ASSERT_TRUE(exec.Merge(Result::ExecFailed({10, 12}, 137, 1)).ok());
  const std::vector<Result> results = {
      Result::Primes(25997, 0xDEADBEEFCAFEF00DULL),
      Result::Matmul(64, static_cast<uint64_t>(-123456), 0x8000000000000001ULL),
      exec,
      Result::Empty(WorkloadKind::kExec),
  };
  for (const Result& result : results) {
    SCOPED_TRACE(result.Summary());
    auto back = Result::FromJson(result.kind(), nlohmann::json::parse(result.ToJson().dump()));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, result);
  }
  EXPECT_EQ(Result::Primes(1, 2).ToJson().dump(),
            R"({"primes":{"count":1,"sum":"0x0000000000000002"}})");
}

TEST(ResultTest, FromJsonIsStrictAndNamesTheField) {
  const std::vector<std::tuple<WorkloadKind, std::string, std::string>> cases = {
      {WorkloadKind::kPrimes, R"({"primes": {"count": 1}})", "primes.sum"},
      {WorkloadKind::kPrimes, R"({"primes": {"count": -1, "sum": "0x0000000000000000"}})",
       "primes.count"},
      {WorkloadKind::kPrimes, R"({"primes": {"count": 1, "sum": 5}})", "primes.sum"},
      {WorkloadKind::kPrimes, R"({"primes": {"count": 1, "sum": "0x00000000000000zz"}})",
       "primes.sum"},
      {WorkloadKind::kPrimes, R"({"matmul": {"blocks": 1}})",
       R"(result.matmul: unknown field "matmul" (allowed: primes))"},
      {WorkloadKind::kMatmul, R"({"matmul": {"blocks": 1, "sum": "0x0000000000000000"}})",
       "matmul.checksum"},
      {WorkloadKind::kExec, R"({"exec": {"succeeded": 1}})", "exec.failures"},
      {WorkloadKind::kExec,
       R"({"exec": {"succeeded": 1, "failures": [{"begin": 3, "end": 2, "exitCode": 1,
           "attempts": 1}]}})",
       "end"},
      {WorkloadKind::kExec,
       R"({"exec": {"succeeded": 1, "failures": [{"begin": 1, "end": 2, "exitCode": "1",
           "attempts": 1}]}})",
       "exitCode"},
      // Wider than what they are read into: once narrowed silently (an
      // exitCode of 2^32 + 1 read as 1), now refused; what a job allows is
      // the coordinator's check (result_bounds_test, forged_reports_test).
      {WorkloadKind::kExec,
       R"({"exec": {"succeeded": 1, "failures": [{"begin": 1, "end": 2, "exitCode": 4294967297,
           "attempts": 1}]}})",
       "exec.failures[0].exitCode: expected an integer in [-2147483648, 2147483647], got "
       "4294967297"},
      {WorkloadKind::kExec,
       R"({"exec": {"succeeded": 1, "failures": [{"begin": 1, "end": 2, "exitCode": -4294967297,
           "attempts": 1}]}})",
       "exitCode"},
      {WorkloadKind::kExec,
       R"({"exec": {"succeeded": 1, "failures": [{"begin": 1, "end": 2, "exitCode": 1,
           "attempts": 4294967297}]}})",
       "attempts: expected a whole number of 32 bits"},
      {WorkloadKind::kExec, R"({"exec": {"succeeded": 1, "failures": [], "extra": 0}})",
       R"(exec.extra: unknown field "extra")"},
      {WorkloadKind::kMatmul, R"("0x01")", "object"},
  };
  for (const auto& [kind, text, fragment] : cases) {
    SCOPED_TRACE(text);
    auto result = Result::FromJson(kind, nlohmann::json::parse(text));
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::kInvalid);
    EXPECT_NE(result.status().message().find(fragment), std::string::npos)
        << result.status().message();
  }
}

TEST(ResultTest, SummariesAreOneLine) {
  EXPECT_EQ(Result::Primes(25997, 0x10).Summary(), "25997 primes, checksum 0x0000000000000010");
  EXPECT_EQ(Result::Matmul(4, static_cast<uint64_t>(-5), 1).Summary(),
            "4 blocks of C, sum of entries -5, checksum 0x0000000000000001");
}

}  // namespace
}  // namespace ballast::workload
